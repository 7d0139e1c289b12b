import CPrefetch

/// A device's visits in region order: 12 bytes a visit, as two arrays in one buffer, the entry
/// times (Double) and then the keys (UInt32: the region shifted left by two, bit 1 dwelled,
/// bit 0 silent).
///
/// A city device is inside about 20 circles at once, so its visits are most of what it holds.
/// As 16-byte structs (region, flags, time) with capacity grown by half they took about 525 bytes;
/// here they take about 12 × (n + n/8) and the region search reads only the keys, a third of the
/// bytes. Capacity follows the list both ways: it grows by an eighth and shrinks when a list
/// falls below half of it, so a device that once crossed a dense spot does not keep its room.
///
/// A value type with manual ownership, like `PodList`: the device state holds the one live copy
/// and calls `free()` once; other copies are views that must not outlive an edit.
struct VisitList {
    private var storage: UnsafeMutableRawPointer?
    private(set) var count: Int32 = 0
    private(set) var room: Int32 = 0

    init() {}

    /// Regions are below 2³⁰ (`Monitor.init` checks), so a region and two flags fit a key.
    static let maxRegions = 1 << 30

    @inline(__always) var times: UnsafeMutablePointer<Double> {
        storage.unsafelyUnwrapped.assumingMemoryBound(to: Double.self)
    }

    @inline(__always) var keys: UnsafeMutablePointer<UInt32> {
        (storage.unsafelyUnwrapped + Int(room) * 8).assumingMemoryBound(to: UInt32.self)
    }

    @inline(__always) static func key(_ v: Monitor.Visit) -> UInt32 {
        UInt32(bitPattern: v.region) << 2 | (v.dwelled ? 2 : 0) | (v.silent ? 1 : 0)
    }

    /// The key that sorts before every key of region `r` and after every key of the regions below.
    @inline(__always) static func firstKey(of r: Int32) -> UInt32 { UInt32(bitPattern: r) << 2 }

    /// The region of visit `i`.
    @inline(__always) func region(_ i: Int) -> Int32 { Int32(bitPattern: keys[i] >> 2) }

    /// Visit `i` (`i < count`).
    @inline(__always) subscript(i: Int) -> Monitor.Visit {
        get {
            let k = keys[i]
            return Monitor.Visit(region: Int32(bitPattern: k >> 2), enteredAt: times[i], silent: k & 1 != 0,
                                 dwelled: k & 2 != 0)
        }
        nonmutating set {
            keys[i] = Self.key(newValue)
            times[i] = newValue.enteredAt
        }
    }

    /// Marks visit `i` dwelled.
    @inline(__always) func setDwelled(_ i: Int) { keys[i] |= 2 }

    /// The first position from `lo` whose region is `r` or above.
    @inline(__always) func lowerBound(_ r: Int32, from lo: Int) -> Int {
        var lo = lo, hi = Int(count)
        // An empty list may have no buffer yet: form no pointer into it.
        guard lo < hi else { return lo }
        let k = keys, target = Self.firstKey(of: r)
        while lo < hi {
            let mid = (lo + hi) >> 1
            if k[mid] < target { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The position of region `r`'s visit, or nil.
    func index(of r: Int32) -> Int? {
        let i = lowerBound(r, from: 0)
        return i < Int(count) && region(i) == r ? i : nil
    }

    mutating func append(_ v: Monitor.Visit) {
        if count == room { resize(to: Self.grown(Int(count) + 1)) }
        self[Int(count)] = v
        count += 1
    }

    mutating func insert(_ v: Monitor.Visit, at i: Int) {
        if count == room { resize(to: Self.grown(Int(count) + 1)) }
        let n = Int(count) - i
        // Overlapping moves: memmove.
        UnsafeMutableRawPointer(times + i + 1).copyMemory(from: times + i, byteCount: n * 8)
        UnsafeMutableRawPointer(keys + i + 1).copyMemory(from: keys + i, byteCount: n * 4)
        count += 1
        self[i] = v
    }

    mutating func remove(at i: Int) {
        let n = Int(count) - i - 1
        UnsafeMutableRawPointer(times + i).copyMemory(from: times + i + 1, byteCount: n * 8)
        UnsafeMutableRawPointer(keys + i).copyMemory(from: keys + i + 1, byteCount: n * 4)
        count -= 1
        if Self.isSlack(room, for: Int(count)) { resize(to: Self.grown(Int(count))) }
    }

    mutating func removeAll() { count = 0 }

    /// Replaces the contents with `other`'s.
    mutating func assign(_ other: VisitList) {
        let n = Int(other.count)
        if n > Int(room) || Self.isSlack(room, for: n) {
            count = 0
            resize(to: Self.grown(n))
        }
        count = Int32(n)
        guard n > 0 else { return }
        UnsafeMutableRawPointer(times).copyMemory(from: other.times, byteCount: n * 8)
        UnsafeMutableRawPointer(keys).copyMemory(from: other.keys, byteCount: n * 4)
    }

    /// Room for `n` visits and an eighth more (at least 4).
    @inline(__always) static func grown(_ n: Int) -> Int { max(4, n + n / 8 + 1) }

    /// Whether `room` is more than twice what `n` visits need (and more than the least room): a
    /// list that fell below half its room gives the rest back.
    @inline(__always) static func isSlack(_ room: Int32, for n: Int) -> Bool { n * 2 < Int(room) && room > 4 }

    private mutating func resize(to target: Int) {
        precondition(target <= Int(Int32.max) / 12, "visit list too long")
        let grown = UnsafeMutableRawPointer.allocate(byteCount: target * 12, alignment: 8)
        let n = Int(count)
        if let storage, n > 0 {
            grown.copyMemory(from: storage, byteCount: n * 8)
            (grown + target * 8).copyMemory(from: storage + Int(room) * 8, byteCount: n * 4)
        }
        storage?.deallocate()
        storage = grown
        room = Int32(target)
    }

    /// Prefetches the first keys (32 visits' worth) for a coming region search, with no branch on
    /// the list's length; a line past the end is a wasted hint, never a fault.
    @inline(__always) func prefetchKeys() {
        guard let storage else { return }
        let k = storage + Int(room) * 8
        geotrigger_prefetch(k)
        geotrigger_prefetch(k + 64)
    }

    /// The visits as values, in region order.
    var array: [Monitor.Visit] { (0..<Int(count)).map { self[$0] } }

    mutating func free() {
        storage?.deallocate()
        storage = nil
        count = 0
        room = 0
    }
}
