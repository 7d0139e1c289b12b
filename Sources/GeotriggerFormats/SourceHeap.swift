/// The merge's sources that hold a reading not yet returned, in order of (time, source index):
/// the next reading of `MergedReadings` is the top's.
///
/// Why not a scan: the merge once scanned every source for the earliest reading, which is fine
/// for a few files but with one file per receiver (an NMEA log per device, thousands of them)
/// cost more than decoding. Ordering by the index after the time keeps the scan's rule: ties go
/// to the earlier input. Times are finite (the decoders reject any other), so the order is total.
///
/// Why not only a heap: a fleet's receivers log in step (every device has a fix at second t
/// before any has one at t + 1), so a source's new head is nearly always the latest of all, and
/// a binary heap sank it to the bottom, a cache miss a level (14 of them with 10,000 sources),
/// at every reading. Here the sources are a sorted **run**, taken from its front; a new head that
/// follows the run's last and every head queued so far is queued at the end of the next run
/// (`overflow`), with two comparisons; when the run is taken, the queue is the next run. Only
/// a head that comes earlier (a faster receiver, a gap) goes into a binary min-heap beside the
/// run (`side`), whose top is compared with the run's front: Floyd's sink, as before.
final class SourceHeap {
    /// A source and the time of its head in one number whose order is theirs: the time's bits
    /// made to sort as the times do, then the source's index. One comparison of two words
    /// instead of two of a time and then, at a tie (the usual case: thousands of sources with a
    /// fix at one second), of the indices.
    private struct Entry {
        let key: UInt128

        init(t: Double, source: Int32) {
            // -0 is 0; a negative time's bits sort backwards, so they are all flipped; a positive
            // time's sort after every negative one's once the sign bit is set.
            let bits = (t == 0 ? 0.0 : t).bitPattern
            let ordered = bits >> 63 == 1 ? ~bits : bits | (1 << 63)
            key = UInt128(ordered) << 64 | UInt128(UInt32(bitPattern: source))
        }

        var source: Int32 { Int32(bitPattern: UInt32(truncatingIfNeeded: key)) }
    }

    /// The sorted run, taken from `head` on; the sources whose new heads follow the run's last,
    /// in order (`overflow`: the next run); and a heap of any other (`side`). Each in one
    /// allocation of the sources' number, indexed without checks: every index is below its count,
    /// which never exceeds the sources' number.
    private var run: UnsafeMutablePointer<Entry>
    private var overflow: UnsafeMutablePointer<Entry>
    private let side: UnsafeMutablePointer<Entry>
    @exclusivity(unchecked) private var head = 0
    @exclusivity(unchecked) private var runCount = 0
    @exclusivity(unchecked) private var overflowCount = 0
    @exclusivity(unchecked) private var sideCount = 0
    private let capacity: Int

    init(sources: Int) {
        capacity = max(1, sources)
        run = .allocate(capacity: capacity)
        overflow = .allocate(capacity: capacity)
        side = .allocate(capacity: capacity)
    }

    deinit {
        run.deallocate()
        overflow.deallocate()
        side.deallocate()
    }

    /// Sources with a head.
    var count: Int { runCount &- head &+ overflowCount &+ sideCount }
    var isEmpty: Bool { count == 0 }

    /// Whether the top is the run's (else the side heap's).
    @inline(__always)
    private var topInRun: Bool {
        head < runCount && (sideCount == 0 || Self.before(run[head], side[0]))
    }

    /// The source with the earliest head (ties: the lowest index). There must be one.
    var top: Int {
        precondition(count > 0)
        return Int(topInRun ? run[head].source : side[0].source)
    }

    /// Sources whose heads come soon after the top's, for the cache (-1 where there is none):
    /// the run's next and the side heap's top, or its child.
    var following: (Int, Int) {
        let inRun = topInRun
        let next = inRun ? head &+ 1 : head
        let a = next < runCount ? Int(run[next].source) : overflowCount > 0 ? Int(overflow[0].source) : -1
        let b = inRun ? (sideCount > 0 ? Int(side[0].source) : -1) : (sideCount > 1 ? Int(side[1].source) : -1)
        return (a, b)
    }

    /// Adds `source`, whose head is at `t`.
    func insert(_ source: Int, at t: Double) {
        precondition(count < capacity)
        place(Entry(t: t, source: Int32(source)))
    }

    /// The top source has a new head, at `t`: moves it into place.
    func replaceTop(at t: Double) {
        precondition(count > 0)
        place(Entry(t: t, source: takeTop()))
    }

    /// Takes the top source out (its input ended).
    func removeTop() {
        precondition(count > 0)
        takeTop()
        settle()
    }

    /// Takes the top out of the run or the side heap; returns its source.
    @inline(__always) @discardableResult
    private func takeTop() -> Int32 {
        if topInRun {
            head &+= 1
            return run[head &- 1].source
        }
        let source = side[0].source
        sideCount &-= 1
        if sideCount > 0 { sink(side[sideCount]) }
        return source
    }

    /// Puts `e` where it belongs: after the run's last and the overflow's last, at the overflow's
    /// end (no comparison but those two: the usual case, every source's new head the latest);
    /// anywhere else, into the side heap.
    @inline(__always)
    private func place(_ e: Entry) {
        if (runCount == 0 || Self.before(run[runCount &- 1], e))
            && (overflowCount == 0 || Self.before(overflow[overflowCount &- 1], e)) {
            overflow[overflowCount] = e
            overflowCount &+= 1
        } else {
            sideCount &+= 1
            siftUp(e, from: sideCount &- 1)
        }
        settle()
    }

    /// Once the run is taken, the overflow becomes the run. (Every overflow entry follows the
    /// run's last, so none is the top while the run has one left.)
    @inline(__always)
    private func settle() {
        guard head == runCount, overflowCount > 0 else { return }
        swap(&run, &overflow)
        runCount = overflowCount
        head = 0
        overflowCount = 0
    }

    @inline(__always)
    private static func before(_ a: Entry, _ b: Entry) -> Bool {
        a.key < b.key
    }

    /// Puts `e` in place of the side heap's top: the hole goes down along the earlier child to a
    /// leaf, then `e` rises from there.
    private func sink(_ e: Entry) {
        let n = sideCount
        var k = 0
        while true {
            var child = 2 &* k &+ 1
            if child >= n { break }
            // The earlier child, chosen without a branch: which one it is follows the sources'
            // indices, a coin toss to a branch predictor. (A last child alone is compared with
            // itself.)
            let right = Swift.min(child &+ 1, n &- 1)
            child &+= Self.before(side[right], side[child]) ? 1 : 0
            side[k] = side[child]
            k = child
        }
        siftUp(e, from: k)
    }

    /// Puts `e` at `k` of the side heap or above, moving later entries down.
    private func siftUp(_ e: Entry, from k: Int) {
        var k = k
        while k > 0 {
            let parent = (k - 1) / 2
            guard Self.before(e, side[parent]) else { break }
            side[k] = side[parent]
            k = parent
        }
        side[k] = e
    }
}
