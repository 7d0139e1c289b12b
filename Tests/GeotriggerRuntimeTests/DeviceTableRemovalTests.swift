import GeotriggerCore
import Testing
@testable import GeotriggerRuntime

/// `DeviceTable.remove` (`--expire`): ids freed and reused, the hash table kept whole (backward
/// shift deletion), ranks in first-seen order, the name arena compacted.
@Suite("Device table: removal and reuse")
struct DeviceTableRemovalTests {
    @Test("every removal keeps the others findable; reused ids rank after everyone seen before")
    func removeAndReuse() {
        let table = DeviceTable(capacity: 16)
        var random = SplitMix64(seed: 7)
        var live: [String: Int32] = [:]
        var lastRank: UInt64 = 0
        var serial = 0
        for _ in 0..<20_000 {
            if live.count > 50 || (random.next() % 3 == 0 && !live.isEmpty) {
                let name = live.keys.sorted()[Int(random.next() % UInt64(live.count))]
                table.remove(live[name]!)
                live[name] = nil
                #expect(table.rank(Int32(0)) >= 0)
            } else {
                let name = "device-\(serial)-" + String(repeating: "x", count: Int(random.next() % 30))
                serial += 1
                var n = name
                let (id, isNew) = n.withByteView { table.intern($0) }
                #expect(isNew)
                #expect(table.rank(id) >= lastRank)
                lastRank = table.rank(id)
                live[name] = id
            }
        }
        #expect(table.count <= 60)
        #expect(table.liveCount == live.count)
        #expect(table.nextRank == UInt64(serial))
        for (name, id) in live {
            var n = name
            let (found, isNew) = n.withByteView { table.intern($0) }
            #expect(found == id && !isNew)
            #expect(table.name(id) == name)
        }
        // The arena holds little beyond the live names.
        let liveBytes = live.keys.reduce(0) { $0 + $1.utf8.count }
        #expect(Int(table.arena.count) <= max(2 * liveBytes, 4096 + liveBytes))
    }

    @Test("a removed name is new again: not found by the successor guess either")
    func removedIsNew() {
        let table = DeviceTable()
        let a = table.intern("a"), b = table.intern("b")
        _ = table.intern("a")
        _ = table.intern("b")  // b is a's successor now
        table.remove(b)
        #expect(!table.isLive(b))
        _ = table.intern("a")
        var name = "b"
        let (id, isNew) = name.withByteView { table.intern($0) }
        #expect(isNew && id == b)
        #expect(table.rank(a) == 0 && table.rank(id) == 2)
    }
}
