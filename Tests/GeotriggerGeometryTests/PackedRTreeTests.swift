import GeotriggerCore
@testable import GeotriggerGeometry
import Testing

@Suite("Packed R-tree")
struct PackedRTreeTests {
    /// Random boxes (points, slivers, shared edges) and random query boxes, all on a grid that
    /// Floats hold exactly: the tree must return exactly the boxes a closed-interval scan finds,
    /// each once — the set GEOS's STRtree gave.
    @Test(arguments: [0, 1, 2, 15, 16, 17, 255, 256, 257, 5000])
    func queriesEqualABruteForceScan(count: Int) {
        var rng = SplitMix64(seed: UInt64(count) + 1)
        var builder = PackedRTree.Builder(capacity: count)
        var boxes: [(Double, Double, Double, Double)] = []
        for i in 0..<count {
            // A coarse grid makes boxes touch exactly, so closed-boundary handling is exercised.
            let x = Double(rng.below(200)) / 4, y = Double(rng.below(200)) / 4
            let w = i % 5 == 0 ? 0 : Double(rng.below(8)) / 4, h = i % 7 == 0 ? 0 : Double(rng.below(8)) / 4
            boxes.append((x, y, x + w, y + h))
            builder.append(minX: x, minY: y, maxX: x + w, maxY: y + h, item: Int32(i))
        }
        // Odd counts: the leaf order found first, as an index in curve order does (`build` then
        // takes the boxes in it); even ones: found by `build`.
        if count % 2 == 1 {
            let order = builder.hilbertOrder(itemCount: count)
            #expect(order.sorted() == (0..<Int32(count)).map { $0 }, "every item once")
        }
        let tree = builder.build()
        let scratch = PackedRTree.Scratch()
        #expect(tree.count == count)
        for q in 0..<300 {
            let x = Double(rng.below(220)) / 4 - 1, y = Double(rng.below(220)) / 4 - 1
            let w = q % 3 == 0 ? 0 : Double(rng.below(12)) / 4, h = q % 3 == 0 ? 0 : Double(rng.below(12)) / 4
            let found = Array(tree.query(minX: x, minY: y, maxX: x + w, maxY: y + h, scratch: scratch)).sorted()
            let expected = boxes.indices.filter {
                boxes[$0].0 <= x + w && boxes[$0].2 >= x && boxes[$0].1 <= y + h && boxes[$0].3 >= y
            }.map(Int32.init)
            #expect(found == expected, "query \(q)")
        }
    }

    /// Boxes and queries at arbitrary Double coordinates (degrees, as envelopes are): the tree
    /// keeps Floats rounded outwards, so it must return every box a Double scan finds, and
    /// besides those exactly the boxes that meet the query once both are rounded outwards to
    /// Floats (a sliver of a few micro-degrees), whatever the tree's shape.
    @Test(arguments: [1, 17, 257, 5000])
    func queriesHoldTheDoubleScanAndOnlyFloatRoundingMore(count: Int) {
        var rng = SplitMix64(seed: UInt64(count) + 11)
        func coordinate(_ span: Double) -> Double { (Double(rng.next() >> 11) / Double(1 << 53) - 0.5) * span }
        var builder = PackedRTree.Builder(capacity: count)
        var boxes: [(Double, Double, Double, Double)] = []
        for i in 0..<count {
            let x = 16 + coordinate(0.5), y = 48 + coordinate(0.5)
            let w = abs(coordinate(0.02)), h = abs(coordinate(0.02))
            boxes.append((x, y, x + w, y + h))
            builder.append(minX: x, minY: y, maxX: x + w, maxY: y + h, item: Int32(i))
        }
        let tree = builder.build()
        let scratch = PackedRTree.Scratch()
        var spare = 0
        for q in 0..<400 {
            var x = 16 + coordinate(0.5), y = 48 + coordinate(0.5)
            let w = q % 2 == 0 ? 0 : abs(coordinate(0.003)), h = q % 2 == 0 ? 0 : abs(coordinate(0.003))
            if q % 4 == 1, let b = boxes.randomElement(using: &rng) {
                // A query touching a box's edge from outside by less than a Float's rounding.
                x = b.2 + (b.2.ulp * 3); y = b.1
            }
            let found = Set(tree.query(minX: x, minY: y, maxX: x + w, maxY: y + h, scratch: scratch))
            let exact = Set(boxes.indices.filter {
                boxes[$0].0 <= x + w && boxes[$0].2 >= x && boxes[$0].1 <= y + h && boxes[$0].3 >= y
            }.map(Int32.init))
            let rounded = Set(boxes.indices.filter {
                Float.below(boxes[$0].0) <= Float.above(x + w) && Float.above(boxes[$0].2) >= Float.below(x)
                    && Float.below(boxes[$0].1) <= Float.above(y + h) && Float.above(boxes[$0].3) >= Float.below(y)
            }.map(Int32.init))
            #expect(exact.isSubset(of: found), "query \(q) lost \(exact.subtracting(found))")
            #expect(found == rounded, "query \(q)")
            spare += found.count - exact.count
        }
        // The edge-touching queries must have exercised the spare (rounding-only) answers.
        if count >= 257 { #expect(spare > 0) }
    }

    @Test func appendingKeepsThePreviousResults() {
        var builder = PackedRTree.Builder()
        builder.append(minX: 0, minY: 0, maxX: 1, maxY: 1, item: 7)
        builder.append(minX: 5, minY: 5, maxX: 6, maxY: 6, item: 9)
        let tree = builder.build()
        let scratch = PackedRTree.Scratch(), other = PackedRTree.Scratch()
        _ = tree.query(minX: 0.5, minY: 0.5, maxX: 0.5, maxY: 0.5, scratch: scratch)
        // Another scratch's queries (another thread's) leave this one's answer alone.
        #expect(Array(tree.query(minX: 5, minY: 5, maxX: 5, maxY: 5, scratch: other)) == [9])
        #expect(Array(tree.query(minX: 6, minY: 6, maxX: 6, maxY: 6, appending: true, scratch: scratch)) == [7, 9])
    }

    /// Keys as `hilbertKeys` makes them (the position in the low half, ascending): sorted by
    /// their high halves, ties kept in position order, they come out in the standard sort's order.
    @Test(arguments: [0, 1, 2, 100, 10_000, 300_000])
    func radixSortEqualsTheStandardSort(count: Int) {
        var rng = SplitMix64(seed: 7)
        // Few distinct high halves (many ties, bytes every key shares: skipped passes), spread
        // ones, and, for the largest, every high half the same.
        var keys = (0..<count).map { i in
            let high: UInt64 = switch count {
            case 300_000: 0x1234_5678_0000_0000
            case ...100: rng.next() & 0x0003_0000_0000_0000 | 0xFFFC_0000_0000_0000
            default: rng.next() & 0xFFFF_FFFF_0000_0000
            }
            return high | UInt64(i)
        }
        let expected = keys.sorted()
        PackedRTree.sortByHighHalf(&keys)
        #expect(keys == expected)
    }

    /// The Hilbert curve visits every cell of a small grid once (a bijection on 2¹⁶ × 2¹⁶ cells).
    @Test func hilbertIndexIsABijectionOnACorner() {
        var seen = Set<UInt32>()
        for x in UInt32(0)..<64 { for y in UInt32(0)..<64 { seen.insert(PackedRTree.hilbert(x, y)) } }
        #expect(seen.count == 64 * 64)
    }

    /// The textbook loop (Wikipedia's `xy2d`: per level from the top, the quadrant's index, then
    /// the rotation or reflection that carries it down).
    static func hilbertByLevels(_ x: UInt32, _ y: UInt32) -> UInt32 {
        var x = x, y = y, d: UInt32 = 0
        var s: UInt32 = 1 << 15
        while s > 0 {
            let rx: UInt32 = x & s != 0 ? 1 : 0
            let ry: UInt32 = y & s != 0 ? 1 : 0
            d &+= s &* s &* ((3 &* rx) ^ ry)
            if ry == 0 {
                if rx == 1 {
                    x = 65535 &- x
                    y = 65535 &- y
                }
                swap(&x, &y)
            }
            s >>= 1
        }
        return d
    }

    /// The all-levels-at-once index is the textbook loop's on every cell of blocks at the
    /// corners, the middle and the edges, and on 200,000 random cells: the tree's leaf order,
    /// and so the regions' order, is the loop's.
    @Test func hilbertIndexIsTheTextbookLoops() {
        var cells: [(UInt32, UInt32)] = []
        for (x0, y0) in [(UInt32(0), UInt32(0)), (65_408, 65_408), (0, 65_408), (65_408, 0), (32_704, 32_704), (0, 32_704)] {
            for dx in UInt32(0)..<128 { for dy in UInt32(0)..<128 { cells.append((x0 + dx, y0 + dy)) } }
        }
        var rng = SplitMix64(seed: 16)
        for _ in 0..<200_000 {
            let r = rng.next()
            cells.append((UInt32(r & 0xFFFF), UInt32(r >> 16 & 0xFFFF)))
        }
        var differing = 0
        for (x, y) in cells where PackedRTree.hilbert(x, y) != Self.hilbertByLevels(x, y) {
            if differing == 0 { Issue.record("(\(x), \(y)): \(PackedRTree.hilbert(x, y)), the loop \(Self.hilbertByLevels(x, y))") }
            differing += 1
        }
        #expect(differing == 0)
    }
}

@Suite("Reordering a table in place")
struct PrefetchingPermutationTests {
    /// Every entry ends where the permutation sends it, whatever its cycles (fixed points, short
    /// cycles, one long one), and entries that own memory (strings too long to be stored inline)
    /// are moved whole, none lost or repeated: the in-place walk equals a plain gather.
    @Test(arguments: [0, 1, 2, 3, 17, 1_000, 50_000])
    func equalsAGather(count: Int) {
        var rng = SplitMix64(seed: UInt64(count) + 1)
        var source = (0..<count).map(Int32.init)
        // Shuffled, then a few entries put back in place (fixed points).
        for i in stride(from: count - 1, to: 0, by: -1) { source.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
        for i in stride(from: 0, to: count, by: 7) {
            if let j = source.firstIndex(of: Int32(i)) { source.swapAt(i, j) }
        }
        let strings = (0..<count).map { "entry number \($0), long enough to live on the heap" }
        let expected = source.map { strings[Int($0)] }
        var table = strings
        var moved: [Bool] = []
        table.withRows { PrefetchingPermutation.permute($0, source: source, moved: &moved) }
        #expect(table == expected)
        // The same scratch serves a second table of the same permutation.
        var numbers = (0..<count).map(Double.init)
        numbers.withRows { PrefetchingPermutation.permute($0, source: source, moved: &moved) }
        #expect(numbers == source.map(Double.init))
    }
}
