import GeotriggerCore
import GeotriggerRuntime

/// Two pieces of a large index build run at once: `second` on a thread of its own, `first` on
/// the calling thread; `run` returns when both are done.
///
/// Why it is here: building the index of half a million regions is work on every region (its
/// geometry, its Hilbert key, moving it into curve order) that nothing else waits on, done before
/// any reading, while the machine's other core idles. The callers give the two pieces disjoint
/// halves of the tables they fill.
enum SplitWork {
    /// Below this many regions a thread's start costs more than half the work saves.
    static let minimumCount = 16_384

    static func worthwhile(_ count: Int) -> Bool { count >= minimumCount }

    static func run(_ first: () -> Void, alongside second: () -> Void) {
        // `@unchecked Sendable`: the closure is only called on the new thread, and the thread is
        // joined before `run` returns, so nothing it captures outlives this call or is touched
        // by both threads (the callers split their tables).
        final class Work: @unchecked Sendable {
            let body: () -> Void
            init(_ body: @escaping () -> Void) { self.body = body }
        }
        withoutActuallyEscaping(second) { second in
            let work = Work(second)
            let thread = JobThread { work.body() }
            first()
            thread.join()
        }
    }
}
