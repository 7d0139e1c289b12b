import BenchSupport
import Foundation
import Geotrigger
import GeotriggerScenarios
import Histogram

/// Runs the measurements of SPEC §6 and writes bench/results.
final class Bench {
    let options: BenchOptions
    let root: String
    let binary: String
    let outDirectory: String
    let dataDirectory: String
    let placesPath: String
    let executableDirectory: String

    init(options: BenchOptions) {
        self.options = options
        // bench/Sources/GeotriggerBench/Bench.swift → the repository root.
        let source = URL(fileURLWithPath: #filePath)
        root = options.root ?? source.deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
        binary = options.geotrigger ?? "\(root)/.build/release/geotrigger"
        outDirectory = options.out ?? "\(root)/bench/results"
        dataDirectory = options.data ?? "\(root)/bench/.data"
        placesPath = "\(root)/datasets/poi_geonames/cities15000.csv"
        executableDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().path
    }

    func log(_ s: String) {
        FileHandle.standardError.write(Data("geotrigger-bench: \(s)\n".utf8))
    }

    // MARK: The run

    func runAll() throws {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ValidationFailure("no geotrigger binary at \(binary): run `swift build -c release` in \(root) (bench/run does)")
        }
        var results = Results(machine: machine(), settings: Results.Settings(
            seed: options.seed, scale: options.scale, repeats: options.repeat, sweepFixes: options.sweepFixes,
            bruteLimit: options.bruteLimit, peerLimit: options.peerLimit))
        for kind in options.scenarios {
            results.scenarios.append(try measure(scenario(kind)))
        }
        if !options.noSweeps {
            results.regionSweep = try regionSweep()
            results.deviceSweep = try deviceSweep()
        }
        try FileManager.default.createDirectory(atPath: outDirectory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: URL(fileURLWithPath: "\(outDirectory)/results.json"))
        try Self.render(results, to: outDirectory)
        log("wrote \(outDirectory)/RESULTS.md, results.json, regions.svg, devices.svg")
    }

    /// Writes RESULTS.md and the two charts for `results` into `directory` (results.json is the
    /// measurement; these are its rendering, which `geotrigger-bench report` redoes).
    static func render(_ results: Results, to directory: String) throws {
        try Report(results: results).markdown().write(toFile: "\(directory)/RESULTS.md", atomically: true, encoding: .utf8)
        try Chart.regions(results.regionSweep).write(toFile: "\(directory)/regions.svg", atomically: true, encoding: .utf8)
        try Chart.devices(results.deviceSweep).write(toFile: "\(directory)/devices.svg", atomically: true, encoding: .utf8)
    }

    /// SPEC §6's sizes times --scale, within the caps; one fix per device per second.
    func scenario(_ kind: Scenario.Kind) -> Scenario {
        var s = Scenario.standard(kind, seed: options.seed)
        let fixes = options.fixes ?? max(100, Int(Double(s.devices * s.seconds) * options.scale))
        s.regions = min(options.maxRegions, max(100, Int(Double(s.regions) * options.scale)))
        s.devices = min(options.maxDevices, max(10, Int(Double(s.devices) * options.scale)), fixes)
        s.seconds = max(1, fixes / s.devices)
        return s
    }

    func machine() -> Results.Machine {
        let lscpu = commandOutput(["lscpu"])
        let model = lscpu.split(separator: "\n").first { $0.hasPrefix("Model name:") }
            .map { $0.dropFirst("Model name:".count).trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let swift = commandOutput(["swift", "--version"]).split(separator: "\n").first.map(String.init) ?? "unknown"
        let date = ISO8601DateFormatter().string(from: Date())
        return Results.Machine(cpu: model, cores: ProcessInfo.processInfo.activeProcessorCount,
                               pinned: !pinToOneCore.isEmpty, swift: swift, date: date)
    }

    // MARK: One scenario

    func measure(_ s: Scenario) throws -> Results.Scenario {
        log("\(s.kind.rawValue): \(s.regions) regions, \(s.devices) devices, \(s.devices * s.seconds) readings")
        let files = try ScenarioFiles.prepare(s, dataDirectory: dataDirectory, placesPath: placesPath)

        var replays: [Results.Replay] = []
        for mode in EngineMode.allCases {
            replays.append(try replay(files, mode: mode))
        }
        let identical = try FileChunks.identical(eventsPath(files, .exactFast), eventsPath(files, .exactPlain))
        if !identical { log("\(s.kind.rawValue): fast-path events differ from the plain path's in exact mode") }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        var jobsReplay: Results.Replay?
        var jobsIdentical: Bool?
        if cores > 1 {
            jobsReplay = try replay(files, jobs: cores)
            jobsIdentical = try FileChunks.identical(eventsPath(files, .fast), jobsEventsPath(files))
            if jobsIdentical == false { log("\(s.kind.rawValue): --jobs \(cores) events differ from the one-core run's") }
        }

        // Memory: resident set before and after the regions and the index, then before and after
        // every device's readings (the engine's per-device state).
        let before = residentBytes()
        let loaded = try RegionFile.load(path: files.regionsPath)
        let regionCount = loaded.count
        let buildStart = now()
        // Handed over whole, as `geotrigger replay` does (a copy kept here would be counted twice).
        let index = try RegionIndex(regions: consume loaded, hysteresis: EngineMode.fast.hysteresis, order: .spatial)
        let buildSeconds = now() - buildStart
        let bytesPerRegion = Double(residentBytes() - before) / Double(regionCount)
        // The baselines below each build their own engine from the regions in file order.
        let regions = try RegionFile.load(path: files.regionsPath)

        let workload = try Workload(readingsPath: files.readingsPath)
        let engine = try Engine(index: index, options: EngineMode.fast.options)
        // A device's bytes include its name and state slot, taken when it is first seen.
        let beforeDevices = residentBytes()
        let ids = workload.intern(into: engine)
        let firstSeconds = timed { workload.replay(0..<workload.count, into: engine, ids: ids) }
        let bytesPerDevice = Double(residentBytes() - beforeDevices) / Double(max(1, workload.deviceNames.count))
        let seconds = options.repeat == 1 || firstSeconds > Self.longRun ? firstSeconds
            : min(firstSeconds, try best(runs: options.repeat - 1) { try engineSeconds(workload, regions: regions, mode: .fast) })
        let plainSeconds = try best { try engineSeconds(workload, regions: regions, mode: .plain) }
        let latency = try latencies(workload, regions: regions)
        let allocations = allocationsPerReading(files)

        var brute: Results.Baseline?
        var bruteAgrees: Bool?
        if s.kind != .beacons {
            let (baseline, agrees) = try bruteForce(workload, regions: regions)
            brute = baseline
            bruteAgrees = agrees
        }
        // The peers decide exact geodesic crossings: each is compared with exact mode on the same
        // prefix of the readings, in the same format, in this run.
        let peers = s.kind == .beacons
            ? PeerRuns(note: "n/a (the peers replay circle regions and fixes only)")
            : try peerBaselines(files)
        return Results.Scenario(
            kind: s.kind.rawValue, regions: regions.count, devices: workload.deviceNames.count, fixes: workload.count,
            indexBuildSeconds: buildSeconds, replays: replays,
            engineFixesPerSecond: Double(workload.count) / seconds,
            enginePlainFixesPerSecond: Double(workload.count) / plainSeconds,
            latencyNanoseconds: latency, bytesPerRegion: bytesPerRegion, bytesPerActiveDevice: bytesPerDevice,
            allocationsPerReading: allocations, brute: brute,
            describedPeer: peers.described, describedPeerNote: peers.describedNote,
            tunedPeer: peers.tuned, tunedPeerNote: peers.tunedNote,
            exactEventsIdentical: identical, exactEvents: replays.first { $0.mode == EngineMode.exactFast.rawValue }?.events ?? 0,
            bruteEventsAgree: bruteAgrees, jobs: jobsReplay == nil ? nil : cores, jobsReplay: jobsReplay,
            jobsEventsIdentical: jobsIdentical)
    }

    func eventsPath(_ files: ScenarioFiles, _ mode: EngineMode) -> String { "\(files.directory)/events-\(mode.rawValue).ndjson" }
    func jobsEventsPath(_ files: ScenarioFiles) -> String { "\(files.directory)/events-jobs.ndjson" }

    /// `geotrigger replay --jobs N` with the default settings on every core (not pinned).
    func replay(_ files: ScenarioFiles, jobs: Int) throws -> Results.Replay {
        try timedReplay(files, name: "jobs", arguments: ["--jobs", String(jobs)], out: jobsEventsPath(files))
    }

    /// `geotrigger replay` on one core, NDJSON in and events to a file; the best of --repeat runs.
    func replay(_ files: ScenarioFiles, mode: EngineMode) throws -> Results.Replay {
        try timedReplay(files, name: mode.rawValue, arguments: mode.replayFlags, out: eventsPath(files, mode),
                        prefix: pinToOneCore)
    }

    /// `geotrigger replay` with `arguments`, events to `out`, started through `prefix` (taskset);
    /// the best of --repeat runs. `name` labels the log line, the stderr file and the result.
    func timedReplay(_ files: ScenarioFiles, name: String, arguments: [String], out: String,
                     prefix: [String] = []) throws -> Results.Replay {
        let stderr = "\(files.directory)/replay-\(name).stderr"
        let run = try best(\.seconds) {
            // Not --quiet: the summary (a few lines at the end) gives the replay's own peak memory.
            var run = spawn(prefix + [binary, "replay", "--regions", files.regionsPath, files.readingsPath,
                                      "-o", out] + arguments,
                            stderr: stderr)
            guard run.status == 0 else {
                throw ValidationFailure("geotrigger replay (\(name)) exited with \(run.status); see \(stderr)")
            }
            // wait4's figure is at least this process's own high-water mark (`reportedPeakMemory`).
            if let peak = reportedPeakMemory((try? readText(stderr)) ?? "") { run.peakResidentBytes = peak }
            return run
        }
        let events = try FileChunks.lineCount(out)
        log("  replay \(name): \(Int(Double(files.readingCount) / run.seconds)) fixes/s, \(events) events")
        return Results.Replay(mode: name, fixes: files.readingCount, seconds: run.seconds,
                              fixesPerSecond: Double(files.readingCount) / run.seconds,
                              peakResidentBytes: run.peakResidentBytes, events: events)
    }

    /// A run longer than this (seconds) is not repeated: noise matters little against it, and the
    /// full-size run has to stay practical.
    static let longRun = 30.0

    /// The best (fastest) of up to `runs` runs (--repeat by default), stopping after a long run.
    func best<T>(_ seconds: (T) -> Double, runs: Int? = nil, _ body: () throws -> T) rethrows -> T {
        var result = try body()
        for _ in 1..<max(1, runs ?? options.repeat) where seconds(result) <= Self.longRun {
            let run = try body()
            if seconds(run) < seconds(result) { result = run }
        }
        return result
    }

    func best(runs: Int? = nil, _ body: () throws -> Double) rethrows -> Double {
        try best({ $0 }, runs: runs, body)
    }

    /// Engine-only: a fresh engine over the preloaded readings; index build excluded.
    func engineSeconds(_ workload: Workload, regions: [Region], mode: EngineMode, warmUp: Range<Int>? = nil,
                       range: Range<Int>? = nil, events: UnsafeMutablePointer<Int>? = nil) throws -> Double {
        let engine = try mode.engine(regions: regions)
        if let events { engine.onEvent = { _ in events.pointee += 1 } }
        let ids = workload.intern(into: engine)
        // Applied first, untimed: the readings the timed ones follow.
        if let warmUp { workload.replay(warmUp, into: engine, ids: ids) }
        return timed { workload.replay(range ?? 0..<workload.count, into: engine, ids: ids) }
    }

    /// Per-reading latency through the library (each reading timed on its own; includes one
    /// clock read, about 20 ns).
    func latencies(_ workload: Workload, regions: [Region]) throws -> Results.Latency {
        let engine = try EngineMode.fast.engine(regions: regions)
        let ids = workload.intern(into: engine)
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        var last = nowNanoseconds()
        workload.replay(0..<workload.count, into: engine, ids: ids) {
            let t = nowNanoseconds()
            _ = histogram.record(t - last)
            last = nowNanoseconds()
        }
        return Results.Latency(p50: Double(histogram.valueAtPercentile(50)), p99: Double(histogram.valueAtPercentile(99)),
                               p999: Double(histogram.valueAtPercentile(99.9)), max: Double(histogram.max))
    }

    /// Runs geotrigger-allocs (built beside this binary) with the malloc interposer preloaded.
    func allocationsPerReading(_ files: ScenarioFiles) -> Double? {
        let tool = "\(executableDirectory)/geotrigger-allocs"
        let library = "\(executableDirectory)/libMallocInterposerSwift.so"
        guard FileManager.default.isExecutableFile(atPath: tool), FileManager.default.fileExists(atPath: library) else {
            log("  allocations: geotrigger-allocs or libMallocInterposerSwift.so missing beside \(executableDirectory)")
            return nil
        }
        let out = "\(files.directory)/allocs.json"
        let limit = min(files.readingCount, 1_000_000)
        let run = spawn([tool, files.regionsPath, files.readingsPath, EngineMode.fast.rawValue, String(limit)],
                        stdout: out, environment: ["LD_PRELOAD": library])
        guard run.status == 0, let data = FileManager.default.contents(atPath: out),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let perReading = object["perReading"] as? Double
        else {
            log("  allocations: geotrigger-allocs failed (status \(run.status))")
            return nil
        }
        log("  allocations: \(perReading) per reading")
        return perReading
    }
}

struct ValidationFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Wall time of `body`, in seconds.
func timed(_ body: () -> Void) -> Double {
    let start = now()
    body()
    return now() - start
}

func readText(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }
