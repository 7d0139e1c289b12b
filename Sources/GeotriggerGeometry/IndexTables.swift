import CPrefetch
import GeotriggerRuntime

// The index's tables and answers in raw memory, behind typed accessors.
//
// Why raw memory: the hot path tests a region by reading its 64-byte `HotCircle` line from a
// table that must be 64-byte aligned (one cache miss a test, at most) and that grows when regions
// are added live; an array can be neither aligned nor read from another module's inlined code
// without a uniqueness or exclusivity check at every test. A query's answer is the tree's reused
// buffer, sorted in place and handed out as a view, so no reading allocates. Every accessor
// checks its bounds with `assert` (debug builds); release builds read the memory directly.

/// Rows of a table whose owner keeps the memory valid while the view is used: the circle tables'
/// lines, an array's elements while `PrefetchingPermutation` moves them, a tree's leaves.
@usableFromInline
struct TableRows<Element>: PermutableTable {
    @usableFromInline let base: UnsafeMutablePointer<Element>
    @usableFromInline let count: Int

    @inlinable @inline(__always)
    init(base: UnsafeMutablePointer<Element>, count: Int) {
        self.base = base
        self.count = count
    }

    /// Row `i` (`i < count`).
    @inlinable
    subscript(i: Int) -> Element {
        @inline(__always) get {
            assert(i >= 0 && i < count, "row out of range")
            return base[i]
        }
        @inline(__always) nonmutating set {
            assert(i >= 0 && i < count, "row out of range")
            base[i] = newValue
        }
    }

    /// Starts loading row `i`.
    @inlinable @inline(__always)
    func prefetchEntry(_ i: Int) {
        assert(i >= 0 && i < count, "row out of range")
        geotrigger_prefetch(base + i)
    }

    @inlinable @inline(__always)
    func take(_ i: Int) -> Element {
        assert(i >= 0 && i < count, "row out of range")
        return (base + i).move()
    }

    @inlinable @inline(__always)
    func moveEntry(from: Int, to: Int) {
        assert(from >= 0 && from < count && to >= 0 && to < count, "row out of range")
        (base + to).moveInitialize(from: base + from, count: 1)
    }

    @inlinable @inline(__always)
    func put(_ e: Element, at i: Int) {
        assert(i >= 0 && i < count, "row out of range")
        (base + i).initialize(to: e)
    }
}

extension Array {
    /// Starts loading element `i` (`i < count`).
    @inline(__always)
    func prefetchElement(_ i: Int) {
        assert(i >= 0 && i < count, "element out of range")
        withUnsafeBufferPointer { geotrigger_prefetch($0.baseAddress! + i) }
    }

    /// The elements as rows, in place, for `body` only (`PrefetchingPermutation`).
    mutating func withRows<R>(_ body: (TableRows<Element>) throws -> R) rethrows -> R {
        let n = count
        return try withUnsafeMutableBufferPointer { try body(TableRows(base: $0.baseAddress!, count: n)) }
    }
}

/// The index's per-region tables, behind one header that never moves: `hot`, per region, what
/// the hot path reads of its circle (`HotCircle.none` for other shapes), one 64-byte-aligned
/// cache line each; `slow`, per circle, its center and radii (`CircleCore`), what Karney's
/// distance needs where the chord bound leaves a point open, and what inspection reads. Both
/// grow when regions are added live; a read goes through the `let` header, so it takes no
/// exclusivity check. A value type with manual ownership, as `PodList`: the index holds it and
/// calls `free()` once, in its `deinit` (or when its build fails).
///
/// Threads may share the lines (`share()`): each index then has a header of its own over the
/// same lines, which a `SharedLines` owns and frees after the last of them; nothing writes them
/// while they are shared, and a header that must change its lines (a region added or removed
/// live) first copies them (`detach`).
@usableFromInline
struct CircleTables {
    @usableFromInline struct Header {
        @usableFromInline var hot: UnsafeMutablePointer<HotCircle>
        @usableFromInline var count: Int
        var capacity: Int
        @usableFromInline var slow: UnsafeMutablePointer<CircleCore>
        @usableFromInline var circles: Int
        var slowCapacity: Int
        /// The owner of `hot` and `slow` while other headers share them; nil while this header
        /// owns them alone.
        var sharedLines: SharedLines? = nil
    }

    /// Lines several headers read, freed with the last of them.
    final class SharedLines: @unchecked Sendable {
        let hot: UnsafeMutablePointer<HotCircle>
        let slow: UnsafeMutablePointer<CircleCore>

        init(hot: UnsafeMutablePointer<HotCircle>, slow: UnsafeMutablePointer<CircleCore>) {
            self.hot = hot
            self.slow = slow
        }

        deinit {
            UnsafeMutableRawPointer(hot).deallocate()
            slow.deallocate()
        }
    }

    @usableFromInline let header: UnsafeMutablePointer<Header>

    /// Room for `capacity` regions and as many circles, none yet (`initializeHot`,
    /// `initializeSlow`, then `setCounts`).
    private init(header: Header) {
        self.header = .allocate(capacity: 1)
        self.header.initialize(to: header)
    }

    init(capacity: Int) {
        // Plain values: their lines are moved and freed as bytes, never deinitialized.
        assert(_isPOD(HotCircle.self) && _isPOD(CircleCore.self))
        let room = max(1, capacity)
        header = .allocate(capacity: 1)
        header.initialize(to: Header(hot: Self.allocateHot(room), count: 0, capacity: room,
                                     slow: .allocate(capacity: room), circles: 0, slowCapacity: room))
    }

    private static func allocateHot(_ capacity: Int) -> UnsafeMutablePointer<HotCircle> {
        UnsafeMutableRawPointer.allocate(byteCount: capacity * MemoryLayout<HotCircle>.stride, alignment: 64)
            .bindMemory(to: HotCircle.self, capacity: capacity)
    }

    /// Regions in the table.
    @inlinable var count: Int { @inline(__always) get { header.pointee.count } }
    /// Circles in the table (slow lines).
    var circles: Int { header.pointee.circles }

    /// Per region, its hot line.
    @inlinable var hot: TableRows<HotCircle> {
        @inline(__always) get { TableRows(base: header.pointee.hot, count: header.pointee.count) }
    }

    /// Per circle, its slow line.
    @inlinable var slow: TableRows<CircleCore> {
        @inline(__always) get { TableRows(base: header.pointee.slow, count: header.pointee.circles) }
    }

    /// Sets region `i`'s hot line while building (before `setCounts`); threads may fill
    /// distinct lines at once.
    func initializeHot(_ i: Int, to line: HotCircle) {
        assert(i >= 0 && i < header.pointee.capacity, "hot line out of range")
        (header.pointee.hot + i).initialize(to: line)
    }

    /// Sets circle `i`'s slow line while building (before `setCounts`).
    func initializeSlow(_ i: Int, to core: CircleCore) {
        assert(i >= 0 && i < header.pointee.slowCapacity, "slow line out of range")
        (header.pointee.slow + i).initialize(to: core)
    }

    /// How many lines the build filled.
    func setCounts(regions: Int, circles: Int) {
        assert(regions <= header.pointee.capacity && circles <= header.pointee.slowCapacity)
        header.pointee.count = regions
        header.pointee.circles = circles
    }

    /// Adds a region's hot line and, for a circle, its slow line, which the hot line's `slot` then
    /// names (−1 without one). Each table doubles when full (at least 64).
    func append(_ line: HotCircle, core: CircleCore?) {
        detach()
        var t = header.pointee
        var line = line
        if t.count == t.capacity {
            let capacity = max(64, t.capacity * 2)
            let grown = Self.allocateHot(capacity)
            grown.moveInitialize(from: t.hot, count: t.count)
            UnsafeMutableRawPointer(t.hot).deallocate()
            t.hot = grown
            t.capacity = capacity
        }
        line.slot = -1
        if let core {
            if t.circles == t.slowCapacity {
                let capacity = max(64, t.slowCapacity * 2)
                let grown = UnsafeMutablePointer<CircleCore>.allocate(capacity: capacity)
                grown.moveInitialize(from: t.slow, count: t.circles)
                t.slow.deallocate()
                t.slow = grown
                t.slowCapacity = capacity
            }
            (t.slow + t.circles).initialize(to: core)
            line.slot = Int32(t.circles)
            t.circles += 1
        }
        (t.hot + t.count).initialize(to: line)
        t.count += 1
        header.pointee = t
    }

    /// What another header over the same lines starts from (`init(sharing:)`, on another
    /// thread): from now on neither writes them (`detach` first). Call on the thread that owns
    /// this one, before the other starts.
    func share() -> Header {
        if header.pointee.sharedLines == nil {
            header.pointee.sharedLines = SharedLines(hot: header.pointee.hot, slow: header.pointee.slow)
        }
        return header.pointee
    }

    /// A header of its own over the lines `share()` gave.
    init(sharing header: Header) {
        precondition(header.sharedLines != nil, "lines not shared")
        self.init(header: header)
    }

    /// Makes the lines this header's own (a copy, with the same room) if they are shared; call
    /// before writing any.
    func detach() {
        guard header.pointee.sharedLines != nil else { return }
        var t = header.pointee
        let hot = Self.allocateHot(t.capacity)
        hot.initialize(from: t.hot, count: t.count)
        let slow = UnsafeMutablePointer<CircleCore>.allocate(capacity: t.slowCapacity)
        slow.initialize(from: t.slow, count: t.circles)
        t.hot = hot
        t.slow = slow
        t.sharedLines = nil
        header.pointee = t
    }

    func free() {
        if header.pointee.sharedLines == nil {
            UnsafeMutableRawPointer(header.pointee.hot).deallocate()
            header.pointee.slow.deallocate()
        }
        header.deinitialize(count: 1)
        header.deallocate()
    }
}

/// A tree's answer as it found it (`PackedRTree.query`, `STRtree.query`): region numbers in the
/// tree's reused buffer, in tree order, maybe repeated.
struct FoundRegions {
    private let ids: UnsafeMutableBufferPointer<Int32>

    init(_ ids: UnsafeMutableBufferPointer<Int32>) { self.ids = ids }

    /// Sorts the numbers in place and drops repeats (a region split at the antimeridian has two
    /// envelopes). The monitor tests them, and merges them with visits, in region order.
    func sortedUnique() -> RegionCandidates {
        // A spatially ordered index's packed tree gives them in order already.
        var k = 1
        while k < ids.count && ids[k - 1] < ids[k] { k += 1 }
        // Strictly ascending: no repeats either.
        if k >= ids.count { return RegionCandidates(unsafe: UnsafeBufferPointer(ids)) }
        var sorting = ids  // the same memory: the sort is in place
        sorting.smallSort()
        var unique = 0
        for k in 0..<ids.count where unique == 0 || ids[unique - 1] != ids[k] {
            ids[unique] = ids[k]
            unique += 1
        }
        return RegionCandidates(unsafe: UnsafeBufferPointer(start: ids.baseAddress, count: unique))
    }
}

/// A query's answer (`RegionIndex.candidates`): region numbers, ascending, in a buffer the index
/// reuses at its next query, so valid until then. A view with a name, so that the monitor reads
/// region numbers, not pointers.
@usableFromInline
package struct RegionCandidates: RandomAccessCollection {
    @usableFromInline package let ids: UnsafeBufferPointer<Int32>

    /// `ids`, which their owner keeps valid while the view is used.
    @inlinable @inline(__always)
    package init(unsafe ids: UnsafeBufferPointer<Int32>) { self.ids = ids }

    /// All of `list`, which must not change while the view is used (the index's amended answer).
    init(_ list: PodList<Int32>) {
        ids = UnsafeBufferPointer(list.buffer)
    }

    /// `count` numbers of `list` from `start` (a batch's copy of an answer), which must not change
    /// while the view is used.
    @inlinable @inline(__always)
    package init(_ list: PodList<Int32>, from start: Int, count: Int) {
        assert(start >= 0 && count >= 0 && start + count <= Int(list.count), "candidates out of range")
        ids = UnsafeBufferPointer(start: list.base.map { $0 + start }, count: count)
    }

    @inlinable @inline(__always) package var startIndex: Int { 0 }
    @inlinable @inline(__always) package var endIndex: Int { ids.count }
    @inlinable @inline(__always) package var count: Int { ids.count }

    /// The `i`th region number (checked by `assert` only, as the buffer's own subscript).
    @inlinable @inline(__always) package subscript(i: Int) -> Int32 {
        assert(i >= 0 && i < ids.count, "candidate out of range")
        return ids[i]
    }

    /// The numbers as the buffer the batch copies them from.
    @inlinable @inline(__always) package var buffer: UnsafeBufferPointer<Int32> { ids }
}
