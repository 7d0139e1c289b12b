#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore

/// A thread running `body`, joined by `join()`.
///
/// `@unchecked Sendable`: `thread` is written once, by `init`, before any other thread can see
/// the object; `join` (which reads it and sets `joined`) is called only by the thread that
/// created it.
package final class JobThread: @unchecked Sendable {
    #if canImport(Darwin)
    private var thread: pthread_t?
    #else
    private var thread = pthread_t()
    #endif
    private var joined = false

    package init(_ body: @escaping @Sendable () -> Void) {
        final class Box { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        // Returns 0 on success; failing to start a thread leaves the replay no way on.
        let status = pthread_create(&thread, nil, { raw in
            #if canImport(Darwin)
            let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
            #else
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            #endif
            box.body()
            return nil
        }, context)
        precondition(status == 0, "pthread_create failed (\(status))")
    }

    package func join() {
        guard !joined else { return }
        joined = true
        #if canImport(Darwin)
        pthread_join(thread!, nil)
        #else
        pthread_join(thread, nil)
        #endif
    }
}

/// A queue between threads that blocks: `push` waits while it holds `capacity` items, `pop`
/// waits while it is empty. The hand-off between the replay's reader, its jobs and its merge.
///
/// `@unchecked Sendable`: every stored property is touched only with `mutex` held, and the
/// items are `Sendable`. The pthread mutex and condition variables are allocated here, owned by
/// this object alone and destroyed once, in `deinit`. (Synchronization's `Mutex` cannot wait
/// for a condition, hence pthreads.)
package final class JobQueue<Item: Sendable>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let notEmpty = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let notFull = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Taken items are set to nil, so what they hold is the taker's alone (a job empties and
    /// hands back a batch's arrays without copying them).
    private var items: [Item?] = []
    private var head = 0
    private let capacity: Int

    package init(capacity: Int = .max) {
        self.capacity = capacity
        // Each returns 0 on success; with default attributes they cannot fail on Linux or macOS.
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(notEmpty, nil)
        pthread_cond_init(notFull, nil)
    }

    deinit {
        pthread_cond_destroy(notFull)
        pthread_cond_destroy(notEmpty)
        pthread_mutex_destroy(mutex)
        notFull.deallocate()
        notEmpty.deallocate()
        mutex.deallocate()
    }

    private var count: Int { items.count - head }

    package func push(_ item: Item) {
        pthread_mutex_lock(mutex)
        while count >= capacity { pthread_cond_wait(notFull, mutex) }
        items.append(item)
        pthread_cond_signal(notEmpty)
        pthread_mutex_unlock(mutex)
    }

    package func pop() -> Item {
        pthread_mutex_lock(mutex)
        while count == 0 { pthread_cond_wait(notEmpty, mutex) }
        let item = take()
        pthread_mutex_unlock(mutex)
        return item
    }

    /// The first item queued; while there is none, `spare` is run (work another thread would
    /// otherwise do itself, `SpareWork`) until it has nothing to do, and then the wait begins.
    package func pop(whileEmpty spare: SpareWork) -> Item {
        pthread_mutex_lock(mutex)
        while count == 0 {
            pthread_mutex_unlock(mutex)
            let worked = spare.run()
            pthread_mutex_lock(mutex)
            if !worked {
                while count == 0 { pthread_cond_wait(notEmpty, mutex) }
            }
        }
        let item = take()
        pthread_mutex_unlock(mutex)
        return item
    }

    /// The first item queued, if there is one, without waiting.
    package func popIfAny() -> Item? {
        pthread_mutex_lock(mutex)
        let item = count > 0 ? take() : nil
        pthread_mutex_unlock(mutex)
        return item
    }

    /// Everything queued now, without waiting.
    package func popAll() -> [Item] {
        pthread_mutex_lock(mutex)
        var all: [Item] = []
        while count > 0 { all.append(take()) }
        pthread_mutex_unlock(mutex)
        return all
    }

    /// Call with `mutex` held and `count > 0`.
    private func take() -> Item {
        let item = items[head]!
        items[head] = nil
        head += 1
        if head == items.count || head >= 64 {
            items.removeFirst(head)
            head = 0
        }
        pthread_cond_signal(notFull)
        return item
    }
}

/// Work that threads with nothing else to do may take on (the jobs of `replay --jobs` between
/// batches: decoding the input ahead of the reader, `DecodeAhead`). A task does one piece of
/// work and says whether it found any.
///
/// `@unchecked Sendable`: `tasks` is touched only with `mutex` held, and every task is
/// `@Sendable`.
package final class SpareWork: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var tasks: [@Sendable () -> Bool] = []

    package init() {
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func post(_ task: @escaping @Sendable () -> Bool) {
        pthread_mutex_lock(mutex)
        tasks.append(task)
        pthread_mutex_unlock(mutex)
    }

    /// One piece of work of the first task that has any: true if some was done.
    package func run() -> Bool {
        pthread_mutex_lock(mutex)
        let now = tasks
        pthread_mutex_unlock(mutex)
        return now.contains { $0() }
    }
}
