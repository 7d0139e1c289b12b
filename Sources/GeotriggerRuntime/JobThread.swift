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
