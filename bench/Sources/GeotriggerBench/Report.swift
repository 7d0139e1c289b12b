import Foundation
import Geotrigger

/// RESULTS.md: every figure of a run, its baselines as ratios, and SPEC §6's targets beside them.
struct Report {
    let results: Results

    func markdown() -> String {
        let m = results.machine, s = results.settings
        var out = """
            # Geotrigger benchmark results

            Written by `bench/run` (`geotrigger-bench all`); see bench/README.md for what each figure means.

            | | |
            |---|---|
            | Machine | \(m.cpu), \(m.cores) cores\(m.pinned ? "; `geotrigger replay` and the Python peers pinned to one core (`taskset -c 0`)" : "") |
            | Date | \(m.date) |
            | Swift | \(m.swift) |
            | Seed | \(s.seed) |
            | Sizes | \(s.scale == 1 ? "SPEC §6's" : "SPEC §6's × \(s.scale)") (see each scenario); sweeps \(grouped(s.sweepFixes)) fixes per point |
            | Repeats | best of \(s.repeats) |


            """
        out += scenarioTable()
        out += targets()
        out += sweeps()
        return out
    }

    // MARK: Scenarios

    func scenarioTable() -> String {
        let sc = results.scenarios
        guard !sc.isEmpty else { return "No scenarios were run.\n\n" }
        var rows: [(String, (Results.Scenario) -> String)] = [
            ("Regions", { grouped($0.regions) }),
            ("Devices", { grouped($0.devices) }),
            ("Readings (fixes or sightings)", { grouped($0.fixes) }),
            ("**End-to-end fixes/s** (`geotrigger replay`, NDJSON in, events to a file, incl. start-up and index build)",
             { "**\(rate($0.replay("fast")?.fixesPerSecond))**" }),
            ("Plain GEOS-tree path end-to-end (`--safe-distance 0 --index geos`) — fast ÷ plain",
             { "\(rate($0.replay("plain")?.fixesPerSecond)) — \(ratio($0.replay("fast")?.fixesPerSecond, $0.replay("plain")?.fixesPerSecond))" }),
            ("`--jobs N` end-to-end on all N cores (not pinned) — ÷ one core; events identical to one core's",
             { s in
                 guard let jobs = s.jobs, let run = s.jobsReplay else { return "n/a (one core)" }
                 let same = s.jobsEventsIdentical == true ? "yes" : "**NO**"
                 return "\(rate(run.fixesPerSecond)) (N = \(jobs)) — \(ratio(run.fixesPerSecond, s.replay("fast")?.fixesPerSecond)); \(same)"
             }),
            ("Exact mode end-to-end, fast / plain path",
             { "\(rate($0.replay("exactFast")?.fixesPerSecond)) / \(rate($0.replay("exactPlain")?.fixesPerSecond))" }),
            ("Engine-only fixes/s (library, readings preloaded)", { rate($0.engineFixesPerSecond) }),
            ("Engine-only plain path — fast ÷ plain",
             { "\(rate($0.enginePlainFixesPerSecond)) — \(ratio($0.engineFixesPerSecond, $0.enginePlainFixesPerSecond))" }),
            ("Index build (this scenario's regions)", { seconds($0.indexBuildSeconds) }),
            ("Latency per reading p50 / p99 / p99.9 (engine-only)",
             { "\(micro($0.latencyNanoseconds.p50)) / \(micro($0.latencyNanoseconds.p99)) / \(micro($0.latencyNanoseconds.p999))" }),
            ("Peak resident memory (`geotrigger replay`, fast path)", { bytes($0.replay("fast")?.peakResidentBytes) }),
            ("Bytes per region (RSS difference: regions + index)", { perItem($0.bytesPerRegion, count: $0.regions) }),
            ("Bytes per active device (RSS difference over the replay)", { perItem($0.bytesPerActiveDevice, count: $0.devices) }),
            ("Allocations per reading (steady state, malloc interposer)",
             { $0.allocationsPerReading.map { String(format: "%.3f", $0) } ?? "not measured" }),
            ("Brute-force scan fixes/s — engine speed-up (exact mode, in-process)",
             { $0.brute.map { "\(rate($0.fixesPerSecond)) — \(String(format: "%.0f×", $0.speedup)) (\($0.note.split(separator: ";")[0]))" } ?? "n/a (beacon regions have no geometry)" }),
            ("**Python peer, issue 5's pipeline** (pandas CSV, pyproj projection, shapely 2 STRtree over projected "
                + "circle envelopes, `Geod.inv` on every candidate): its fixes/s; `geotrigger replay` exact mode on "
                + "the same CSV, its replay alone (and with its start-up); ratio; events agree",
             { peerCell($0.describedPeer, $0.describedPeerNote) }),
            ("Tuned Python peer (polars NDJSON, lon/lat STRtree, spherical chord bound, `Geod.inv` only near the "
                + "boundary): its fixes/s; `geotrigger replay` exact mode on the same NDJSON, its replay alone (and "
                + "with its start-up); ratio; events agree",
             { peerCell($0.tunedPeer, $0.tunedPeerNote) }),
            ("Exact mode: fast-path events byte-identical to the plain path's",
             { "\($0.exactEventsIdentical ? "yes" : "**NO**") (\(grouped($0.exactEvents)) events)" }),
            ("Brute-force scan's enter/exit events agree with the engine's (same fixes)",
             { $0.bruteEventsAgree.map { $0 ? "yes" : "**NO**" } ?? "n/a" }),
        ]
        if sc.allSatisfy({ $0.brute == nil }) { rows.removeAll { $0.0.hasPrefix("Brute-force scan's") } }
        var out = "## Scenarios\n\n| | " + sc.map(\.kind).joined(separator: " | ") + " |\n|---|"
            + String(repeating: "---|", count: sc.count) + "\n"
        for (name, value) in rows {
            out += "| \(name) | " + sc.map(value).joined(separator: " | ") + " |\n"
        }
        out += """

            The brute-force scan tests every circle at every fix (a cheap bound, then the geodesic distance) \
            and runs on a prefix of the fixes when the scenario is large (the cell says which); its speed-up \
            compares it with the engine in exact mode on the same fixes. Both Python peers run on the first \
            \(grouped(results.settings.peerLimit)) readings at most, pinned to one core; the first is the \
            pipeline issue 5 defines (SPEC §6's target is judged against it), the second a stronger, tuned one \
            (bench/peer/README.md). A peer's fixes/s is its replay as it reports it (readings in → events \
            out; interpreter start-up, loading the circles and building its tree excluded). Each ratio's \
            numerator is `geotrigger replay --hysteresis 0 --max-accuracy 0` run in the same run on the very \
            same file (the CSV copy of the prefix for issue 5's peer, the NDJSON prefix for the tuned one), \
            pinned to the same core. The ratio judged is like for like: geotrigger's replay alone, its \
            elapsed time less its region loading and index build (from its summary), the span the peer \
            reports; the second figure counts geotrigger's start-up (the process's wall time) but not the peer's. \
            "Events agree" is bench/peer/check_peer.py on the two event files. Latency includes one clock \
            read (about 20 ns).


            """
        return out
    }

    // MARK: Targets

    /// Memory figures as "834 B (city), 173 B (world)", or "not measured".
    private func bounded(_ figures: [(Double, String)]) -> String {
        figures.isEmpty ? "not measured" : figures.map { String(format: "%.0f B (%@)", $0.0, $0.1) }.joined(separator: ", ")
    }

    func targets() -> String {
        let city = results.scenarios.first { $0.kind == "city" }
        let oneMillion = results.regionSweep.first { $0.size == 1_000_000 }
        let largestRegions = results.regionSweep.last
        let largestDevices = results.deviceSweep.last
        var rows: [(String, String, Bool?)] = []
        let cityRate = city?.replay("fast")?.fixesPerSecond
        rows.append(("≥ 3 million fixes/s per core end-to-end on city", cityRate.map { rate($0) } ?? "city not run",
                     cityRate.map { $0 >= 3_000_000 }))
        // Issue 5 sets the ratio on city; the other scenarios' ratios are shown beside it.
        for s in results.scenarios where s.kind == "city" {
            rows.append(("≥ 40× the Python peer (issue 5's pipeline; city)",
                         s.describedPeer.map(peerRatio) ?? (s.describedPeerNote ?? "not run"),
                         s.describedPeer.map { ($0.likeForLikeSpeedup ?? $0.speedup) >= 40 }))
        }
        for s in results.scenarios where s.kind != "city" {
            rows.append(("For information, not a target (issue 5 sets the ratio on city): geotrigger ÷ issue 5's Python peer (\(s.kind))",
                         s.describedPeer.map(peerRatio) ?? (s.describedPeerNote ?? "not run"), nil))
        }
        for s in results.scenarios where s.tunedPeer != nil {
            rows.append(("For information, not a SPEC target: geotrigger ÷ the tuned Python peer (\(s.kind))",
                         s.tunedPeer.map(peerRatio) ?? "not run", nil))
        }
        rows.append(("Index build for 1 million regions < 2 s",
                     oneMillion?.indexBuildSeconds.map(seconds) ?? "1M not in this run's sweep",
                     oneMillion?.indexBuildSeconds.map { $0 < 2 }))
        // Each bound is judged on every figure of the circle workloads that measures it (issue 5
        // sets them on city; world and the largest sweep point are held to them too): the circle
        // scenarios' own and the largest sweep point. Met only when all of them are within it.
        let circleScenarios = results.scenarios.filter { $0.kind != "beacons" }
        var perRegion = circleScenarios.map { ($0.bytesPerRegion, $0.kind) }
        if let largestRegions { perRegion.append((largestRegions.bytesPerItem, "\(grouped(largestRegions.size)) circles")) }
        rows.append(("≤ 256 bytes per circular region", bounded(perRegion), perRegion.isEmpty ? nil : perRegion.allSatisfy { $0.0 <= 256 }))
        var perDevice = circleScenarios.map { ($0.bytesPerActiveDevice, $0.kind) }
        if let largestDevices { perDevice.append((largestDevices.bytesPerItem, "\(grouped(largestDevices.size)) devices")) }
        rows.append(("≤ 512 bytes per active device (GPS devices)", bounded(perDevice),
                     perDevice.isEmpty ? nil : perDevice.allSatisfy { $0.0 <= 512 }))
        // A beacons device keeps a smoothing filter per beacon it hears (SPEC §3: "smoothed over
        // time per (device, beacon)"); the scenario's devices hear up to 30 beacons within the
        // 30 s exit window, which 512 bytes cannot hold. Shown, not judged.
        for s in results.scenarios where s.kind == "beacons" {
            rows.append(("For information, not judged: bytes per beacons device (a filter per beacon heard)",
                         bounded([(s.bytesPerActiveDevice, s.kind)]), nil))
        }
        var out = "## SPEC §6 targets\n\n| Target | Measured | |\n|---|---|---|\n"
        for (target, measured, met) in rows {
            out += "| \(target) | \(measured) | \(met.map { $0 ? "met" : "**not met**" } ?? "—") |\n"
        }
        if results.settings.scale < 1 {
            out += "\nThis run used reduced sizes (--scale \(results.settings.scale)): the figures do not judge the targets.\n"
        }
        return out + "\n"
    }

    // MARK: Sweeps

    func sweeps() -> String {
        var out = "## Sweeps (engine-only, city workload, up to \(grouped(results.settings.sweepFixes)) fixes per point)\n\n"
        if results.regionSweep.isEmpty && results.deviceSweep.isEmpty { return out + "Not run (--no-sweeps).\n" }
        out += "Steady state: each point applies every device's first fix untimed (it enters all the circles the "
            + "device starts in at once), then times at least \(Bench.steadySeconds) s of each device's readings after it "
            + "(walkers leave their first neighbourhood, so refreshes count).\n\n"
        out += "![fixes/s vs regions](regions.svg)\n\n"
        out += "| Regions | Fixes | Fixes/s (fast) | Fixes/s (plain) | Fast ÷ plain | Index build | Bytes per region |\n|---|---|---|---|---|---|---|\n"
        for p in results.regionSweep {
            out += "| \(grouped(p.size)) | \(grouped(p.fixes)) | \(rate(p.fixesPerSecond)) | \(rate(p.plainFixesPerSecond)) | "
                + "\(ratio(p.fixesPerSecond, p.plainFixesPerSecond)) | \(p.indexBuildSeconds.map(seconds) ?? "") | "
                + perItem(p.bytesPerItem, count: p.size) + " |\n"
        }
        out += "\n![fixes/s vs devices](devices.svg)\n\n"
        out += "| Devices | Fixes/s (fast) | Fixes/s (plain) | Fast ÷ plain | Bytes per active device |\n|---|---|---|---|---|\n"
        for p in results.deviceSweep {
            out += "| \(grouped(p.size)) | \(rate(p.fixesPerSecond)) | \(rate(p.plainFixesPerSecond)) | "
                + "\(ratio(p.fixesPerSecond, p.plainFixesPerSecond)) | " + perItem(p.bytesPerItem, count: p.size) + " |\n"
        }
        return out
    }
}

/// Bytes per item from a resident-set difference, which moves a page at a time: below one page
/// spread over the items (41 B for 100 devices), the difference says nothing more than that.
func perItem(_ bytes: Double, count: Int) -> String {
    let page = Double(sysconf(Int32(_SC_PAGESIZE))) / Double(max(1, count))
    return bytes < page ? String(format: "under %.0f B (one page)", page) : String(format: "%.0f B", bytes)
}

/// "68,272; geotrigger 1,305,483 (1,109,968 with its start-up); **19.1×** like for like, 16.3× with
/// geotrigger's start-up (first 1,000,000 fixes, CSV); events agree: yes".
func peerCell(_ peer: Results.Peer?, _ note: String?) -> String {
    guard let p = peer else { return note ?? "not run" }
    let agree = p.eventsAgree.map { $0 ? "yes" : "**NO**" } ?? "not checked"
    let what = "(\(p.note.split(separator: ";")[0])); events agree: \(agree)"
    guard let like = p.likeForLikeSpeedup, let replay = p.geotriggerReplayFixesPerSecond else {
        return "\(rate(p.fixesPerSecond)); geotrigger \(rate(p.geotriggerFixesPerSecond)); "
            + "**\(String(format: "%.1f×", p.speedup))** " + what
    }
    return "\(rate(p.fixesPerSecond)); geotrigger \(rate(replay)) (\(rate(p.geotriggerFixesPerSecond)) with its start-up); "
        + "**\(String(format: "%.1f×", like))** like for like, \(String(format: "%.1f×", p.speedup)) with geotrigger's start-up, "
        + String(format: "%.1f× whole process on both sides (%.2f s ÷ %.2f s) ", p.wholeProcessSpeedup, p.wallSeconds, p.geotriggerSeconds) + what
}

/// Like for like first (both sides' replay alone, the peer's own span), then with geotrigger's
/// start-up (region loading, index build) counted and the peer's not.
func peerRatio(_ p: Results.Peer) -> String {
    let allIn = String(format: "%.1f× ", p.speedup) + "(\(rate(p.geotriggerFixesPerSecond)) ÷ \(rate(p.fixesPerSecond)) fixes/s)"
    guard let like = p.likeForLikeSpeedup, let replay = p.geotriggerReplayFixesPerSecond else { return allIn }
    return String(format: "**%.1f×** like for like ", like) + "(replay alone on both sides: \(rate(replay)) ÷ "
        + "\(rate(p.fixesPerSecond)) fixes/s); " + allIn + " counting geotrigger's start-up but not the peer's; "
        + String(format: "%.1f× whole process on both sides (%.2f s ÷ %.2f s wall)", p.wholeProcessSpeedup, p.wallSeconds, p.geotriggerSeconds)
}

func rate(_ v: Double?) -> String { v.map { $0.isFinite ? grouped(Int($0.rounded())) : "∞" } ?? "—" }
func ratio(_ a: Double?, _ b: Double?) -> String {
    guard let a, let b, b > 0 else { return "—" }
    return String(format: "%.2f×", a / b)
}
func seconds(_ s: Double) -> String { s < 1 ? String(format: "%.1f ms", s * 1000) : String(format: "%.2f s", s) }
func micro(_ ns: Double) -> String { ns < 1000 ? String(format: "%.0f ns", ns) : String(format: "%.1f µs", ns / 1000) }
func bytes(_ b: Int?) -> String { b.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "—" }
