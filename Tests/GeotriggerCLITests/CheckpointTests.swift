import Foundation
import Geotrigger
import GeotriggerScenarios
import Testing

/// `replay --checkpoint DIR` (SPEC §7, issue 23): however often a run is killed with SIGKILL and
/// started again with the same command, its final events, rejects, state file and summary counts
/// are byte for byte those of a run never interrupted; a torn snapshot is passed over; a snapshot
/// of another run is refused; SIGTERM checkpoints and exits 0.
@Suite("geotrigger replay --checkpoint")
struct CheckpointTests {
    /// The outcome of a command, in the parts that must not depend on interruptions.
    struct Outcome: Equatable {
        var events: String
        var rejects: String
        var state: String
        var summary: String
    }

    /// The summary without what measures this process (time, memory, `--jobs`' CPU) or notes a resume.
    static func summary(_ stderr: String) -> String {
        stderr.split(separator: "\n").filter { line in
            line.hasPrefix("geotrigger:") && !line.contains("elapsed") && !line.contains("peak memory")
                && !line.contains("checkpoint") && !line.hasPrefix("geotrigger: cpu ")
        }.joined(separator: "\n")
    }

    static func read(_ url: URL) -> String { CLI.text(of: url) ?? "<none>" }

    /// The files of one run in `dir`, named by `name`.
    struct Files {
        var events, rejects, state: URL
        init(_ dir: URL, _ name: String) {
            events = dir.appendingPathComponent("\(name).ndjson")
            rejects = dir.appendingPathComponent("\(name).rejects")
            state = dir.appendingPathComponent("\(name).state")
        }
        var arguments: [String] { ["-o", events.path, "--rejects", rejects.path, "--state-out", state.path] }
        func outcome(stderr: String) -> Outcome {
            Outcome(events: read(events), rejects: read(rejects), state: read(state), summary: summary(stderr))
        }
    }

    /// Starts `geotrigger` with `arguments`; the caller waits for it or kills it.
    static func start(_ arguments: [String], stderr: URL, stdin: FileHandle? = nil) throws -> Process {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = arguments
        process.currentDirectoryURL = CLI.root
        FileManager.default.createFile(atPath: stderr.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: stderr)
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = stdin ?? FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs `arguments` with `--checkpoint`, killing it with SIGKILL at random moments and starting
    /// it again, until a run finishes; returns the finished run's stderr file. The early attempts
    /// die within a fifth of `duration` (an uninterrupted run's time: start-up, snapshot writes and
    /// replay alike), later ones are given longer, so the run also gets through. At least five
    /// kills are expected, or the test checks too little.
    static func killUntilFinished(_ arguments: [String], checkpoints: URL, every: Int, duration: Double, seed: UInt64,
                                  in dir: URL) throws -> URL {
        let stderr = dir.appendingPathComponent("stderr")
        var rng = SplitMix(seed: seed)
        var kills = 0, finished: Process?
        for attempt in 0..<80 {
            let p = try start(arguments + ["--checkpoint", checkpoints.path, "--checkpoint-every", "\(every)"], stderr: stderr)
            let limit = attempt < 40 ? 0.2 * duration : 2 * duration
            Thread.sleep(forTimeInterval: Double(rng.next() % 1000) / 1000 * limit)
            if p.isRunning {
                kill(p.processIdentifier, SIGKILL)
                p.waitUntilExit()
                if p.terminationReason == .uncaughtSignal {
                    kills += 1
                    continue
                }
            }
            p.waitUntilExit()
            finished = p
            break
        }
        let p = try #require(finished, "never finished")
        #expect(p.terminationStatus == 0, "\(read(stderr))")
        #expect(kills >= 5, "only \(kills) kills: the test checks too little")
        return stderr
    }

    /// The snapshot files in a checkpoint folder, oldest first.
    static func snapshotFiles(in checkpoints: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: checkpoints.path).filter { $0.hasSuffix(".gtc") }.sorted()
    }

    /// The mixed case of the `--jobs` tests: requests, control records, dwell, bad records,
    /// two input files merged by time.
    static func mixedArguments() throws -> (dir: URL, arguments: [String]) {
        let (dir, s, requests, inputs) = try JobsTests.mixedCase()
        return (dir, ["replay", "--regions", s.regions, "--requests", requests, "--dwell", "15",
                      "--until", "1700000400"] + inputs)
    }

    @Test("killed with SIGKILL at random moments, then run again: the same bytes as one run",
          arguments: [["--jobs", "1"], ["--jobs", "2"], ["--expire", "20"], ["--jobs", "2", "--expire", "20"]])
    func killAnywhere(options: [String]) throws {
        let (dir, mixed) = try Self.mixedArguments()
        let arguments = mixed + options
        let jobs = options.starts(with: ["--jobs", "2"]) ? 2 : 1
        let reference = Files(dir, "reference")
        let began = Date()
        let r = try CLI.run(arguments + reference.arguments)
        let duration = Date().timeIntervalSince(began)
        #expect(r.status == 0, "\(r.stderr)")
        let expected = reference.outcome(stderr: r.stderr)
        #expect(expected.events.contains("\"deliver\"") && expected.events.contains("\"dwell\""))
        if options.contains("--expire") { #expect(expected.events.contains("\"reason\":\"expired\"")) }

        let interrupted = Files(dir, "interrupted")
        let checkpoints = dir.appendingPathComponent("checkpoints")
        let stderr = try Self.killUntilFinished(arguments + interrupted.arguments, checkpoints: checkpoints, every: 700,
                                                duration: duration, seed: 23 &+ UInt64(jobs) &+ UInt64(options.count), in: dir)
        let got = interrupted.outcome(stderr: Self.read(stderr))
        #expect(got.summary == expected.summary)
        #expect(got.rejects == expected.rejects)
        #expect(got.state == expected.state)
        #expect(got.events == expected.events, "events differ after the kills")

        // Run again once finished: nothing more is read; the files come out the same.
        let again = try CLI.run(arguments + interrupted.arguments + ["--checkpoint", checkpoints.path,
                                                                   "--checkpoint-every", "700"])
        #expect(again.status == 0)
        #expect(interrupted.outcome(stderr: again.stderr) == expected)
    }

    @Test("a torn or truncated newest snapshot is passed over for the one before it")
    func tornSnapshot() throws {
        let (dir, arguments) = try Self.mixedArguments()
        let reference = Files(dir, "reference")
        let r = try CLI.run(arguments + reference.arguments)
        let expected = reference.outcome(stderr: r.stderr)

        let files = Files(dir, "run")
        let checkpoints = dir.appendingPathComponent("checkpoints")
        let options = files.arguments + ["--checkpoint", checkpoints.path, "--checkpoint-every", "2000"]
        #expect(try CLI.run(arguments + options).status == 0)
        let snapshots = try Self.snapshotFiles(in: checkpoints)
        try #require(snapshots.count == 2, "\(snapshots)")

        // The newest (the final one) loses its second half, as a torn write would leave it; the
        // events file is cut back to a length the older snapshot recorded.
        let newest = checkpoints.appendingPathComponent(snapshots[1])
        let bytes = try Data(contentsOf: newest)
        try bytes.prefix(bytes.count / 2).write(to: newest)
        // A kill inside a snapshot's write leaves its temporary file: never read.
        try bytes.prefix(bytes.count / 3).write(to: checkpoints.appendingPathComponent("checkpoint.tmp"))
        let resumed = try CLI.run(arguments + options)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("taking the one before it"), "\(resumed.stderr)")
        #expect(files.outcome(stderr: resumed.stderr) == expected)

        // A flipped byte in the middle is found by the checksum.
        let now = try Self.snapshotFiles(in: checkpoints)
        let last = checkpoints.appendingPathComponent(now.last!)
        var flipped = try Data(contentsOf: last)
        flipped[flipped.count / 2] ^= 0x40
        try flipped.write(to: last)
        let again = try CLI.run(arguments + options)
        #expect(again.status == 0 && again.stderr.contains("checksum"), "\(again.stderr)")
        #expect(files.outcome(stderr: again.stderr) == expected)
    }

    /// The run resumed from the snapshot before the last: GPX files merged by time (decoded again
    /// up to their places) and CSV (its header read again, then seeked).
    @Test("resumed from a snapshot in the middle: GPX inputs merged by time, CSV", arguments: ["gpx", "csv"])
    func middleSnapshot(format: String) throws {
        let dir = try CLI.temporaryDirectory()
        var arguments: [String]
        switch format {
        case "gpx":
            let tracks = try FileManager.default.contentsOfDirectory(atPath: CLI.datasets.appendingPathComponent("gpxpy_tracks").path)
                .filter { $0.hasSuffix(".gpx") }.sorted().map { "datasets/gpxpy_tracks/\($0)" }
            arguments = ["replay", "--regions", "datasets/regions/slovenia-croatia.geojson", "--dwell", "120"] + tracks
        default:
            let s = try JobsTests.scenario(.city, seed: 6, regions: 1000, devices: 30, seconds: 60, in: dir)
            var csv = "t,device,lat,lon,accuracy\n"
            for line in try String(contentsOfFile: s.readings, encoding: .utf8).split(separator: "\n") {
                let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                csv += "\(o["t"]!),\(o["device"]!),\(o["lat"]!),\(o["lon"]!),\(o["accuracy"] ?? "")\n"
            }
            let path = dir.appendingPathComponent("readings.csv").path
            try csv.write(toFile: path, atomically: true, encoding: .utf8)
            arguments = ["replay", "--regions", s.regions, "--dwell", "20", path]
        }
        let reference = Files(dir, "reference")
        let r = try CLI.run(arguments + reference.arguments)
        #expect(r.status == 0, "\(r.stderr)")
        let expected = reference.outcome(stderr: r.stderr)

        let files = Files(dir, "run")
        let checkpoints = dir.appendingPathComponent("checkpoints")
        let options = files.arguments + ["--checkpoint", checkpoints.path, "--checkpoint-every", "150"]
        #expect(try CLI.run(arguments + options).status == 0)
        let snapshots = try Self.snapshotFiles(in: checkpoints)
        try #require(snapshots.count == 2, "\(snapshots)")
        try FileManager.default.removeItem(at: checkpoints.appendingPathComponent(snapshots[1]))
        let resumed = try CLI.run(arguments + options)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("resumed after record"), "\(resumed.stderr)")
        #expect(files.outcome(stderr: resumed.stderr) == expected)
    }

    @Test("a snapshot of another run is refused, saying what changed")
    func refusals() throws {
        let dir = try CLI.temporaryDirectory()
        let s = try JobsTests.scenario(.city, seed: 3, regions: 800, devices: 40, seconds: 60, in: dir)
        let checkpoints = dir.appendingPathComponent("checkpoints").path
        let base = ["replay", "--regions", s.regions, "--checkpoint", checkpoints, "--checkpoint-every", "500",
                    "-o", dir.appendingPathComponent("e.ndjson").path]
        #expect(try CLI.run(base + [s.readings]).status == 0)

        let dwell = try CLI.run(base + ["--dwell", "30", s.readings])
        #expect(dwell.status == 65 && dwell.stderr.contains("--dwell was off, now 30.0"), "\(dwell.stderr)")
        let jobs = try CLI.run(base + ["--jobs", "2", s.readings])
        #expect(jobs.status == 65 && jobs.stderr.contains("--jobs was 1, now 2"), "\(jobs.stderr)")

        let copy = dir.appendingPathComponent("other.ndjson").path
        try FileManager.default.copyItem(atPath: s.readings, toPath: copy)
        let renamed = try CLI.run(base + [copy])
        #expect(renamed.status == 65 && renamed.stderr.contains("the inputs differ"), "\(renamed.stderr)")

        // The part already read changed: refused. Lines added at the end: read on.
        var text = try String(contentsOfFile: s.readings, encoding: .utf8)
        let original = text
        text = text.replacingOccurrences(of: "\"device\":\"d1\"", with: "\"device\":\"d9\"")
        try text.write(toFile: s.readings, atomically: true, encoding: .utf8)
        let edited = try CLI.run(base + [s.readings])
        #expect(edited.status == 65 && edited.stderr.contains("no longer begins with"), "\(edited.stderr)")
        try (original + #"{"t":1700009999,"device":"late","lat":48.2,"lon":16.37}"# + "\n")
            .write(toFile: s.readings, atomically: true, encoding: .utf8)
        let grown = try CLI.run(base + [s.readings])
        // 40 devices × 60 s, and the one added; the same events as a run over the grown file.
        #expect(grown.status == 0 && grown.stderr.contains("2,401 records from 1 input"), "\(grown.stderr)")
        let fresh = dir.appendingPathComponent("fresh.ndjson")
        #expect(try CLI.run(["replay", "--regions", s.regions, "-o", fresh.path, s.readings]).status == 0)
        #expect(Self.read(fresh) == Self.read(dir.appendingPathComponent("e.ndjson")))

        let regions = try String(contentsOfFile: s.regions, encoding: .utf8)
        try (regions + "extra,48.2,16.3,100\n").write(toFile: s.regions, atomically: true, encoding: .utf8)
        let changed = try CLI.run(base + [s.readings])
        #expect(changed.status == 65 && changed.stderr.contains("the regions file has changed"), "\(changed.stderr)")
    }

    @Test("standard input: SIGTERM checkpoints and exits 0; the stream replayed from its start goes on",
          arguments: [1, 2])
    func standardInput(jobs: Int) throws {
        let dir = try CLI.temporaryDirectory()
        let s = try JobsTests.scenario(.city, seed: 4, regions: 1500, devices: 80, seconds: 120, in: dir)
        let all = try Data(contentsOf: URL(fileURLWithPath: s.readings))
        let reference = Files(dir, "reference")
        let common = ["replay", "--regions", s.regions, "--dwell", "20", "--until", "1700000300", "--jobs", "\(jobs)"]
        let r = try CLI.run(common + reference.arguments, stdin: all)
        let expected = reference.outcome(stderr: r.stderr)

        // A live stream: part of the input, then the writer waits; SIGTERM stops the run.
        let files = Files(dir, "stream")
        let checkpoints = dir.appendingPathComponent("checkpoints").path
        let options = files.arguments + ["--checkpoint", checkpoints, "--checkpoint-every", "1000"]
        let pipe = Pipe()
        let stderr = dir.appendingPathComponent("stderr")
        let p = try Self.start(common + options, stderr: stderr, stdin: pipe.fileHandleForReading)
        // Cut in the middle of a line: the part line must not be taken as a record.
        let cut = all.count / 2 + 17
        pipe.fileHandleForWriting.write(all.prefix(cut))
        Thread.sleep(forTimeInterval: 1.0)
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(Self.read(stderr))")
        #expect(Self.read(stderr).contains("stopped by a signal"), "\(Self.read(stderr))")
        #expect(Self.read(files.rejects).isEmpty, "the part line was taken as a record")

        // The stream is replayed from its start: what was read is skipped.
        let resumed = try CLI.run(common + options, stdin: all)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(files.outcome(stderr: resumed.stderr) == expected)
    }
}

/// A small deterministic generator for the tests' random delays.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
