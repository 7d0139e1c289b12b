@testable import GeotriggerMonitoring
import GeotriggerRuntime
import Testing

/// Replaces `near`'s entries with `entries` through a `PodList`, as the monitor does.
private func assign(_ near: inout Neighbourhood, _ entries: [Monitor.NearRegion]) {
    var list = PodList<Monitor.NearRegion>()
    defer { list.free() }
    for e in entries { list.append(e) }
    near.assign(list)
}

/// The fast path skips a region until the odometer reaches its clearance: a region whose
/// clearance equals the odometer must come due, or a boundary could be crossed unnoticed. These
/// check `Neighbourhood`'s sixteen-at-a-time scan against a plain loop, ties included.
@Suite("Neighbourhood")
struct NeighbourhoodTests {
    /// SplitMix64, so every run checks the same lists.
    struct Values {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    @Test(arguments: [1, 5, 15, 16, 17, 31, 32, 33, 70])
    func dueEntriesAndTheNextOneMatchAPlainLoop(count: Int) {
        var values = Values(state: UInt64(count))
        // Few distinct clearances, so many equal the limit exactly.
        let entries = (0..<count).map { i in
            Monitor.NearRegion(key: UInt32(i) << 1 | UInt32(values.below(2)), clearance: Float(values.below(12)) * 0.5)
        }
        var near = Neighbourhood()
        defer { near.free() }
        assign(&near, entries)
        #expect(Int(near.count) == count)
        #expect(near.blocks == (count + 15) / 16)
        for limit: Float in [-1, 0, 0.5, 2, 2.25, 5.5, 100] {
            var due: [Int] = []
            var rest = Float.infinity
            for b in 0..<near.blocks {
                var mask = near.due(block: b, limit: limit, rest: &rest)
                while mask != 0 {
                    due.append(16 * b + mask.trailingZeroBitCount)
                    mask &= mask - 1
                }
            }
            let expectedDue = entries.indices.filter { entries[$0].clearance <= limit }
            let expectedRest = entries.map(\.clearance).filter { $0 > limit }.min() ?? .infinity
            #expect(due == expectedDue, "\(count) entries, limit \(limit)")
            #expect(rest == expectedRest, "\(count) entries, limit \(limit)")
            // Entries come back as stored, in region order.
            #expect(due.map { near[$0].key } == expectedDue.map { entries[$0].key })
        }
    }

    /// A list that shrinks keeps its buffer: the old entries past the new end must never come due.
    @Test func aShorterListLeavesNothingDueBehindIt() {
        var near = Neighbourhood()
        defer { near.free() }
        let long = (0..<40).map { Monitor.NearRegion(key: UInt32($0) << 1, clearance: 0) }
        assign(&near, long)
        let short = (0..<3).map { Monitor.NearRegion(key: UInt32($0) << 1, clearance: 10) }
        assign(&near, short)
        var rest = Float.infinity
        #expect(near.blocks == 1)
        #expect(near.due(block: 0, limit: 5, rest: &rest) == 0)
        #expect(rest == 10)
        #expect(near.due(block: 0, limit: 10, rest: &rest) == 0b111)
        let empty: [Monitor.NearRegion] = []
        assign(&near, empty)
        #expect(near.count == 0 && near.blocks == 0)
    }

    /// A list a few entries shorter than the last keeps its room: the entries it leaves behind,
    /// due at once, must not come due, nor name a region to prefetch past the room.
    @Test(arguments: [(8, 5), (8, 1), (20, 17), (19, 13)])
    func aSlightlyShorterListInTheSameRoomLeavesNothingDue(long: Int, short: Int) {
        var near = Neighbourhood()
        defer { near.free() }
        let first = (0..<long).map { Monitor.NearRegion(key: UInt32($0 + 1) << 1, clearance: 0) }
        assign(&near, first)
        let second = (0..<short).map { Monitor.NearRegion(key: UInt32($0 + 1) << 1, clearance: 10) }
        assign(&near, second)
        #expect(Int(near.count) == short)
        var rest = Float.infinity
        for b in 0..<near.blocks {
            #expect(near.due(block: b, limit: 5, rest: &rest) == 0)
            let region = near.dueRegion(block: b, 0)
            #expect(region == 0 || Int(region) <= short, "block \(b) names region \(region)")
        }
        #expect(rest == 10)
    }
}
