import GeotriggerCore
/// The buffer records are formatted into, in front of a `RecordSink`: the event writer, the
/// reject reports and `--state-out` append here, and the sink gets the finished records, in
/// blocks of its `blockSize` (a file's large writes) or one at a time (`blockSize` 0). A buffer
/// without a sink holds its records until its owner takes them (`takeBytes`, `withPending`): a
/// `replay --jobs` job's events, which the merge writes to the run's sink in order, and a
/// `consume` partition's, which go to Kafka by the batch.
///
/// Raw storage, so an append is a bounds check and a store (no array uniqueness check or
/// reference count).
public final class RecordBuffer {
    /// Where the records go; nil: held here.
    public let sink: (any RecordSink)?
    @exclusivity(unchecked) private var storage: UnsafeMutablePointer<UInt8>
    /// The pending bytes: `count` of them in a buffer of `capacity`, owned here.
    @exclusivity(unchecked) public private(set) var count = 0
    @exclusivity(unchecked) private var capacity: Int
    private let flushThreshold: Int
    /// Every byte flushed, kept as well when `keepsCopy` is set (`replay --map` draws the events
    /// it wrote to standard output).
    public var keepsCopy = false
    public private(set) var copy: [UInt8] = []
    /// Times formatted by `appendTime`, direct-mapped by a hash of the time (`timeSlot`): the
    /// events of one fix share their time, and an exit's `enteredAt` is mostly a time written
    /// before (its enter's), so almost every time is copied rather than formatted. Slot k holds
    /// `timeKeys[k]` (NaN: empty) and its bytes at `timeBytes + 32 k`, their count in byte 31.
    let timeKeys: UnsafeMutablePointer<Double> = {
        let keys = UnsafeMutablePointer<Double>.allocate(capacity: RecordBuffer.timeSlots)
        keys.initialize(repeating: .nan, count: RecordBuffer.timeSlots)
        return keys
    }()
    let timeBytes: UnsafeMutablePointer<UInt8> = {
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 32 * RecordBuffer.timeSlots)
        bytes.initialize(repeating: 0, count: 32 * RecordBuffer.timeSlots)
        return bytes
    }()
    static let timeSlots = 1024
    /// The date of the day last formatted: an exit's `enteredAt` mostly falls on a day already seen.
    @exclusivity(unchecked) var dayCache = RFC3339.DayCache()

    /// A buffer in front of `sink`, handing it records in blocks of its `blockSize`.
    public init(sink: any RecordSink) {
        self.sink = sink
        flushThreshold = sink.blockSize
        capacity = max(sink.blockSize, 4096) + 4096
        storage = .allocate(capacity: capacity)
    }

    /// A buffer that holds its records for its owner (`takeBytes`, `withPending`).
    public init(memory: Void) {
        sink = nil
        flushThreshold = .max
        capacity = 1 << 16
        storage = .allocate(capacity: capacity)
    }

    /// Opens (creating or truncating) `path`, or standard output for nil or `-` (`FileSink`).
    public convenience init(path: String?) throws {
        self.init(sink: try FileSink(path: path))
    }

    /// Reopens `path` for a resumed run, cut to `length` bytes (`FileSink(path:resumingAt:)`).
    public convenience init(path: String, resumingAt length: Int) throws {
        self.init(sink: try FileSink(path: path, resumingAt: length))
    }

    /// Bytes the sink has taken so far (a resumed file's included), not counting the pending ones.
    public var written: Int { sink?.length ?? 0 }

    /// The pending bytes (a copy).
    package var buffer: [UInt8] { Array(UnsafeBufferPointer(start: storage, count: count)) }

    /// The bytes appended since the last call; the buffer starts again empty.
    public func takeBytes() -> [UInt8] {
        let taken = buffer
        count = 0
        return taken
    }

    /// The pending bytes, in place (a memory output's events, produced one by one).
    package func withPending<R>(_ body: (ByteView) throws -> R) rethrows -> R {
        try body(ByteView(unsafe: UnsafeRawBufferPointer(start: storage, count: count)))
    }

    /// Forgets the pending bytes (a memory output, once they are handed on).
    package func discardPending() { count = 0 }

    deinit {
        try? flush()
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

    /// Bytes another object owns, as they are.
    @inline(__always)
    public func append(_ bytes: ByteView) { append(bytes.unsafeBytes) }

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

    /// One whole record given at once (`line`, without its newline), with the key a sink of
    /// keyed records uses (a Kafka topic's; nil for a file or standard input's record).
    public func appendRecord(_ line: ByteView, key: ByteView?) throws {
        if let sink, sink.blockSize == 0 {
            try flush()
            try sink.write(record: line, key: key)
            return
        }
        append(line)
        append(UInt8(ascii: "\n"))
        try endRecord()
    }

    /// Ends a record: hands the records to the sink once the buffer holds its `blockSize`.
    @inline(__always)
    public func endRecord() throws {
        if count >= flushThreshold { try flush() }
    }

    /// Flushes, then has the sink make its bytes durable (`fsync` for a file), for a checkpoint
    /// that records `written`: a file shorter than that after a crash could not be resumed.
    public func synchronize() throws {
        try flush()
        try sink?.synchronize()
    }

    /// Hands the pending records to the sink (a held buffer keeps them).
    public func flush() throws {
        guard let sink, count > 0 else { return }
        if keepsCopy { copy.append(contentsOf: UnsafeBufferPointer(start: storage, count: count)) }
        defer { count = 0 }
        try sink.write(ByteView(unsafe: UnsafeRawBufferPointer(start: storage, count: count)))
    }
}
