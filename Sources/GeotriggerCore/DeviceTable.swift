/// Interns device identifiers (UTF-8 bytes) to dense integer ids without allocating per lookup.
///
/// Open addressing over a power-of-two table of slots; names live back to back in one byte arena.
/// Lookups hash the bytes (FNV-1a) and compare with `memcmp`, so a known device costs no allocation.
public final class DeviceTable {
    @exclusivity(unchecked) private var slots: [Int32]          // device id + 1, 0 = empty
    @exclusivity(unchecked) private var hashes: [UInt64] = []     // per device
    @exclusivity(unchecked) private var offsets: [Int] = []       // per device, into `arena`
    @exclusivity(unchecked) private var lengths: [Int32] = []
    @exclusivity(unchecked) private var arena: [UInt8] = []
    /// Ranks set with `setRank`; devices beyond it rank by id.
    @exclusivity(unchecked) private var ranks: [UInt64] = []
    private var mask: Int

    public init(capacity: Int = 1024) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = [Int32](repeating: 0, count: size)
        mask = size - 1
    }

    /// Number of devices seen.
    public var count: Int { offsets.count }

    /// The id of `name`, adding it if new. `isNew` tells whether it was just added.
    @inline(__always)
    public func intern(_ name: UnsafeRawBufferPointer) -> (id: Int32, isNew: Bool) {
        let h = Self.hash(name)
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let s = slots[i]
            if s == 0 { break }
            let id = Int(s - 1)
            if hashes[id] == h && equals(id, name) { return (Int32(id), false) }
            i = (i + 1) & mask
        }
        let id = Int32(offsets.count)
        slots[i] = id + 1
        hashes.append(h)
        offsets.append(arena.count)
        lengths.append(Int32(name.count))
        arena.append(contentsOf: name)
        if offsets.count * 2 > slots.count { grow() }
        return (id, true)
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
        let o = offsets[Int(id)], n = Int(lengths[Int(id)])
        return arena.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[o..<(o + n)])) }
    }

    public func name(_ id: Int32) -> String {
        withName(id) { String(decoding: $0, as: UTF8.self) }
    }

    private func equals(_ id: Int, _ name: UnsafeRawBufferPointer) -> Bool {
        let n = Int(lengths[id])
        guard n == name.count else { return false }
        if n == 0 { return true }
        let o = offsets[id]
        return arena.withUnsafeBytes { memcmp($0.baseAddress! + o, name.baseAddress!, n) == 0 }
    }

    private func grow() {
        let size = slots.count * 2
        slots = [Int32](repeating: 0, count: size)
        mask = size - 1
        for id in 0..<offsets.count {
            var i = Int(truncatingIfNeeded: hashes[id]) & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = Int32(id + 1)
        }
    }

    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes {
            h ^= UInt64(b)
            h &*= 0x0000_0100_0000_01b3
        }
        // FNV's low bits mix poorly for short keys; fold the high half in.
        return h ^ (h >> 29)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
