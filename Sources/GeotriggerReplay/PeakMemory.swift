import GeotriggerRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The most memory this process has held resident so far (bytes), or nil where it cannot be read.
///
/// On Linux this is `VmHWM` from `/proc/self/status`: the high-water mark of the address space
/// made when this program was executed. `getrusage`'s `ru_maxrss` is not used there: a process
/// started with `posix_spawn` or `vfork` shares its parent's address space until it executes, and
/// Linux then counts the parent's high-water mark as the child's, so a small replay started by a
/// large process (a benchmark holding its readings) would report the parent's peak. On macOS
/// `ru_maxrss` is this process's own, in bytes.
public func peakResidentBytes() -> Int? {
    #if os(Linux)
    let fd = open("/proc/self/status", O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 4096)
    var used = 0
    while used < bytes.count {
        let n = SystemIO.read(fd, into: &bytes, used..<bytes.count)
        if n <= 0 { break }
        used += n
    }
    return vmHighWaterMark(in: String(decoding: bytes[..<used], as: UTF8.self))
    #elseif canImport(Darwin)
    var usage = rusage()
    guard getrusage(RUSAGE_SELF, &usage) == 0 else { return nil }
    return Int(usage.ru_maxrss)
    #else
    return nil
    #endif
}

/// The `VmHWM:` line of a `/proc/PID/status` text, in bytes (the kernel writes it in kB).
func vmHighWaterMark(in status: String) -> Int? {
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count == 3, fields[2] == "kB", let kilobytes = Int(fields[1]) else { return nil }
        return kilobytes * 1024
    }
    return nil
}
