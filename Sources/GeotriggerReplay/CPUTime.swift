#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CPU time used so far (user + system, seconds): by the calling thread, and by the whole process
/// (every thread, librdkafka's included). `consume` reports both over its span of records, so a
/// figure of records per second can be read against the cores it took.
package struct CPUTime {
    package var thread: Double
    package var process: Double

    package init(thread: Double, process: Double) {
        self.thread = thread
        self.process = process
    }

    package static func now() -> CPUTime {
        CPUTime(thread: clockSeconds(CLOCK_THREAD_CPUTIME_ID), process: clockSeconds(CLOCK_PROCESS_CPUTIME_ID))
    }

    private static func clockSeconds(_ clock: clockid_t) -> Double {
        var ts = timespec()
        guard clock_gettime(clock, &ts) == 0 else { return 0 }
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    package static func - (a: CPUTime, b: CPUTime) -> CPUTime {
        CPUTime(thread: a.thread - b.thread, process: a.process - b.process)
    }
}
