import Foundation
import Geotrigger
import GeotriggerScenarios
import Testing

/// `replay --jobs N` (issue 5 item 5): for every N, the events, the rejects file, the state file,
/// the exit status and the summary (all but its elapsed-time line) are byte for byte those of
/// `--jobs 1`. The inputs are built to make the jobs' work interleave: timers of many devices due
/// at the same instant (ties across jobs), readings that move the clock one by one, rejected
/// records of every origin, control records a job refuses, several input files, `--strict`.
@Suite("geotrigger replay --jobs N")
struct JobsTests {
    static let jobCounts = [2, 3, 4, 7]

    /// Everything a run produces that must not depend on the number of jobs.
    struct Outcome: Equatable, CustomStringConvertible {
        var status: Int32
        var events: String
        var summary: String
        var rejects: String
        var state: String
        var description: String {
            "status \(status), \(events.count) bytes of events, \(rejects.count) of rejects, \(state.count) of state\n\(summary)"
        }
    }

    static func replay(_ args: [String], jobs: Int, in dir: URL) throws -> Outcome {
        let events = dir.appendingPathComponent("events-\(jobs).ndjson"), rejects = dir.appendingPathComponent("rejects-\(jobs).txt"),
            state = dir.appendingPathComponent("state-\(jobs).json")
        for file in [events, rejects, state] { try? FileManager.default.removeItem(at: file) }
        let r = try CLI.run(["replay"] + args + ["--jobs", "\(jobs)", "-o", events.path, "--rejects", rejects.path,
                                                 "--state-out", state.path])
        func read(_ url: URL) -> String { CLI.text(of: url) ?? "<none>" }
        // The elapsed time, the peak memory and (with more than one job) the CPU time are the
        // only lines that may differ (measurements).
        let lines = r.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        let cpu = lines.filter { $0.hasPrefix("geotrigger: cpu ") }
        if jobs > 1 && r.status == 0 {
            // `cpu T s, R s of it on the reading thread and J s on N jobs`: R + J = T.
            #expect(cpu.count == 1 && cpu[0].hasSuffix(" on \(jobs) jobs"), "--jobs \(jobs): \(cpu)")
            if let line = cpu.first {
                let seconds = line.split(separator: " ").filter { $0.contains(".") }.compactMap { Double($0) }
                #expect(seconds.count == 3 && seconds[1] <= seconds[0] && abs(seconds[1] + seconds[2] - seconds[0]) < 0.0015,
                        "\(line)")
            }
        } else {
            #expect(cpu.isEmpty, "--jobs \(jobs): \(cpu)")
        }
        let summary = lines.filter { !$0.contains("elapsed") && !$0.contains("peak memory") && !$0.hasPrefix("geotrigger: cpu ") }
        return Outcome(status: r.status, events: read(events), summary: summary.joined(separator: "\n"), rejects: read(rejects),
                       state: read(state))
    }

    /// Runs `args` with one job and with each of `jobCounts`; returns the one-job outcome.
    @discardableResult
    static func expectSameForEveryJobCount(_ args: [String], in dir: URL) throws -> Outcome {
        let one = try replay(args, jobs: 1, in: dir)
        for n in [1] + jobCounts {
            let many = try replay(args, jobs: n, in: dir)
            #expect(many.status == one.status, "--jobs \(n): \(many.summary)")
            #expect(many.summary == one.summary, "--jobs \(n)")
            #expect(many.rejects == one.rejects, "--jobs \(n)")
            #expect(many.state == one.state, "--jobs \(n)")
            if many.events != one.events {
                let a = one.events.split(separator: "\n"), b = many.events.split(separator: "\n")
                let k = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
                Issue.record("--jobs \(n): events differ at line \(k + 1) of \(a.count) / \(b.count):\n  \(k < a.count ? a[k] : "<end>")\n  \(k < b.count ? b[k] : "<end>")")
            }
        }
        return one
    }

    /// A small scenario written to `dir`; returns the regions and readings paths.
    static func scenario(_ kind: Scenario.Kind, seed: UInt64, regions: Int, devices: Int, seconds: Int,
                         in dir: URL) throws -> (regions: String, readings: String) {
        let s = Scenario(kind: kind, seed: seed, regions: regions, devices: devices, seconds: seconds)
        let regionsPath = dir.appendingPathComponent(s.regionsFileName).path, readings = dir.appendingPathComponent("readings.ndjson").path
        try s.writeRegions(to: RecordBuffer(path: regionsPath))
        try s.writeReadings(to: RecordBuffer(path: readings))
        return (regionsPath, readings)
    }

    /// Requests for every device: a repeating time trigger (all devices start at the same second,
    /// so their firings tie across jobs), a one-shot one, location triggers and a push trigger.
    static let requests = """
        [{"id":"tick","content":{"title":"tick"},"trigger":{"type":"timeInterval","seconds":60,"repeats":true}},
         {"id":"once","content":{"title":"once"},"trigger":{"type":"timeInterval","seconds":45}},
         {"id":"news","content":{"title":"news"},"trigger":{"type":"push"}},
         {"id":"only-d3","content":{"title":"d3"},"devices":["d3"],"trigger":{"type":"push"}},
         \((0..<40).map { #"{"id":"at-r\#($0)","content":{"title":"r\#($0)"},"trigger":{"type":"location","region":"r\#($0)","notifyOnExit":true}}"# }.joined(separator: ",\n"))]
        """

    /// The city readings split over two files by device, with fractional times (so nearly every
    /// reading moves the clock), bad records, an out-of-order fix and control records — one of
    /// which only a device's own notification center can refuse.
    static func mixedInputs(from readings: String, in dir: URL) throws -> [String] {
        var files = ["", ""]
        var devicesSeen: [String: Int] = [:]
        for (i, line) in try String(contentsOfFile: readings, encoding: .utf8).split(separator: "\n").enumerated() {
            // {"t":1700000000,"device":"d12",…
            let comma = line.firstIndex(of: ",")!
            let t = Int(line[line.index(line.startIndex, offsetBy: 5)..<comma])!
            let device = line.split(separator: "\"")[5]
            let number = devicesSeen[String(device), default: devicesSeen.count]
            devicesSeen[String(device)] = number
            let stamp = "\(t).\(String(format: "%03d", (number * 7) % 1000))"
            let f = number % 2
            files[f] += "{\"t\":\(stamp)" + line[comma...] + "\n"
            switch i % 997 {
            case 100: files[f] += "{\"t\":\(stamp),\"device\":\"\(device)\",\"op\":\"push\",\"id\":\"news\"}\n"
            case 200: files[f] += "{\"t\":\(stamp),\"device\":\"\(device)\",\"op\":\"push\",\"id\":\"only-d3\"}\n"  // refused unless d3
            case 300: files[f] += "{\"t\":\(stamp),\"device\":\"\(device)\",\"op\":\"add\",\"request\":{\"id\":\"x\",\"content\":{\"title\":\"x\"},\"trigger\":{\"type\":\"timeInterval\",\"seconds\":30}}}\n"
            case 400: files[f] += "{\"t\":\(stamp),\"device\":\"\(device)\",\"op\":\"removePending\",\"ids\":[\"tick\"]}\n"
            case 500: files[f] += "{\"t\":\(stamp),\"device\":\"\(device)\",\"lat\":91,\"lon\":16}\n"
            case 600: files[f] += "not json at all\n"
            case 700: files[f] += "{\"t\":\(t - 30),\"device\":\"\(device)\",\"lat\":48.2,\"lon\":16.3}\n"  // older than its previous
            case 800: files[f] += "{\"t\":\(stamp),\"lat\":48.2,\"lon\":16.3}\n"
            default: break
            }
        }
        let paths = [dir.appendingPathComponent("a.ndjson").path, dir.appendingPathComponent("b.ndjson").path]
        for (path, text) in zip(paths, files) { try text.write(toFile: path, atomically: true, encoding: .utf8) }
        return paths
    }

    /// The city scenario with `requests` and `mixedInputs`.
    static func mixedCase() throws -> (dir: URL, scenario: (regions: String, readings: String), requests: String, inputs: [String]) {
        let dir = try CLI.temporaryDirectory()
        let s = try scenario(.city, seed: 9, regions: 2000, devices: 120, seconds: 150, in: dir)
        let path = dir.appendingPathComponent("requests.json").path
        try requests.write(toFile: path, atomically: true, encoding: .utf8)
        return (dir, s, path, try mixedInputs(from: s.readings, in: dir))
    }

    /// A generated scenario replayed with `options`; its events must contain `expected`.
    struct ScenarioCase: Sendable, CustomStringConvertible {
        var kind: Scenario.Kind
        var sizes: (regions: Int, devices: Int, seconds: Int)
        var options: [String]
        var expected: String
        var description: String { "\(kind.rawValue) \(options.joined(separator: " "))" }
    }

    @Test("city in exact mode and with dwell timers; beacons with silence exits and dwell", arguments: [
        ScenarioCase(kind: .city, sizes: (3000, 150, 90), options: ["--hysteresis", "0", "--max-accuracy", "0"], expected: "\"exit\""),
        ScenarioCase(kind: .city, sizes: (3000, 150, 90), options: ["--dwell", "20", "--until", "1700000200"], expected: "\"dwell\""),
        ScenarioCase(kind: .beacons, sizes: (300, 60, 120), options: ["--dwell", "10", "--beacon-exit", "5"], expected: "\"exit\""),
    ])
    func scenarios(_ c: ScenarioCase) throws {
        let dir = try CLI.temporaryDirectory()
        let s = try Self.scenario(c.kind, seed: 5, regions: c.sizes.regions, devices: c.sizes.devices, seconds: c.sizes.seconds, in: dir)
        let one = try Self.expectSameForEveryJobCount(["--regions", s.regions] + c.options + [s.readings], in: dir)
        #expect(one.status == 0 && one.events.contains(c.expected), "\(one)")
    }

    /// With no requests file, no dwell and no time triggers, fixes go through the monitor's
    /// batches in each job too; location requests added by control records then deliver from
    /// inside a batch, and each event and delivery must keep its own fix's place in the output.
    @Test("batched fixes in every job: location deliveries from requests added mid-stream")
    func batchedDeliveries() throws {
        let dir = try CLI.temporaryDirectory()
        let s = try Self.scenario(.city, seed: 11, regions: 3000, devices: 150, seconds: 90, in: dir)
        // The regions each device enters, from a plain replay: the requests are made for them.
        let plain = try Self.replay(["--regions", s.regions, s.readings], jobs: 1, in: dir)
        var entered: [Substring: [Substring]] = [:]
        for line in plain.events.split(separator: "\n") where line.contains("\"enter\"") {
            let fields = line.split(separator: "\"")  // …"device":"d12","region":"r34",…
            entered[fields[11], default: []].append(fields[15])
        }
        var text = ""
        var added = Set<Substring>()
        for line in try String(contentsOfFile: s.readings, encoding: .utf8).split(separator: "\n") {
            let device = line.split(separator: "\"")[5]
            // Before each device's first fix, a control record per region it will enter, skipping
            // every third so that some enters deliver and some do not.
            if added.insert(device).inserted {
                let t = line.dropFirst(5).prefix { $0 != "," }
                for (k, r) in (entered[device] ?? []).enumerated() where k % 3 != 2 {
                    text += #"{"t":\#(t),"device":"\#(device)","op":"add","request":{"id":"at-\#(r)","content":{"title":"\#(r)"},"trigger":{"type":"location","region":"\#(r)","notifyOnExit":true}}}"# + "\n"
                }
            }
            text += line + "\n"
        }
        let path = dir.appendingPathComponent("with-requests.ndjson").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let one = try Self.expectSameForEveryJobCount(["--regions", s.regions, path], in: dir)
        #expect(one.status == 0, "\(one)")
        #expect(one.events.contains("\"trigger\":\"location\""), "no location delivery: the case tests less than it should")
    }

    @Test("requests, control records, bad and out-of-order records, two input files, fractional times")
    func mixed() throws {
        let (dir, s, requests, inputs) = try Self.mixedCase()
        let one = try Self.expectSameForEveryJobCount(["--regions", s.regions, "--requests", requests, "--dwell", "15",
                                                       "--until", "1700000400"] + inputs, in: dir)
        #expect(one.status == 0, "\(one)")
        for needed in ["\"trigger\":\"timeInterval\"", "\"trigger\":\"push\"", "\"trigger\":\"location\"", "\"dwell\""] {
            #expect(one.events.contains(needed), "no \(needed) event: the case tests less than it should")
        }
        for reason in ["bad-control-record", "older-than-previous", "malformed", "latitude-out-of-range", "missing-device"] {
            #expect(one.rejects.contains(reason), "no \(reason) rejection")
        }
        #expect(one.summary.contains("more rejected records not shown"))
    }

    @Test("--strict stops where one job stops: at a bad record, and at a control record a job refuses")
    func strict() throws {
        let (dir, s, requests, inputs) = try Self.mixedCase()
        let first = try Self.expectSameForEveryJobCount(["--regions", s.regions, "--requests", requests, "--strict"] + inputs, in: dir)
        #expect(first.status == 65 && first.summary.contains("stopped by --strict"), "\(first)")

        // Only the refused push (a device without that push request) is bad here.
        let lines = try String(contentsOfFile: s.readings, encoding: .utf8).split(separator: "\n")
        let cut = 9000, t = lines[cut].dropFirst(5).prefix { $0 != "," }  // after the first "tick" deliveries
        var text = lines[..<cut].joined(separator: "\n") + "\n"
        text += "{\"t\":\(t),\"device\":\"d7\",\"op\":\"push\",\"id\":\"only-d3\"}\n"
        text += lines[cut...].joined(separator: "\n") + "\n"
        let path = dir.appendingPathComponent("refused.ndjson").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let refused = try Self.expectSameForEveryJobCount(["--regions", s.regions, "--requests", requests, "--strict", path], in: dir)
        #expect(refused.status == 65 && refused.summary.contains("bad-control-record"), "\(refused)")
        #expect(refused.events.contains("\"deliver\""), "events before the refused record are written")
    }
}
