import GeotriggerCore
import GeotriggerMonitoring
import GeotriggerRuntime

/// A string as a JSON string literal (quotes and escapes included) in 16 bytes: the length in
/// the first byte, then up to 15 bytes of the literal; length 0 where the literal is longer
/// (that string takes the general path). Little-endian: byte k of the slot is byte k % 8 of
/// `low` (k < 8) or of `high`.
struct IDSlot {
    var low: UInt64 = 0
    var high: UInt64 = 0

    /// The literal's length; 0 when it did not fit.
    var length: Int { Int(low & 0xFF) }

    /// The slot of `literal` (empty when it takes more than 15 bytes): from 4 bytes on, as its
    /// first and last words, shifted into place (where they overlap they hold the same bytes).
    init(literal: ByteView) {
        let n = literal.count
        guard n < 16 else { return }
        if n >= 8 {
            let (first, last) = RecordCursor.edgeWords(of: literal, as: UInt64.self)
            low = UInt64(n) | first << 8
            high = last >> (8 * (15 - n))
        } else if n >= 4 {
            let (first, last) = RecordCursor.edgeWords(of: literal, as: UInt32.self)
            low = UInt64(n) | UInt64(first) << 8 | UInt64(last) << (8 * (n - 3))
        } else {
            low = UInt64(n)
            for (k, b) in literal.enumerated() { low |= UInt64(b) << (8 * (k + 1)) }
        }
    }

    init() {}
}

/// Strings as JSON string literals in fixed 16-byte slots (`IDSlot`). One slot per string in a
/// contiguous table, each within one cache line, so an event's id costs at most one miss, which
/// the monitor's prefetch overlaps. Owns its table, written only while it is made: jobs on other
/// threads share one.
package final class IDSlots: @unchecked Sendable {
    /// A `let`: the list's slots are written through its pointer, and reading a class's `var`
    /// costs a dynamic exclusivity check, on every event written.
    private let slots: PodList<IDSlot>
    /// Slots allocated (every one of them empty or written).
    var capacity: Int { Int(slots.count) }

    /// The regions' ids: a part of loading the regions, made with the index.
    /// Reads each region's id in place (a region copied whole would retain all it holds).
    package init(regions: [Region]) {
        var list = PodList<IDSlot>()
        list.reserve(max(1, regions.count))
        let scratch = RecordBuffer(memory: ())
        for r in regions.indices { list.append(Self.slot(of: regions[r].id, scratch)) }
        if list.isEmpty { list.append(IDSlot()) }
        slots = list
    }

    /// A copy of `other`'s first `count` slots, with room for `capacity` (the rest empty).
    init(copying other: IDSlots, count: Int, capacity: Int) {
        precondition(capacity >= count && count <= other.capacity)
        var list = PodList<IDSlot>()
        list.reserve(capacity)
        for k in 0..<count { list.append(other.slots[k]) }
        while Int(list.count) < capacity { list.append(IDSlot()) }
        slots = list
    }

    /// Writes string `k`'s slot (left empty when its literal does not fit). Only while no other
    /// thread reads the table: as it is made, or by the one writer that owns a copy.
    func set(_ k: Int, _ s: String) {
        precondition(k < capacity)
        slots[k] = Self.slot(of: s, RecordBuffer(memory: ()))
    }

    /// `s`'s slot, its literal written in `scratch` first.
    private static func slot(of s: String, _ scratch: RecordBuffer) -> IDSlot {
        guard s.utf8.count <= 16 else { return IDSlot() }
        scratch.discardPending()
        scratch.appendJSONString(s)
        return scratch.withPending { IDSlot(literal: $0) }
    }

    deinit {
        var owned = slots
        owned.free()
    }

    /// The slots as the table the monitor prefetches a region's entry of.
    var eventTable: RegionEventTable { RegionEventTable(slots) }

    /// String `k`'s slot.
    @inline(__always) func slot(_ k: Int) -> IDSlot { slots[k] }
}
