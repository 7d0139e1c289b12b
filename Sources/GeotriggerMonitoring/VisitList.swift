import CBoxes

/// A device's visits in region order: 8 bytes a visit, as two columns in one buffer
/// (`TwoColumns`), the keys (UInt32: the region shifted left by two, bit 1 dwelled, bit 0
/// silent) and then the entry times' codes (`EntryTimes`).
///
/// A city device is inside about 20 circles at once, so its visits are most of what it holds.
/// As 16-byte structs (region, flags, time) with capacity grown by half they took about 525 bytes;
/// as 12 bytes (a Double time) about 310; here about 8 × (n + n/8) and the region search reads
/// only the keys, half the bytes. Capacity follows the list both ways: it grows by an eighth and
/// shrinks once a few visits of room are unused (`isSlack`), so a device that once crossed a
/// dense spot does not keep its room.
///
/// A value type with manual ownership, like `PodList`: the device state holds the one live copy
/// and calls `free()` once; other copies are views that must not outlive an edit.
struct VisitList {
    private var columns = TwoColumns<UInt32, UInt32>()
    private(set) var count: Int32 = 0
    var room: Int32 { @inline(__always) get { columns.room } }

    init() {}

    /// One visit as stored: its key and its entry time's code.
    struct Entry {
        var key: UInt32
        var code: UInt32

        init(key: UInt32, code: UInt32) {
            self.key = key
            self.code = code
        }

        init(region: Int32, code: UInt32, silent: Bool) {
            self.init(key: VisitList.firstKey(of: region) | (silent ? 1 : 0), code: code)
        }

        @inline(__always) var region: Int32 { VisitList.region(ofKey: key) }
        @inline(__always) var silent: Bool { key & 1 != 0 }
        @inline(__always) var dwelled: Bool { key & 2 != 0 }
    }

    /// Regions are below 2³⁰ (`Monitor.init` checks), so a region and two flags fit a key.
    static let maxRegions = 1 << 30

    /// The key that sorts before every key of region `r` and after every key of the regions below.
    @inline(__always) static func firstKey(of r: Int32) -> UInt32 { UInt32(bitPattern: r) << 2 }

    /// The region a key names.
    @inline(__always) static func region(ofKey key: UInt32) -> Int32 { Int32(bitPattern: key >> 2) }

    /// The region of visit `i`.
    @inline(__always) func region(_ i: Int) -> Int32 { Self.region(ofKey: columns.first(i)) }

    /// Visit `i` (`i < count`).
    @inline(__always) subscript(i: Int) -> Entry {
        get { Entry(key: columns.first(i), code: columns.second(i)) }
        nonmutating set {
            columns.setFirst(i, newValue.key)
            columns.setSecond(i, newValue.code)
        }
    }

    /// Marks visit `i` dwelled.
    @inline(__always) func setDwelled(_ i: Int) { columns.setFirst(i, columns.first(i) | 2) }

    /// The first position from `lo` whose region is `r` or above.
    @inline(__always) func lowerBound(_ r: Int32, from lo: Int) -> Int {
        var lo = lo, hi = Int(count)
        // An empty list may have no buffer yet: form no pointer into it.
        guard lo < hi else { return lo }
        let k = columns, target = Self.firstKey(of: r)
        // The answer lies in lo...lo + n; each step halves n with a select, not a branch on the
        // comparison (which a list's random regions make unpredictable), so the only branch is
        // the loop's, whose count depends on the length alone.
        var n = hi - lo
        while n > 1 {
            let half = n >> 1
            lo = geotrigger_step_if_below(lo, half, k.first(lo &+ half), target)
            n &-= half
        }
        return geotrigger_step_if_below(lo, 1, k.first(lo), target)
    }

    /// The position of region `r`'s visit, or nil.
    func index(of r: Int32) -> Int? {
        let i = lowerBound(r, from: 0)
        return i < Int(count) && region(i) == r ? i : nil
    }

    mutating func append(_ v: Entry) {
        if count == room { resize(to: Self.grown(Int(count) + 1)) }
        self[Int(count)] = v
        count += 1
    }

    mutating func insert(_ v: Entry, at i: Int) {
        if count == room { resize(to: Self.grown(Int(count) + 1)) }
        let n = Int(count) - i
        // Overlapping moves: memmove.
        columns.moveEntries(from: i, to: i + 1, count: n)
        count += 1
        self[i] = v
    }

    mutating func remove(at i: Int) {
        let n = Int(count) - i - 1
        columns.moveEntries(from: i + 1, to: i, count: n)
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
        columns.copyEntries(from: other.columns, count: n)
    }

    /// Room for `n` visits and an eighth more (at least 5), odd: glibc gives a request of 8k + 8
    /// bytes a chunk with no padding, so an even room would waste a visit's worth.
    @inline(__always) static func grown(_ n: Int) -> Int { max(5, n + n / 8 + 1) | 1 }

    /// Whether `room` is more than `slack` visits beyond what `n` visits would be given: a list
    /// that shrank by that much gives the rest back. (City, against giving back below half the
    /// room: 23.4 visits of room for 19.8 visits, not 25.8; 0.036 allocations a reading, not 0.030.)
    @inline(__always) static func isSlack(_ room: Int32, for n: Int) -> Bool { Int(room) > grown(n) + slack }

    static let slack = 4

    private mutating func resize(to target: Int) {
        columns.resize(to: target, keeping: Int(count), alignment: 8)
    }

    /// Prefetches the first keys (32 visits' worth) for a coming region search, with no branch on
    /// the list's length; a line past the end is a wasted hint, never a fault.
    @inline(__always) func prefetchKeys() {
        columns.prefetchFirsts(0, 64)
    }

    /// Prefetches the first keys and the first codes (32 visits' worth of each): what an edit
    /// of the list reads and moves.
    @inline(__always) func prefetchAll() {
        columns.prefetchBoth(0, 64)
    }

    mutating func free() {
        columns.free()
        count = 0
    }
}
