import CBoxes
import CPrefetch
import GeotriggerCore
import GeotriggerRuntime

/// A static R-tree of boxes, each carrying an Int32 item, packed in Hilbert order (as flatbush).
///
/// Built once from every box; queries return the items whose closed box meets the closed query
/// box. Boxes are kept as Floats rounded outwards (minima down, maxima up), and the query box is
/// rounded outwards too, so the result holds every item GEOS's STRtree gives for that envelope,
/// plus at most those whose box misses it by less than a Float's rounding (a few micro-degrees,
/// at most about 2 m on the ground): callers test candidates exactly, so a spare one costs a
/// test and changes no decision. Halving the bytes per box halves the cache lines a query reads.
/// Leaves and nodes are flat arrays: 20 bytes per box plus about 1 for the nodes above, where the
/// GEOS tree took 48 per box (and twice that while its node vector grew), with a rectangle
/// geometry made and freed per insertion. Items are not owned; any Int32 is allowed.
///
/// A node's 16 children are one block of four rows (16 minX, then minY, maxX, maxY), so a query
/// tests them four boxes at a time with SSE comparisons and a movemask (`geotrigger_meets16`)
/// and walks only the children whose bit is set.
public final class PackedRTree {
    /// Every level's boxes, leaves first, then each level up to the root (one box), in blocks of
    /// `nodeSize` laid out as rows (`geotrigger_meets16`); a level's last block is padded with
    /// NaN boxes, which meet nothing. A leaf's box is its Double box rounded outwards; a node's
    /// is the union of its children's (the block below with its number), so a leaf that meets
    /// the (rounded) query box is reached whatever the tree's shape.
    private let blocks: UnsafeMutablePointer<Float>
    /// The item of each leaf, then -1 up to a whole block (a query reads a block's 16 at once).
    private let items: [Int32]
    private let itemCount: Int
    /// Where each level starts, in blocks; the root's level is the last.
    private let blockStarts: [Int]
    /// Children per node: 16, the block `geotrigger_meets16` tests.
    static let nodeSize = 16

    /// Collects boxes, then builds the tree (`build`) in place without copying them.
    public struct Builder {
        var boxes: [Double] = []
        var items: [Int32] = []
        /// The tree's leaf order once found (`hilbertOrder`): leaf j is box `leafOrder[j]`. The
        /// boxes and items stay where they were appended; `build` takes them in this order.
        var leafOrder: [Int32]?

        /// `capacity`: the expected number of boxes (the tree's own Float array, nodes included,
        /// is made once at `build`).
        public init(capacity: Int = 0) {
            boxes.reserveCapacity(4 * capacity)
            items.reserveCapacity(capacity)
        }

        public mutating func append(minX: Double, minY: Double, maxX: Double, maxY: Double, item: Int32) {
            boxes.append(minX); boxes.append(minY); boxes.append(maxX); boxes.append(maxY)
            items.append(item)
        }

        /// Finds the tree's leaf order (along the Hilbert curve, as `build` would, which then need
        /// not) and returns the items `0..<itemCount` in the order of their first box in it; items
        /// without a box follow in their own order. Numbering items by this order
        /// (`renumber`) puts items that are near each other on the ground near each other in
        /// number, and the tree's leaves in item order.
        public mutating func hilbertOrder(itemCount: Int) -> [Int32] {
            let leaves = PackedRTree.hilbertLeafOrder(boxes, items.count)
            leafOrder = leaves
            var placed = [Bool](repeating: false, count: itemCount)
            var order: [Int32] = []
            order.reserveCapacity(itemCount)
            for leaf in leaves {
                let item = items[Int(leaf)]
                guard !placed[Int(item)] else { continue }
                placed[Int(item)] = true
                order.append(item)
            }
            for item in 0..<itemCount where !placed[item] { order.append(Int32(item)) }
            return order
        }

        /// Adds `other`'s boxes after these, in their order.
        mutating func append(contentsOf other: Builder) {
            boxes.append(contentsOf: other.boxes)
            items.append(contentsOf: other.items)
        }

        /// Replaces each box's item `i` by `number[i]`.
        public mutating func renumber(_ number: [Int32]) {
            for k in items.indices { items[k] = number[Int(items[k])] }
        }

        /// The tree, made in place from the builder's arrays (the builder is left empty).
        public mutating func build() -> PackedRTree {
            var boxes: [Double] = [], items: [Int32] = []
            swap(&boxes, &self.boxes)
            swap(&items, &self.items)
            defer { leafOrder = nil }
            return PackedRTree(boxes: boxes, items: items, leafOrder: leafOrder)
        }
    }

    /// The tree of `boxes` (four Doubles each) and their `items`, its leaves in `leafOrder` (box
    /// numbers; nil: found here). The leaves are gathered in that order as they are rounded to
    /// Floats, rather than the boxes first moved into it: a walk of random cycles through the
    /// boxes, writing as it goes, is slower than reading them in leaf order with the next ones
    /// asked for ahead.
    private init(boxes: consuming [Double], items given: consuming [Int32], leafOrder: [Int32]?) {
        var doubles = consume boxes
        let n = given.count
        let source = leafOrder ?? Self.hilbertLeafOrder(doubles, n)
        precondition(source.count == n, "one leaf per box")
        // Boxes per level, up to the root's one.
        var counts = [n]
        while counts.last! > 1 { counts.append((counts.last! + Self.nodeSize - 1) / Self.nodeSize) }
        var blockStarts = [0]
        for count in counts { blockStarts.append(blockStarts.last! + (count + Self.nodeSize - 1) / Self.nodeSize) }
        blockStarts.removeLast()
        let blockCount = counts.indices.reduce(0) { $0 + (counts[$1] + Self.nodeSize - 1) / Self.nodeSize }
        let floats = max(1, blockCount) * 4 * Self.nodeSize
        let blocks = UnsafeMutableRawPointer.allocate(byteCount: floats * 4, alignment: 64).bindMemory(to: Float.self, capacity: floats)
        blocks.initialize(repeating: .nan, count: floats)
        /// Box `i` of `level`'s row `row` (0 minX, 1 minY, 2 maxX, 3 maxY).
        func at(_ level: Int, _ i: Int, _ row: Int) -> UnsafeMutablePointer<Float> {
            blocks + 4 * Self.nodeSize * (blockStarts[level] + i / Self.nodeSize) + Self.nodeSize * row + i % Self.nodeSize
        }
        let padding = (Self.nodeSize - n % Self.nodeSize) % Self.nodeSize
        var items: [Int32] = []
        items.reserveCapacity(n + padding)  // exactly: appending alone could double the buffer
        doubles.withUnsafeBufferPointer { d in
            source.withUnsafeBufferPointer { source in
                let ahead = 8
                for i in 0..<n {
                    if i + ahead < n { geotrigger_prefetch(d.baseAddress! + 4 * Int(source[i + ahead])) }
                    let box = Int(source[i]), k = 4 * box
                    at(0, i, 0).pointee = .below(d[k]); at(0, i, 1).pointee = .below(d[k + 1])
                    at(0, i, 2).pointee = .above(d[k + 2]); at(0, i, 3).pointee = .above(d[k + 3])
                    items.append(given[box])
                }
            }
        }
        doubles = []
        // Each node's box is the union of its children's, in the level below.
        for level in counts.indices.dropFirst() {
            for node in 0..<counts[level] {
                var minX = Float.infinity, minY = Float.infinity, maxX = -Float.infinity, maxY = -Float.infinity
                for c in node * Self.nodeSize..<min((node + 1) * Self.nodeSize, counts[level - 1]) {
                    minX = min(minX, at(level - 1, c, 0).pointee); minY = min(minY, at(level - 1, c, 1).pointee)
                    maxX = max(maxX, at(level - 1, c, 2).pointee); maxY = max(maxY, at(level - 1, c, 3).pointee)
                }
                at(level, node, 0).pointee = minX; at(level, node, 1).pointee = minY
                at(level, node, 2).pointee = maxX; at(level, node, 3).pointee = maxY
            }
        }
        self.blocks = blocks
        itemCount = n
        items.append(contentsOf: repeatElement(-1, count: padding))
        self.items = items
        self.blockStarts = blockStarts
    }

    deinit {
        UnsafeMutableRawPointer(blocks).deallocate()
    }

    /// What a query writes: its answer and the blocks it walks. One per thread that queries, so
    /// that the tree itself is only read once built and threads may share it
    /// (`RegionIndex.sharedWithThreads`).
    public final class Scratch {
        let results = ResultBuffer()
        /// A query's blocks to test at the current level and at the next one (block numbers within
        /// their level), kept between queries.
        @exclusivity(unchecked) var frontier = PodList<Int32>()
        @exclusivity(unchecked) var next = PodList<Int32>()

        public init() {
            frontier.reserve(64)
            next.reserve(64)
        }

        deinit {
            frontier.free()
            next.free()
        }
    }

    public var count: Int { itemCount }

    /// Items whose box meets [minX, maxX] × [minY, maxY] (closed), in leaf order (ascending when
    /// the items were numbered by `Builder.hilbertOrder` and none has two boxes); with
    /// `appending`, added to those of `scratch`'s previous query. The answer is `scratch`'s buffer,
    /// reused by its next query.
    ///
    /// The walk goes a level at a time: every block of the level that the query meets is found
    /// (left to right), and all of them are asked for before any is tested, so their cache
    /// misses (a leaf level of 100,000 boxes is 1.6 MB) come in together rather than one block
    /// after another, as a depth-first walk has them.
    public func query(minX: Double, minY: Double, maxX: Double, maxY: Double, appending: Bool = false,
                      scratch: Scratch) -> UnsafeMutableBufferPointer<Int32>
    {
        let results = scratch.results
        if !appending { results.removeAll() }
        guard itemCount > 0 else { return results.contents }
        // The query box is rounded outwards like the boxes: whatever meets it in Doubles meets
        // it in Floats.
        let qMinX = Float.below(minX), qMinY = Float.below(minY), qMaxX = Float.above(maxX), qMaxY = Float.above(maxY)
        let size = Self.nodeSize
        items.withUnsafeBufferPointer { items in
            blockStarts.withUnsafeBufferPointer { blockStarts in
                var level = blockStarts.count - 1
                var frontier = scratch.frontier, next = scratch.next
                defer { (scratch.frontier, scratch.next) = (frontier, next) }
                frontier.removeAll()
                frontier.append(0)
                while level > 0 {
                    next.removeAll()
                    let base = blocks + 4 * size * blockStarts[level]
                    for f in 0..<Int(frontier.count) {
                        let block = Int(frontier[f])
                        // Every hit kept with no branch on how many there are (their number
                        // varies block to block, and a loop over them mispredicted its exit).
                        let first = Int32(block * size)
                        next.appendBits(geotrigger_meets16(base + 4 * size * block, qMinX, qMinY, qMaxX, qMaxY)) {
                            first &+ Int32(truncatingIfNeeded: $0)
                        }
                    }
                    level -= 1
                    // The level below's blocks, four lines each, asked for together; for leaves,
                    // also their items (64 bytes a block, on at most two lines), read for each hit.
                    let below = UnsafeRawPointer(blocks + 4 * size * blockStarts[level])
                    for f in 0..<Int(next.count) {
                        let block = below + 16 * size * Int(next[f])
                        geotrigger_prefetch(block)
                        geotrigger_prefetch(block + 64)
                        geotrigger_prefetch(block + 128)
                        geotrigger_prefetch(block + 192)
                        if level == 0 {
                            let first = UnsafeRawPointer(items.baseAddress.unsafelyUnwrapped + size * Int(next[f]))
                            geotrigger_prefetch(first)
                            geotrigger_prefetch(first + 4 * size - 1)
                        }
                    }
                    swap(&frontier, &next)
                }
                let leaves = blocks + 4 * size * blockStarts[0]
                for f in 0..<Int(frontier.count) {
                    let block = Int(frontier[f])
                    results.appendBits(geotrigger_meets16(leaves + 4 * size * block, qMinX, qMinY, qMaxX, qMaxY),
                                       of: items.baseAddress.unsafelyUnwrapped + block * size)
                }
            }
        }
        return results.contents
    }

    /// The leaf order: the boxes' numbers sorted by the Hilbert index of their centres on a 2¹⁶
    /// grid over all boxes (only the grouping, hence query speed, depends on it); boxes with the
    /// same index keep their order.
    static func hilbertLeafOrder(_ boxes: [Double], _ n: Int) -> [Int32] {
        guard n > 1 else { return n == 1 ? [0] : [] }
        var keys = hilbertKeys(boxes, n)
        sortByHighHalf(&keys)
        // keys[j]'s low half is the box that is leaf j.
        return keys.map { Int32(truncatingIfNeeded: $0 & 0xFFFF_FFFF) }
    }

    /// Per leaf, the Hilbert index of its centre on a 2¹⁶ grid over all `n` boxes in the high
    /// half and the leaf's position in the low half: sorted, they give the tree's leaf order.
    static func hilbertKeys(_ boxes: [Double], _ n: Int) -> [UInt64] {
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        for i in 0..<n {
            minX = min(minX, boxes[4 * i]); minY = min(minY, boxes[4 * i + 1])
            maxX = max(maxX, boxes[4 * i + 2]); maxY = max(maxY, boxes[4 * i + 3])
        }
        let scaleX = maxX > minX ? 65535 / (maxX - minX) : 0
        let scaleY = maxY > minY ? 65535 / (maxY - minY) : 0
        return [UInt64](unsafeUninitializedCapacity: n) { keys, count in
            boxes.withUnsafeBufferPointer { boxes in
                func fill(_ range: Range<Int>) {
                    for i in range {
                        let x = UInt32(max(0, min(65535, ((boxes[4 * i] + boxes[4 * i + 2]) / 2 - minX) * scaleX)))
                        let y = UInt32(max(0, min(65535, ((boxes[4 * i + 1] + boxes[4 * i + 3]) / 2 - minY) * scaleY)))
                        keys[i] = UInt64(hilbert(x, y)) << 32 | UInt64(i)
                    }
                }
                if SplitWork.worthwhile(n) {
                    SplitWork.run({ fill(0..<(n / 2)) }, alongside: { fill((n / 2)..<n) })
                } else {
                    fill(0..<n)
                }
            }
            count = n
        }
    }

    /// Sorts keys by their high 32 bits, keeping the order of keys that tie there: a
    /// least-significant-digit radix sort, four passes of a byte (a pass every key shares a
    /// byte in is skipped). The keys' low halves are their positions, so the result is also the
    /// keys' full order.
    static func sortByHighHalf(_ keys: inout [UInt64]) {
        let n = keys.count
        guard n > 1 else { return }
        var other = [UInt64](repeating: 0, count: n)
        var counts = [Int](repeating: 0, count: 4 * 256)
        for k in keys {
            for pass in 0..<4 { counts[pass * 256 + Int(truncatingIfNeeded: (k >> (32 + 8 * pass)) & 0xFF)] += 1 }
        }
        for pass in 0..<4 {
            let base = pass * 256
            if counts[base..<(base + 256)].contains(n) { continue }
            var next = [Int](repeating: 0, count: 256)
            var sum = 0
            for b in 0..<256 {
                next[b] = sum
                sum += counts[base + b]
            }
            let shift = UInt64(32 + 8 * pass)
            keys.withUnsafeBufferPointer { from in
                other.withUnsafeMutableBufferPointer { to in
                    for k in from {
                        let b = Int(truncatingIfNeeded: (k >> shift) & 0xFF)
                        to[next[b]] = k
                        next[b] += 1
                    }
                }
            }
            swap(&keys, &other)
        }
    }

    /// Position of (x, y) along the Hilbert curve filling the 2¹⁶ × 2¹⁶ grid: the curve of the
    /// textbook loop (a quadrant, then a rotation or reflection, sixteen levels down; the tests
    /// keep that loop and compare), computed for all levels at once. Each level's rotation and
    /// reflection compose with the levels above it; that composition is a prefix scan, done
    /// here in four rounds of shifts over the sixteen levels' bits side by side instead of
    /// sixteen dependent steps, each branching on a bit of the point no predictor can learn.
    @inline(__always)
    static func hilbert(_ x: UInt32, _ y: UInt32) -> UInt32 {
        let m: UInt32 = 0xFFFF
        // Per level: the quadrant's transform as four bits (a, b: which swap or flip; c, d:
        // the state carried down), first for each level alone.
        var (a, b, c, d) = (x ^ y, m ^ (x ^ y), m ^ (x | y), x & (y ^ m))
        var bigA = a | (b >> 1)
        var bigB = (a >> 1) ^ a
        var bigC = ((c >> 1) ^ (b & (d >> 1))) ^ c
        var bigD = ((a & (c >> 1)) ^ (d >> 1)) ^ d
        // Then composed with 2, 4 and 8 levels above.
        @inline(__always) func compose(_ shift: UInt32) {
            (a, b, c, d) = (bigA, bigB, bigC, bigD)
            bigA = (a & (a >> shift)) ^ (b & (b >> shift))
            bigB = (a & (b >> shift)) ^ (b & ((a ^ b) >> shift))
            bigC ^= (a & (c >> shift)) ^ (b & (d >> shift))
            bigD ^= (b & (c >> shift)) ^ ((a ^ b) & (d >> shift))
        }
        compose(2)
        compose(4)
        compose(8)
        // Each level's two index bits, interleaved.
        a = bigC ^ (bigC >> 1)
        b = bigD ^ (bigD >> 1)
        let low = x ^ y
        let high = b | (m ^ (low | a))
        return interleaved(high) << 1 | interleaved(low)
    }

    /// The 16 bits of `v` spread to the even bits of the result.
    @inline(__always)
    static func interleaved(_ v: UInt32) -> UInt32 {
        var v = v & 0xFFFF
        v = (v | v << 8) & 0x00FF_00FF
        v = (v | v << 4) & 0x0F0F_0F0F
        v = (v | v << 2) & 0x3333_3333
        v = (v | v << 1) & 0x5555_5555
        return v
    }
}

extension PackedRTree.Builder {
    /// Adds the circle's envelopes (two where it crosses the antimeridian), all carrying `item`.
    mutating func append(_ circle: GeodesicCircle, item: Int) { append(circle.core, item: item) }

    /// The envelopes of the circle `core` describes.
    mutating func append(_ core: CircleCore, item: Int) {
        core.forEachEnvelope { e in
            append(minX: e.minLon, minY: e.minLat, maxX: e.maxLon, maxY: e.maxLat, item: Int32(item))
        }
    }
}
