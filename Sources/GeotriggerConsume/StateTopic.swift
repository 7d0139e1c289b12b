import Geotrigger
import GeotriggerCore
import GeotriggerKafka
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerRuntime

/// Where a partition's snapshot lies in the state topic: what the input offset's commit carries
/// as metadata (SPEC §8), in a line a person can read with `kcat -Q` or the group tools:
///
///     geotrigger-snapshot/1 topic=fleet-state partition=2 first=40 last=41 seq=9f3c… chunks=2 bytes=731004 hash=5be1…
///
/// A snapshot is written in chunks of at most `StateTopic.chunkBytes` (Kafka's default message
/// limit is 1 MB), all keyed by the input partition, so they go to one state partition, in order.
package struct SnapshotReference: Equatable {
    package var topic: String
    package var partition: Int32
    /// Offsets of the first and last chunk: every chunk lies between them (other snapshots'
    /// chunks may too, and are told apart by `seq`).
    package var first: Int64
    package var last: Int64
    /// This snapshot's number, random: chunks of an older or concurrent one never match it.
    package var seq: UInt64
    package var chunks: Int
    package var bytes: Int
    package var hash: UInt64

    static let prefix = "geotrigger-snapshot/1"

    package var metadata: String {
        "\(Self.prefix) topic=\(topic) partition=\(partition) first=\(first) last=\(last) seq=\(hex(seq)) "
            + "chunks=\(chunks) bytes=\(bytes) hash=\(hex(hash))"
    }

    /// Parses `metadata`; nil when the commit carries none of ours.
    package init?(metadata: String) {
        let words = metadata.split(separator: " ")
        guard words.first.map(String.init) == Self.prefix else { return nil }
        var fields: [Substring: Substring] = [:]
        for w in words.dropFirst() {
            guard let eq = w.firstIndex(of: "=") else { return nil }
            fields[w[..<eq]] = w[w.index(after: eq)...]
        }
        guard let topic = fields["topic"], let p = fields["partition"].flatMap({ Int32($0) }),
              let first = fields["first"].flatMap({ Int64($0) }), let last = fields["last"].flatMap({ Int64($0) }),
              let seq = fields["seq"].flatMap({ UInt64($0, radix: 16) }), let chunks = fields["chunks"].flatMap({ Int($0) }),
              let bytes = fields["bytes"].flatMap({ Int($0) }), let hash = fields["hash"].flatMap({ UInt64($0, radix: 16) })
        else { return nil }
        // Only what `StateTopic.write` can have written, so `read` can act on it: as many chunks
        // as the bytes take, each at an offset of its own between first and last (a negative or
        // huge count would trap or ask for a huge allocation there).
        guard p >= 0, first >= 0, first <= last, bytes >= 0, chunks == StateTopic.chunkCount(bytes: bytes),
              Int64(chunks) - 1 <= last - first
        else { return nil }
        self.init(topic: String(topic), partition: p, first: first, last: last, seq: seq, chunks: chunks, bytes: bytes, hash: hash)
    }

    init(topic: String, partition: Int32, first: Int64, last: Int64, seq: UInt64, chunks: Int, bytes: Int, hash: UInt64) {
        self.topic = topic
        self.partition = partition
        self.first = first
        self.last = last
        self.seq = seq
        self.chunks = chunks
        self.bytes = bytes
        self.hash = hash
    }
}

private func hex(_ v: UInt64) -> String { String(v, radix: 16) }

/// The state topic (`GROUP-state`): writes a partition's snapshot as chunks and learns where
/// they were stored from the delivery reports; reads one back by its reference.
package final class StateTopic {
    let name: String
    /// The chunks' producer, whose delivery reports say where each chunk lies.
    private let producer: KafkaProducer
    /// The events' producer: what it holds is stored before a snapshot is taken as written.
    private let events: KafkaProducer
    private let reader: KafkaPartitionReader
    /// Chunk payloads at most this long (Kafka's default `message.max.bytes` is 1 MB).
    package static let chunkBytes = 512 << 10
    /// Chunks start with this, then seq (8 bytes), index and count (4 each), little-endian.
    private static let magic: [UInt8] = Array("GTSC".utf8)
    private static let headerBytes = 20

    /// The chunks a snapshot of `bytes` bytes is written in (one at least).
    static func chunkCount(bytes: Int) -> Int { max(1, bytes / chunkBytes + (bytes % chunkBytes == 0 ? 0 : 1)) }

    /// Delivery reports of the snapshot being written, by chunk index.
    private var pending: (seq: UInt64, token: Int, reports: [(partition: Int32, offset: Int64)?])?
    private var failure: KafkaError?
    private var random = SplitMix64(seed: UInt64(getpid()) &* 0x9E37_79B9_7F4A_7C15
                                    ^ UInt64(bitPattern: Int64(monotonicSeconds() * 1e9)))
    /// Tokens of state chunks start here (a message of token 0 is reported only if it fails).
    static let firstToken = 1 << 40
    private var nextToken = StateTopic.firstToken

    init(name: String, producer: KafkaProducer, after events: KafkaProducer, reader: KafkaPartitionReader) {
        self.name = name
        self.producer = producer
        self.events = events
        self.reader = reader
    }

    /// Waits until every chunk queued is stored.
    func flush() throws(KafkaError) {
        try producer.flush(milliseconds: 60_000)
    }

    /// A delivery report of the chunks' producer, for the message of token `token` (the
    /// consumer's delivery handler passes them here).
    func delivered(token: Int, partition: Int32, offset: Int64, error: KafkaError?) {
        guard var p = pending, token >= p.token, token < p.token + p.reports.count else { return }
        if let error { failure = failure ?? error; return }
        p.reports[token - p.token] = (partition, offset)
        pending = p
    }

    /// Writes `bytes` as the snapshot of input partition `key`, waits until every chunk (and
    /// every message queued before them) is stored, and returns where it lies.
    func write(_ bytes: [UInt8], key: String) throws(ConsumeError) -> SnapshotReference {
        let seq = random.next()
        let count = Self.chunkCount(bytes: bytes.count)
        let token = nextToken
        nextToken += count
        pending = (seq, token, Array(repeating: nil, count: count))
        failure = nil
        defer { pending = nil }
        var chunk: [UInt8] = []
        chunk.reserveCapacity(Self.headerBytes + min(bytes.count, Self.chunkBytes))
        let keyBytes = Array(key.utf8)
        do {
            for k in 0..<count {
                chunk.removeAll(keepingCapacity: true)
                chunk.append(contentsOf: Self.magic)
                chunk.appendLittleEndian(seq)
                chunk.appendLittleEndian(UInt32(k))
                chunk.appendLittleEndian(UInt32(count))
                chunk.append(contentsOf: bytes[(k * Self.chunkBytes)..<min(bytes.count, (k + 1) * Self.chunkBytes)])
                try keyBytes.withUnsafeBytes { key in
                    try chunk.withUnsafeBytes { value in
                        try producer.produce(topic: name, key: key, value: value, token: token + k)
                    }
                }
            }
            // Everything queued before (the events of the records the snapshot covers) and the
            // chunks: the input offset may be committed only once all of it is stored.
            try events.flush(milliseconds: 60_000)
            try producer.flush(milliseconds: 60_000)
        } catch {
            throw ConsumeError.kafka("cannot write a snapshot to \(name): \(error)")
        }
        if let failure { throw ConsumeError.kafka("cannot write a snapshot to \(name): \(failure)") }
        for p in [events, producer] {
            let (failed, first) = p.failures
            if failed > 0 { throw ConsumeError.kafka("\(failed) messages could not be delivered: \(first.map { "\($0)" } ?? "")") }
        }
        let reports = pending!.reports
        guard reports.allSatisfy({ $0 != nil }) else { throw ConsumeError.kafka("a snapshot chunk went unreported by \(name)") }
        let partitions = Set(reports.map { $0!.partition })
        let offsets = reports.map { $0!.offset }
        // An idempotent producer's retried message may come back without its offset.
        guard partitions.count == 1, offsets.allSatisfy({ $0 >= 0 }) else {
            throw ConsumeError.kafka("the chunks of a snapshot in \(name) cannot be located (partitions \(partitions.sorted()), offsets \(offsets))")
        }
        return SnapshotReference(topic: name, partition: partitions.first!, first: offsets.min()!, last: offsets.max()!,
                                 seq: seq, chunks: count, bytes: bytes.count, hash: ContentHash.of(bytes))
    }

    /// The snapshot `ref` names, put together from its chunks and checked against its length and hash.
    func read(_ ref: SnapshotReference, key: String) throws(ConsumeError) -> [UInt8] {
        let messages: [KafkaMessage]
        do {
            messages = try reader.read(topic: ref.topic, partition: ref.partition, from: ref.first, through: ref.last)
        } catch {
            throw ConsumeError.snapshot("cannot read the snapshot of \(key) from \(ref.topic)[\(ref.partition)]: \(error)")
        }
        // By index, as found: not an array of `ref.chunks` made up front, a count from outside.
        var parts: [Int: [UInt8]] = [:]
        let keyBytes = Array(key.utf8)
        for m in messages where m.key == keyBytes && m.value.count >= Self.headerBytes && Array(m.value[0..<4]) == Self.magic {
            let v = m.value
            func le<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T { v.littleEndian(at: at, as: T.self) }
            guard le(4, UInt64.self) == ref.seq else { continue }
            let k = Int(le(12, UInt32.self)), n = Int(le(16, UInt32.self))
            guard n == ref.chunks, k < n else { continue }
            parts[k] = Array(v[Self.headerBytes...])
        }
        guard parts.count == ref.chunks else {
            throw ConsumeError.snapshot("the snapshot of \(key) is gone from \(ref.topic)[\(ref.partition)] offsets "
                                        + "\(ref.first)–\(ref.last) (\(parts.count) of \(ref.chunks) chunks found: "
                                        + "cut by the topic's retention?)")
        }
        let bytes = (0..<ref.chunks).flatMap { parts[$0]! }
        guard bytes.count == ref.bytes, ContentHash.of(bytes) == ref.hash else {
            throw ConsumeError.snapshot("the snapshot of \(key) in \(ref.topic)[\(ref.partition)] does not match its commit's hash")
        }
        return bytes
    }
}
