import Foundation
import GeotriggerKafka
import Testing

/// The librdkafka binding against librdkafka's own mock cluster (Kafka's protocol on loopback):
/// what `geotrigger consume` builds on (SPEC §8) — keyed messages keep their order within a
/// partition, a consumer group shares the partitions, commits carry metadata and a new member
/// resumes from them, injected errors reach the caller.
@Suite("Kafka binding on librdkafka's mock cluster")
struct MockClusterTests {
    static func settings(_ cluster: KafkaMockCluster, _ extra: [(String, String)] = []) -> KafkaSettings {
        KafkaSettings([("bootstrap.servers", cluster.bootstrapServers), ("log_level", "0")] + extra)
    }

    static func consumerSettings(_ cluster: KafkaMockCluster, group: String) -> KafkaSettings {
        settings(cluster, [("group.id", group), ("auto.offset.reset", "earliest"), ("enable.auto.commit", "false"),
                           ("session.timeout.ms", "6000"), ("heartbeat.interval.ms", "500")])
    }

    /// Reads until `count` messages came or `seconds` passed.
    static func consume(_ c: KafkaConsumer, count: Int, seconds: Double = 30) throws -> [KafkaMessage] {
        var got: [KafkaMessage] = []
        let deadline = Date().addingTimeInterval(seconds)
        while got.count < count && Date() < deadline {
            if let m = try c.poll(milliseconds: 100) { got.append(m) }
        }
        return got
    }

    @Test("librdkafka is loaded on first use; a library that is missing or not librdkafka is named with the reason")
    func loadingTheLibrary() throws {
        try KafkaLibrary.load()
        #expect(KafkaLibrary.problem(loading: "librdkafka.so.1") == nil)
        let missing = try #require(KafkaLibrary.problem(loading: "libgeotrigger-no-such-library.so.1"))
        #expect(missing.hasPrefix("librdkafka could not be loaded ("))
        #expect(missing.contains("libgeotrigger-no-such-library.so.1"))
        // A real library without librdkafka's functions: the first one looked for is named.
        #expect(KafkaLibrary.problem(loading: "libz.so.1")
                == "libz.so.1 has no rd_kafka_assign: not a librdkafka this build can use")
    }

    @Test("keyed messages come back in order per key, across 3 partitions")
    func produceAndConsume() throws {
        let cluster = try KafkaMockCluster(brokers: 3)
        try cluster.createTopic("readings", partitions: 3)
        let producer = try KafkaProducer(settings: Self.settings(cluster))
        for i in 0..<600 {
            try producer.produce(topic: "readings", key: "d\(i % 7)", value: "{\"seq\":\(i)}")
        }
        try producer.flush()

        let consumer = try KafkaConsumer(settings: Self.consumerSettings(cluster, group: "g1"))
        try consumer.subscribe(["readings"])
        let got = try Self.consume(consumer, count: 600)
        #expect(got.count == 600)
        var byKey: [String: [Int]] = [:]
        var partitionOf: [String: Set<Int32>] = [:]
        for m in got {
            let key = String(decoding: m.key ?? [], as: UTF8.self)
            let text = String(decoding: m.value, as: UTF8.self)
            byKey[key, default: []].append(Int(text.dropFirst(7).dropLast())!)
            partitionOf[key, default: []].insert(m.partition)
        }
        #expect(byKey.count == 7)
        for (key, seqs) in byKey {
            #expect(seqs == seqs.sorted(), "\(key) out of order")
            #expect(seqs.count == (0..<600).filter { $0 % 7 == Int(key.dropFirst())! }.count)
            #expect(partitionOf[key]?.count == 1, "\(key) in several partitions")
        }
        #expect(Set(partitionOf.values.flatMap { $0 }).count > 1, "every key in one partition: the test checks little")
        consumer.close()
    }

    @Test("a commit carries metadata; a new member of the group reads it back and resumes after it")
    func commitWithMetadata() throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        try cluster.createTopic("in", partitions: 1)
        let producer = try KafkaProducer(settings: Self.settings(cluster))
        for i in 0..<50 { try producer.produce(topic: "in", key: "d", value: "\(i)") }
        try producer.flush()

        do {
            let first = try KafkaConsumer(settings: Self.consumerSettings(cluster, group: "g"))
            try first.subscribe(["in"])
            let got = try Self.consume(first, count: 20)
            #expect(got.count == 20)
            try first.commit(topic: "in", partition: 0, offset: got[19].offset + 1, metadata: "snapshot@17")
            first.close()
        }
        let second = try KafkaConsumer(settings: Self.consumerSettings(cluster, group: "g"))
        let committed = try second.committed(topic: "in", partition: 0)
        #expect(committed.offset == 20)
        #expect(committed.metadata == "snapshot@17")
        try second.subscribe(["in"])
        let rest = try Self.consume(second, count: 30)
        #expect(rest.map { String(decoding: $0.value, as: UTF8.self) } == (20..<50).map(String.init))
    }

    @Test("an injected commit failure (ILLEGAL_GENERATION) reaches the caller; after the rejoin a commit goes through")
    func commitFailure() throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        try cluster.createTopic("in", partitions: 1)
        let producer = try KafkaProducer(settings: Self.settings(cluster))
        for i in 0..<5 { try producer.produce(topic: "in", key: "d", value: "\(i)") }
        try producer.flush()
        let consumer = try KafkaConsumer(settings: Self.consumerSettings(cluster, group: "g"))
        try consumer.subscribe(["in"])
        #expect(try Self.consume(consumer, count: 5).count == 5)
        // OffsetCommit (API key 8) answered with a fatal error: ILLEGAL_GENERATION (22), as in a rebalance.
        cluster.failRequests(apiKey: 8, errors: [22])
        #expect(throws: KafkaError.self) { try consumer.commit(topic: "in", partition: 0, offset: 5, metadata: "m") }
        // librdkafka takes the error as the group's word that this member's generation is gone:
        // it drops the assignment and rejoins as the consumer is polled. A commit is tried again
        // only once the partition is assigned again (one made meanwhile would fail the same way).
        var committed = false
        var lastError = ""
        let deadline = Date().addingTimeInterval(30)
        while !committed && Date() < deadline {
            _ = try consumer.poll(milliseconds: 200)
            guard try consumer.assignment().contains(where: { $0.topic == "in" && $0.partition == 0 }) else { continue }
            do {
                try consumer.commit(topic: "in", partition: 0, offset: 5, metadata: "m")
                committed = true
            } catch {
                lastError = "\(error)"
            }
        }
        #expect(committed, "\(lastError)")
        let back = try consumer.committed(topic: "in", partition: 0)
        #expect(back.offset == 5 && back.metadata == "m")
    }

    @Test("a broker that goes down and comes back: queued messages are delivered, none lost or doubled")
    func brokerDown() throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        try cluster.createTopic("in", partitions: 2)
        let producer = try KafkaProducer(settings: Self.settings(cluster, [("message.timeout.ms", "60000")]))
        for i in 0..<100 { try producer.produce(topic: "in", key: "d\(i % 5)", value: "\(i)") }
        try producer.flush()
        try cluster.setBroker(1, up: false)
        for i in 100..<200 { try producer.produce(topic: "in", key: "d\(i % 5)", value: "\(i)") }
        Thread.sleep(forTimeInterval: 1)
        try cluster.setBroker(1, up: true)
        try producer.flush(milliseconds: 30_000)

        let consumer = try KafkaConsumer(settings: Self.consumerSettings(cluster, group: "g"))
        try consumer.subscribe(["in"])
        let got = try Self.consume(consumer, count: 200)
        #expect(got.map { Int(String(decoding: $0.value, as: UTF8.self))! }.sorted() == Array(0..<200))
    }

    @Test("a bad setting is refused with librdkafka's reason")
    func badSetting() {
        #expect(throws: KafkaError.self) { _ = try KafkaProducer(settings: KafkaSettings([("no.such.property", "1")])) }
    }
}
