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
/// there, which it seldom does (Floyd's way, instead of two comparisons a level).
struct SourceHeap {
    /// A source and the time of its head, kept together so a comparison reads no other array.
    private struct Entry {
        var t: Double
        var source: Int32
    }

    /// Heap-ordered by `(t, source)`.
    private var heap: [Entry] = []

    init(sources: Int) {
        heap.reserveCapacity(sources)
    }

    var isEmpty: Bool { heap.isEmpty }
    /// The source with the earliest head (ties: the lowest index). The heap must not be empty.
    var top: Int { Int(heap[0].source) }

    @inline(__always)
    private static func before(_ a: Entry, _ b: Entry) -> Bool {
        a.t < b.t || (a.t == b.t && a.source < b.source)
    }

    /// Adds `source`, whose head is at `t`.
    mutating func insert(_ source: Int, at t: Double) {
        heap.append(Entry(t: t, source: Int32(source)))
        siftUp(Entry(t: t, source: Int32(source)), from: heap.count - 1)
    }

    /// The top source has a new head, at `t`: moves it into place.
    mutating func replaceTop(at t: Double) {
        sink(Entry(t: t, source: heap[0].source))
    }

    /// Takes the top source out (its input ended).
    mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        sink(last)
    }

    /// Puts `e` in place of the top: the hole goes down along the earlier child to a leaf, then
    /// `e` rises from there.
    private mutating func sink(_ e: Entry) {
        let n = heap.count
        var k = 0
        while true {
            var child = 2 * k + 1
            if child >= n { break }
            if child + 1 < n && Self.before(heap[child + 1], heap[child]) { child += 1 }
            heap[k] = heap[child]
            k = child
        }
        siftUp(e, from: k)
    }

    /// Puts `e` at `k` or above, moving later entries down.
    private mutating func siftUp(_ e: Entry, from k: Int) {
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
