import GeotriggerCore
/// The buffer records are formatted into, in front of a `RecordSink`: the event writer, the
/// reject reports and `--state-out` append here, and the sink gets the finished records, in
/// blocks of its `blockSize` (a file's large writes) or one at a time (`blockSize` 0). A buffer
/// without a sink holds its records until its owner takes them (`takeBytes`, `withPending`): a
/// `replay --jobs` job's events, which the merge writes to the run's sink in order, and a
/// `consume` partition's, which go to Kafka by the batch.
///
/// Raw storage, so an append is a bounds check and a store (no array uniqueness check or
/// reference count); a record formatted in place writes through a `RecordCursor` into room
/// reserved for it. This file is the one that touches the buffer's memory: the formatting of
/// JSON pieces (`JSONWriting`) and of events (`EventWriter`) goes through the cursor's stores.
public final class RecordBuffer {
    /// Where the records go; nil: held here.
    public let sink: (any RecordSink)?
    @exclusivity(unchecked) private var storage: UnsafeMutablePointer<UInt8>
    /// The pending bytes: `count` of them in a buffer of `capacity`, owned here.
    @exclusivity(unchecked) public private(set) var count = 0
    /// `count` through a getter, for code in other modules that asks per record (a `--jobs` job's
    /// tags): there, a stored property's read is checked for exclusivity whatever its attribute.
    public var length: Int { count }
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

    /// A buffer that holds its records for its owner (`takeBytes`, `withPending`), with room
    /// for `capacity` bytes before it grows.
    public init(memory: Void, capacity: Int = 1 << 16) {
        sink = nil
        flushThreshold = .max
        self.capacity = max(capacity, 4096)
        storage = .allocate(capacity: self.capacity)
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
    package var buffer: [UInt8] { Array(pending) }

    /// The pending bytes as a view, valid until the next append or flush.
    private var pending: ByteView { ByteView(unsafe: UnsafeRawBufferPointer(start: storage, count: count)) }

    /// The bytes appended since the last call; the buffer starts again empty.
    public func takeBytes() -> [UInt8] {
        let taken = buffer
        count = 0
        return taken
    }

    /// The pending bytes, handed over in their own memory, which `spare`'s (emptied) replaces
    /// here: a `--jobs` job's events go to the merge and come back for reuse, with no copy and
    /// no fresh pages per batch.
    public func takeBlock(replacingWith spare: ByteBlock?) -> ByteBlock {
        let block = spare ?? ByteBlock(capacity: capacity)
        swap(&storage, &block.storage)
        swap(&capacity, &block.capacity)
        block.count = count
        count = 0
        return block
    }

    /// The pending bytes, in place (a memory output's events, produced one by one).
    package func withPending<R>(_ body: (ByteView) throws -> R) rethrows -> R {
        try body(pending)
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
    private func append(_ bytes: UnsafeRawBufferPointer) {
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

    /// Writes one record of at most `maximum` bytes straight into the buffer through a cursor.
    @inline(__always)
    public func appendRecord(maximum: Int, _ body: (inout RecordCursor) -> Void) {
        reserve(maximum)
        let start = storage + count
        var cursor = RecordCursor(start, room: maximum)
        body(&cursor)
        count += cursor.p - start
    }

    /// Appends what `write` puts in an array (for JSON values, off the hot path).
    public func append(writing write: (inout [UInt8]) -> Void) {
        var bytes: [UInt8] = []
        write(&bytes)
        append(bytes)
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
        if keepsCopy { copy.append(contentsOf: pending) }
        defer { count = 0 }
        try sink.write(pending)
    }
}

extension RecordBuffer {
    /// An RFC 3339 UTC time with milliseconds, quoted, at `cursor`: at most 34 bytes.
    @inline(__always)
    public func putTime(_ t: Double, _ cursor: inout RecordCursor) {
        let slot = Self.timeSlot(t)
        if !(timeKeys[slot] == t) { formatTime(t, slot) }
        let bytes = timeBytes + 32 * slot
        let n = Int(bytes[31])
        cursor.put(UInt8(ascii: "\""))
        cursor.check(n)
        if n == 24 {
            // The usual width, as three words.
            let from = UnsafeRawPointer(bytes), to = UnsafeMutableRawPointer(cursor.p)
            to.storeBytes(of: from.loadUnaligned(as: UInt64.self), as: UInt64.self)
            to.storeBytes(of: from.loadUnaligned(fromByteOffset: 8, as: UInt64.self), toByteOffset: 8, as: UInt64.self)
            to.storeBytes(of: from.loadUnaligned(fromByteOffset: 16, as: UInt64.self), toByteOffset: 16, as: UInt64.self)
            cursor.p += 24
        } else {
            cursor.put(bytes: ByteView(unsafe: UnsafeRawBufferPointer(start: bytes, count: n)))
        }
        cursor.put(UInt8(ascii: "\""))
    }

    /// The cache slot of `t`: the top ten bits of its bit pattern times a large odd constant.
    /// Consecutive whole seconds near 2023's land about 440 slots apart, and 1,024 consecutive
    /// seconds fill 876 slots.
    @inline(__always)
    static func timeSlot(_ t: Double) -> Int {
        Int(truncatingIfNeeded: (t.bitPattern &* 0x9E37_79B9_7F4A_7C15) >> 54)
    }

    /// Formats `t` into `slot` (at most 29 bytes: 24 for years 0…9999).
    @inline(never)
    private func formatTime(_ t: Double, _ slot: Int) {
        let bytes = timeBytes + 32 * slot
        var n = RFC3339.format24(t, to: bytes, days: &dayCache)
        if n == 0 {
            // Not finite, or a year beyond 0…9999: at most 29 bytes. Defensive only: input times
            // are held to `InputLimits.timeIsWritable` (years 0001–9999 once rounded) where they
            // are read, and every time written derives from them without passing the clock.
            var spelled: [UInt8] = []
            RFC3339.format(t, into: &spelled)
            n = min(31, spelled.count)
            for k in 0..<n { bytes[k] = spelled[k] }
        }
        bytes[31] = UInt8(n)
        timeKeys[slot] = t
    }
}

/// A write position inside room of a `RecordBuffer` that `appendRecord(maximum:_:)` has
/// reserved: the pieces of a record are stored with no bounds check and no count update each
/// (debug builds check every store against the room). Each `put` documents the most bytes it can
/// store; the caller reserves their sum. The stores here are the cursor's whole contact with
/// memory; the JSON pieces (`JSONWriting`) and records (`EventWriter`) are made of them.
public struct RecordCursor {
    @usableFromInline var p: UnsafeMutablePointer<UInt8>
    /// The end of the reserved room (read by debug builds' checks only).
    @usableFromInline let end: UnsafeMutablePointer<UInt8>

    @usableFromInline init(_ p: UnsafeMutablePointer<UInt8>, room: Int) {
        self.p = p
        end = p + room
    }

    /// Debug builds: stops when `n` more bytes would pass the reserved room.
    @inline(__always)
    func check(_ n: Int) { assert(n >= 0 && end - p >= n, "record longer than the room reserved for it") }

    /// A literal: its length.
    @inline(__always)
    public mutating func put(_ s: StaticString) {
        check(s.utf8CodeUnitCount)
        p.initialize(from: s.utf8Start, count: s.utf8CodeUnitCount)
        p += s.utf8CodeUnitCount
    }

    /// One byte.
    @inline(__always)
    public mutating func put(_ b: UInt8) {
        check(1)
        p.pointee = b
        p += 1
    }

    /// Bytes another object owns, as they are: their count.
    @inline(__always)
    package mutating func put(bytes: ByteView) {
        guard let source = bytes.unsafeBytes.baseAddress, bytes.count > 0 else { return }
        check(bytes.count)
        p.initialize(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        p += bytes.count
    }

    /// Stores `b` `k` bytes ahead, without moving (a piece written last byte first).
    @inline(__always)
    mutating func set(_ b: UInt8, at k: Int) {
        check(k + 1)
        p[k] = b
    }

    /// Stores `w`'s bytes, little-endian, `k` bytes ahead without moving: short pieces copied as
    /// two overlapping words rather than a byte at a time.
    @inline(__always)
    mutating func setWord<W: FixedWidthInteger>(_ w: W, at k: Int) {
        check(k + MemoryLayout<W>.size)
        UnsafeMutableRawPointer(p + k).storeBytes(of: w.littleEndian, as: W.self)
    }

    /// Moves on by `n` bytes stored with `set` or `setWord`.
    @inline(__always)
    mutating func advance(_ n: Int) {
        check(n)
        p += n
    }

    /// The first and the last `W`-sized word of `bytes` (little-endian), which holds between
    /// one and two words: with `setWord`, a short name's copy in two loads and two stores.
    @inline(__always)
    static func edgeWords<W: FixedWidthInteger>(of bytes: ByteView, as: W.Type) -> (first: W, last: W) {
        let n = bytes.count, size = MemoryLayout<W>.size
        assert(n >= size && n <= 2 * size, "edgeWords of \(n) bytes")
        let b = UnsafeRawPointer(bytes.unsafeBytes.baseAddress.unsafelyUnwrapped)
        return (W(littleEndian: b.loadUnaligned(as: W.self)),
                W(littleEndian: b.loadUnaligned(fromByteOffset: n - size, as: W.self)))
    }

    /// A String's UTF-8 bytes as a view, valid during `body`: a native or small string lends its
    /// own without a copy of the String, others are copied once.
    @inline(__always)
    static func withBytes<R>(of s: borrowing String, _ body: (ByteView) -> R) -> R {
        if let r = s.utf8.withContiguousStorageIfAvailable({ body(ByteView(unsafe: UnsafeRawBufferPointer($0))) }) {
            return r
        }
        var copy = copy s
        return copy.withByteView(body)
    }
}

/// Bytes a held buffer handed over whole (`RecordBuffer.takeBlock`): owned here, freed once, by
/// `deinit`; read while no buffer writes them (the block crosses threads with its owner).
public final class ByteBlock: @unchecked Sendable {
    // Unchecked: a block has one owner at a time, and a checked read costs a call into the
    // runtime each time the merge copies a run of events out of it.
    @exclusivity(unchecked) fileprivate var storage: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) fileprivate var capacity: Int
    @exclusivity(unchecked) public fileprivate(set) var count = 0

    fileprivate init(capacity: Int) {
        storage = .allocate(capacity: capacity)
        self.capacity = capacity
    }

    deinit { storage.deallocate() }

    /// The bytes, valid while the block lives and is not handed back to a buffer.
    public var bytes: ByteView { ByteView(unsafe: UnsafeRawBufferPointer(start: storage, count: count)) }
}
