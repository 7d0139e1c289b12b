import BenchSupport
import Foundation
import Geotrigger
import GeotriggerScenarios

extension Bench {
    /// The simplest exact answer: every fix tested against every circle (cheap bound first, then
    /// the WGS84 geodesic distance), exact mode (no hysteresis, no accuracy limit). Run on the first
    /// --brute-limit fixes; its enter and exit events are checked against the engine's.
    func bruteForce(_ workload: Workload, regions: [Region]) throws -> (Results.Baseline, Bool) {
        let circles: [(Int32, GeodesicCircle)] = regions.enumerated().compactMap { i, region in
            guard case .circle(let center, let radius) = region.shape else { return nil }
            return (Int32(i), GeodesicCircle(center: center, radius: radius, exitRadius: radius))
        }
        let count = min(options.bruteLimit, workload.fixes.count)
        var inside = Array(repeating: Set<Int32>(), count: workload.deviceNames.count)
        var events = 0
        let seconds = timed {
            for f in workload.fixes[..<count] {
                let q = GeoPoint(f.point)
                let d = Int(f.device)
                for (r, circle) in circles {
                    if circle.isInside(q) {
                        if inside[d].insert(r).inserted { events += 1 }
                    } else if inside[d].remove(r) != nil {
                        events += 1
                    }
                }
            }
        }
        var engineEvents = 0
        _ = try engineSeconds(workload, regions: regions, mode: .exactFast, range: 0..<count, events: &engineEvents)
        let agrees = engineEvents == events
        if !agrees { log("  brute force: \(events) events, the engine \(engineEvents) on the same fixes") }
        let engine = try engineSeconds(workload, regions: regions, mode: .exactFast, range: 0..<count)
        let perSecond = Double(count) / seconds
        log("  brute force: \(Int(perSecond)) fixes/s on \(count) fixes")
        let note = count < workload.fixes.count ? "first \(count) fixes" : "all fixes"
        return (Results.Baseline(fixes: count, fixesPerSecond: perSecond, speedup: seconds / engine,
                                 note: "\(note); in-process, against the engine in exact mode on the same fixes"), agrees)
    }

    /// Both Python peers on the first --peer-limit readings, each pinned to one core, and
    /// `geotrigger replay` in exact mode on the very same file right before it:
    /// - described_peer.py, issue 5's pipeline (the SPEC §6 target's opponent), reads a CSV copy
    ///   of the prefix (written here, untimed), and geotrigger replays that CSV;
    /// - peer.py, the tuned peer, reads the NDJSON prefix, and geotrigger replays that NDJSON.
    /// Each peer's events are checked against geotrigger's with bench/peer/check_peer.py.
    func peerBaselines(_ files: ScenarioFiles) throws -> PeerRuns {
        if options.noPeer { return PeerRuns(note: "skipped (--no-peer)") }
        let python = "\(root)/bench/.venv/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            log("  peers not installed (needs bench/.venv: bench/run runs bench/peer/setup)")
            return PeerRuns(note: "peer not installed")
        }
        let count = min(options.peerLimit, files.readingCount)
        let ndjson = try files.readingsPrefix(count)
        var runs = PeerRuns()
        (runs.described, runs.describedNote) = try peer(
            files, name: "described", script: "described_peer.py", count: count,
            readings: { try csvReadings(from: ndjson, files: files, count: count) },
            pipeline: "issue 5's pipeline: pandas CSV reading, pyproj projection to EPSG:3857, a shapely 2 "
                + "STRtree over the circles' projected envelopes (bulk `query`, envelope test), "
                + "`pyproj.Geod.inv` on every candidate, vectorised transitions")
        (runs.tuned, runs.tunedNote) = try peer(
            files, name: "tuned", script: "peer.py", count: count, readings: { ndjson },
            pipeline: "tuned: polars NDJSON parsing, a shapely 2 STRtree over lon/lat envelopes, a "
                + "spherical chord bound that decides clear cases, `pyproj.Geod.inv` only near the "
                + "boundary, vectorised transitions")
        return runs
    }

    /// One peer: `geotrigger replay` in exact mode on `readings()` and the peer on the same file,
    /// taking turns --repeat times (the best of each), then check_peer.py.
    private func peer(_ files: ScenarioFiles, name: String, script: String, count: Int,
                      readings: () throws -> String, pipeline: String) throws -> (Results.Peer?, String?) {
        let scriptPath = "\(root)/bench/peer/\(script)"
        let python = "\(root)/bench/.venv/bin/python"
        guard FileManager.default.fileExists(atPath: scriptPath) else {
            log("  \(name) peer not installed (no bench/peer/\(script))")
            return (nil, "peer not installed")
        }
        let readings = try readings()
        let dir = files.directory
        let format = readings.hasSuffix(".csv") ? "csv" : "ndjson"

        // The numerator (geotrigger in exact mode, same file, same core) and the peer (pinned:
        // taskset, and one thread for polars and any BLAS) take turns, --repeat times each, so
        // that both meet the machine in the same spells; each figure is its best of its turns
        // (geotrigger's wall time and its replay span each the best of its own; the peer by
        // the replay time it prints). A peer run over 30 s is not repeated.
        let geotriggerEvents = "\(dir)/events-\(name)-geotrigger.ndjson"
        let geotriggerStderr = "\(dir)/replay-\(name)-peer-numerator.stderr"
        let events = "\(dir)/events-\(name)-peer.ndjson"
        let stdout = "\(dir)/\(name)-peer.stdout", stderr = "\(dir)/\(name)-peer.stderr"
        let threads = ["POLARS_MAX_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"]
        var failure: Int32?
        var numerator: ChildRun?
        var phases: ReplayPhases?
        var run: (ChildRun, PeerSummary?)?
        func peerSeconds(_ r: (ChildRun, PeerSummary?)) -> Double { r.1?.seconds ?? r.0.seconds }
        for _ in 0..<max(1, options.repeat) {
            // Not --quiet: the summary gives the region loading time, for the like-for-like ratio.
            let g = spawn(pinToOneCore + [binary, "replay", "--regions", files.regionsPath, readings,
                                          "-o", geotriggerEvents] + EngineMode.exactFast.replayFlags,
                          stderr: geotriggerStderr)
            guard g.status == 0 else {
                throw ValidationFailure("geotrigger replay (exact mode, \(format) prefix) exited with \(g.status); see \(geotriggerStderr)")
            }
            if numerator.map({ g.seconds < $0.seconds }) ?? true { numerator = g }
            if let p = (try? readText(geotriggerStderr)).flatMap(ReplayPhases.init),
               phases.map({ p.replaySeconds < $0.replaySeconds }) ?? true { phases = p }
            if let run, peerSeconds(run) > Self.longRun { continue }
            let p = spawn(pinToOneCore + [python, scriptPath, "--regions", files.regionsPath, "--readings", readings,
                                          "--out", events], stdout: stdout, stderr: stderr, environment: threads)
            if p.status != 0 {
                failure = p.status
                break
            }
            let turn = (p, (try? readText(stdout)).flatMap(PeerSummary.init))
            if run.map({ peerSeconds(turn) < peerSeconds($0) }) ?? true { run = turn }
        }
        guard let numerator else { return (nil, "peer not run") }
        let geotriggerRate = Double(count) / numerator.seconds
        let replayRate = phases.map { Double(count) / $0.replaySeconds }
        log("  replay exactFast on the \(name) peer's \(format) prefix: \(Int(geotriggerRate)) fixes/s on \(count) fixes"
            + (replayRate.map { ", \(Int($0)) fixes/s without loading the regions" } ?? ""))
        if let failure {
            log("  \(name) peer failed (status \(failure)); see \(stderr)")
            return (nil, "peer failed (exit status \(failure))")
        }
        guard let run else { return (nil, "peer not run") }
        let (wall, summary) = run
        // The peer's own replay figure (readings in → events out); wall time only if it printed none.
        let rate = summary?.fixesPerSecond ?? Double(count) / wall.seconds
        log("  \(name) peer: \(Int(rate)) fixes/s on \(count) fixes; geotrigger ÷ peer "
            + String(format: "%.1f×", geotriggerRate / rate)
            + (replayRate.map { String(format: ", %.1f× like for like (replay only, both)", $0 / rate) } ?? ""))

        // Same events? check_peer.py compares the two files (distances to the cm; ties at 1 cm allowed).
        let checkOut = "\(dir)/\(name)-check.txt"
        let check = spawn([python, "\(root)/bench/peer/check_peer.py", "--expected", geotriggerEvents, "--actual", events,
                           "--regions", files.regionsPath, "--readings", readings], stdout: checkOut, stderr: checkOut)
        let agrees: Bool? = check.status == 0 ? true : check.status == 1 ? false : nil
        let verdict = ((try? readText(checkOut)) ?? "").split(separator: "\n").last { $0.hasPrefix("PASS") || $0.hasPrefix("FAIL") }
        log("  \(name) peer events against geotrigger's: \(verdict.map(String.init) ?? "not checked (check_peer.py status \(check.status); see \(checkOut))")")

        let what = count < files.readingCount ? "first \(grouped(count)) fixes" : "all \(grouped(count)) fixes"
        let note = "\(what), \(format == "csv" ? "CSV" : "NDJSON"); "
            + (summary == nil ? "peer: wall time incl. start-up" : "peer: its replay, as it reports it")
            + "; numerator: `geotrigger replay` exact mode on the same \(format), wall time incl. start-up "
            + "(and, like for like, its elapsed time less region loading and index build)"
        return (Results.Peer(
            name: name, pipeline: pipeline, readings: readings, fixes: summary?.fixes ?? count, fixesPerSecond: rate,
            seconds: summary?.seconds ?? wall.seconds, loadSeconds: summary?.loadSeconds, wallSeconds: wall.seconds,
            peakResidentBytes: wall.peakResidentBytes, events: summary?.events,
            geotriggerFixesPerSecond: geotriggerRate, geotriggerSeconds: numerator.seconds,
            geotriggerEvents: try FileChunks.lineCount(geotriggerEvents), speedup: geotriggerRate / rate,
            geotriggerLoadSeconds: phases?.loadSeconds, geotriggerReplayFixesPerSecond: replayRate,
            likeForLikeSpeedup: replayRate.map { $0 / rate },
            eventsAgree: agrees, note: note), nil)
    }

    /// The NDJSON prefix as CSV (`t,device,lat,lon,accuracy` and a header), written once and
    /// cached beside it: the described peer reads CSV (pandas), and geotrigger's numerator replays
    /// the same file. Untimed data preparation.
    func csvReadings(from ndjson: String, files: ScenarioFiles, count: Int) throws -> String {
        let path = count < files.readingCount ? "\(files.directory)/readings-first\(count).csv" : "\(files.directory)/readings.csv"
        if FileManager.default.fileExists(atPath: path) { return path }
        let skipped = try ReadingsCSV.convert(ndjson, to: path + ".tmp")
        if skipped > 0 { log("  CSV readings: \(skipped) records without lat and lon left out") }
        try FileManager.default.moveItem(atPath: path + ".tmp", toPath: path)
        return path
    }

    // MARK: Sweeps

    /// Seconds of readings each device is timed for at a sweep point, at least: long enough for
    /// walkers (1.4 m/s) to leave a 70 m neighbourhood, so refreshes count as in a long run.
    /// Shorter windows right after the warm-up time mostly cheap skips (at 100,000 devices and two
    /// fixes each, the point read faster than at 10,000).
    static let steadySeconds = 60

    /// City readings for a sweep: `devices` devices, about --sweep-fixes fixes in all (and at least
    /// `steadySeconds` of each device's), one second more for the warm-up.
    func sweepReadings(devices: Int) throws -> Workload {
        // One second more than the timed fixes need: the first (each device's first fix) is the
        // sweep point's untimed warm-up.
        let seconds = max(Self.steadySeconds, options.sweepFixes / devices) + 1
        let s = Scenario(kind: .city, seed: options.seed, regions: 100, devices: devices, seconds: seconds)
        return try Workload(readingsPath: ScenarioFiles.prepare(s, dataDirectory: dataDirectory, placesPath: placesPath).readingsPath)
    }

    func cityRegions(_ count: Int) throws -> [Region] {
        let s = Scenario(kind: .city, seed: options.seed, regions: count, devices: 1, seconds: 1)
        let files = try ScenarioFiles.prepare(s, dataDirectory: dataDirectory, placesPath: placesPath, regionsOnly: true)
        return try RegionFile.load(path: files.regionsPath)
    }

    /// Engine-only fixes/s on both paths, best of --repeat, in steady state: the scenario's first
    /// tick (every device's first fix, which enters all the circles it starts in at once: about
    /// 19 on city, so at 100,000 devices and 2 fixes each it made half the work) is applied
    /// untimed, then up to `fixes` readings after it are timed.
    func sweepPoint(_ size: Int, _ workload: Workload, fixes: Int, regions: [Region], build: Double?,
                    bytes: Double) throws -> Results.SweepPoint {
        var warm = min(workload.deviceNames.count, workload.count)
        if warm == workload.count { warm = 0 }  // too short to leave anything after it: time it all
        let timedRange = warm..<min(warm + fixes, workload.count)
        let fixes = timedRange.count
        let fast = try best { try engineSeconds(workload, regions: regions, mode: .fast, warmUp: 0..<warm, range: timedRange) }
        let plain = try best { try engineSeconds(workload, regions: regions, mode: .plain, warmUp: 0..<warm, range: timedRange) }
        return Results.SweepPoint(size: size, fixes: fixes, fixesPerSecond: Double(fixes) / fast,
                                  plainFixesPerSecond: Double(fixes) / plain, indexBuildSeconds: build,
                                  bytesPerItem: bytes)
    }

    /// Fixes/s, index build time and bytes per region over 1k … 1M city circles.
    func regionSweep() throws -> [Results.SweepPoint] {
        let workload = try sweepReadings(devices: min(1_000, options.maxDevices))
        return try [1_000, 10_000, 100_000, 1_000_000].filter { $0 <= options.maxRegions }.map { n in
            log("region sweep: \(n) circles")
            var build = Double.infinity
            var bytes = 0.0
            for _ in 0..<options.repeat {
                // As `geotrigger replay` does: the loaded array is handed over whole. Keeping a
                // copy here would count it twice, and time its copy-on-write as part of the build
                // (the spatial order permutes the array in place).
                let before = residentBytes()
                let loaded = try cityRegions(n)
                let start = now()
                let index = try RegionIndex(regions: consume loaded, hysteresis: .automatic, order: .spatial)
                build = min(build, now() - start)
                bytes = Double(residentBytes() - before) / Double(n)
                withExtendedLifetime(index) {}
            }
            let regions = try cityRegions(n)
            // Dense sets are slow per fix (a city point lies in ~19 of 100k circles): fewer fixes
            // there, but still `steadySeconds` of each device's.
            let fixes = max(options.sweepFixes * 10_000 / max(n, 10_000), Self.steadySeconds * workload.deviceNames.count)
            return try sweepPoint(n, workload, fixes: fixes, regions: regions, build: build, bytes: bytes)
        }
    }

    /// Fixes/s and bytes per active device over 100 … 100k devices, on the city scenario's circles.
    func deviceSweep() throws -> [Results.SweepPoint] {
        let regions = try cityRegions(scenario(.city).regions)
        return try [100, 1_000, 10_000, 100_000].filter { $0 <= options.maxDevices }.map { n in
            log("device sweep: \(n) devices")
            let workload = try sweepReadings(devices: n)
            let engine = try EngineMode.fast.engine(regions: regions)
            let before = residentBytes()
            let ids = workload.intern(into: engine)
            workload.replay(0..<workload.count, into: engine, ids: ids)
            let bytes = Double(residentBytes() - before) / Double(n)
            return try sweepPoint(n, workload, fixes: workload.count, regions: regions, build: nil, bytes: bytes)
        }
    }
}
