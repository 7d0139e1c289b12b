/// The merge's sources that hold a reading not yet returned, as a binary min-heap on (time,
/// source index): the next reading of `MergedReadings` is the top's.
///
/// Why a heap: the merge once scanned every source for the earliest reading, which is fine for a
/// few files but with one file per receiver (an NMEA log per device, thousands of them) cost more
/// than decoding. The heap finds the earliest in O(1) and moves a source's new head into place in
/// O(log n). Ordering by the index after the time keeps the scan's rule: ties go to the earlier
/// input. Times are finite (the decoders reject any other), so the order is total.
///
/// A source's new head is usually the latest of all (every device has a fix at second t before
/// any has one at t + 1), so it sinks to the bottom: `replaceTop` moves the hole at the top down
/// along the earlier child to a leaf, one comparison a level, and then lets the head rise from
/// there, which it seldom does (Floyd's way, instead of two comparisons a level). The entries
/// live in one allocation of the sources' number, indexed without checks: every index is below
/// `count`, which never exceeds it (a checked array cost as much as the comparisons).
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

    /// Heap-ordered by `(t, source)`; `count` of `capacity` in use.
    private let heap: UnsafeMutablePointer<Entry>
    private let capacity: Int
    @exclusivity(unchecked) private(set) var count = 0

    init(sources: Int) {
        capacity = max(1, sources)
        heap = .allocate(capacity: capacity)
    }

    deinit { heap.deallocate() }

    var isEmpty: Bool { count == 0 }
    /// The source with the earliest head (ties: the lowest index). The heap must not be empty.
    var top: Int {
        precondition(count > 0)
        return Int(heap[0].source)
    }

    /// The sources whose heads come next after the top's, one of them the next top (the top's
    /// children; -1 where there is none).
    var following: (Int, Int) {
        (count > 1 ? Int(heap[1].source) : -1, count > 2 ? Int(heap[2].source) : -1)
    }

    @inline(__always)
    private static func before(_ a: Entry, _ b: Entry) -> Bool {
        a.key < b.key
    }

    /// Adds `source`, whose head is at `t`.
    func insert(_ source: Int, at t: Double) {
        precondition(count < capacity)
        count += 1
        siftUp(Entry(t: t, source: Int32(source)), from: count - 1)
    }

    /// The top source has a new head, at `t`: moves it into place.
    func replaceTop(at t: Double) {
        precondition(count > 0)
        sink(Entry(t: t, source: heap[0].source))
    }

    /// Takes the top source out (its input ended).
    func removeTop() {
        precondition(count > 0)
        count -= 1
        guard count > 0 else { return }
        sink(heap[count])
    }

    /// Puts `e` in place of the top: the hole goes down along the earlier child to a leaf, then
    /// `e` rises from there.
    private func sink(_ e: Entry) {
        let n = count
        var k = 0
        while true {
            var child = 2 &* k &+ 1
            if child >= n { break }
            // The earlier child, chosen without a branch: which one it is follows the sources'
            // indices, a coin toss to a branch predictor. (A last child alone is compared with
            // itself.)
            let right = Swift.min(child &+ 1, n &- 1)
            child &+= Self.before(heap[right], heap[child]) ? 1 : 0
            heap[k] = heap[child]
            k = child
        }
        siftUp(e, from: k)
    }

    /// Puts `e` at `k` or above, moving later entries down.
    private func siftUp(_ e: Entry, from k: Int) {
        var k = k
        while k > 0 {
            let parent = (k - 1) / 2
            guard Self.before(e, heap[parent]) else { break }
            heap[k] = heap[parent]
            k = parent
        }
        heap[k] = e
    }
}
