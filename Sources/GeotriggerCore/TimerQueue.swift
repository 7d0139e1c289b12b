import HeapModule

/// Timers on the stream clock: a min-heap by due time, ties in the order they were scheduled.
///
/// Cancellation is lazy: the owner checks, when a timer comes due, whether what armed it still
/// holds (a visit, a pending request), so cancelling costs nothing.
public struct TimerQueue<Payload> {
    struct Entry: Comparable {
        var due: Double
        var sequence: UInt64
        var payload: Payload
        static func < (a: Entry, b: Entry) -> Bool { (a.due, a.sequence) < (b.due, b.sequence) }
        static func == (a: Entry, b: Entry) -> Bool { a.sequence == b.sequence }
    }

    private var heap = Heap<Entry>()
    private var sequence: UInt64 = 0

    public init() {}

    public mutating func schedule(at due: Double, _ payload: Payload) {
        sequence += 1
        heap.insert(Entry(due: due, sequence: sequence, payload: payload))
    }

    /// Due time of the earliest timer (cancelled ones included).
    public var nextDue: Double? { heap.min?.due }

    public var isEmpty: Bool { heap.isEmpty }

    /// Removes and returns the earliest timer if it is due strictly before `t`.
    public mutating func popDue(before t: Double) -> (due: Double, payload: Payload)? {
        guard let top = heap.min, top.due < t else { return nil }
        return popNext()
    }

    /// Removes and returns the earliest timer if it is due at or before `t`.
    public mutating func popDue(through t: Double) -> (due: Double, payload: Payload)? {
        guard let top = heap.min, top.due <= t else { return nil }
        return popNext()
    }

    /// Removes and returns the earliest timer.
    public mutating func popNext() -> (due: Double, payload: Payload)? {
        guard let e = heap.popMin() else { return nil }
        return (e.due, e.payload)
    }
}
