import GeotriggerCore
import GeotriggerMonitoring
import GeotriggerRuntime

/// Strings as JSON string literals (quotes and escapes included) in fixed 16-byte slots: the
/// length in the first byte, then up to 15 bytes; 0 where the literal is longer (that string
/// takes the general path). One line of a contiguous table per string, so an event's id costs
/// at most one miss, which the monitor's prefetch overlaps. Owns its buffer, written only while it
/// is made: jobs on other threads share one.
package final class IDSlots: @unchecked Sendable {
    static let stride = 16
    let slots: UnsafeMutablePointer<UInt8>
    /// Slots allocated (every one of them zeroed or written).
    let capacity: Int

    /// The regions' ids: a part of loading the regions, made with the index.
    package convenience init(regions: [Region]) { self.init(regions.lazy.map(\.id)) }

    init<S: Collection>(_ strings: S) where S.Element == String {
        let n = max(1, strings.count)
        capacity = n
        slots = UnsafeMutableRawPointer.allocate(byteCount: n * Self.stride, alignment: 64)
            .bindMemory(to: UInt8.self, capacity: n * Self.stride)
        slots.initialize(repeating: 0, count: n * Self.stride)
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 6 * 16 + 2)
        defer { scratch.deallocate() }
        for (k, s) in strings.enumerated() { set(k, s, scratch: scratch) }
    }

    /// A copy of `other`'s first `count` slots, with room for `capacity` (the rest zeroed).
    init(copying other: IDSlots, count: Int, capacity: Int) {
        precondition(capacity >= count && count <= other.capacity)
        self.capacity = capacity
        slots = UnsafeMutableRawPointer.allocate(byteCount: capacity * Self.stride, alignment: 64)
            .bindMemory(to: UInt8.self, capacity: capacity * Self.stride)
        slots.initialize(from: other.slots, count: count * Self.stride)
        (slots + count * Self.stride).initialize(repeating: 0, count: (capacity - count) * Self.stride)
    }

    /// Writes string `k`'s slot (left 0 when its literal does not fit). Only while no other
    /// thread reads the table: as it is made, or by the one writer that owns a copy.
    func set(_ k: Int, _ s: String) {
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 6 * 16 + 2)
        defer { scratch.deallocate() }
        set(k, s, scratch: scratch)
    }

    private func set(_ k: Int, _ s: String, scratch: UnsafeMutablePointer<UInt8>) {
        precondition(k < capacity)
        guard s.utf8.count <= 16 else { return }
        var cursor = RecordCursor(scratch)
        cursor.putJSONString(s)
        let length = cursor.p - scratch
        guard length < Self.stride else { return }
        slots[k * Self.stride] = UInt8(length)
        (slots + k * Self.stride + 1).initialize(from: scratch, count: length)
    }

    deinit { slots.deallocate() }

    /// The slots as the table the monitor prefetches a region's entry of.
    var eventTable: RegionEventTable { RegionEventTable(base: UnsafeRawPointer(slots), stride: Self.stride) }

    /// String `k`'s slot.
    @inline(__always) func slot(_ k: Int) -> UnsafePointer<UInt8> { UnsafePointer(slots + k * Self.stride) }
}
