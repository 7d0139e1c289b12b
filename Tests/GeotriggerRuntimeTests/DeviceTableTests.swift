import Testing
import GeotriggerCore
@testable import GeotriggerRuntime

@Suite struct DeviceTableTests {
    /// Names of every length up to 40, and for each length names that differ from a base name in
    /// one byte at each position (the comparison reads 2-, 4- and 8-byte words that overlap): the
    /// table gives each name one id and the same id every time, as a dictionary does, whether a
    /// lookup goes through the successor guess (the same order again) or the hash (shuffled).
    @Test func internsLikeADictionary() {
        var names: [[UInt8]] = []
        for n in 0...40 {
            let base = (0..<n).map { UInt8(97 + ($0 * 7 + n) % 26) }
            names.append(base)
            for k in 0..<n {
                var other = base
                other[k] = other[k] == 0x5A ? 0x59 : 0x5A
                names.append(other)
            }
        }
        let table = DeviceTable(capacity: 4)
        var truth: [[UInt8]: Int32] = [:]
        var rng = SplitMix64(seed: 9)
        let rounds = [names, names, names.shuffled(using: &rng), names, names.reversed()]
        for round in rounds {
            for name in round {
                let (id, isNew) = name.withByteView { table.intern($0) }
                if let known = truth[name] {
                    #expect(id == known && !isNew, "\(name)")
                } else {
                    #expect(isNew && Int(id) == truth.count, "\(name)")
                    truth[name] = id
                }
            }
        }
        #expect(table.count == names.count)
        for (name, id) in truth { #expect(Array(table.nameBytes(id)) == name) }
    }

    /// `successor(of:)` is the device interned right after the given one the last time it was
    /// interned; −1 before any, and for an id the table has not given.
    @Test func successorIsTheNextDeviceOfLastTime() {
        let table = DeviceTable()
        let a = table.intern("a"), b = table.intern("b"), c = table.intern("c")
        #expect(table.successor(of: a) == b && table.successor(of: b) == c && table.successor(of: c) == -1)
        _ = table.intern("a")
        _ = table.intern("c")
        #expect(table.successor(of: c) == a && table.successor(of: a) == c && table.successor(of: b) == c)
        #expect(table.successor(of: 3) == -1 && table.successor(of: -1) == -1)
    }
}
