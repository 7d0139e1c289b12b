import Foundation
import GeotriggerConsume
import Testing

/// `consume`'s `MessageReleaser` on librdkafka's mock cluster: each batch's messages leave the
/// batch whole and are destroyed on the releaser's thread while the next batch is read.
@Suite("consume's message releaser")
struct MessageReleaserTests {
    @Test("every message read once and in order through batches the releaser empties, and the client closes")
    func batchesHandedOff() throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        try cluster.createTopic("readings", partitions: 1)
        let servers = ("bootstrap.servers", cluster.bootstrapServers)
        let producer = try KafkaProducer(settings: KafkaSettings([servers, ("log_level", "0")]))
        for i in 0..<2_000 { try producer.produce(topic: "readings", key: "d", value: "\(i)") }
        try producer.flush()

        var consumer: KafkaConsumer? = try KafkaConsumer(settings: KafkaSettings([
            servers, ("log_level", "0"), ("group.id", "g"), ("auto.offset.reset", "earliest"),
            ("enable.auto.commit", "false")]))
        try consumer!.subscribe(["readings"])
        let releaser = MessageReleaser()
        let batch = KafkaMessageBatch(capacity: 64)
        var seen: [Int] = []
        var handedOff = 0
        let deadline = Date().addingTimeInterval(30)
        while seen.count < 2_000 && Date() < deadline {
            let n = consumer!.poll(into: batch, milliseconds: 100)
            for k in 0..<n where batch[k].error == 0 {
                seen.append(Int(String(decoding: batch[k].value, as: UTF8.self))!)
            }
            guard n > 0 else { continue }
            releaser.release(batch)
            #expect(batch.count == 0, "the batch goes on empty")
            handedOff += 1
        }
        releaser.finish()
        #expect(seen == Array(0..<2_000))
        #expect(handedOff >= 2_000 / 64, "batches of at most 64")
        // librdkafka's handle waits for every message it handed out: this returns only because
        // the releaser destroyed each one.
        consumer!.close()
        consumer = nil
    }
}
