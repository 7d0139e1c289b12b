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
    /// The pending bytes: `count` of them in a buffer of `capacity`, owned here. Raw storage, so
    /// an append is a bounds check and a store (no array uniqueness check or reference count).
    @exclusivity(unchecked) private var storage: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) public private(set) var count = 0
    @exclusivity(unchecked) private var capacity: Int
    private let flushThreshold: Int
    /// Bytes written out so far (not counting the pending `count`).
    public private(set) var written = 0
    /// Every byte flushed, kept as well when `keepsCopy` is set (`replay --map` draws the events
    /// it wrote to standard output).
    public var keepsCopy = false
    public private(set) var copy: [UInt8] = []
    /// Whether this is a file opened by path (not a standard stream or memory).
    public private(set) var isFile = false
    /// Times formatted by `appendTime`, direct-mapped by a hash of the time (`timeSlot`): the
    /// events of one fix share their time, and an exit's `enteredAt` is mostly a time written
    /// before (its enter's), so almost every time is copied rather than formatted. Slot k holds
    /// `timeKeys[k]` (NaN: empty) and its bytes at `timeBytes + 32 k`, their count in byte 31.
    let timeKeys: UnsafeMutablePointer<Double> = {
        let keys = UnsafeMutablePointer<Double>.allocate(capacity: OutputFile.timeSlots)
        keys.initialize(repeating: .nan, count: OutputFile.timeSlots)
        return keys
    }()
    let timeBytes: UnsafeMutablePointer<UInt8> = {
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 32 * OutputFile.timeSlots)
        bytes.initialize(repeating: 0, count: 32 * OutputFile.timeSlots)
        return bytes
    }()
    static let timeSlots = 1024
    /// The date of the day last formatted: an exit's `enteredAt` mostly falls on a day already seen.
    @exclusivity(unchecked) var dayCache = RFC3339.DayCache()

    /// Opens (creating or truncating) `path`, or standard output for nil or `-`. The buffer is
    /// written out at `flushThreshold` bytes: 256 KiB, a quarter of the core's L2 cache here.
    /// Against 64 KiB, 14 alternating pairs of runs of the first million city fixes in exact mode
    /// (56 MB of events) took a median 2.3 % less time (a quarter of the write calls, each of which
    /// costs a virtual machine more than its bytes); 1 MiB did no better.
    public init(path: String?, flushThreshold: Int = 256 << 10) throws {
        self.flushThreshold = flushThreshold
        capacity = flushThreshold + 4096
        storage = .allocate(capacity: capacity)
        if let path, path != "-" {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw IOFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
            self.fd = fd
            self.owns = true
            self.path = path
            self.isFile = true
        } else {
            self.fd = STDOUT_FILENO
            self.owns = false
            self.path = "standard output"
        }
    }

    /// Reopens `path` for a resumed run (`replay --checkpoint`): what is past `length` bytes (written
    /// after the checkpoint) is cut off, and appending goes on from there. Fails if the file is
    /// missing or shorter than `length`: it is not the file the checkpoint was taken with.
    public init(path: String, resumingAt length: Int, flushThreshold: Int = 256 << 10) throws {
        self.flushThreshold = flushThreshold
        capacity = flushThreshold + 4096
        storage = .allocate(capacity: capacity)
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else {
            storage.deallocate()
            throw IOFailure("cannot resume \(path): \(String(cString: strerror(errno)))")
        }
        var st = stat()
        guard fstat(fd, &st) == 0, Int(st.st_size) >= length, ftruncate(fd, off_t(length)) == 0,
              lseek(fd, off_t(length), SEEK_SET) == off_t(length) else {
            close(fd)
            storage.deallocate()
            throw IOFailure("cannot resume \(path): it is shorter than the \(length) bytes the checkpoint recorded")
        }
        self.fd = fd
        self.owns = true
        self.path = path
        self.written = length
        self.isFile = true
    }

    /// Standard error, unbuffered beyond one message.
    public init(standardError: Void) {
        fd = STDERR_FILENO
        owns = false
        path = "standard error"
        flushThreshold = 0
        capacity = 4096
        storage = .allocate(capacity: capacity)
    }

    /// A buffer that is never written anywhere: a replay job formats its events into one and hands
    /// the bytes over with `takeBytes`.
    public init(memory: Void) {
        fd = -1
        owns = false
        path = "memory"
        flushThreshold = .max
        capacity = 1 << 16
        storage = .allocate(capacity: capacity)
    }

    /// The pending bytes (a copy).
    package var buffer: [UInt8] { Array(UnsafeBufferPointer(start: storage, count: count)) }

    /// The bytes appended since the last call; the buffer starts again empty.
    public func takeBytes() -> [UInt8] {
        let taken = buffer
        count = 0
        return taken
    }

    /// The pending bytes, in place (a memory output's events, produced one by one).
    package func withPending<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: storage, count: count))
    }

    /// Forgets the pending bytes (a memory output, once they are handed on).
    package func discardPending() { count = 0 }

    deinit {
        try? flush()
        if owns { close(fd) }
        storage.deallocate()
        timeKeys.deallocate()
        timeBytes.deallocate()
    }

    /// Room for `n` more bytes.
    @inline(__always)
    func reserve(_ n: Int) {
        if count + n > capacity { grow(count + n) }
    }

    @inline(never)
    private func grow(_ needed: Int) {
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: max(needed, 2 * capacity))
        grown.initialize(from: storage, count: count)
        storage.deallocate()
        storage = grown
        capacity = max(needed, 2 * capacity)
    }

    @inline(__always)
    public func append(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    @inline(__always)
    public func append(_ s: StaticString) {
        append(UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    /// A string's UTF-8 bytes, as they are (no JSON escaping). Literals go to the `StaticString`
    /// overload, which copies bytes fixed at compile time.
    public func append(string s: String) {
        var s = s
        s.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    @inline(__always)
    package func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (storage + count).initialize(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        count += bytes.count
    }

    public func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Appends what `write` puts in an array (for JSON values, off the hot path).
    public func append(writing write: (inout [UInt8]) -> Void) {
        var bytes: [UInt8] = []
        write(&bytes)
        append(bytes)
    }

    /// Writes up to `maximum` bytes straight into the buffer: `body` stores them from the pointer
    /// it gets and returns how many it stored.
    @inline(__always)
    func appendDirect(maximum: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        reserve(maximum)
        count += body(storage + count)
    }

    /// Ends a record: flushes if the buffer is past its threshold.
    @inline(__always)
    public func endRecord() throws {
        if count >= flushThreshold { try flush() }
    }

    /// Flushes, then asks the system to put the bytes on disk (`fsync`), for a checkpoint that
    /// records this length: a file shorter than that after a crash could not be resumed.
    public func synchronize() throws {
        try flush()
        guard isFile else { return }
        if fsync(fd) != 0 { throw IOFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
    }

    public func flush() throws {
        guard fd >= 0 else { return }
        if keepsCopy { copy.append(contentsOf: UnsafeBufferPointer(start: storage, count: count)) }
        var failure: String?
        var offset = 0
        while offset < count {
            let n = write(fd, storage + offset, count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                failure = String(cString: strerror(errno))
                break
            }
            offset += n
        }
        written += offset
        count = 0
        if let failure { throw IOFailure("cannot write \(path): \(failure)") }
    }
}
