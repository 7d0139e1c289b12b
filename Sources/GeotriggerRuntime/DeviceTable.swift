import GeotriggerCore
/// Interns device identifiers (UTF-8 bytes) to dense integer ids without allocating per lookup.
///
/// Open addressing over a power-of-two table of slots; names live back to back in one byte arena.
/// Lookups hash the bytes (FNV-1a) and compare them in the arena, so a known device costs no
/// allocation.
///
/// Streams often repeat an order: a fleet reports every vehicle in the same sequence each tick.
/// So each device remembers which device came after it last time (`successor(of:)`); a lookup
/// first compares with that guess and skips the hash when it is right, and callers can prefetch
/// what the next reading will touch. A wrong guess costs one comparison, and ids never depend on it.
///
/// A device can be removed (`remove`, for `--expire`): its id goes on a free list and is given to
/// the next new name, its name's bytes are reclaimed when the arena is compacted, and its rank
/// changes. Ids then no longer follow first-seen order, ranks still do: every new device (a new
/// id or a reused one) takes the next value of a counter, so it ranks after every device seen
/// before. Without removals a device's rank is its id, as before.
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
    /// Ids given back by `remove`, the next to reuse last (a stack).
    private var freeIDs: [Int32] = []
    /// The rank the next new device takes: how many devices were ever added.
    public private(set) var nextRank: UInt64 = 0
    /// Bytes of the arena that belong to removed names (reclaimed by `compactArena`).
    private var deadBytes = 0
    /// A removed id's name: a length no name has, so no lookup ever matches it.
    @usableFromInline static let removedSpan = NameSpan(offset: 0, length: UInt32.max)

    @usableFromInline struct NameSpan: Sendable {
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

    /// Number of ids given out: devices live now and ids removed (free for reuse). Ids run from 0
    /// to `count − 1`; without removals, the number of devices seen.
    public var count: Int { Int(names.count) }

    /// Number of devices live now (not removed).
    public var liveCount: Int { Int(names.count) - freeIDs.count }

    /// Whether `id` names a device now (not a removed id waiting for reuse).
    public func isLive(_ id: Int32) -> Bool {
        id >= 0 && Int(id) < Int(names.count) && names[Int(id)].length != Self.removedSpan.length
    }

    /// The removed ids waiting for reuse, the next to be reused last.
    public var freeList: [Int32] { freeIDs }

    /// The id of `name`, adding it if new. `isNew` tells whether it was just added. The guess
    /// (the successor of the device interned last) is tried inline; the hash out of line.
    @inlinable @inline(__always)
    package func intern(_ view: ByteView) -> (id: Int32, isNew: Bool) {
        if previous >= 0 {
            let guess = successors[Int(previous)]
            if guess >= 0 && equals(Int(guess), view) {
                previous = guess
                return (guess, false)
            }
        }
        return internByHash(view)
    }

    @usableFromInline
    func internByHash(_ name: ByteView) -> (id: Int32, isNew: Bool) {
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
        precondition(Int(arena.count) + name.count < Int(UInt32.max), "device names beyond 4 GiB")
        let span = NameSpan(offset: UInt32(arena.count), length: UInt32(name.count))
        let id: Int32
        if let reused = freeIDs.popLast() {
            id = reused
            successors[Int(id)] = -1
            names[Int(id)] = span
        } else {
            id = Int32(names.count)
            successors.append(-1)
            names.append(span)
        }
        follow(id)
        slots[i] = id + 1
        arena.append(contentsOf: name)
        // A new device ranks after every one seen before; without removals its rank is its id
        // and nothing is stored.
        if nextRank != UInt64(UInt32(bitPattern: id)) || Int(id) < ranks.count { setRank(id, nextRank) }
        nextRank += 1
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
        arena.prefetch(at: o)
    }

    /// The id of `name`, adding it if new.
    public func intern(_ name: String) -> Int32 {
        var name = name
        return name.withByteView { intern($0).id }
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
    package func withName<R>(_ id: Int32, _ body: (ByteView) -> R) -> R {
        body(nameBytes(id))
    }

    /// The name's bytes; valid until the next `intern` of a new device.
    package func nameBytes(_ id: Int32) -> ByteView {
        let span = names[Int(id)]
        return arena.view(from: Int(span.offset), count: Int(span.length))
    }

    public func name(_ id: Int32) -> String {
        withName(id) { $0.string }
    }

    @inlinable @inline(__always)
    func equals(_ id: Int, _ name: ByteView) -> Bool {
        let span = names[id]
        guard Int(span.length) == name.count else { return false }
        return arena.bytesEqual(from: Int(span.offset), name)
    }


    /// Removes a device (`--expire`): its name no longer finds it, its id is reused by the next
    /// new name, and its rank becomes one no device has (so a timer armed for it, which carries
    /// its rank, is known stale: `TimerQueue`). Its name's bytes are reclaimed once removed names
    /// take half the arena. Names read before (`nameBytes`) are invalid after this call.
    public func remove(_ id: Int32) {
        precondition(isLive(id), "removing device \(id), which is not live")
        // Linear probing without tombstones: empty the slot, then move back each following entry
        // of the run that would no longer be found (backward-shift deletion).
        var i = Int(truncatingIfNeeded: Self.hash(nameBytes(id))) & mask
        while slots[i] != id + 1 { i = (i + 1) & mask }
        slots[i] = 0
        var j = i
        while true {
            j = (j + 1) & mask
            let s = slots[j]
            if s == 0 { break }
            let home = Int(truncatingIfNeeded: Self.hash(nameBytes(s - 1))) & mask
            // Whether `home` lies cyclically in (i, j]: then the entry stays.
            let stays = i <= j ? (home > i && home <= j) : (home > i || home <= j)
            if !stays {
                slots[i] = s
                slots[j] = 0
                i = j
            }
        }
        deadBytes += Int(names[Int(id)].length)
        names[Int(id)] = Self.removedSpan
        successors[Int(id)] = -1
        if previous == id { previous = -1 }
        setRank(id, .max)
        freeIDs.append(id)
        if deadBytes > 4096 && deadBytes * 2 > Int(arena.count) { compactArena() }
    }

    /// Makes `id` a new device under the same name (`--expire` forgot it while its next reading
    /// was being applied, after the name had been looked up): a fresh rank, as `intern` gives.
    public func renew(_ id: Int32) {
        precondition(isLive(id), "renewing device \(id), which is not live")
        setRank(id, nextRank)
        nextRank += 1
    }

    /// Sets the rank the next new device (`intern`) or renewal (`renew`) takes. `replay --jobs`:
    /// the reader counts ranks over the whole run, and a job's table takes each of its devices'
    /// from it, so its timers tie and its `--state-out` entry sorts as on one thread.
    public func setNextRank(_ rank: UInt64) { nextRank = rank }

    /// Copies the live names into a new arena, in id order, dropping removed ones' bytes.
    private func compactArena() {
        var fresh = PodList<UInt8>()
        fresh.reserve(max(4096, Int(arena.count) - deadBytes))
        for id in 0..<Int(names.count) where names[id].length != Self.removedSpan.length {
            let bytes = nameBytes(Int32(id))
            names[id].offset = UInt32(fresh.count)
            fresh.append(contentsOf: bytes)
        }
        arena.free()
        arena = fresh
        deadBytes = 0
    }

    /// Restores the free list and the rank counter of a checkpoint (`readSnapshot`): the ids
    /// listed, interned already under placeholder names, are removed in the list's order, so the
    /// free list is the one written.
    public func restoreRemovals(free: [Int32], nextRank: UInt64) {
        for id in free { remove(id) }
        self.nextRank = nextRank
    }

    private func grow() {
        let size = slots.count * 2
        slots = [Int32](repeating: 0, count: size)
        mask = size - 1
        for id in 0..<Int(names.count) where names[id].length != Self.removedSpan.length {
            var i = Int(truncatingIfNeeded: Self.hash(nameBytes(Int32(id)))) & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = Int32(id + 1)
        }
    }

    /// FNV-1a (64 bits) of `bytes`: the one hash of ids in this package (device and region ids,
    /// and which `replay --jobs` job a device goes to).
    @inlinable @inline(__always)
    public static func fnv1a<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        // Bytes in place (a name's view, an array) are read without an index check a byte.
        if let h = bytes.withContiguousStorageIfAvailable({ fnv1a(bytes: $0) }) { return h }
        return fnv1a(bytes: bytes)
    }

    @inlinable @inline(__always)
    static func fnv1a<Bytes: Sequence>(bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
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
    /// Every device's name, in id order, and its rank (`rank(_:)`), for a checkpoint; then the
    /// removed ids waiting for reuse and the rank counter (`--expire`). A removed id's name is
    /// written empty.
    public func writeSnapshot(to w: inout SnapshotWriter) {
        w.tag("devices")
        w.count(count)
        for id in 0..<Int32(count) {
            if isLive(id) { w.raw(nameBytes(id)) } else { w.raw([UInt8]()) }
            w.varint(rank(id))
        }
        w.list(freeIDs) { w, id in w.i32(id) }
        w.varint(nextRank)
    }

    /// What `writeSnapshot` wrote. Each name is to be handed to `intern` in order (as the engine's
    /// `device(_:)` does with its per-device state), a removed id's under a placeholder name no
    /// device can have, then `restoreRemovals(free:nextRank:)`.
    public static func readSnapshot(from r: inout SnapshotReader) throws(SnapshotError)
        -> (devices: [(name: [UInt8], rank: UInt64)], free: [Int32], nextRank: UInt64) {
        try r.expect("devices")
        let devices = try r.list { r throws(SnapshotError) in (try r.raw(), try r.varint()) }
        var seen = Set<Int32>()
        let free = try r.list { r throws(SnapshotError) -> Int32 in
            let id = try r.i32()
            guard id >= 0, Int(id) < devices.count, seen.insert(id).inserted else {
                throw SnapshotError("snapshot frees device \(id) of \(devices.count)")
            }
            return id
        }
        return (devices, free, try r.varint())
    }

    /// Restores a checkpoint's table (the engine's, or `replay --jobs`' reader's): each name
    /// handed to `intern` in id order (which interns it here, and may make per-device state as
    /// it does), a removed id's under a placeholder name, then the removals and the rank counter.
    public func restore(names: [[UInt8]], free: [Int32], nextRank: UInt64,
                        intern: (ByteView) -> Int32) throws(SnapshotError) {
        let removed = Set(free)
        for (id, name) in names.enumerated() {
            let bytes = removed.contains(Int32(id)) ? Self.placeholderName(Int32(id)) : name
            guard bytes.withByteView(intern) == Int32(id) else { throw SnapshotError("snapshot lists device \(id) twice") }
        }
        restoreRemovals(free: free, nextRank: nextRank)
    }

    /// A placeholder name for a removed id while a checkpoint is restored: not valid UTF-8 that any
    /// reading could carry (device ids are decoded text), and unique per id.
    public static func placeholderName(_ id: Int32) -> [UInt8] {
        var name: [UInt8] = [0xFF, 0xFE]
        name.appendLittleEndian(id)
        return name
    }
}
