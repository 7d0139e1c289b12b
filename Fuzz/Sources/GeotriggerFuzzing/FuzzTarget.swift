#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One decoder of outside bytes and the invariant it keeps on any input.
///
/// A target does more than survive its input: it decodes the bytes in two or more ways that must
/// agree (a fast lane and the general reader, a large buffer and a small one, a whole stream and
/// one resumed halfway, a snapshot and its re-encoding) and returns every disagreement it finds.
/// A crash, an over-read or a leak is the sanitizer's to report.
package struct FuzzTarget: Sendable {
    package let name: String
    /// What is decoded and what must hold, for `scripts/fuzz --list`.
    package let about: String
    /// The problems found in the bytes (none: the invariant holds).
    package let check: @Sendable (UnsafeRawBufferPointer) -> [String]
}

package enum FuzzTargets {
    /// Every target, in `scripts/fuzz --list` order.
    package static let all: [FuzzTarget] = ReadingsTargets.all + RegionsTargets.all + SchedulingTargets.all
        + SnapshotTargets.all

    package static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

/// The problems a check found, each said once with enough to reproduce it by hand.
struct Findings {
    private(set) var problems: [String] = []

    mutating func expect(_ condition: @autoclosure () -> Bool, _ problem: @autoclosure () -> String) {
        if !condition() { problems.append(problem()) }
    }

    mutating func add(_ problem: String) { problems.append(problem) }
}

/// Bytes presented as a file descriptor, as the decoders read their inputs: one file per
/// process, in `/dev/shm` where it exists (memory, not disk), unlinked as soon as it is open so
/// that nothing is left behind however the process ends, and rewritten for each input.
final class ScratchFile: @unchecked Sendable {
    private let fd: Int32
    private var lock = pthread_mutex_t()

    init(name: String) {
        let dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        let path = "\(dir)/geotrigger-fuzz-\(name)-\(getpid())"
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(fd >= 0, "cannot create \(path)")
        unlink(path)
        pthread_mutex_init(&lock, nil)
    }

    /// `body` given a descriptor open for reading at the start of `bytes` (not to be closed).
    func withDescriptor<R>(_ bytes: UnsafeRawBufferPointer, _ body: (Int32) -> R) -> R {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        precondition(ftruncate(fd, 0) == 0, "cannot truncate the scratch file")
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(done))
            precondition(n > 0, "cannot write the scratch file")
            done += n
        }
        precondition(lseek(fd, 0, SEEK_SET) == 0, "cannot rewind the scratch file")
        return body(fd)
    }
}

/// A short, printable quotation of bytes for a problem's message.
func quoted(_ bytes: some Collection<UInt8>, limit: Int = 120) -> String {
    var s = ""
    for b in bytes.prefix(limit) {
        if b >= 0x20 && b < 0x7F && b != UInt8(ascii: "\\") { s.unicodeScalars.append(Unicode.Scalar(b)) }
        else { s += "\\x" + String(b, radix: 16, uppercase: false).leftPadded(to: 2) }
    }
    return bytes.count > limit ? s + "…" : s
}

extension String {
    fileprivate func leftPadded(to n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
