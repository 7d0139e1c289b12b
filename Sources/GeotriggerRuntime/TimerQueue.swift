import HeapModule
import GeotriggerCore

/// Timers on the stream clock: a min-heap by due time, ties by the owner's rank (the device's
/// first-seen order, see `DeviceTable.rank`), then in the order they were scheduled.
///
/// Ranking ties by device rather than by scheduling order makes the firing order independent of
/// how devices are spread over threads (`replay --jobs`): each job sees only its devices'
/// timers, yet their relative order is the one a single-threaded run gives.
///
/// Cancellation is lazy: the owner checks, when a timer comes due, whether what armed it still
/// holds (a visit, a pending request), so cancelling costs nothing.
///
/// Everything is `@inlinable` so each client specializes it: unspecialized generic code would
/// allocate a buffer for every payload it moves, on the hot path.
public struct TimerQueue<Payload> {
    @usableFromInline
    struct Entry: Comparable {
        @usableFromInline var due: Double
        @usableFromInline var rank: UInt64
        @usableFromInline var sequence: UInt64
        @usableFromInline var payload: Payload
        @inlinable init(due: Double, rank: UInt64, sequence: UInt64, payload: Payload) {
            self.due = due
            self.rank = rank
            self.sequence = sequence
            self.payload = payload
        }
        @inlinable static func < (a: Entry, b: Entry) -> Bool { (a.due, a.rank, a.sequence) < (b.due, b.rank, b.sequence) }
        @inlinable static func == (a: Entry, b: Entry) -> Bool { a.sequence == b.sequence }
    }

    @usableFromInline var heap = Heap<Entry>()
    @usableFromInline var sequence: UInt64 = 0
    /// The heap's earliest due time, +∞ when it is empty: kept beside the heap so the checks made
    /// for every reading ("is anything due?") read one Double rather than the heap's first entry.
    @usableFromInline var earliest: Double = .infinity

    @inlinable public init() {}

    /// Schedules `payload` at `due`; among timers due at the same time, lower `rank` fires first.
    @inlinable
    public mutating func schedule(at due: Double, rank: UInt64 = 0, _ payload: Payload) {
        sequence += 1
        heap.insert(Entry(due: due, rank: rank, sequence: sequence, payload: payload))
        earliest = heap.min!.due
    }

    /// Due time of the earliest timer (cancelled ones included).
    @inlinable public var nextDue: Double? { heap.isEmpty ? nil : earliest }

    /// Due time of the earliest timer, +∞ if there is none.
    @inlinable public var earliestDue: Double { earliest }

    @inlinable public var isEmpty: Bool { heap.isEmpty }

    /// Timers pending (cancelled ones included).
    @inlinable public var count: Int { heap.count }

    /// Removes and returns the earliest timer if it is due strictly before `t`. Each pop returns
    /// the rank the timer was scheduled with: an owner compares it with the device's rank now
    /// (`DeviceTable.rank`), which changes when the device is forgotten (`--expire`) and its id
    /// reused, so a timer armed for a device that is gone can never fire for another.
    @inlinable
    public mutating func popDue(before t: Double) -> (due: Double, rank: UInt64, payload: Payload)? {
        guard earliest < t, !heap.isEmpty else { return nil }
        return popNext()
    }

    /// Removes and returns the earliest timer if it is due at or before `t`.
    @inlinable
    public mutating func popDue(through t: Double) -> (due: Double, rank: UInt64, payload: Payload)? {
        guard earliest <= t, !heap.isEmpty else { return nil }
        return popNext()
    }

    /// Removes and returns the earliest timer.
    @inlinable
    public mutating func popNext() -> (due: Double, rank: UInt64, payload: Payload)? {
        guard let e = heap.popMin() else { return nil }
        earliest = heap.min?.due ?? .infinity
        return (e.due, e.rank, e.payload)
    }
}

/// A part of the engine that keeps timers on the stream clock: the region monitor (dwell), the
/// beacon monitor (beacon silence, beacon dwell) and the scheduler (time, calendar and repeating
/// triggers). The engine asks each for its earliest due time before and after every reading and
/// fires their timers in one order (`Engine`): earliest first, and at equal times in the order of
/// `Engine.TimerSource`.
public protocol TimerOwner: AnyObject {
    /// Due time of the earliest pending timer, +∞ if none: one load, asked for every reading.
    var earliestTimerDue: Double { get }
    /// Due time of the earliest pending timer, if any (cancelled timers may be included).
    var nextTimerDue: Double? { get }
    /// Fires the earliest timer; returns whether there was one.
    @discardableResult func fireNextTimer() -> Bool
}
