import CRdKafka
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// librdkafka's handles, each owned by exactly one Swift object that frees it once in `deinit`,
// as GEOS's are (SPEC §8). The C API's conventions, where they matter:
// - `rd_kafka_conf_set` returns RD_KAFKA_CONF_OK or fills `errstr`;
// - `rd_kafka_new` takes ownership of its configuration only when it succeeds;
// - calls returning `rd_kafka_resp_err_t` give RD_KAFKA_RESP_ERR_NO_ERROR (0) on success;
// - a message from `rd_kafka_consumer_poll` is the caller's until `rd_kafka_message_destroy`;
// - a topic-partition list frees each entry's `metadata` with free(): it must come from malloc.

/// A librdkafka error: its code (`rd_kafka_resp_err_t`, 0 for configuration errors) and text.
public struct KafkaError: Error, CustomStringConvertible, Equatable {
    public var code: Int32
    public var message: String
    public init(code: Int32 = 0, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ err: rd_kafka_resp_err_t, _ what: String) {
        code = err.rawValue
        message = "\(what): \(String(cString: rd_kafka_err2str(err)))"
    }

    public var description: String { message }
}

/// Settings for a client (`rd_kafka_conf_t`), as `kcat -X` takes them: KEY=VALUE pairs of
/// librdkafka's configuration properties.
public struct KafkaSettings: Sendable {
    public var values: [(String, String)]
    public init(_ values: [(String, String)] = []) { self.values = values }

    public mutating func set(_ key: String, _ value: String) { values.append((key, value)) }

    /// These settings, then `more` (a later value of a key wins, as in librdkafka).
    public static func + (a: KafkaSettings, more: [(String, String)]) -> KafkaSettings { KafkaSettings(a.values + more) }

    /// A new `rd_kafka_conf_t` with every setting applied; the caller owns it.
    func makeConfiguration() throws(KafkaError) -> OpaquePointer {
        let conf = rd_kafka_conf_new()!
        var errstr = [CChar](repeating: 0, count: 512)
        for (key, value) in values where rd_kafka_conf_set(conf, key, value, &errstr, errstr.count) != RD_KAFKA_CONF_OK {
            rd_kafka_conf_destroy(conf)
            throw KafkaError("\(key)=\(value): \(String(cString: errstr))")
        }
        return conf
    }
}

/// One `rd_kafka_t`, destroyed once in `deinit`.
final class KafkaHandle {
    let pointer: OpaquePointer

    init(_ type: rd_kafka_type_t, _ settings: KafkaSettings) throws(KafkaError) {
        let conf = try settings.makeConfiguration()
        var errstr = [CChar](repeating: 0, count: 512)
        guard let rk = rd_kafka_new(type, conf, &errstr, errstr.count) else {
            // Not taken over when creation fails.
            rd_kafka_conf_destroy(conf)
            throw KafkaError("cannot create a Kafka client: \(String(cString: errstr))")
        }
        pointer = rk
    }

    deinit { rd_kafka_destroy(pointer) }
}

/// A producer: keyed messages to topics (partition chosen by librdkafka's partitioner from the
/// key, so a device's messages stay in one partition, in order).
public final class KafkaProducer {
    let handle: KafkaHandle
    /// Topic handles by name, each destroyed once, before the client.
    private var topics: [String: OpaquePointer] = [:]

    public init(settings: KafkaSettings) throws(KafkaError) {
        handle = try KafkaHandle(RD_KAFKA_PRODUCER, settings)
    }

    deinit {
        for (_, t) in topics { rd_kafka_topic_destroy(t) }
    }

    private func topic(_ name: String) throws(KafkaError) -> OpaquePointer {
        if let t = topics[name] { return t }
        guard let t = rd_kafka_topic_new(handle.pointer, name, nil) else {
            throw KafkaError(rd_kafka_last_error(), "topic \(name)")
        }
        topics[name] = t
        return t
    }

    /// Queues one message (copied); waits for room when the queue is full.
    public func produce(topic name: String, key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer,
                        partition: Int32 = -1) throws(KafkaError) {
        let t = try topic(name)
        while true {
            let r = rd_kafka_produce(t, partition, RD_KAFKA_MSG_F_COPY,
                                     UnsafeMutableRawPointer(mutating: value.baseAddress), value.count,
                                     key?.baseAddress, key?.count ?? 0, nil)
            if r == 0 { return }
            let err = rd_kafka_last_error()
            guard err == RD_KAFKA_RESP_ERR__QUEUE_FULL else { throw KafkaError(err, "produce to \(name)") }
            rd_kafka_poll(handle.pointer, 100)
        }
    }

    public func produce(topic: String, key: String?, value: String) throws {
        let v = Array(value.utf8)
        let k = key.map { Array($0.utf8) }
        try v.withUnsafeBytes { v in
            if let k {
                try k.withUnsafeBytes { k in try produce(topic: topic, key: k, value: v) }
            } else {
                try produce(topic: topic, key: nil, value: v)
            }
        }
    }

    /// Waits until every queued message is delivered (or `milliseconds` pass).
    public func flush(milliseconds: Int32 = 10_000) throws(KafkaError) {
        let err = rd_kafka_flush(handle.pointer, milliseconds)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(err, "flush") }
    }
}

/// A message read by a consumer, copied out of librdkafka's buffer.
public struct KafkaMessage: Sendable, Equatable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var key: [UInt8]?
    public var value: [UInt8]
}

/// A member of a consumer group (`group.id` in its settings).
public final class KafkaConsumer {
    let handle: KafkaHandle
    private var closed = false

    public init(settings: KafkaSettings) throws(KafkaError) {
        handle = try KafkaHandle(RD_KAFKA_CONSUMER, settings)
        // Everything, rebalances included, through the consumer queue.
        rd_kafka_poll_set_consumer(handle.pointer)
    }

    deinit { close() }

    public func subscribe(_ topics: [String]) throws(KafkaError) {
        let list = rd_kafka_topic_partition_list_new(Int32(topics.count))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for t in topics { rd_kafka_topic_partition_list_add(list, t, -1) }
        let err = rd_kafka_subscribe(handle.pointer, list)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(err, "subscribe") }
    }

    /// The next message, or nil when none came within `milliseconds`. Partition ends and other
    /// informational events are skipped; errors are thrown.
    public func poll(milliseconds: Int32) throws(KafkaError) -> KafkaMessage? {
        guard let m = rd_kafka_consumer_poll(handle.pointer, milliseconds) else { return nil }
        defer { rd_kafka_message_destroy(m) }
        let err = m.pointee.err
        if err == RD_KAFKA_RESP_ERR__PARTITION_EOF { return nil }
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(err, "consume") }
        let value = m.pointee.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: m.pointee.len)) } ?? []
        let key = m.pointee.key.map { Array(UnsafeRawBufferPointer(start: $0, count: m.pointee.key_len)) }
        return KafkaMessage(topic: String(cString: rd_kafka_topic_name(m.pointee.rkt)), partition: m.pointee.partition,
                            offset: m.pointee.offset, key: key, value: value)
    }

    /// Commits `offset` (the next message to read) for a partition, with `metadata` (at most a
    /// few kilobytes: the broker's `offset.metadata.max.bytes`), and waits for it.
    public func commit(topic: String, partition: Int32, offset: Int64, metadata: String = "") throws(KafkaError) {
        let list = rd_kafka_topic_partition_list_new(1)!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        let entry = rd_kafka_topic_partition_list_add(list, topic, partition)!
        entry.pointee.offset = offset
        if !metadata.isEmpty {
            // Freed by the list with free(): strdup's copy.
            entry.pointee.metadata = UnsafeMutableRawPointer(strdup(metadata))
            entry.pointee.metadata_size = metadata.utf8.count
        }
        let err = rd_kafka_commit(handle.pointer, list, 0)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(err, "commit") }
    }

    /// The group's committed offset and metadata for a partition (offset < 0: none).
    public func committed(topic: String, partition: Int32, milliseconds: Int32 = 10_000) throws(KafkaError)
        -> (offset: Int64, metadata: String)
    {
        let list = rd_kafka_topic_partition_list_new(1)!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        rd_kafka_topic_partition_list_add(list, topic, partition)
        let err = rd_kafka_committed(handle.pointer, list, milliseconds)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(err, "committed") }
        let e = list.pointee.elems.pointee
        if e.err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(e.err, "committed") }
        let metadata = e.metadata.map {
            String(decoding: UnsafeRawBufferPointer(start: $0, count: e.metadata_size), as: UTF8.self)
        } ?? ""
        return (e.offset, metadata)
    }

    /// The partitions assigned to this member now (empty while the group rebalances).
    public func assignment() throws(KafkaError) -> [(topic: String, partition: Int32)] {
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        let err = rd_kafka_assignment(handle.pointer, &list)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(err, "assignment") }
        guard let list else { return [] }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        return (0..<Int(list.pointee.cnt)).map { k in
            (String(cString: list.pointee.elems[k].topic), list.pointee.elems[k].partition)
        }
    }

    /// Leaves the group cleanly (its partitions are handed over at once); idempotent.
    public func close() {
        guard !closed else { return }
        closed = true
        rd_kafka_consumer_close(handle.pointer)
    }
}

/// librdkafka's mock cluster: brokers speaking the Kafka protocol on loopback, with produce,
/// fetch, consumer groups, offset commits with metadata and error injection; no transactions,
/// no compaction. It lives in a client handle of its own, destroyed after it.
public final class KafkaMockCluster {
    private let host: KafkaHandle
    private let cluster: OpaquePointer
    /// `bootstrap.servers` for clients of this cluster.
    public let bootstrapServers: String

    public init(brokers: Int32 = 3) throws(KafkaError) {
        host = try KafkaHandle(RD_KAFKA_PRODUCER, KafkaSettings([("log_level", "0")]))
        guard let c = rd_kafka_mock_cluster_new(host.pointer, brokers) else {
            throw KafkaError("cannot start a mock Kafka cluster")
        }
        cluster = c
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(c))
    }

    deinit { rd_kafka_mock_cluster_destroy(cluster) }

    public func createTopic(_ name: String, partitions: Int32, replicationFactor: Int32 = 1) throws(KafkaError) {
        let err = rd_kafka_mock_topic_create(cluster, name, partitions, replicationFactor)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(err, "create topic \(name)") }
    }

    /// Takes a broker down (its connections fail) or brings it back up.
    public func setBroker(_ id: Int32, up: Bool) throws(KafkaError) {
        let err = up ? rd_kafka_mock_broker_set_up(cluster, id) : rd_kafka_mock_broker_set_down(cluster, id)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(err, "broker \(id)") }
    }

    /// The next `errors.count` requests of API `apiKey` (e.g. 8, OffsetCommit) fail with these
    /// error codes, in order.
    public func failRequests(apiKey: Int16, errors: [Int32]) {
        var codes = errors.map { rd_kafka_resp_err_t(rawValue: $0) }
        rd_kafka_mock_push_request_errors_array(cluster, apiKey, codes.count, &codes)
    }
}
