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

/// librdkafka itself, loaded on first use rather than linked (CRdKafka.h): a process that
/// never uses Kafka does not pay for loading it, and runs where it is not installed.
public enum KafkaLibrary {
    /// Loads the library (once per process); throws, saying what is missing, when it cannot.
    public static func load() throws(KafkaError) {
        var reason: UnsafePointer<CChar>?
        guard geotrigger_rdkafka_load(&reason) == 0 else { return }
        throw KafkaError("\(reason.map { String(cString: $0) } ?? "librdkafka could not be loaded"); "
            + "Kafka needs it installed (Debian: apt-get install librdkafka1)")
    }

    /// Why the library named `name` could not serve as librdkafka, or nil when it could: tried
    /// on its own and unloaded again, whatever this process has loaded.
    public static func problem(loading name: String) -> String? {
        var reason = [CChar](repeating: 0, count: 512)
        guard geotrigger_rdkafka_probe(name, &reason, reason.count) == 0 else { return nil }
        return String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Settings for a client (`rd_kafka_conf_t`), as `kcat -X` takes them: KEY=VALUE pairs of
/// librdkafka's configuration properties.
public struct KafkaSettings: Sendable {
    public var values: [(String, String)]
    public init(_ values: [(String, String)] = []) { self.values = values }

    public mutating func set(_ key: String, _ value: String) { values.append((key, value)) }

    /// These settings, then `more` (a later value of a key wins, as in librdkafka).
    public static func + (a: KafkaSettings, more: [(String, String)]) -> KafkaSettings { KafkaSettings(a.values + more) }

    /// A new `rd_kafka_conf_t` with every setting applied; the caller owns it. Every client
    /// starts here, so this is where librdkafka is loaded, or its absence reported.
    func makeConfiguration() throws(KafkaError) -> OpaquePointer {
        try KafkaLibrary.load()
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

    /// `configure` sets what settings cannot say (callbacks, their opaque) on the configuration.
    init(_ type: rd_kafka_type_t, _ settings: KafkaSettings, configure: (OpaquePointer) -> Void = { _ in }) throws(KafkaError) {
        let conf = try settings.makeConfiguration()
        configure(conf)
        var errstr = [CChar](repeating: 0, count: 512)
        guard let rk = rd_kafka_new(type, conf, &errstr, errstr.count) else {
            // Not taken over when creation fails.
            rd_kafka_conf_destroy(conf)
            throw KafkaError("cannot create a Kafka client: \(String(cString: errstr))")
        }
        pointer = rk
    }

    /// Set for a handle that must not be destroyed (`KafkaConsumer.deinit` says when).
    var leaked = false

    deinit { if !leaked { rd_kafka_destroy(pointer) } }
}

/// What a producer learns of each message it queued, once the brokers have answered
/// (`rd_kafka_conf_set_dr_msg_cb`). Called on the thread that calls `poll` or `flush`.
public protocol KafkaDeliveryHandler: AnyObject {
    /// Message `token` (given to `produce`) is stored at `offset` of `partition` (offset < 0:
    /// stored, but an idempotent producer's retry did not learn where), or failed with `error`.
    func delivered(token: Int, topic: String, partition: Int32, offset: Int64, error: KafkaError?)
}

/// The C delivery callback's way back to Swift: the client's opaque is this object, unretained
/// (the producer owns it and outlives the client handle).
final class DeliveryRelay {
    weak var handler: (any KafkaDeliveryHandler)?
    /// Messages that failed, whether or not a handler heard of them.
    var failures = 0
    var firstFailure: KafkaError?
}

private let deliveryCallback: @convention(c) (OpaquePointer?, UnsafePointer<rd_kafka_message_t>?, UnsafeMutableRawPointer?)
    -> Void = { _, message, opaque in
        guard let message, let opaque else { return }
        let relay = Unmanaged<DeliveryRelay>.fromOpaque(opaque).takeUnretainedValue()
        let m = message.pointee
        var error: KafkaError?
        if m.err != RD_KAFKA_RESP_ERR_NO_ERROR {
            error = KafkaError(m.err, "delivery")
            relay.failures += 1
            if relay.firstFailure == nil { relay.firstFailure = error }
        }
        let token = Int(bitPattern: m._private)
        // Token 0 (most messages): only a failure is of interest, and it is counted above.
        if token == 0 && error == nil { return }
        guard let handler = relay.handler else { return }
        let topic = m.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? ""
        handler.delivered(token: token, topic: topic, partition: m.partition, offset: m.offset, error: error)
    }

/// A producer: keyed messages to topics (partition chosen by librdkafka's partitioner from the
/// key, so a device's messages stay in one partition, in order).
public final class KafkaProducer {
    let handle: KafkaHandle
    private let relay: DeliveryRelay
    /// Topic handles by name, each destroyed once, before the client.
    private var topics: [String: OpaquePointer] = [:]

    /// `delivery`, if given, hears of every message's fate during `poll` and `flush`.
    public init(settings: KafkaSettings, delivery: (any KafkaDeliveryHandler)? = nil) throws(KafkaError) {
        let relay = DeliveryRelay()
        relay.handler = delivery
        self.relay = relay
        handle = try KafkaHandle(RD_KAFKA_PRODUCER, settings) { conf in
            rd_kafka_conf_set_dr_msg_cb(conf, deliveryCallback)
            rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(relay).toOpaque())
        }
    }

    deinit {
        for (_, t) in topics { rd_kafka_topic_destroy(t) }
        batchMessages?.deallocate()
    }

    /// Messages that could not be delivered so far, and the first one's error.
    public var failures: (count: Int, first: KafkaError?) { (relay.failures, relay.firstFailure) }

    private func topic(_ name: String) throws(KafkaError) -> OpaquePointer {
        if let t = topics[name] { return t }
        guard let t = rd_kafka_topic_new(handle.pointer, name, nil) else {
            throw KafkaError(rd_kafka_last_error(), "topic \(name)")
        }
        topics[name] = t
        return t
    }

    /// Queues one message (librdkafka copies key and value); waits for room when the queue is
    /// full. `token` comes back to the delivery handler.
    public func produce(topic name: String, key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer,
                        partition: Int32 = -1, token: Int = 0) throws(KafkaError) {
        let t = try topic(name)
        while true {
            // 0 when queued; -1 with the reason in rd_kafka_last_error().
            let r = rd_kafka_produce(t, partition, RD_KAFKA_MSG_F_COPY,
                                     UnsafeMutableRawPointer(mutating: value.baseAddress), value.count,
                                     key?.baseAddress, key?.count ?? 0, UnsafeMutableRawPointer(bitPattern: token))
            if r == 0 { return }
            let err = rd_kafka_last_error()
            guard err == RD_KAFKA_RESP_ERR__QUEUE_FULL else { throw KafkaError(err, "produce to \(name)") }
            rd_kafka_poll(handle.pointer, 100)
        }
    }

    /// Where one message of `produceBatch` lies: its key and value, as ranges of the keys and
    /// values buffers.
    public struct BatchEntry {
        public var key: Range<Int>
        public var value: Range<Int>
        public init(key: Range<Int>, value: Range<Int>) {
            self.key = key
            self.value = value
        }
    }

    /// The batch's C message array, reused from call to call (grown as needed).
    private var batchMessages: UnsafeMutablePointer<rd_kafka_message_t>?
    private var batchCapacity = 0

    /// Queues many keyed messages in one call (`rd_kafka_produce_batch`: librdkafka copies them
    /// and runs the partitioner on each key), waiting for room when the queue is full.
    public func produceBatch(topic name: String, keys: UnsafeRawBufferPointer, values: UnsafeRawBufferPointer,
                             entries: [BatchEntry]) throws(KafkaError) {
        guard !entries.isEmpty else { return }
        let t = try topic(name)
        if batchCapacity < entries.count {
            batchMessages?.deallocate()
            batchCapacity = max(entries.count, 2 * batchCapacity, 1024)
            batchMessages = .allocate(capacity: batchCapacity)
        }
        let messages = batchMessages!
        for (k, e) in entries.enumerated() {
            messages[k] = rd_kafka_message_t()
            messages[k].payload = UnsafeMutableRawPointer(mutating: values.baseAddress! + e.value.lowerBound)
            messages[k].len = e.value.count
            messages[k].key = UnsafeMutableRawPointer(mutating: keys.baseAddress! + e.key.lowerBound)
            messages[k].key_len = e.key.count
        }
        // Returns how many were queued; each message not queued has its `err` set.
        let queued = rd_kafka_produce_batch(t, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, messages, Int32(entries.count))
        guard Int(queued) < entries.count else { return }
        for k in 0..<entries.count where messages[k].err != RD_KAFKA_RESP_ERR_NO_ERROR {
            guard messages[k].err == RD_KAFKA_RESP_ERR__QUEUE_FULL else { throw KafkaError(messages[k].err, "produce to \(name)") }
            let e = entries[k]
            try produce(topic: name, key: UnsafeRawBufferPointer(rebasing: keys[e.key]),
                        value: UnsafeRawBufferPointer(rebasing: values[e.value]))
        }
    }

    public func produce(topic: String, key: String?, value: String, partition: Int32 = -1) throws {
        let v = Array(value.utf8)
        let k = key.map { Array($0.utf8) }
        try v.withUnsafeBytes { v in
            if let k {
                try k.withUnsafeBytes { k in try produce(topic: topic, key: k, value: v, partition: partition) }
            } else {
                try produce(topic: topic, key: nil, value: v, partition: partition)
            }
        }
    }

    /// Serves delivery reports that have arrived (waiting up to `milliseconds`).
    public func poll(milliseconds: Int32 = 0) { rd_kafka_poll(handle.pointer, milliseconds) }

    /// Waits until every queued message is delivered or failed (or `milliseconds` pass: then
    /// throws `_TIMED_OUT`), serving delivery reports.
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

/// A partition of a topic, as the group assigns them.
public struct KafkaPartition: Hashable, Sendable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32
    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }
    public var description: String { "\(topic)[\(partition)]" }
}

/// What a group member does when the group moves partitions (`rd_kafka_conf_set_rebalance_cb`).
/// Called on the consuming thread, inside `poll` or `close`.
public protocol KafkaRebalanceHandler: AnyObject {
    /// `partitions` are now this member's. Returns where to start reading each: an offset, or
    /// nil for the group's committed offset (the topic's start if none).
    func assigned(_ partitions: [KafkaPartition]) -> [Int64?]
    /// `partitions` are being taken away. With `lost`, they are already someone else's (the
    /// session timed out): nothing may be committed for them.
    func revoked(_ partitions: [KafkaPartition], lost: Bool)
}

/// The C rebalance callback's way back to Swift: the client's opaque is this object, unretained
/// (the consumer owns it and outlives the client handle). It does the assignment itself, so the
/// group moves on even when no handler is set (or the handler is gone).
final class RebalanceRelay {
    weak var handler: (any KafkaRebalanceHandler)?
    /// Rebalances seen, for tests and the summary.
    var assignments = 0
    var revocations = 0

    func rebalance(_ rk: OpaquePointer, _ err: rd_kafka_resp_err_t,
                   _ list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) {
        let cooperative = String(cString: rd_kafka_rebalance_protocol(rk)) == "COOPERATIVE"
        let partitions = (0..<Int(list.pointee.cnt)).map { k in
            KafkaPartition(topic: String(cString: list.pointee.elems[k].topic), partition: list.pointee.elems[k].partition)
        }
        switch err {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            assignments += 1
            let starts = handler?.assigned(partitions) ?? []
            for k in 0..<partitions.count {
                // RD_KAFKA_OFFSET_INVALID (-1001): the committed offset, else auto.offset.reset.
                list.pointee.elems[k].offset = (k < starts.count ? starts[k] : nil) ?? Int64(RD_KAFKA_OFFSET_INVALID)
            }
            if cooperative {
                // Returns an error object (NULL on success) the caller must destroy.
                if let error = rd_kafka_incremental_assign(rk, list) { rd_kafka_error_destroy(error) }
            } else {
                rd_kafka_assign(rk, list)
            }
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            revocations += 1
            handler?.revoked(partitions, lost: rd_kafka_assignment_lost(rk) != 0)
            if cooperative {
                if let error = rd_kafka_incremental_unassign(rk, list) { rd_kafka_error_destroy(error) }
            } else {
                rd_kafka_assign(rk, nil)
            }
        default:
            // A rebalance error: drop the assignment; the group hands the partitions out again.
            rd_kafka_assign(rk, nil)
        }
    }
}

private let rebalanceCallback: @convention(c) (OpaquePointer?, rd_kafka_resp_err_t,
                                                UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
                                                UnsafeMutableRawPointer?) -> Void = { rk, err, list, opaque in
    guard let rk, let list, let opaque else { return }
    Unmanaged<RebalanceRelay>.fromOpaque(opaque).takeUnretainedValue().rebalance(rk, err, list)
}

/// One message of a `KafkaMessageBatch`, viewed in place: its bytes stay valid until the batch
/// is released.
public struct KafkaMessageView {
    /// 0, or the error this entry reports (`_PARTITION_EOF` and the like); `value` then holds its text.
    public var error: Int32
    public var partition: Int32
    public var offset: Int64
    public var key: UnsafeRawBufferPointer
    public var value: UnsafeRawBufferPointer
}

/// The messages a `KafkaMessageBatch` holds, as a list that can leave it whole (`handOff`) to be
/// handed back to librdkafka on another thread (`destroyAll`: `rd_kafka_message_destroy` may be
/// called from any thread). Owns the messages it holds until then.
public final class KafkaMessageList: @unchecked Sendable {
    let messages: UnsafeMutablePointer<UnsafeMutablePointer<rd_kafka_message_t>?>
    public let capacity: Int
    public internal(set) var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        messages = .allocate(capacity: capacity)
        messages.initialize(repeating: nil, count: capacity)
    }

    deinit {
        destroyAll()
        messages.deallocate()
    }

    /// Hands every message back to librdkafka; the list is then empty.
    public func destroyAll() {
        for k in 0..<count { rd_kafka_message_destroy(messages[k]) }
        count = 0
    }
}

/// Room for the messages of one `KafkaConsumer.poll(into:)`, reused from batch to batch: the
/// consuming loop allocates nothing per message. Owns the messages it holds until `release`
/// (or `handOff`).
public final class KafkaMessageBatch {
    public let capacity: Int
    private var list: KafkaMessageList
    public var count: Int { list.count }
    var messages: UnsafeMutablePointer<UnsafeMutablePointer<rd_kafka_message_t>?> { list.messages }

    public init(capacity: Int = 4096) {
        self.capacity = capacity
        list = KafkaMessageList(capacity: capacity)
    }

    func filled(_ n: Int) { list.count = n }

    @inline(__always)
    public subscript(k: Int) -> KafkaMessageView {
        let m = list.messages[k]!.pointee
        return KafkaMessageView(
            error: Int32(m.err.rawValue), partition: m.partition, offset: m.offset,
            key: UnsafeRawBufferPointer(start: m.key, count: m.key == nil ? 0 : m.key_len),
            value: UnsafeRawBufferPointer(start: m.payload, count: m.payload == nil ? 0 : m.len))
    }

    /// Hands the messages back to librdkafka.
    public func release() { list.destroyAll() }

    /// The messages, moved out whole for `KafkaMessageList.destroyAll` elsewhere; the batch, now
    /// empty, goes on with `spare` (an emptied list of its capacity) or a new list.
    public func handOff(reusing spare: KafkaMessageList?) -> KafkaMessageList {
        let full = list
        if let spare, spare.count == 0, spare.capacity == capacity {
            list = spare
        } else {
            list = KafkaMessageList(capacity: capacity)
        }
        return full
    }
}

/// A member of a consumer group (`group.id` in its settings).
public final class KafkaConsumer {
    let handle: KafkaHandle
    private let relay = RebalanceRelay()
    /// The consumer queue, for batches (`rd_kafka_queue_get_consumer`: owned, destroyed once).
    private let queue: OpaquePointer
    private var closed = false

    /// `rebalance`, if given, hears of every assignment and revocation before it takes effect;
    /// set `partition.assignment.strategy=cooperative-sticky` for incremental ones.
    public init(settings: KafkaSettings, rebalance: (any KafkaRebalanceHandler)? = nil) throws(KafkaError) {
        let relay = relay
        relay.handler = rebalance
        handle = try KafkaHandle(RD_KAFKA_CONSUMER, settings) { conf in
            rd_kafka_conf_set_rebalance_cb(conf, rebalanceCallback)
            rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(relay).toOpaque())
        }
        // Everything, rebalances included, through the consumer queue.
        rd_kafka_poll_set_consumer(handle.pointer)
        queue = rd_kafka_queue_get_consumer(handle.pointer)
    }

    deinit {
        close()
        rd_kafka_queue_destroy(queue)
        // librdkafka 2.0.2 aborts in rd_kafka_destroy (rd_kafka_sticky_assignor_state_destroy:
        // assertion `assignor_state') for a cooperative-sticky member that never received an
        // assignment, e.g. one that stops before its first rebalance completes. Such a client
        // holds no partition and has left the group (`close`): its handle is left to the
        // process's end rather than destroyed.
        if relay.assignments == 0 { handle.leaked = true }
    }

    /// Assignments and revocations so far.
    public var rebalances: (assigned: Int, revoked: Int) { (relay.assignments, relay.revocations) }

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

    /// Fills `batch` (released first) with what arrives within `milliseconds`, up to its
    /// capacity; rebalances are served on the way. Returns how many entries it holds (messages
    /// and error entries: see `KafkaMessageView.error`).
    public func poll(into batch: KafkaMessageBatch, milliseconds: Int32) -> Int {
        batch.release()
        // -1 on error (the queue is gone); else the number of entries written.
        let n = rd_kafka_consume_batch_queue(queue, milliseconds, batch.messages, batch.capacity)
        batch.filled(max(0, n))
        return batch.count
    }

    /// Commits `offset` (the next message to read) for a partition, with `metadata` (at most a
    /// few kilobytes: the broker's `offset.metadata.max.bytes`), and waits for it up to
    /// `milliseconds` (`_TIMED_OUT` after that: the commit may still be stored later).
    ///
    /// Not `rd_kafka_commit`, which waits without limit: a commit sent while the group rebalances
    /// can wait for a rejoin that needs this very thread to poll the consumer queue (librdkafka
    /// 2.0 was seen to wait forever so). The result comes on a queue of the call's own instead.
    public func commit(topic: String, partition: Int32, offset: Int64, metadata: String = "",
                       milliseconds: Int32 = 5_000) throws(KafkaError) {
        let list = rd_kafka_topic_partition_list_new(1)!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        let entry = rd_kafka_topic_partition_list_add(list, topic, partition)!
        entry.pointee.offset = offset
        if !metadata.isEmpty {
            // Freed by the list with free(): strdup's copy.
            entry.pointee.metadata = UnsafeMutableRawPointer(strdup(metadata))
            entry.pointee.metadata_size = metadata.utf8.count
        }
        // Owned here, destroyed once; librdkafka keeps its own reference while the reply is due.
        guard let replies = rd_kafka_queue_new(handle.pointer) else { throw KafkaError(RD_KAFKA_RESP_ERR__FAIL, "commit") }
        defer { rd_kafka_queue_destroy(replies) }
        let err = rd_kafka_commit_queue(handle.pointer, list, replies, nil, nil)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(err, "commit") }
        let deadline = monotonicMilliseconds() + Int64(milliseconds)
        while true {
            let left = deadline - monotonicMilliseconds()
            // The event API: nil when nothing came in time; each event destroyed once.
            guard left > 0, let event = rd_kafka_queue_poll(replies, Int32(left)) else {
                throw KafkaError(RD_KAFKA_RESP_ERR__TIMED_OUT, "commit")
            }
            defer { rd_kafka_event_destroy(event) }
            guard rd_kafka_event_type(event) == RD_KAFKA_EVENT_OFFSET_COMMIT else { continue }
            // The request's error, then the partition's own in its entry.
            let e = rd_kafka_event_error(event)
            if e != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(e, "commit") }
            if let offsets = rd_kafka_event_topic_partition_list(event), offsets.pointee.cnt > 0 {
                let pe = offsets.pointee.elems.pointee.err
                if pe != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(pe, "commit") }
            }
            return
        }
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

    /// The partition's first and next offsets on its leader (the oldest message still held, and
    /// the offset the next message will get).
    public func watermarks(topic: String, partition: Int32, milliseconds: Int32 = 10_000) throws(KafkaError)
        -> (low: Int64, high: Int64)
    {
        var low: Int64 = -1, high: Int64 = -1
        let err = rd_kafka_query_watermark_offsets(handle.pointer, topic, partition, &low, &high, milliseconds)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(err, "watermarks of \(topic)[\(partition)]") }
        return (low, high)
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

    /// Leaves the group cleanly (its partitions are revoked, through the handler, and handed
    /// over at once); idempotent.
    public func close() {
        guard !closed else { return }
        closed = true
        rd_kafka_consumer_close(handle.pointer)
    }
}

/// Reads a range of one partition, outside any group (`rd_kafka_assign`, nothing committed):
/// how a snapshot is fetched back from the state topic.
public final class KafkaPartitionReader {
    let handle: KafkaHandle

    /// `settings` need `bootstrap.servers`. `group` names no group this reader joins (it
    /// assigns, and commits nothing), but librdkafka's assign wants one set.
    public init(settings: KafkaSettings, group: String = "geotrigger-partition-reader") throws(KafkaError) {
        handle = try KafkaHandle(RD_KAFKA_CONSUMER, settings + [("group.id", group), ("enable.auto.commit", "false"), ("fetch.wait.max.ms", "10"),
                                                                ("enable.auto.offset.store", "false")])
        rd_kafka_poll_set_consumer(handle.pointer)
    }

    /// Connects to the cluster now (a metadata request, up to `milliseconds`), so that the first
    /// `read` does not pay for it.
    public func connect(milliseconds: Int32 = 5_000) {
        var metadata: UnsafePointer<rd_kafka_metadata>?
        // RD_KAFKA_RESP_ERR_NO_ERROR with `metadata` set, which the caller frees.
        if rd_kafka_metadata(handle.pointer, 0, nil, &metadata, milliseconds) == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata {
            rd_kafka_metadata_destroy(metadata)
        }
    }

    /// The messages of `partition` from offset `first` through `last`, in order (fewer if the
    /// partition has been cut by retention, or `milliseconds` pass first).
    public func read(topic: String, partition: Int32, from first: Int64, through last: Int64,
                     milliseconds: Int32 = 30_000) throws(KafkaError) -> [KafkaMessage] {
        let list = rd_kafka_topic_partition_list_new(1)!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        rd_kafka_topic_partition_list_add(list, topic, partition)!.pointee.offset = first
        var err = rd_kafka_assign(handle.pointer, list)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(err, "assign \(topic)[\(partition)]") }
        defer { rd_kafka_assign(handle.pointer, nil) }
        var got: [KafkaMessage] = []
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let end = Double(deadline.tv_sec) + Double(deadline.tv_nsec) * 1e-9 + Double(milliseconds) / 1000
        while got.last.map({ $0.offset < last }) ?? true {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            if Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9 > end { break }
            guard let m = rd_kafka_consumer_poll(handle.pointer, 100) else { continue }
            defer { rd_kafka_message_destroy(m) }
            err = m.pointee.err
            if err == RD_KAFKA_RESP_ERR__PARTITION_EOF {
                // Nothing more: the range's end is not there (cut, or never written).
                if m.pointee.offset <= last { break }
                continue
            }
            if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(err, "read \(topic)[\(partition)]") }
            let value = m.pointee.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: m.pointee.len)) } ?? []
            let key = m.pointee.key.map { Array(UnsafeRawBufferPointer(start: $0, count: m.pointee.key_len)) }
            got.append(KafkaMessage(topic: topic, partition: partition, offset: m.pointee.offset, key: key, value: value))
        }
        return got
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

/// Milliseconds on the monotonic clock.
func monotonicMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}
