import GeotriggerCore

/// Where finished records go: the seam below the event writer (SPEC §4's NDJSON lines, the
/// `--rejects` lines, `--state-out`). A `RecordBuffer` formats into its buffer and hands a sink
/// whole records: a new destination (a socket, a database) is one type conforming here, plus the
/// command-line option that makes it (`docs/architecture.md`).
///
/// Calls come from one thread, the one that formats the records.
public protocol RecordSink: AnyObject {
    /// Bytes to gather before `write`: a file takes large blocks; 0 hands over each record as it
    /// ends (one whole line, newline included).
    var blockSize: Int { get }
    /// Takes whole records (each ends in a newline, except a `--state-out` document's pieces).
    func write(_ records: ByteView) throws
    /// One record, without its newline, and its key (a Kafka message's), which a sink without
    /// keys ignores (`RecordBuffer.appendRecord(_:key:)`, with `blockSize` 0).
    func write(record: ByteView, key: ByteView?) throws
    /// A batch of keyed records at once (a Kafka topic's events, produced together): record k
    /// is `records[entries[k].value]` (without its newline), keyed `keys[entries[k].key]`.
    func write(records: ByteView, keys: ByteView, entries: [KeyedRecord]) throws
    /// Makes what was written durable (a checkpoint records `length` after it).
    func synchronize() throws
    /// Bytes written so far; a resumed file counts what it kept.
    var length: Int { get }
}

extension RecordSink {
    public func synchronize() throws {}

    public func write(record: ByteView, key: ByteView?) throws {
        let line = Array(record) + [UInt8(ascii: "\n")]
        try line.withByteView { try write($0) }
    }

    public func write(records: ByteView, keys: ByteView, entries: [KeyedRecord]) throws {
        for e in entries { try write(record: records[e.value], key: keys[e.key]) }
    }

    /// Each record of `records` (whole lines) without its newline, for a sink that takes them one
    /// at a time; a last piece without a newline is a record too.
    public func forEachRecord(in records: ByteView, _ body: (ByteView) throws -> Void) rethrows {
        var start = 0
        for (k, byte) in records.enumerated() where byte == UInt8(ascii: "\n") {
            try body(records[start..<k])
            start = k + 1
        }
        if start < records.count { try body(records[start..<records.count]) }
    }
}

/// Where one record of a keyed batch lies (`RecordSink.write(records:keys:entries:)`): its key
/// and its value, as ranges of the batch's keys and records.
public struct KeyedRecord: Sendable {
    public var key: Range<Int>
    public var value: Range<Int>
    public init(key: Range<Int>, value: Range<Int>) {
        self.key = key
        self.value = value
    }
}

/// An I/O failure: reported with exit status 74.
public struct IOFailure: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The library's in-memory sink: each record, as it ends, to a closure (without its newline).
///
/// ```swift
/// engine.output = EventWriter(output: RecordBuffer(sink: RecordCallback { line in
///     print(line.string)
/// }), engine: engine)
/// ```
public final class RecordCallback: RecordSink {
    private let body: (ByteView) -> Void
    public private(set) var length = 0

    /// `body` gets each record's bytes, valid during the call.
    public init(_ body: @escaping (ByteView) -> Void) { self.body = body }

    public var blockSize: Int { 0 }

    public func write(_ records: ByteView) {
        length += records.count
        // One record per call (`blockSize` 0); split anyway, should a caller flush several.
        forEachRecord(in: records, body)
    }
}
