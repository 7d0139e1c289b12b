#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An I/O failure: reported with exit status 74.
public struct IOFailure: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A byte sink with one large buffer, flushed with `write(2)`; owns its file descriptor unless it is
/// standard output or standard error.
public final class OutputFile {
    private let fd: Int32
    private let owns: Bool
    public let path: String
    /// Plain storage touched only by this class's own methods, so it needs no runtime
    /// exclusivity checks (they cost a thread-local lookup per byte appended).
    @exclusivity(unchecked) var buffer: [UInt8] = []
    private let flushThreshold: Int
    /// The last time formatted by `appendTime` and its bytes: events of one fix share it.
    @exclusivity(unchecked) var lastTime = Double.nan
    @exclusivity(unchecked) var lastTimeBytes: [UInt8] = []

    /// Opens (creating or truncating) `path`, or standard output for nil or `-`.
    public init(path: String?, flushThreshold: Int = 1 << 20) throws {
        self.flushThreshold = flushThreshold
        buffer.reserveCapacity(flushThreshold + 4096)
        if let path, path != "-" {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw IOFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
            self.fd = fd
            self.owns = true
            self.path = path
        } else {
            self.fd = STDOUT_FILENO
            self.owns = false
            self.path = "standard output"
        }
    }

    /// Standard error, unbuffered beyond one message.
    public init(standardError: Void) {
        fd = STDERR_FILENO
        owns = false
        path = "standard error"
        flushThreshold = 0
    }

    /// A buffer that is never written anywhere: a replay job formats its events into one and hands
    /// the bytes over with `takeBytes`.
    public init(memory: Void) {
        fd = -1
        owns = false
        path = "memory"
        flushThreshold = .max
    }

    /// The bytes appended since the last call; the buffer starts again empty.
    public func takeBytes() -> [UInt8] {
        var taken: [UInt8] = []
        taken.reserveCapacity(buffer.capacity)
        swap(&taken, &buffer)
        return taken
    }

    deinit {
        try? flush()
        if owns { close(fd) }
    }

    @inline(__always)
    public func append(_ byte: UInt8) { buffer.append(byte) }

    @inline(__always)
    public func append(_ s: StaticString) {
        s.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    /// A string's UTF-8 bytes, as they are (no JSON escaping). Literals go to the `StaticString`
    /// overload, which copies bytes fixed at compile time.
    public func append(string s: String) {
        var s = s
        s.withUTF8 { buffer.append(contentsOf: $0) }
    }

    public func append(_ bytes: UnsafeRawBufferPointer) { buffer.append(contentsOf: bytes) }

    /// Ends a record: flushes if the buffer is past its threshold.
    @inline(__always)
    public func endRecord() throws {
        if buffer.count >= flushThreshold { try flush() }
    }

    public func flush() throws {
        guard fd >= 0 else { return }
        var failure: String?
        buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = String(cString: strerror(errno))
                    return
                }
                offset += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
        if let failure { throw IOFailure("cannot write \(path): \(failure)") }
    }
}
