/// Interns device identifiers (UTF-8 bytes) to dense integer ids without allocating per lookup.
///
/// Open addressing over a power-of-two table of slots; names live back to back in one byte arena.
/// Lookups hash the bytes (FNV-1a) and compare with `memcmp`, so a known device costs no allocation.
///
/// Streams often repeat an order: a fleet reports every vehicle in the same sequence each tick.
/// So each device remembers which device came after it last time (`successor(of:)`); a lookup
/// first compares with that guess and skips the hash when it is right, and callers can prefetch
/// what the next reading will touch. A wrong guess costs one comparison, and ids never depend on it.
public final class DeviceTable {
    @exclusivity(unchecked) private var slots: [Int32]          // device id + 1, 0 = empty
    /// Per device, where its name lies in `arena`.
    @exclusivity(unchecked) @usableFromInline var names = PodList<NameSpan>()
    /// The names back to back, owned here (a raw buffer, so reading a name costs no reference
    /// counting).
    @exclusivity(unchecked) @usableFromInline var arena = PodList<UInt8>()
    /// Ranks set with `setRank`; devices beyond it rank by id.
    @exclusivity(unchecked) private var ranks: [UInt64] = []
    private var mask: Int
    /// Per device, the device interned right after it last time (−1 = none yet).
    /// A raw list, so that `successor(of:)` inlines into the monitor's prefetching.
    @exclusivity(unchecked) @usableFromInline var successors = PodList<Int32>()
    /// The device interned last (−1 = none yet).
    @exclusivity(unchecked) @usableFromInline var previous: Int32 = -1

    @usableFromInline struct NameSpan {
        @usableFromInline var offset: UInt32
        @usableFromInline var length: UInt32
    }

    public init(capacity: Int = 1024) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = [Int32](repeating: 0, count: size)
        mask = size - 1
        arena.reserve(4096)
    }

    deinit {
        arena.free()
        successors.free()
        names.free()
    }

    /// Number of devices seen.
    public var count: Int { Int(names.count) }

    /// The id of `name`, adding it if new. `isNew` tells whether it was just added. The guess
    /// (the successor of the device interned last) is tried inline; the hash out of line.
    @inlinable @inline(__always)
    public func intern(_ name: UnsafeRawBufferPointer) -> (id: Int32, isNew: Bool) {
        if previous >= 0 {
            let guess = successors[Int(previous)]
            if guess >= 0 && equals(Int(guess), name) {
                previous = guess
                return (guess, false)
            }
        }
        return internByHash(name)
    }

    @usableFromInline
    func internByHash(_ name: UnsafeRawBufferPointer) -> (id: Int32, isNew: Bool) {
        let h = Self.hash(name)
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let s = slots[i]
            if s == 0 { break }
            let id = Int(s - 1)
            // Names are compared whole: no hash is kept per device (8 bytes each), and the guess
            // above finds most devices without coming here.
            if equals(id, name) {
                follow(Int32(id))
                return (Int32(id), false)
            }
            i = (i + 1) & mask
        }
        let id = Int32(names.count)
        successors.append(-1)
        follow(id)
        slots[i] = id + 1
        precondition(Int(arena.count) + name.count <= Int(UInt32.max), "device names beyond 4 GiB")
        names.append(NameSpan(offset: UInt32(arena.count), length: UInt32(name.count)))
        arena.append(contentsOf: name.assumingMemoryBound(to: UInt8.self))
        if Int(names.count) * 2 > slots.count { grow() }
        return (id, true)
    }

    @inline(__always)
    private func follow(_ id: Int32) {
        if previous >= 0 { successors[Int(previous)] = id }
        previous = id
    }

    /// The device interned right after `id` the last time `id` was interned, or −1.
    @inlinable @inline(__always)
    public func successor(of id: Int32) -> Int32 {
        UInt32(bitPattern: id) < UInt32(bitPattern: successors.count) ? successors[Int(id)] : -1
    }

    /// Starts loading the name of `id` into the cache (for the comparison of a coming `intern`).
    @inline(__always)
    public func prefetchName(_ id: Int32) {
        guard id >= 0 && id < names.count else { return }
        let o = Int(names[Int(id)].offset)
        geotrigger_prefetch(arena.base.map { $0 + o })
    }

    /// The id of `name`, adding it if new.
    public func intern(_ name: String) -> Int32 {
        var name = name
        return name.withUTF8 { intern(UnsafeRawBufferPointer($0)).id }
    }

    /// Orders timers due at the same time across devices (`TimerQueue`): the device's id unless
    /// `setRank` gave another. A replay job interns only its share of the devices and ranks each by
    /// the id the whole run gives it, so ties fire in the same order as on one thread.
    @inline(__always)
    public func rank(_ id: Int32) -> UInt64 {
        Int(id) < ranks.count ? ranks[Int(id)] : UInt64(UInt32(bitPattern: id))
    }

    public func setRank(_ id: Int32, _ rank: UInt64) {
        while ranks.count <= Int(id) { ranks.append(UInt64(ranks.count)) }
        ranks[Int(id)] = rank
    }

    /// The name's bytes; valid until the next `intern` of a new device.
    public func withName<R>(_ id: Int32, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        body(nameBytes(id))
    }

    /// The name's bytes; valid until the next `intern` of a new device.
    public func nameBytes(_ id: Int32) -> UnsafeRawBufferPointer {
        let span = names[Int(id)]
        return UnsafeRawBufferPointer(start: arena.base.map { $0 + Int(span.offset) }, count: Int(span.length))
    }

    public func name(_ id: Int32) -> String {
        withName(id) { String(decoding: $0, as: UTF8.self) }
    }

    @inlinable @inline(__always)
    func equals(_ id: Int, _ name: UnsafeRawBufferPointer) -> Bool {
        let span = names[id]
        let n = Int(span.length)
        guard n == name.count else { return false }
        if n == 0 { return true }
        return Self.sameBytes(UnsafeRawPointer(arena.base.unsafelyUnwrapped + Int(span.offset)), name.baseAddress!, n)
    }

    /// Whether `n` (> 0) bytes at `a` and `b` are equal. Up to 16 bytes (most device ids) as two
    /// overlapping words of 8, 4 or 2 bytes (or one byte), reading nothing outside either run;
    /// longer ones by `memcmp`.
    @inlinable @inline(__always)
    static func sameBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
        @inline(__always) func pair<W: FixedWidthInteger>(_: W.Type) -> Bool {
            let last = n - MemoryLayout<W>.size
            return a.loadUnaligned(as: W.self) == b.loadUnaligned(as: W.self)
                && a.loadUnaligned(fromByteOffset: last, as: W.self) == b.loadUnaligned(fromByteOffset: last, as: W.self)
        }
        if n >= 8 { return n <= 16 ? pair(UInt64.self) : sameLongBytes(a, b, n) }
        if n >= 4 { return pair(UInt32.self) }
        if n >= 2 { return pair(UInt16.self) }
        return a.load(as: UInt8.self) == b.load(as: UInt8.self)
    }

    @usableFromInline
    static func sameLongBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool { memcmp(a, b, n) == 0 }

    private func grow() {
        let size = slots.count * 2
        slots = [Int32](repeating: 0, count: size)
        mask = size - 1
        for id in 0..<Int(names.count) {
            var i = Int(truncatingIfNeeded: Self.hash(nameBytes(Int32(id)))) & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = Int32(id + 1)
        }
    }

    /// FNV-1a (64 bits) of `bytes`: the one hash of ids in this package (device and region ids,
    /// and which `replay --jobs` job a device goes to).
    @inlinable @inline(__always)
    public static func fnv1a<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes {
            h ^= UInt64(b)
            h &*= 0x0000_0100_0000_01b3
        }
        return h
    }

    /// FNV-1a for a hash table's slot: FNV's low bits mix poorly for short keys, so the high half
    /// is folded in.
    @inlinable @inline(__always)
    public static func hash<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        let h = fnv1a(bytes)
        return h ^ (h >> 29)
    }
}

import CPrefetch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DeviceTable {
    /// Every device's name, in id order, and its rank (`rank(_:)`), for a checkpoint.
    public func writeSnapshot(to w: inout SnapshotWriter) {
        w.tag("devices")
        w.count(count)
        for id in 0..<Int32(count) {
            w.raw(nameBytes(id))
            w.varint(rank(id))
        }
    }

    /// The names and ranks `writeSnapshot` wrote, each name handed to `intern` (which must intern
    /// it here, in order, as the engine's `device(_:)` does with its per-device state).
    public static func readSnapshot(from r: inout SnapshotReader) throws(SnapshotError) -> [(name: [UInt8], rank: UInt64)] {
        try r.expect("devices")
        return try r.list { r throws(SnapshotError) in (try r.raw(), try r.varint()) }
    }
}
