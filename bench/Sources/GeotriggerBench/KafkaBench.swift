import ArgumentParser
import BenchSupport
import Foundation
import Geotrigger
import GeotriggerConsume
import GeotriggerScenarios

/// SPEC §8's figures: `geotrigger consume` through librdkafka's mock cluster (`geotrigger
/// mock-kafka`, a process of its own on the same machine), with 1, 2 and 4 members; the time
/// from a member's SIGKILL to its partitions being served again; the snapshot bytes per device.
struct KafkaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kafka",
        abstract: "SPEC §8: consume throughput through librdkafka's mock cluster, failover time, snapshot size.",
        discussion: """
            Builds nothing: run `swift build -c release` in the root first (bench/run does). Writes \
            kafka.md and kafka.json to --out. The mock cluster keeps about 5 MB per partition, so \
            the readings are spread over enough partitions to hold them all (--partitions).
            """)

    @Option(help: "Readings to consume (the city scenario's first ones).")
    var fixes = 1_000_000
    @Option(help: "City scenario sizes: circles and devices (one reading per device per second).")
    var regions = 100_000
    @Option(help: "City scenario devices.")
    var devices = 10_000
    @Option(help: "Partitions of the readings topic.")
    var partitions = 32
    @Option(parsing: .upToNextOption, help: "Member counts to measure.")
    var processes: [Int] = [1, 2, 4]
    @Option(help: "Best of N runs per member count.")
    var `repeat` = 2
    @Flag(help: "Skip the failover measurement.")
    var noFailover = false
    @Option(help: "Repository root (default: the current directory's, found by Package.swift).")
    var root: String?
    @Option(help: "Results folder (default: ROOT/bench/results).")
    var out: String?
    @Option(help: "Scenario cache (default: ROOT/bench/.data).")
    var data: String?
    @Option(help: "Random seed of the scenario.")
    var seed: UInt64 = 1
    @Option(help: ArgumentHelp("The geotrigger binary to run (default: ROOT/.build/release/geotrigger; a sanitized "
                               + "build, say, to run the failover under ASan or TSan).", valueName: "path"))
    var geotrigger: String?

    func run() throws {
        let root = self.root ?? FileManager.default.currentDirectoryPath
        let binary = try geotrigger ?? releaseBinary(root: root)
        let out = self.out ?? "\(root)/bench/results"
        let dataDir = self.data ?? "\(root)/bench/.data"
        let seconds = max(1, (fixes + devices - 1) / devices)
        let scenario = Scenario(kind: .city, seed: seed, regions: regions, devices: devices, seconds: seconds)
        let files = try ScenarioFiles.prepare(scenario, dataDirectory: dataDir, placesPath: "")
        let readings = try files.readingsPrefix(fixes)
        let records = try KeyedRecords(path: readings)
        let work = "\(dataDir)/kafka-\(getpid())"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        say("geotrigger-bench kafka: \(records.count) city readings, \(regions) circles, \(partitions) partitions")

        var results = KafkaResults(fixes: records.count, regions: regions, devices: devices, partitions: partitions,
                                   machine: commandOutput(["nproc"]) + " cores, " + commandOutput(["uname", "-m"]),
                                   date: ISO8601DateFormatter().string(from: Date()),
                                   cores: Int(commandOutput(["nproc"])) ?? 1)
        for p in processes {
            var runs: [KafkaResults.Throughput] = []
            for _ in 0..<max(1, `repeat`) {
                // On the mock cluster, members leaving one after another can leave a partition
                // unread (docs/spec-differences.md): such a run is measured again.
                var attempt = 0
                var measured: KafkaResults.Throughput?
                while measured == nil {
                    attempt += 1
                    do {
                        measured = try throughput(members: p, records: records, files: files, binary: binary, work: work)
                    } catch let e as Incomplete where attempt < 3 {
                        say("  \(p) member(s): \(e.message); measuring again")
                    }
                }
                let run = measured!
                say("  \(p) member(s): \(Int(run.recordsPerSecond)) records/s in all, "
                      + "\(run.perMember.map { String(Int($0)) }.joined(separator: ", ")) per member")
                runs.append(run)
            }
            // The median run, with every run's figure beside it.
            var median = runs.sorted { $0.recordsPerSecond < $1.recordsPerSecond }[(runs.count - 1) / 2]
            median.runs = runs.map(\.recordsPerSecond)
            results.throughput.append(median)
        }
        if !noFailover {
            results.failover = try failover(records: records, files: files, binary: binary, work: work)
            if let f = results.failover {
                say("  failover: SIGKILL to partitions served again \(String(format: "%.2f", f.seconds)) s "
                      + "(session.timeout.ms \(f.sessionTimeoutMs))")
            }
        }
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: URL(fileURLWithPath: "\(out)/kafka.json"))
        try results.markdown(command: CommandLine.arguments.dropFirst().joined(separator: " "))
            .write(toFile: "\(out)/kafka.md", atomically: true, encoding: .utf8)
        say("geotrigger-bench kafka: wrote \(out)/kafka.md and kafka.json")
    }

    /// A mock cluster process: its bootstrap servers, and the process to stop.
    func startCluster(binary: String, work: String) throws -> (servers: String, process: Process) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["mock-kafka", "--brokers", "1", "--topic", "in:\(partitions)", "--topic", "out:8",
                             "--topic", "g-state:8", "--topic", "g-rejects:1"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { throw ValidationError("mock-kafka printed no address") }
            line.append(chunk)
        }
        let servers = String(decoding: line, as: UTF8.self).split(separator: "\n")[0]
        return (String(servers), process)
    }

    func consumer(_ binary: String, _ files: ScenarioFiles, servers: String, stderr: String, extra: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["consume", "--regions", files.regionsPath, "--brokers", servers, "--topic", "in",
                             "--group", "g", "--events-topic", "out", "--hysteresis", "0", "--max-accuracy", "0"] + extra
        FileManager.default.createFile(atPath: stderr, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: stderr)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        return process
    }

    func throughput(members: Int, records: KeyedRecords, files: ScenarioFiles, binary: String,
                    work: String) throws -> KafkaResults.Throughput {
        let (servers, cluster) = try startCluster(binary: binary, work: work)
        defer {
            cluster.terminate()
            cluster.waitUntilExit()
        }
        try records.produce(servers: servers, topic: "in")
        let brokerCPUBefore = processCPUSeconds(cluster.processIdentifier)
        let logs = (0..<members).map { "\(work)/member-\($0).stderr" }
        let started = try logs.map {
            try consumer(binary, files, servers: servers, stderr: $0,
                         extra: ["--exit-when-idle", "5", "--checkpoint-every", "100000"])
        }
        for p in started { p.waitUntilExit() }
        let brokerCPU = processCPUSeconds(cluster.processIdentifier) - brokerCPUBefore
        var spans: [(first: Double, last: Double, records: Int)] = []
        var consumingCPU = 0.0, librdkafkaCPU = 0.0
        var snapshotBytesPerDevice: [Int] = []
        var peak: [Double] = []
        for (k, log) in logs.enumerated() {
            let text = try String(contentsOfFile: log, encoding: .utf8)
            guard started[k].terminationStatus == 0 else {
                throw ValidationError("member \(k) exited with \(started[k].terminationStatus):\n\(text)")
            }
            if let span = Summary.consuming(text) { spans.append(span) }
            if let b = Summary.bytesPerDevice(text) { snapshotBytesPerDevice.append(b) }
            if let m = Summary.peakMiB(text) { peak.append(m) }
            if let cpu = Summary.consumingCPU(text) {
                consumingCPU += cpu.consumingThread
                librdkafkaCPU += cpu.librdkafka
            }
        }
        let total = spans.map(\.records).reduce(0, +)
        guard total >= records.count, let first = spans.map(\.first).min(), let last = spans.map(\.last).max() else {
            throw Incomplete(message: "members consumed \(total) of \(records.count) records")
        }
        return KafkaResults.Throughput(
            members: members, recordsPerSecond: Double(total) / max(1e-9, last - first),
            perMember: spans.map { Double($0.records) / max(1e-9, $0.last - $0.first) },
            snapshotBytesPerDevice: snapshotBytesPerDevice.max() ?? 0, peakMiB: peak.max() ?? 0,
            cpuPerMillion: .init(consumingThreads: consumingCPU * 1e6 / Double(total),
                                 librdkafkaThreads: librdkafkaCPU * 1e6 / Double(total),
                                 broker: brokerCPU * 1e6 / Double(total)))
    }

    /// Two members on a paced stream; one is killed; how long until the other serves its partitions.
    func failover(records: KeyedRecords, files: ScenarioFiles, binary: String, work: String) throws -> KafkaResults.Failover? {
        let (servers, cluster) = try startCluster(binary: binary, work: work)
        defer {
            cluster.terminate()
            cluster.waitUntilExit()
        }
        let session = 6_000
        let extra = ["--exit-when-idle", "8", "--checkpoint-every", "20000",
                     "--kafka-config", "session.timeout.ms=\(session)", "--kafka-config", "heartbeat.interval.ms=1000"]
        let logA = "\(work)/a.stderr", logB = "\(work)/b.stderr"
        let a = try consumer(binary, files, servers: servers, stderr: logA, extra: extra)
        let b = try consumer(binary, files, servers: servers, stderr: logB, extra: extra)
        // A stream of about 50,000 readings/s for 25 s (the first part of the file, in order).
        let paced = Thread {
            try? records.produce(servers: servers, topic: "in", perSecond: 50_000, seconds: 25)
        }
        paced.start()
        Thread.sleep(forTimeInterval: 12)
        let logText = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        let aPartitions = Summary.assigned(logText(logA))
        let before = Summary.assigned(logText(logB)).count
        let killedAt = Date()
        kill(a.processIdentifier, SIGKILL)
        a.waitUntilExit()
        var servedAt: Date?
        while Date().timeIntervalSince(killedAt) < 60 {
            let got = Summary.assigned(logText(logB))
            if got.count > before, Set(got[before...]).isSuperset(of: aPartitions) {
                servedAt = Date()
                break
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        while paced.isExecuting { Thread.sleep(forTimeInterval: 0.1) }
        b.waitUntilExit()
        guard let servedAt, !aPartitions.isEmpty else {
            say("  failover: not measured: " + (aPartitions.isEmpty ? "the first member held no partition 12 s in"
                : "the second member did not take the first one's partitions within 60 s") + "\n  a: \(logText(logA))\n  b: \(logText(logB))")
            return nil
        }
        return KafkaResults.Failover(seconds: servedAt.timeIntervalSince(killedAt), sessionTimeoutMs: session,
                                     partitionsMoved: aPartitions.count)
    }
}

/// The readings with their keys (device ids), held in memory to produce them fast.
final class KeyedRecords: @unchecked Sendable {
    let bytes: [UInt8]
    /// Per record: line start, line end, key start, key end.
    var spans: [(Int, Int, Int, Int)] = []
    var count: Int { spans.count }

    init(path: String) throws {
        bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let marker = Array(#""device":""#.utf8)
        var start = 0
        for k in 0..<bytes.count where bytes[k] == UInt8(ascii: "\n") {
            var key = start
            while key + marker.count < k && !bytes[key..<(key + marker.count)].elementsEqual(marker) { key += 1 }
            key += marker.count
            var end = key
            while end < k && bytes[end] != UInt8(ascii: "\"") { end += 1 }
            spans.append((start, k, key, end))
            start = k + 1
        }
    }

    /// Produces every record (or, paced, `perSecond` of them for `seconds`), keyed by device.
    func produce(servers: String, topic: String, perSecond: Int? = nil, seconds: Double = 0) throws {
        let producer = try KafkaProducer(settings: KafkaSettings([
            ("bootstrap.servers", servers), ("log_level", "0"), ("linger.ms", "20"), ("batch.num.messages", "20000"),
            ("queue.buffering.max.messages", "2000000"), ("queue.buffering.max.kbytes", "2097151"),
        ]))
        let start = Date()
        try bytes.withUnsafeBytes { b in
            for (k, s) in spans.enumerated() {
                if let perSecond {
                    if Double(k) >= Double(perSecond) * seconds { break }
                    let due = Double(k) / Double(perSecond)
                    let now = Date().timeIntervalSince(start)
                    if due > now { Thread.sleep(forTimeInterval: due - now) }
                }
                try producer.produce(topic: topic, key: UnsafeRawBufferPointer(rebasing: b[s.2..<s.3]),
                                     value: UnsafeRawBufferPointer(rebasing: b[s.0..<s.1]))
            }
        }
        try producer.flush(milliseconds: 120_000)
    }
}

/// Figures read from a member's summary (stderr).
enum Summary {
    /// "consuming: 1,000,000 records from 2026-…Z to 2026-…Z, …"
    static func consuming(_ text: String) -> (first: Double, last: Double, records: Int)? {
        guard let line = text.split(separator: "\n").first(where: { $0.contains("geotrigger: consuming: ") }) else { return nil }
        let words = line.split(separator: " ")
        guard let n = Int(words[2].replacingOccurrences(of: ",", with: "")),
              let first = RFC3339.parse(String(words[5])), let last = RFC3339.parse(String(words[7]).trimmingCharacters(in: [","]))
        else { return nil }
        return (first, last, n)
    }

    /// "CPU while consuming: 0.931 s on the consuming thread, 0.712 s on the others (librdkafka's, …)"
    static func consumingCPU(_ text: String) -> (consumingThread: Double, librdkafka: Double)? {
        guard let line = text.split(separator: "\n").first(where: { $0.contains("geotrigger: CPU while consuming: ") }) else {
            return nil
        }
        let seconds = line.split(separator: " ").enumerated().compactMap { k, w in
            w == "s" ? Double(line.split(separator: " ")[k - 1]) : nil
        }
        guard seconds.count == 2 else { return nil }
        return (seconds[0], seconds[1])
    }

    static func bytesPerDevice(_ text: String) -> Int? {
        guard let r = text.range(of: #" bytes per device"#) else { return nil }
        let before = text[..<r.lowerBound]
        let number = before.split(separator: " ").last.map { $0.replacingOccurrences(of: ",", with: "") }
        return number.flatMap { Int($0) }
    }

    static func peakMiB(_ text: String) -> Double? {
        guard let r = text.range(of: "peak memory ") else { return nil }
        return Double(text[r.upperBound...].split(separator: " ")[0].replacingOccurrences(of: ",", with: ""))
    }

    /// The partitions a member was assigned, in order, as its log names them ("in[3] assigned").
    static func assigned(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            guard let r = line.range(of: " assigned: "), let s = line.range(of: "geotrigger: ") else { return nil }
            return String(line[s.upperBound..<r.lowerBound])
        }
    }
}

struct KafkaResults: Codable {
    var fixes: Int
    var regions: Int
    var devices: Int
    var partitions: Int
    var machine: String
    var date: String
    var cores: Int
    struct Throughput: Codable {
        var members: Int
        /// All members' records ÷ the span from the first batch to the last.
        var recordsPerSecond: Double
        var perMember: [Double]
        var snapshotBytesPerDevice: Int
        var peakMiB: Double
        /// CPU seconds per million records consumed: the members' consuming threads, their
        /// librdkafka threads, and the mock broker process (over the members' whole run).
        struct CPU: Codable {
            var consumingThreads: Double
            var librdkafkaThreads: Double
            var broker: Double
            var total: Double { consumingThreads + librdkafkaThreads + broker }
        }
        var cpuPerMillion: CPU
        /// Records/s in all of every run (this row is the median run's).
        var runs: [Double] = []
    }
    var throughput: [Throughput] = []
    struct Failover: Codable {
        var seconds: Double
        var sessionTimeoutMs: Int
        var partitionsMoved: Int
    }
    var failover: Failover?

    func markdown(command: String) -> String {
        var s = """
            # geotrigger consume through librdkafka's mock cluster

            `geotrigger-bench \(command)` on \(date) (\(machine)): the city scenario's first \
            \(grouped(fixes)) readings (\(grouped(regions)) circles, \(grouped(devices)) devices), keyed by \
            device over \(partitions) partitions of a `geotrigger mock-kafka` process (one broker) on the \
            same machine, consumed in exact mode by members of one group (`--checkpoint-every 100000`, \
            events produced to an 8-partition topic, snapshots to `g-state`). Records/s: all records ÷ \
            the span from the first batch any member consumed to the last (group joins and rebalances \
            inside it count); per member: its records ÷ its own span. Each row is the median of the \
            runs, every run's figure in brackets.

            | members | records/s in all | per member | snapshot bytes per device | peak memory per member |
            |---|---|---|---|---|

            """
        for t in throughput {
            s += "| \(t.members) | \(grouped(Int(t.recordsPerSecond))) (\(t.runs.map { grouped(Int($0)) }.joined(separator: ", "))) | "
                + t.perMember.map { grouped(Int($0)) }.joined(separator: ", ")
                + " | \(t.snapshotBytesPerDevice) | \(String(format: "%.1f", t.peakMiB)) MiB |\n"
        }
        s += """

            Where the time goes: CPU seconds per million records in the same (median) runs, from each \
            member's summary (its consuming thread; other threads: the rest of the process, librdkafka's \
            and the one handing consumed messages back to it) and \
            the broker process's own clock, over the members' whole run (group joins, rebalances and \
            their idle seconds before leaving included: with more members it overstates, and the \
            ceiling reads low). Everything shares this machine's \(cores) cores, so \
            records/s cannot exceed cores ÷ CPU per record: the ceiling column.

            | members | consuming threads | other threads | mock broker | in all | ceiling on \(cores) cores |
            |---|---|---|---|---|---|

            """
        func f(_ x: Double) -> String { String(format: "%.2f", x) }
        for t in throughput {
            let c = t.cpuPerMillion
            s += "| \(t.members) | \(f(c.consumingThreads)) s | \(f(c.librdkafkaThreads)) s | \(f(c.broker)) s | \(f(c.total)) s | "
                + "\(c.total > 0 ? grouped(Int(Double(cores) * 1e6 / c.total)) : "–") records/s |\n"
        }
        if let f = failover {
            s += """

                Failover: two members on a stream of 50,000 readings/s, one killed with SIGKILL; its \
                \(f.partitionsMoved) partitions were served again by the other (snapshot loaded, reading \
                on) \(String(format: "%.2f", f.seconds)) s later, with `session.timeout.ms=\(f.sessionTimeoutMs)` \
                (the broker notices the death only when the session expires; librdkafka's default is 45 s).

                """
        }
        return s
    }
}

/// A progress line on standard error, at once (standard output may be a file, fully buffered).
func say(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// User + system CPU seconds a process has used so far (`/proc/PID/stat`), 0 where unreadable.
func processCPUSeconds(_ pid: Int32) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = text.lastIndex(of: ")") else { return 0 }
    // After the command name in parentheses: state is field 3, utime and stime fields 14 and 15.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// A throughput run in which the members left records unread.
struct Incomplete: Error {
    var message: String
}
