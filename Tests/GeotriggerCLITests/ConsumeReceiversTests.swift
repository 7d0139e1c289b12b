import Foundation
import Geotrigger
import GeotriggerConsume
import Testing

/// `geotrigger consume --format nmea|gpsd` on librdkafka's mock cluster: real receivers' logs
/// (gpsd's regression logs, `../shared/datasets/gpsd_nmea_logs`), produced as a producer sends a
/// log (line by line, or a few lines a message), keyed by receiver and interleaved on a topic of
/// fewer partitions than receivers (so receivers share a partition). After dropping repeated
/// ids, each receiver's events must be exactly `geotrigger replay --device NAME LOG`'s, also
/// when a member is killed with SIGKILL mid-stream and another resumes its partitions.
@Suite("geotrigger consume --format nmea|gpsd", .serialized)
struct ConsumeReceiversTests {
    typealias Member = ConsumeTests.Member

    static let logs = CLI.shared.appendingPathComponent("gpsd_nmea_logs")
    /// Four receivers on three partitions: at least two share one.
    static let receivers = ["skytraq-dgps", "ublox-8", "ch-4701", "bu353s4"]
    static let partitions: Int32 = 3
    static let exact = ["--hysteresis", "0", "--max-accuracy", "0"]

    /// The shared log `name`, or a failure that says where it was looked for.
    static func log(_ name: String) throws -> URL {
        let url = logs.appendingPathComponent(name)
        try #require(FileManager.default.fileExists(atPath: url.path),
                     "\(url.path) is missing: these tests read gpsd's regression logs from ../shared/datasets (not shipped)")
        return url
    }

    /// Circles that a receiver's fixes (as `convert` makes them) cross again and again: one around
    /// its middle fix and one around its first, each of the median distance of the fixes from
    /// its centre (these receivers stand still; their fixes wander by a metre or so), and a
    /// centimetre's around each fix.
    static func regions(around fixes: [String: [String]], in dir: URL) throws -> URL {
        var features: [String] = []
        for (device, lines) in fixes.sorted(by: { $0.key < $1.key }) {
            let points = try lines.map { line -> (Double, Double) in
                let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
                return ((o["lat"] as! NSNumber).doubleValue, (o["lon"] as! NSNumber).doubleValue)
            }
            try #require(points.count >= 5, "\(device): too few fixes (\(points.count)) to cross a region")
            for (k, centre) in [points[points.count / 2], points[0]].enumerated() {
                let metres = points.map { p in
                    hypot((p.0 - centre.0) * 111_320, (p.1 - centre.1) * 111_320 * cos(centre.0 * .pi / 180))
                }.sorted()
                let radius = max(metres[metres.count / 2], 0.05)
                features.append(#"{"type":"Feature","id":"\#(device)-\#(k)","geometry":{"type":"Point","coordinates":[\#(centre.1),\#(centre.0)]},"properties":{"radius":\#(radius)}}"#)
            }
            // And one of a centimetre around every fix: each fix enters its own and leaves the one
            // before, so the events name every fix's time and position (a fix made of other
            // sentences, or at another time, shows).
            for (k, p) in points.enumerated() {
                features.append(#"{"type":"Feature","id":"\#(device)-p\#(k)","geometry":{"type":"Point","coordinates":[\#(p.1),\#(p.0)]},"properties":{"radius":0.01}}"#)
            }
        }
        let url = dir.appendingPathComponent("regions.geojson")
        try (#"{"type":"FeatureCollection","features":["# + features.joined(separator: ",\n") + "]}")
            .write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// A log's lines, as bytes (some logs hold binary vendor packets), without their newlines.
    static func lines(of url: URL) throws -> [Data] {
        // Read as the harness reads files (Data(contentsOf:) leaks on an empty one).
        let data = try CLI.contents(of: url)
        return data.split(separator: 0x0A, omittingEmptySubsequences: false).map { Data($0) }
    }

    /// Messages keyed by receiver, interleaved one message of each receiver in turn; receiver k
    /// sends `k % 2 == 0` line by line, the others 1 to 4 lines a message (whole lines, each
    /// ending in its newline).
    static func messages(_ logs: [(key: String, lines: [Data])]) -> [(key: String, value: Data)] {
        var queues: [[(key: String, value: Data)]] = []
        for (k, log) in logs.enumerated() {
            var queue: [(key: String, value: Data)] = []
            var at = 0, size = 0
            while at < log.lines.count {
                let n = k % 2 == 0 ? 1 : 1 + size % 4
                size += 1
                var value = Data()
                for line in log.lines[at..<min(at + n, log.lines.count)] { value += line + Data([0x0A]) }
                queue.append((log.key, value))
                at += n
            }
            queues.append(queue)
        }
        var out: [(key: String, value: Data)] = []
        var round = 0
        while queues.contains(where: { round < $0.count }) {
            for q in queues where round < q.count { out.append(q[round]) }
            round += 1
        }
        return out
    }

    static func produce(_ producer: KafkaProducer, _ messages: ArraySlice<(key: String, value: Data)>,
                        partition: Int32 = -1) throws {
        for m in messages {
            let key = Array(m.key.utf8)
            try key.withUnsafeBytes { k in
                try m.value.withUnsafeBytes { v in
                    try producer.produce(topic: "in", key: key.isEmpty ? nil : k, value: v, partition: partition)
                }
            }
        }
        try producer.flush(milliseconds: 30_000)
    }

    static func cluster(partitions: Int32) throws -> (KafkaMockCluster, KafkaProducer) {
        let cluster = try KafkaMockCluster(brokers: 3)
        try cluster.createTopic("in", partitions: partitions)
        try cluster.createTopic("out", partitions: 2)
        try cluster.createTopic("g-state", partitions: 2)
        try cluster.createTopic("g-rejects", partitions: 1)
        let producer = try KafkaProducer(settings: KafkaSettings([("bootstrap.servers", cluster.bootstrapServers),
                                                                  ("log_level", "0"), ("linger.ms", "5")]))
        return (cluster, producer)
    }

    /// Rejections by device (the message's key) and reason, repeats (same place, same record) dropped.
    static func rejects(_ messages: [KafkaMessage]) -> [String: [String: Int]] {
        var seen = Set<Data>()
        var out: [String: [String: Int]] = [:]
        for m in messages where seen.insert(Data(m.value)).inserted {
            let fields = m.value.split(separator: UInt8(ascii: "\t"), maxSplits: 2, omittingEmptySubsequences: false)
            let key = m.key.map { String(decoding: $0, as: UTF8.self) } ?? ""
            out[key, default: [:]][String(decoding: fields[1], as: UTF8.self), default: 0] += 1
        }
        return out
    }

    /// `replay`'s rejections by reason, from its `--rejects` file.
    static func replayRejects(_ url: URL) throws -> [String: Int] {
        var out: [String: Int] = [:]
        for line in try CLI.contents(of: url).split(separator: 0x0A) {
            let fields = line.split(separator: UInt8(ascii: "\t"), maxSplits: 2, omittingEmptySubsequences: false)
            out[String(decoding: fields[1], as: UTF8.self), default: 0] += 1
        }
        return out
    }

    /// The receivers' logs, regions their fixes cross, and replay's events and rejections of
    /// each receiver alone.
    struct Expected {
        var lines: [(key: String, lines: [Data])] = []
        var regions: URL
        var events: [String: [String]] = [:]
        var rejects: [String: [String: Int]] = [:]
    }

    /// `format`'s inputs, one file per receiver (`files[name]`), replayed each with `--device NAME`.
    static func expected(files: [(name: String, url: URL)], format: String, in dir: URL) throws -> Expected {
        var fixes: [String: [String]] = [:]
        for (name, url) in files {
            let r = try CLI.run(["convert", "--format", format, "--device", name, url.path])
            #expect(r.status == 0, "\(r.stderr)")
            fixes[name] = r.lines
        }
        var e = Expected(regions: try regions(around: fixes, in: dir))
        for (name, url) in files {
            let rejects = dir.appendingPathComponent(name.replacingOccurrences(of: "/", with: "_") + ".rejects")
            let r = try CLI.run(["replay", "--regions", e.regions.path] + exact
                                + ["--format", format, "--device", name, "--rejects", rejects.path, url.path])
            #expect(r.status == 0, "\(r.stderr)")
            let events = ConsumeTests.replayByDevice(r.stdout)[name] ?? []
            #expect(events.count >= 4, "\(name): the regions must be crossed (\(events.count) events)")
            e.events[name] = events
            e.rejects[name] = try replayRejects(rejects)
            e.lines.append((name, try lines(of: url)))
        }
        return e
    }

    /// `unkeyed`: the device whose messages have no key (its rejections have none either).
    static func check(_ e: Expected, cluster: KafkaMockCluster, logs: [String], unkeyed: String? = nil) throws {
        let (events, repeats) = try ConsumeTests.byDevice(try ConsumeTests.readAll(cluster, topic: "out"))
        for name in e.events.keys.sorted() {
            let got = events[name] ?? [], want = e.events[name]!
            let first = (0..<min(got.count, want.count)).first { got[$0] != want[$0] } ?? min(got.count, want.count)
            #expect(got == want, "\(name): \(got.count) events, replay \(want.count); first difference at \(first): \(got.dropFirst(first).first ?? "none") vs replay's \(want.dropFirst(first).first ?? "none")\n\(logs.joined(separator: "\n"))")
        }
        #expect(Set(events.keys) == Set(e.events.keys))
        var rejects = rejects(try ConsumeTests.readAll(cluster, topic: "g-rejects"))
        if let unkeyed { rejects[unkeyed] = rejects.removeValue(forKey: "") }
        for name in e.events.keys.sorted() {
            #expect(rejects[name] ?? [:] == e.rejects[name]!, "\(name): rejects \(rejects[name] ?? [:]), replay's \(e.rejects[name]!)")
        }
        print("consume receivers: \(events.values.map(\.count).reduce(0, +)) events, \(repeats) repeats dropped")
    }

    static func arguments(_ e: Expected, cluster: KafkaMockCluster, format: String, idle: Int) -> [String] {
        ["--regions", e.regions.path] + exact + [
            "--format", format, "--brokers", cluster.bootstrapServers, "--topic", "in", "--group", "g",
            "--events-topic", "out", "--exit-when-idle", "\(idle)", "--checkpoint-every", "7",
            "--kafka-config", "session.timeout.ms=3000", "--kafka-config", "heartbeat.interval.ms=300",
        ]
    }

    /// The NMEA receivers' logs, replay's events of each, and a cluster to send them to.
    static func nmeaSetup() throws -> (URL, Expected, KafkaMockCluster, KafkaProducer) {
        let dir = try CLI.temporaryDirectory()
        let files = try receivers.map { ($0, try log("\($0).log")) }
        let e = try expected(files: files, format: "nmea", in: dir)
        let (cluster, producer) = try cluster(partitions: partitions)
        return (dir, e, cluster, producer)
    }

    @Test("NMEA logs sent line by line (and a few lines a message), keyed by receiver, interleaved: each receiver's events are replay --device NAME's, its rejections too")
    func nmeaLogs() throws {
        let (dir, e, cluster, producer) = try Self.nmeaSetup()
        try Self.produce(producer, Self.messages(e.lines)[...])
        let a = try Member("a", arguments: Self.arguments(e, cluster: cluster, format: "nmea", idle: 4), in: dir)
        #expect(a.wait(seconds: 90) == 0, "\(a.log)")
        #expect(a.log.contains("passed over"), "the summary counts the lines passed over: \(a.log)")
        try Self.check(e, cluster: cluster, logs: [a.log])
    }

    @Test("NMEA logs with a member killed (SIGKILL) mid-stream: the member resuming its partitions from their snapshots (open cycles included) gives replay's events")
    func nmeaKill() throws {
        let (dir, e, cluster, producer) = try Self.nmeaSetup()
        let messages = Self.messages(e.lines)
        let n = messages.count
        let arguments = Self.arguments(e, cluster: cluster, format: "nmea", idle: 20)
        try Self.produce(producer, messages[0..<(n * 3 / 10)])
        let a = try Member("a", arguments: arguments, in: dir)
        let b = try Member("b", arguments: arguments, in: dir)
        defer { for m in [a, b] where m.process.isRunning { m.kill9() } }
        let watcher = try KafkaConsumer(settings: KafkaSettings([("bootstrap.servers", cluster.bootstrapServers),
                                                                 ("group.id", "g"), ("log_level", "0")]))
        func committed() -> [Int64] {
            (0..<Self.partitions).map { p in (try? watcher.committed(topic: "in", partition: p).offset) ?? -1 }
        }
        // The partitions the receivers' keys went to (four keys on three partitions may leave one empty).
        let used = try (0..<Self.partitions).filter { try watcher.watermarks(topic: "in", partition: $0).high > 0 }
        let deadline = Date().addingTimeInterval(60)
        while used.contains(where: { committed()[Int($0)] < 0 }) && Date() < deadline { usleep(100_000) }
        #expect(!used.contains { committed()[Int($0)] < 0 }, "no commit for some partition within a minute: a: \(a.log)\nb: \(b.log)")
        try Self.produce(producer, messages[(n * 3 / 10)..<(n * 6 / 10)])
        usleep(300_000)
        a.kill9()
        _ = a.wait(seconds: 5)
        #expect(b.waitFor("from a snapshot", seconds: 30), "b resumed nothing from a's snapshots: \(b.log)")
        try Self.produce(producer, messages[(n * 6 / 10)...])
        #expect(b.wait(seconds: 90) == 0, "b: \(b.log)")
        let total = Int64(n)
        #expect(committed().map { max(0, $0) }.reduce(0, +) == total, "committed \(committed()), \(total) messages in all")
        try Self.check(e, cluster: cluster, logs: ["a: " + a.log, "b: " + b.log])
    }

    @Test("gpsd reports (the JSON lines of a .chk) keyed by device, and a receiver's without a key naming its device in the report: replay --format gpsd's events")
    func gpsdReports() throws {
        let dir = try CLI.temporaryDirectory()
        var files: [(String, URL)] = []
        for name in Self.receivers.prefix(3) {
            let url = dir.appendingPathComponent("\(name).json")
            let reports = try Self.lines(of: try Self.log("\(name).log.chk")).filter { $0.first == UInt8(ascii: "{") }
            try reports.map { $0 + Data([0x0A]) }.reduce(Data(), +).write(to: url)
            files.append((name, url))
        }
        // A receiver whose reports name their device, sent without a key (to one partition,
        // which a keyless message would not otherwise keep to): replayed with that device.
        let device = "/dev/ttyUSB7"
        let unkeyed = try Self.lines(of: try Self.log("bu353s4.log.chk")).filter { $0.first == UInt8(ascii: "{") }
            .map { Data(#"{"device":"\#(device)","#.utf8) + $0.dropFirst() + Data([0x0A]) }
        let unkeyedFile = dir.appendingPathComponent("unkeyed.json")
        try unkeyed.reduce(Data(), +).write(to: unkeyedFile)
        files.append((device, unkeyedFile))
        var e = try Self.expected(files: files, format: "gpsd", in: dir)
        e.lines.removeAll { $0.key == device }

        let (cluster, producer) = try Self.cluster(partitions: Self.partitions)
        try Self.produce(producer, Self.messages(e.lines)[...])
        try Self.produce(producer, unkeyed.map { (key: "", value: $0) }[...], partition: 1)
        let a = try Member("a", arguments: Self.arguments(e, cluster: cluster, format: "gpsd", idle: 4), in: dir)
        #expect(a.wait(seconds: 90) == 0, "\(a.log)")
        #expect(a.log.contains("TPV repeat"), "the summary counts the reports passed over: \(a.log)")
        try Self.check(e, cluster: cluster, logs: [a.log], unkeyed: device)
    }
}
