/// The merge's sources that hold a reading not yet returned, as a binary min-heap on (time,
/// source index): the next reading of `MergedReadings` is the top's.
///
/// Why a heap: the merge once scanned every source for the earliest reading, which is fine for a
/// few files but with one file per receiver (an NMEA log per device, thousands of them) cost more
/// than decoding. The heap finds the earliest in O(1) and moves a source's new head into place in
/// O(log n). Ordering by the index after the time keeps the scan's rule: ties go to the earlier
/// input. Times are finite (the decoders reject any other), so the order is total.
struct SourceHeap {
    /// Source indices, heap-ordered by `(time[i], i)`.
    private var heap: [Int32] = []
    /// Per source, the time of its head (meaningful while it is in the heap).
    private var time: [Double]

    init(sources: Int) {
        time = Array(repeating: 0, count: sources)
        heap.reserveCapacity(sources)
    }

    var isEmpty: Bool { heap.isEmpty }
    /// The source with the earliest head (ties: the lowest index). The heap must not be empty.
    var top: Int { Int(heap[0]) }

    @inline(__always)
    private func before(_ a: Int32, _ b: Int32) -> Bool {
        let ta = time[Int(a)], tb = time[Int(b)]
        return ta < tb || (ta == tb && a < b)
    }

    /// Adds `source`, whose head is at `t`.
    mutating func insert(_ source: Int, at t: Double) {
        time[source] = t
        heap.append(Int32(source))
        var k = heap.count - 1
        let s = heap[k]
        while k > 0 {
            let parent = (k - 1) / 2
            guard before(s, heap[parent]) else { break }
            heap[k] = heap[parent]
            k = parent
        }
        heap[k] = s
    }

    /// The top source has a new head, at `t`: moves it down into place.
    mutating func replaceTop(at t: Double) {
        time[Int(heap[0])] = t
        siftDown()
    }

    /// Takes the top source out (its input ended).
    mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown()
    }

    private mutating func siftDown() {
        let n = heap.count
        let s = heap[0]
        var k = 0
        while true {
            var child = 2 * k + 1
            if child >= n { break }
            if child + 1 < n && before(heap[child + 1], heap[child]) { child += 1 }
            guard before(heap[child], s) else { break }
            heap[k] = heap[child]
            k = child
        }
        heap[k] = s
    }
}
