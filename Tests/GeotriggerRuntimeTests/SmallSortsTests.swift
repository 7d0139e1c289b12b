import Testing
import GeotriggerCore
@testable import GeotriggerRuntime

/// The sorts of the hot path (candidate regions, neighbourhoods) against the standard library's.
@Suite struct SmallSortsTests {
    /// A deterministic stream of values with many repeats (regions listed twice, equal clearances).
    struct Values {
        var state: UInt64
        mutating func next(below bound: UInt64) -> Int32 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int32((state >> 33) % bound)
        }
    }

    @Test(arguments: [0, 1, 2, 15, 16, 17, 40, 57, 58, 300, 2000])
    func smallSortMatchesTheStandardSort(count: Int) {
        var values = Values(state: UInt64(count) + 1)
        for bound: UInt64 in [3, 1000, 1 << 31] {
            var a = (0..<count).map { _ in values.next(below: bound) }
            let expected = a.sorted()
            a.smallSort()
            #expect(a == expected, "\(count) values below \(bound)")
        }
    }

    @Test(arguments: [5, 16, 17, 64])
    func smallSortByAKeyOrdersTheKeys(count: Int) {
        var values = Values(state: 99)
        var pairs = (0..<count).map { i in (key: Float(values.next(below: 10)), id: i) }
        pairs.smallSort { $0.key < $1.key }
        #expect(pairs.map(\.key) == pairs.map(\.key).sorted())
        #expect(Set(pairs.map(\.id)) == Set(0..<count))
    }

    /// A slice keeps its indices: the sorts touch its elements only, from its start.
    @Test(arguments: [5, 40])
    func sortingASliceLeavesTheRestAlone(count: Int) {
        var values = Values(state: 7)
        var a = (0..<count + 6).map { _ in values.next(below: 100) }
        let before = a
        a[3..<(count + 3)].smallSort()
        #expect(Array(a[3..<(count + 3)]) == before[3..<(count + 3)].sorted())
        #expect(a[..<3] == before[..<3] && a[(count + 3)...] == before[(count + 3)...])
    }

    @Test func insertionSortIsStable() {
        var pairs = [(2, "a"), (1, "b"), (2, "c"), (1, "d"), (0, "e")]
        pairs.insertionSort { $0.0 < $1.0 }
        #expect(pairs.map(\.1) == ["e", "b", "d", "a", "c"])
    }
}
