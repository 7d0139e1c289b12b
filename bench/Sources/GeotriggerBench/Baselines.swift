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

    /// The Python peer (bench/peer, shapely STRtree `dwithin` plus an exact filter) on the first
    /// --peer-limit readings, on one core. Nil with a note when it is not installed or fails.
    func peerBaseline(_ files: ScenarioFiles, fastFixesPerSecond: Double) throws -> (Results.Baseline?, String?) {
        if options.noPeer { return (nil, "skipped (--no-peer)") }
        let script = "\(root)/bench/peer/peer.py"
        let python = "\(root)/bench/.venv/bin/python"
        guard FileManager.default.fileExists(atPath: script), FileManager.default.isExecutableFile(atPath: python) else {
            log("  peer not installed (needs bench/peer/peer.py and bench/.venv: bench/run sets it up)")
            return (nil, "peer not installed")
        }
        let count = min(options.peerLimit, files.readingCount)
        let readings = try files.readingsPrefix(count)
        let stdout = "\(files.directory)/peer.stdout", stderr = "\(files.directory)/peer.stderr"
        let run = spawn(pinToOneCore + [python, script, "--regions", files.regionsPath, "--readings", readings,
                                        "--out", "\(files.directory)/events-peer.ndjson"], stdout: stdout, stderr: stderr)
        guard run.status == 0 else {
            log("  peer failed (status \(run.status)); see \(stderr)")
            return (nil, "peer failed (exit status \(run.status))")
        }
        // The peer prints its own fixes/s (reading and writing included); wall time is the fallback.
        let printed = (try? readText(stdout)).flatMap(Self.fixesPerSecond)
        let perSecond = printed ?? Double(count) / run.seconds
        log("  peer: \(Int(perSecond)) fixes/s on \(count) fixes")
        let note = (count < files.readingCount ? "first \(count) fixes" : "all fixes")
            + (printed == nil ? "; wall time incl. start-up" : "; as the peer reports it")
        return (Results.Baseline(fixes: count, fixesPerSecond: perSecond, speedup: fastFixesPerSecond / perSecond,
                                 note: note + "; against `geotrigger replay` in exact mode (fast path), as the peer is exact"), nil)
    }

    /// The number just before "fixes/s" on the last line that mentions it ("1,234.5 fixes/s").
    static func fixesPerSecond(in text: String) -> Double? {
        guard let line = text.split(separator: "\n").last(where: { $0.contains("fixes/s") }) else { return nil }
        let before = line.components(separatedBy: "fixes/s")[0].filter { $0 != "," && $0 != "_" }
        return before.split { !($0.isNumber || $0 == ".") }.compactMap { Double($0) }.last
    }

    // MARK: Sweeps

    /// City readings for a sweep: `devices` devices, about --sweep-fixes fixes in all.
    func sweepReadings(devices: Int) throws -> Workload {
        let seconds = max(2, options.sweepFixes / devices)
        let s = Scenario(kind: .city, seed: options.seed, regions: 100, devices: devices, seconds: seconds)
        return try Workload(readingsPath: ScenarioFiles.prepare(s, dataDirectory: dataDirectory, placesPath: placesPath).readingsPath)
    }

    func cityRegions(_ count: Int) throws -> [Region] {
        let s = Scenario(kind: .city, seed: options.seed, regions: count, devices: 1, seconds: 1)
        let files = try ScenarioFiles.prepare(s, dataDirectory: dataDirectory, placesPath: placesPath, regionsOnly: true)
        return try RegionFile.load(path: files.regionsPath)
    }

    /// Engine-only fixes/s on both paths, best of --repeat.
    func sweepPoint(_ size: Int, _ workload: Workload, fixes: Int, regions: [Region], build: Double?,
                    bytes: Double) throws -> Results.SweepPoint {
        let fixes = min(fixes, workload.count)
        let fast = try best { try engineSeconds(workload, regions: regions, mode: .fast, range: 0..<fixes) }
        let plain = try best { try engineSeconds(workload, regions: regions, mode: .plain, range: 0..<fixes) }
        return Results.SweepPoint(size: size, fixes: fixes, fixesPerSecond: Double(fixes) / fast,
                                  plainFixesPerSecond: Double(fixes) / plain, indexBuildSeconds: build,
                                  bytesPerItem: bytes)
    }

    /// Fixes/s, index build time and bytes per region over 1k … 1M city circles.
    func regionSweep() throws -> [Results.SweepPoint] {
        let workload = try sweepReadings(devices: min(1_000, options.maxDevices))
        return try [1_000, 10_000, 100_000, 1_000_000].filter { $0 <= options.maxRegions }.map { n in
            log("region sweep: \(n) circles")
            let before = residentBytes()
            let regions = try cityRegions(n)
            var build = Double.infinity
            var bytes = 0.0
            for _ in 0..<options.repeat {
                let start = now()
                let index = try RegionIndex(regions: regions, hysteresis: .automatic, order: .spatial)
                build = min(build, now() - start)
                bytes = Double(residentBytes() - before) / Double(n)
                withExtendedLifetime(index) {}
            }
            // Dense sets are slow per fix (a city point lies in ~19 of 100k circles): fewer fixes there.
            let fixes = max(options.sweepFixes / 20, options.sweepFixes * 10_000 / max(n, 10_000))
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
            let ids = workload.intern(into: engine)
            let before = residentBytes()
            workload.replay(0..<workload.count, into: engine, ids: ids)
            let bytes = Double(residentBytes() - before) / Double(n)
            return try sweepPoint(n, workload, fixes: workload.count, regions: regions, build: nil, bytes: bytes)
        }
    }
}
