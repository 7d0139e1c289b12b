import Foundation
import Geotrigger
import GeotriggerConsume
import Testing

/// `geotrigger consume` (SPEC §8) as users run it: several processes in one consumer group on
/// librdkafka's mock cluster (Kafka's protocol on loopback, hosted by this test process), one
/// of them killed with SIGKILL mid-stream, another joining later; the events, once repeated ids
/// are dropped, must be exactly `geotrigger replay`'s on the same readings, device by device.
@Suite("geotrigger consume on a Kafka consumer group", .serialized)
struct ConsumeTests {
    /// A `geotrigger consume` child process; its stderr goes to a file.
    final class Member {
        let process = Process()
        let stderr: URL
        let name: String

        init(_ name: String, arguments: [String], in dir: URL) throws {
            self.name = name
            stderr = dir.appendingPathComponent("\(name).stderr")
            FileManager.default.createFile(atPath: stderr.path, contents: nil)
            process.executableURL = CLI.binary
            process.arguments = ["consume"] + arguments
            process.currentDirectoryURL = CLI.root
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: stderr)
            try process.run()
        }

        var log: String { CLI.text(of: stderr) ?? "" }

        func kill9() { kill(process.processIdentifier, SIGKILL) }

        /// Waits for the process to end (killing it after `seconds`); its exit status.
        func wait(seconds: Double) -> Int32 {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning && Date() < deadline { usleep(50_000) }
            if process.isRunning { kill9() }
            process.waitUntilExit()
            return process.terminationStatus
        }

        /// Waits until its log contains `text`.
        func waitFor(_ text: String, seconds: Double) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if log.contains(text) { return true }
                if !process.isRunning { return log.contains(text) }
                usleep(50_000)
            }
            return false
        }
    }

    /// Every message of `topic` (read by a group of its own until `idle` seconds pass without one).
    static func readAll(_ cluster: KafkaMockCluster, topic: String, idle: Double = 3) throws -> [KafkaMessage] {
        let consumer = try KafkaConsumer(settings: KafkaSettings([
            ("bootstrap.servers", cluster.bootstrapServers), ("group.id", "reader-\(UUID().uuidString)"),
            ("auto.offset.reset", "earliest"), ("enable.auto.commit", "false"), ("log_level", "0"),
        ]))
        try consumer.subscribe([topic])
        var got: [KafkaMessage] = []
        var last = Date()
        let start = Date()
        while Date().timeIntervalSince(last) < idle || (got.isEmpty && Date().timeIntervalSince(start) < 20) {
            if let m = try consumer.poll(milliseconds: 100) {
                got.append(m)
                last = Date()
            }
        }
        consumer.close()
        return got
    }

    /// Readings as the test feeds them: each record with its key (the device), in time order.
    struct Feed {
        var records: [(key: String, line: String)] = []
        var ndjson: String { records.map { $0.line + "\n" }.joined() }
    }

    /// The city scenario's fixes for a few devices, with bad records and control records mixed in.
    static func feed(dir: URL, devices: Int, seconds: Int) throws -> (feed: Feed, regions: String, end: Double) {
        let out = dir.appendingPathComponent("city")
        let r = try CLI.run(["scenario", "city", "--seed", "11", "--regions", "3000", "--devices", "\(devices)",
                             "--seconds", "\(seconds)", "--out", out.path])
        #expect(r.status == 0, "\(r.stderr)")
        var feed = Feed()
        var lastT = 0.0
        let lines = try String(contentsOf: out.appendingPathComponent("readings.ndjson"), encoding: .utf8)
            .split(separator: "\n")
        for (k, line) in lines.enumerated() {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let device = object["device"] as! String
            let t = (object["t"] as! NSNumber).doubleValue
            lastT = max(lastT, t)
            feed.records.append((device, String(line)))
            // Bad records (rejected with reasons, the run going on) and pushes, now and then.
            if k % 997 == 500 {
                feed.records.append((device, #"{"t":\#(t),"device":"\#(device)","lat":91,"lon":16.3}"#))
            }
            if k % 1499 == 700 { feed.records.append((device, #"{"t":\#(t),"device":"\#(device)","lat":48.2,"#)) }
            if k % 1201 == 300 {
                feed.records.append((device, #"{"t":\#(t),"device":"\#(device)","op":"push","id":"news","content":{"title":"Road works"}}"#))
            }
            if k % 1703 == 900 {
                feed.records.append((device, #"{"t":\#(t - 100),"device":"\#(device)","lat":48.2,"lon":16.3}"#))
            }
        }
        return (feed, out.appendingPathComponent("regions.csv").path, lastT)
    }

    /// Requests on the regions the replay enters most, a repeating time-interval trigger and a
    /// push: deliveries of every kind that a region event, a timer or a record causes.
    static func requests(dir: URL, regions: String, readings: URL) throws -> (url: URL, top: [String]) {
        let r = try CLI.run(["replay", "--regions", regions, "--hysteresis", "0", "--max-accuracy", "0", readings.path])
        var entries: [String: Int] = [:]
        for line in r.lines where line.contains(#""event":"enter""#) {
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            entries[o["region"] as! String, default: 0] += 1
        }
        let top = entries.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(6).map(\.key)
        #expect(top.count == 6, "the scenario enters too few regions to test deliveries")
        var items = top.enumerated().map { k, region in
            #"{"id":"at-\#(region)","content":{"title":"Near \#(region)"},"trigger":{"type":"location","region":"\#(region)","repeats":\#(k % 2 == 0),"notifyOnExit":\#(k % 3 == 0)}}"#
        }
        items.append(#"{"id":"stretch","content":{"title":"Stretch"},"trigger":{"type":"timeInterval","seconds":90,"repeats":true}}"#)
        items.append(#"{"id":"news","content":{"title":"News"},"trigger":{"type":"push"}}"#)
        let url = dir.appendingPathComponent("requests.json")
        try ("[" + items.joined(separator: ",\n") + "]").write(to: url, atomically: true, encoding: .utf8)
        return (url, top)
    }

    /// Live region records (SPEC §7) at `fraction` of the feed: device-less, so the test
    /// produces them to every partition (key ""), and each partition's engine applies them.
    static func insertRegionRecords(_ feed: inout Feed, regionsCSV: String, top: [String]) throws {
        let rows = try String(contentsOfFile: regionsCSV, encoding: .utf8).split(separator: "\n").dropFirst()
        var centre: [String: (String, String)] = [:]
        for row in rows {
            let f = row.split(separator: ",")
            centre[String(f[0])] = (String(f[1]), String(f[2]))
        }
        let (lat, lon) = centre[top[0]]!
        func t(at k: Int) throws -> String {
            let o = try JSONSerialization.jsonObject(with: Data(feed.records[k].line.utf8)) as! [String: Any]
            return "\((o["t"] as! NSNumber).doubleValue)"
        }
        let add = feed.records.count / 2, remove = feed.records.count * 7 / 10
        let removal = #"{"t":\#(try t(at: remove)),"op":"removeRegion","id":"\#(top[1])"}"#
        feed.records.insert(("", removal), at: remove)
        let addition = #"{"t":\#(try t(at: add)),"op":"addRegion","region":{"type":"Feature","id":"added-1","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":600}}}"#
        feed.records.insert(("", addition), at: add)
    }

    /// Produces records keyed by device; a record with an empty key goes to every partition.
    static func produce(_ producer: KafkaProducer, _ records: ArraySlice<(key: String, line: String)>,
                        partitions: Int32 = 6) throws {
        for r in records {
            if r.key.isEmpty {
                for p in 0..<partitions { try producer.produce(topic: "in", key: nil, value: r.line, partition: p) }
            } else {
                try producer.produce(topic: "in", key: r.key, value: r.line)
            }
        }
        try producer.flush(milliseconds: 30_000)
    }

    /// The input partitions a member's log (the "in[P] assigned" and "lost" lines consume writes
    /// unless --quiet) shows it last assigned and not lost since. A revocation is left aside: the
    /// member commits a partition as it gives it up; a lost partition is already another
    /// generation's, and what was read of it since its last commit is read again.
    static func notLost(_ log: String) -> Set<Int> {
        var held = Set<Int>()
        for line in log.split(separator: "\n") where line.hasPrefix("geotrigger: in[") {
            let rest = line.dropFirst("geotrigger: in[".count)
            guard let close = rest.firstIndex(of: "]"), let p = Int(rest[..<close]) else { continue }
            let what = rest[rest.index(after: close)...]
            if what.hasPrefix(" assigned:") { held.insert(p) }
            if what.hasPrefix(" lost:") { held.remove(p) }
        }
        return held
    }

    /// The offset a member's log says it gave partition `partition` up at, the last time
    /// ("in[P] revoked at offset N").
    static func revokedAt(_ log: String, partition: Int) -> Int64? {
        let prefix = "geotrigger: in[\(partition)] revoked at offset "
        return log.split(separator: "\n").last { $0.hasPrefix(prefix) }.flatMap { Int64($0.dropFirst(prefix.count)) }
    }

    /// Events by device, in order, without their ids; the ids' repeats checked byte for byte.
    static func byDevice(_ messages: [KafkaMessage]) throws -> (events: [String: [String]], repeats: Int) {
        var seen: [String: [UInt8]] = [:]
        var events: [String: [String]] = [:]
        var repeats = 0
        for m in messages {
            let o = try JSONSerialization.jsonObject(with: Data(m.value)) as! [String: Any]
            let id = o["id"] as! String
            if let first = seen[id] {
                #expect(first == m.value, "event \(id) repeated with other bytes")
                repeats += 1
                continue
            }
            seen[id] = m.value
            let device = o["device"] as! String
            #expect(m.key.map { String(decoding: $0, as: UTF8.self) } == device, "an event keyed by another device")
            // The event as replay writes it: `{"id":"…",` removed.
            let text = String(decoding: m.value, as: UTF8.self)
            let rest = text[text.index(after: text.firstIndex(of: ",")!)...]
            events[device, default: []].append("{" + rest)
        }
        return (events, repeats)
    }

    static func replayByDevice(_ output: String) -> [String: [String]] {
        var events: [String: [String]] = [:]
        for line in output.split(separator: "\n") {
            let start = line.range(of: #""device":""#)!.upperBound
            let device = String(line[start..<line[start...].firstIndex(of: "\"")!])
            events[device, default: []].append(String(line))
        }
        return events
    }

    @Test("a member killed with SIGKILL mid-stream and one joining later: after dropping repeated ids, every device's events are replay's (exact mode, dwell, requests, live region records)")
    func failover() throws {
        let dir = try CLI.temporaryDirectory()
        var (feed, regions, end) = try Self.feed(dir: dir, devices: 150, seconds: 240)
        let readings = dir.appendingPathComponent("readings.ndjson")
        try feed.ndjson.write(to: readings, atomically: true, encoding: .utf8)
        let (requests, top) = try Self.requests(dir: dir, regions: regions, readings: readings)
        try Self.insertRegionRecords(&feed, regionsCSV: regions, top: top)
        try feed.ndjson.write(to: readings, atomically: true, encoding: .utf8)
        let until = String(end + 300)
        let engineOptions = ["--regions", regions, "--requests", requests.path, "--hysteresis", "0", "--max-accuracy", "0",
                             "--dwell", "45", "--until", until]
        let replay = try CLI.run(["replay"] + engineOptions + ["--rejects", dir.appendingPathComponent("rejects").path,
                                                               readings.path])
        #expect(replay.status == 0, "\(replay.stderr)")
        let expected = Self.replayByDevice(replay.stdout)
        #expect(replay.stdout.contains(#""region":"added-1""#) && replay.stdout.contains(#""reason":"removed""#),
                "the live region records must change events")
        #expect(replay.stdout.contains(#""event":"dwell""#) && replay.stdout.contains(#""trigger":"timeInterval""#)
                && replay.stdout.contains(#""trigger":"location""#) && replay.stdout.contains(#""trigger":"push""#),
                "the scenario must exercise dwell and every kind of delivery")

        let cluster = try KafkaMockCluster(brokers: 3)
        try cluster.createTopic("in", partitions: 6)
        try cluster.createTopic("out", partitions: 3)
        try cluster.createTopic("g-state", partitions: 3)
        try cluster.createTopic("g-rejects", partitions: 1)
        let producer = try KafkaProducer(settings: KafkaSettings([("bootstrap.servers", cluster.bootstrapServers),
                                                                  ("log_level", "0"), ("linger.ms", "5")]))
        // Idle for 20 s before leaving: c, joining while the group rebalances, can wait over 12 s for
        // its first partition when every process runs under a sanitizer (scripts/sanitize).
        let arguments = engineOptions + [
            "--brokers", cluster.bootstrapServers, "--topic", "in", "--group", "g", "--events-topic", "out",
            "--exit-when-idle", "20", "--checkpoint-every", "500",
            "--kafka-config", "session.timeout.ms=3000", "--kafka-config", "heartbeat.interval.ms=300",
        ]
        let n = feed.records.count
        try Self.produce(producer, feed.records[0..<(n * 3 / 10)])
        let a = try Member("a", arguments: arguments, in: dir)
        let b = try Member("b", arguments: arguments, in: dir)
        defer { for m in [a, b] where m.process.isRunning { m.kill9() } }
        // Both have taken snapshots of what they read (the group's commits name them).
        let watcher = try KafkaConsumer(settings: KafkaSettings([("bootstrap.servers", cluster.bootstrapServers),
                                                                 ("group.id", "g"), ("log_level", "0")]))
        func committed() -> [Int64] {
            (0..<6).map { p in (try? watcher.committed(topic: "in", partition: Int32(p)).offset) ?? -1 }
        }
        let deadline = Date().addingTimeInterval(60)
        while committed().contains(where: { $0 < 0 }) && Date() < deadline { usleep(100_000) }
        #expect(!committed().contains { $0 < 0 }, "no commit for some partition within a minute: a: \(a.log)\nb: \(b.log)")
        // Commits refused as during a rebalance (OffsetCommit, ILLEGAL_GENERATION): the member
        // loses its partitions and gets them back from their last commits.
        cluster.failRequests(apiKey: 8, errors: [22, 22])
        try Self.produce(producer, feed.records[(n * 3 / 10)..<(n * 6 / 10)])
        usleep(200_000)
        a.kill9()
        _ = a.wait(seconds: 5)
        // b takes a's partitions over once a's session has timed out.
        #expect(b.waitFor("from a snapshot", seconds: 30), "b resumed nothing from a's snapshots: \(b.log)")
        let c = try Member("c", arguments: arguments, in: dir)
        defer { if c.process.isRunning { c.kill9() } }
        #expect(c.waitFor("assigned", seconds: 30), "c was given no partition: \(c.log)")
        try Self.produce(producer, feed.records[(n * 6 / 10)...])
        #expect(b.wait(seconds: 90) == 0, "b: \(b.log)")
        #expect(c.wait(seconds: 90) == 0, "c: \(c.log)")
        #expect(c.log.contains("from a snapshot"), "c resumed no partition from a snapshot: \(c.log)")
        // Everything read is committed: a new member would have nothing left to read.
        let messages = feed.records.map { $0.key.isEmpty ? 6 : 1 }.reduce(0, +)
        #expect(committed().reduce(0, +) == Int64(messages), "committed \(committed()), \(messages) messages in all")

        let (events, repeats) = try Self.byDevice(try Self.readAll(cluster, topic: "out"))
        let wrong = expected.keys.sorted().filter { events[$0] ?? [] != expected[$0]! }
        #expect(events.count == expected.count && wrong.isEmpty,
                "\(wrong.count) of \(expected.count) devices differ from replay, e.g. \(wrong.prefix(3).map { d in "\(d): \(events[d]?.count ?? 0) events, replay \(expected[d]!.count)" })\nb: \(b.log)\nc: \(c.log)\na: \(a.log)")
        // Rejects: each bad record once its repeats are dropped, with replay's reasons.
        let rejects = try Self.readAll(cluster, topic: "g-rejects").map { String(decoding: $0.value, as: UTF8.self) }
        let unique = Set(rejects.map { $0.split(separator: "\t", maxSplits: 1)[0] })
        let replayRejects = try String(contentsOf: dir.appendingPathComponent("rejects"), encoding: .utf8)
            .split(separator: "\n")
        #expect(unique.count == replayRejects.count)
        let reasons = { (lines: [Substring]) in lines.map { $0.split(separator: "\t")[1] }.sorted() }
        #expect(reasons(Set(rejects).map { Substring($0) }.sorted()).count >= replayRejects.count)
        #expect(Set(reasons(rejects.map { Substring($0) })) == Set(reasons(replayRejects)))
        print("consume failover: \(events.values.map(\.count).reduce(0, +)) events, \(repeats) repeats dropped")
    }

    @Test("SIGTERM: what was read is committed, the group left, exit 0; the next member reads on from there; a broker down and up again loses nothing")
    func stopSignalAndBrokerDown() throws {
        let dir = try CLI.temporaryDirectory()
        let (feed, regions, _) = try Self.feed(dir: dir, devices: 60, seconds: 120)
        let readings = dir.appendingPathComponent("readings.ndjson")
        try feed.ndjson.write(to: readings, atomically: true, encoding: .utf8)
        let engineOptions = ["--regions", regions, "--hysteresis", "0", "--max-accuracy", "0", "--dwell", "30"]
        let replay = try CLI.run(["replay"] + engineOptions + [readings.path])
        #expect(replay.status == 0, "\(replay.stderr)")

        let cluster = try KafkaMockCluster(brokers: 3)
        try cluster.createTopic("in", partitions: 4)
        try cluster.createTopic("out", partitions: 2)
        let producer = try KafkaProducer(settings: KafkaSettings([("bootstrap.servers", cluster.bootstrapServers),
                                                                  ("log_level", "0")]))
        let arguments = engineOptions + [
            "--brokers", cluster.bootstrapServers, "--topic", "in", "--group", "g", "--events-topic", "out",
            "--checkpoint-every", "300", "--kafka-config", "session.timeout.ms=3000",
        ]
        let n = feed.records.count
        try Self.produce(producer, feed.records[0..<(n / 2)])
        let a = try Member("a", arguments: arguments, in: dir)
        defer { if a.process.isRunning { a.kill9() } }
        let watcher = try KafkaConsumer(settings: KafkaSettings([("bootstrap.servers", cluster.bootstrapServers),
                                                                 ("group.id", "g"), ("log_level", "0")]))
        func committed() -> Int64 {
            (0..<4).map { p in max(0, (try? watcher.committed(topic: "in", partition: Int32(p)).offset) ?? 0) }.reduce(0, +)
        }
        var deadline = Date().addingTimeInterval(60)
        while committed() == 0 && Date() < deadline { usleep(100_000) }
        // A broker goes away for two seconds while the second half arrives.
        try cluster.setBroker(2, up: false)
        let tail = 200
        for r in feed.records[(n / 2)..<(n - tail)] { try producer.produce(topic: "in", key: r.key, value: r.line) }
        usleep(2_000_000)
        try cluster.setBroker(2, up: true)
        try producer.flush(milliseconds: 30_000)
        // Most records read and committed; then SIGTERM, wherever the member is: what it has
        // read is committed before it leaves, so the next member reads on from there and
        // produces no event of a record it had read.
        // The broker's absence may have made the group drop a (its session ran out): it is
        // signalled once it holds every partition again.
        deadline = Date().addingTimeInterval(60)
        while (committed() < Int64(n / 2 + 1) || Self.notLost(a.log) != Set(0..<4)) && Date() < deadline { usleep(100_000) }
        // The last records come now, about 50 a partition: fewer than --checkpoint-every, so
        // no checkpoint commits them while a runs; its stop must.
        for r in feed.records[(n - tail)...] { try producer.produce(topic: "in", key: r.key, value: r.line) }
        try producer.flush(milliseconds: 30_000)
        usleep(1_500_000)
        let committedBeforeSignal = committed()
        kill(a.process.processIdentifier, SIGTERM)
        #expect(a.wait(seconds: 30) == 0, "\(a.log)")
        #expect(a.log.contains("stopped by a signal"))
        // Each partition a held to the end is committed at the offset a gave it up at.
        for p in Self.notLost(a.log) {
            let read = Self.revokedAt(a.log, partition: p)
            let done = try? watcher.committed(topic: "in", partition: Int32(p)).offset
            #expect(read != nil && done == read, "in[\(p)]: a gave it up at \(read.map { "\($0)" } ?? "?"), committed \(done.map { "\($0)" } ?? "?")\n\(a.log)")
        }
        print("consume stopped by SIGTERM: \(committedBeforeSignal) of \(n) records committed before the signal, \(committed()) after")
        let before = try Self.readAll(cluster, topic: "out")
        let ids = { (messages: [KafkaMessage]) in
            try messages.map { try JSONSerialization.jsonObject(with: Data($0.value)) as! [String: Any] }.map { $0["id"] as! String }
        }
        let idsBefore = Set(try ids(before))

        let b = try Member("b", arguments: arguments + ["--exit-when-idle", "6"], in: dir)
        #expect(b.wait(seconds: 60) == 0, "\(b.log)")
        #expect(b.log.contains("assigned: resumed at offset"), "b resumed nothing from a's snapshots: \(b.log)")
        #expect(committed() == Int64(n), "at the end: \(committed()) of \(n) records committed\n\(b.log)")
        let after = try Self.readAll(cluster, topic: "out")
        var byB = try ids(after)
        for id in try ids(before) { byB.remove(at: byB.firstIndex(of: id)!) }
        // A partition the group took from a without a revocation (lost: a's session ran out)
        // and had not given back before a left was not a's to commit: its records since its
        // last commit are read again. Every other partition's must not be.
        let held = Self.notLost(a.log)
        print("consume stopped by SIGTERM: a held \(held.count) of 4 partitions to the end")
        if held.count < 4 { print(a.log.split(separator: "\n").filter { $0.hasPrefix("geotrigger:") }.joined(separator: "\n")) }
        let again = Set(byB).intersection(idsBefore).filter { held.contains(Int($0.prefix { $0 != "-" })!) }
        #expect(again.isEmpty, "b produced again events of records a had read and not lost: \(again.sorted())\na: \(a.log)\nb: \(b.log)")
        let (events, repeats) = try Self.byDevice(after)
        // A broker away for longer than the session lets the group drop the member: its
        // partitions come back from their last commits and a few events repeat (same ids, same bytes).
        print("consume with a broker down: \(repeats) repeated events")
        #expect(events == Self.replayByDevice(replay.stdout))
    }

    @Test("a short session.timeout.ms without a heartbeat gets a third of it; a heartbeat given, or a long session, is left alone")
    func heartbeatFollowsASessionTimeout() throws {
        func heartbeat(_ settings: [(String, String)]) -> String? {
            var c = ConsumeConfiguration(engine: EngineConfiguration(regionsPath: "r"), brokers: "b", topic: "t", group: "g",
                                         eventsTopic: "e")
            c.kafkaSettings = settings
            let derived = c.derivedGroupSettings
            return derived.first { $0.0 == "heartbeat.interval.ms" }?.1
        }
        #expect(heartbeat([("session.timeout.ms", "3000")]) == "1000")
        #expect(heartbeat([("session.timeout.ms", "6000")]) == "2000")
        // The last value of a key is the one librdkafka keeps.
        #expect(heartbeat([("session.timeout.ms", "45000"), ("session.timeout.ms", "4500")]) == "1500")
        // librdkafka's own default (3 s) is already a third or less.
        #expect(heartbeat([("session.timeout.ms", "9000")]) == nil)
        #expect(heartbeat([("session.timeout.ms", "45000")]) == nil)
        #expect(heartbeat([("session.timeout.ms", "3000"), ("heartbeat.interval.ms", "300")]) == nil)
        #expect(heartbeat([("security.protocol", "SSL")]) == nil)
        // Not a number: left to librdkafka, which refuses it with its own message.
        #expect(heartbeat([("session.timeout.ms", "soon")]) == nil)
    }

    @Test("a member that stops before the group gave it anything exits 0 and commits nothing")
    func stopsBeforeAssignment() throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        try cluster.createTopic("in", partitions: 2)
        let r = try CLI.run(["consume", "--regions", CLI.fixtures.appendingPathComponent("polar-north.regions.geojson").path,
                             "--brokers", cluster.bootstrapServers, "--topic", "in", "--group", "early",
                             "--events-topic", "out", "--exit-when-idle", "0.2"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("partitions: 0 assigned"), "\(r.stderr)")
    }
}
