import ArgumentParser
import BenchSupport
import Foundation

/// Issue 27 / SPEC §6: the process as a user times it. (1) Start-up: a GeoJSON file of circles
/// (Point + `radius`, as most geofence exports are) loaded and indexed with no readings, at
/// 50,000 and 500,000 regions. (2) Cores: the city-like run (50,000 circles, 2,000 devices,
/// 1,000,000 fixes, exact mode) with `--jobs` 1, 2, 4 and 8, each run's events compared with
/// `--jobs 1`'s. Every figure is the median of `--repeat` whole-process runs (the range beside
/// it), since this VM's timings swing by tens of percent.
struct StartupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "startup",
        abstract: "Issue 27: start-up (GeoJSON circles loaded and indexed) and --jobs scaling, whole process.",
        discussion: """
            Builds nothing: run `swift build -c release` in the root first. Makes its data with \
            `geotrigger scenario city` (seeds 3 and 2), writes startup.md and startup.json to --out.
            """)

    @Option(help: "Runs of each measurement (the median is reported).")
    var `repeat` = 7
    @Option(help: "Repository root (default: the current directory).")
    var root: String?
    @Option(help: "Results folder (default: ROOT/bench/results).")
    var out: String?
    @Option(parsing: .upToNextOption, help: "Job counts to time, starting with 1 (the reference).")
    var jobs: [Int] = [1, 2, 4, 8]

    func validate() throws {
        guard jobs.first == 1, jobs.allSatisfy({ $0 >= 1 }) else { throw ValidationError("--jobs must start with 1") }
    }

    struct Timing: Codable {
        var median: Double
        var min: Double
        var max: Double
        var peakMiB: Double
        /// Medians of the process's CPU time (user + system, rusage) and, with `--jobs` above 1,
        /// of the reading thread's (its summary: loading, reading, routing, merging).
        var cpu: Double? = nil
        var readerCPU: Double? = nil
    }

    struct Results: Codable {
        var regions: [String: Timing]
        var regionFileBytes: [String: Int]
        /// Issue 39: the same circles as other tools write them, keyed "COUNT/LAYOUT".
        var layouts: [String: Timing] = [:]
        var layoutFileBytes: [String: Int] = [:]
        var jobs: [String: Timing]
        var eventsIdentical: Bool
        /// `--jobs 1`'s median region loading and index build, from its summary: done before
        /// any reading, on one thread (parsing the file takes two).
        var oneJobLoadSeconds: Double
        var cores: Int
        var machine: String
        var date: String
    }

    func run() throws {
        let setup = try WholeProcessRun(root: root, out: out, name: "startup")
        let (binary, out, work) = (setup.binary, setup.out, setup.work)
        defer { try? FileManager.default.removeItem(atPath: work) }

        /// One whole-process run: its wall time, and from its summary its peak memory
        /// (`reportedPeakMemory`) and its loading time (`ReplayPhases`; NaN for a run without
        /// readings, whose elapsed time is all loading).
        func once(_ arguments: [String], stdout: String)
            throws -> (seconds: Double, peak: Double, load: Double, cpu: Double, readerCPU: Double)
        {
            let run = spawn(arguments, stdout: stdout, stderr: "\(work)/stderr.txt")
            let summary = (try? readText("\(work)/stderr.txt")) ?? ""
            guard run.status == 0 else { throw ValidationError("geotrigger exited \(run.status): \(summary)") }
            return (run.seconds, Double(reportedPeakMemory(summary) ?? 0) / 1_048_576, ReplayPhases(summary)?.loadSeconds ?? .nan,
                    run.cpuSeconds, readerCPUSeconds(summary) ?? .nan)
        }
        /// Runs each command `repeat` times, taking turns (one run of each per round, so the
        /// machine's drift touches them alike); per command its timing and median loading time.
        func time(_ commands: [(arguments: [String], stdout: String)]) throws -> [(Timing, Double)] {
            var runs = [[(seconds: Double, peak: Double, load: Double, cpu: Double, readerCPU: Double)]](repeating: [],
                                                                                                        count: commands.count)
            for _ in 0..<max(1, `repeat`) {
                for (k, c) in commands.enumerated() { runs[k].append(try once(c.arguments, stdout: c.stdout)) }
            }
            return runs.map { r in
                let seconds = r.map(\.seconds).sorted(), loads = r.map(\.load).sorted()
                let cpus = r.map(\.cpu).sorted(), readers = r.map(\.readerCPU).sorted()
                return (Timing(median: seconds[seconds.count / 2], min: seconds.first!, max: seconds.last!,
                               peakMiB: r.map(\.peak).max() ?? 0, cpu: cpus[cpus.count / 2],
                               readerCPU: readers[readers.count / 2].isNaN ? nil : readers[readers.count / 2]),
                        loads[loads.count / 2])
            }
        }

        // Start-up: the scenario's circles as a GeoJSON FeatureCollection, no readings.
        try Data().write(to: URL(fileURLWithPath: "\(work)/empty.ndjson"))
        var regionTimes: [String: Timing] = [:]
        var regionBytes: [String: Int] = [:]
        var startups: [(arguments: [String], stdout: String)] = []
        let counts = [50_000, 500_000]
        for (count, seed) in zip(counts, [3, 2]) {
            let dir = "\(work)/r\(count)"
            try setup.city(seed: seed, regions: count, devices: 10, seconds: 1, into: dir)
            let geojson = "\(dir)/regions.geojson"
            regionBytes[String(count)] = try circlesToGeoJSON(csv: "\(dir)/regions.csv", to: geojson)
            startups.append(([binary, "replay", "--regions", geojson, "\(work)/empty.ndjson"], "/dev/null"))
        }
        for (count, (timing, _)) in zip(counts, try time(startups)) { regionTimes[String(count)] = timing }

        // Every writer's layout (issue 39): the same circles as Python, GDAL and geopandas write
        // them (bench/layouts.py; GDAL and geopandas where installed), timed taking turns.
        var layoutKeys: [String] = []
        var layoutBytes: [String: Int] = [:]
        var layoutRuns: [(arguments: [String], stdout: String)] = []
        for count in counts {
            let dir = "\(work)/r\(count)"
            let written = commandOutput(["python3", "\(setup.root)/bench/layouts.py", "\(dir)/regions.csv", dir])
            for layout in written.split(separator: "\n").map(String.init) {
                let file = "\(dir)/\(layout).geojson"
                layoutKeys.append("\(count)/\(layout)")
                layoutBytes["\(count)/\(layout)"] = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
                layoutRuns.append(([binary, "replay", "--regions", file, "\(work)/empty.ndjson"], "/dev/null"))
            }
        }
        var layoutTimes: [String: Timing] = [:]
        for (key, (timing, _)) in zip(layoutKeys, try time(layoutRuns)) { layoutTimes[key] = timing }

        // Cores: the city-like run with 1, 2, 4, 8 jobs; events compared with one job's.
        let city = "\(work)/city"
        try setup.city(seed: 3, regions: 50_000, devices: 2_000, seconds: 500, into: city)
        _ = try circlesToGeoJSON(csv: "\(city)/regions.csv", to: "\(city)/regions.geojson")
        var jobTimes: [String: Timing] = [:]
        let timings = try time(jobs.map { n in
            ([binary, "replay", "--regions", "\(city)/regions.geojson", "--hysteresis", "0", "--max-accuracy", "0",
              "--jobs", String(n), "\(city)/readings.ndjson"], "\(work)/events-\(n).ndjson")
        })
        var serialLoad = Double.nan
        var identical = true
        let reference = try Data(contentsOf: URL(fileURLWithPath: "\(work)/events-\(jobs[0]).ndjson"))
        for (n, (timing, load)) in zip(jobs, timings) {
            jobTimes[String(n)] = timing
            if n == 1 { serialLoad = load }
            identical = try identical && reference == Data(contentsOf: URL(fileURLWithPath: "\(work)/events-\(n).ndjson"))
        }

        let cores = Int(commandOutput(["nproc"])) ?? 0
        let results = Results(regions: regionTimes, regionFileBytes: regionBytes, layouts: layoutTimes,
                              layoutFileBytes: layoutBytes, jobs: jobTimes, eventsIdentical: identical,
                              oneJobLoadSeconds: serialLoad,
                              cores: cores, machine: "\(cores) cores, " + commandOutput(["uname", "-m"]),
                              date: ISO8601DateFormatter().string(from: Date()))
        try write(results, to: out)
    }

    /// The scenario's `id,lat,lon,radius` CSV as a GeoJSON FeatureCollection of Points with a
    /// `radius` property, one feature per line; returns the file's size.
    private func circlesToGeoJSON(csv: String, to path: String) throws -> Int {
        let lines = try readText(csv).split(separator: "\n").dropFirst()
        var text = #"{"type":"FeatureCollection","features":["# + "\n"
        text.reserveCapacity(lines.count * 130)
        for (k, line) in lines.enumerated() {
            let f = line.split(separator: ",")
            guard f.count == 4 else { throw ValidationError("\(csv): unexpected line \(line)") }
            text += #"{"type":"Feature","id":"\#(f[0])","geometry":{"type":"Point","coordinates":[\#(f[2]),\#(f[1])]},"properties":{"radius":\#(f[3])}}"#
            text += k + 1 < lines.count ? ",\n" : "\n"
        }
        text += "]}\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return text.utf8.count
    }

    private func write(_ results: Results, to out: String) throws {
        func s(_ x: Double) -> String { String(format: "%.3f", x) }
        func row(_ t: Timing) -> String { "\(s(t.median)) (\(s(t.min))–\(s(t.max)))" }
        let command = "geotrigger-bench startup --repeat \(`repeat`) --jobs \(jobs.map(String.init).joined(separator: " "))"
        var md = """
            # Start-up and cores, whole process

            `\(command)` on \(results.date) (\(results.machine)). Every time is the wall time of \
            the whole `geotrigger` process (start, load, index, replay, write, exit), median of \
            \(`repeat`) runs with the range in brackets; the runs of a table take turns.

            ## Regions loaded and indexed (no readings)

            GeoJSON circles (Point + `radius`) of `geotrigger scenario city`, seed 3 (50,000) and \
            seed 2 (500,000); `geotrigger replay --regions FILE empty.ndjson`.

            | regions | file | seconds | MB/s | peak memory |
            |---|---|---|---|---|

            """
        for key in results.regions.keys.sorted(by: { Int($0)! < Int($1)! }) {
            let t = results.regions[key]!
            let bytes = Double(results.regionFileBytes[key] ?? 0)
            md += "| \(Int(key)!.formatted()) | \(String(format: "%.1f", bytes / 1e6)) MB | \(row(t)) | "
                + "\(String(format: "%.0f", bytes / 1e6 / t.median)) | \(String(format: "%.0f", t.peakMiB)) MiB |\n"
        }
        if !results.layouts.isEmpty {
            md += """

                ## Every writer's layout (issue 39)

                The same circles as each tool writes them (`bench/layouts.py`: compact, one feature \
                a line; Python's `json.dump`, plain and `indent=2`; `ogr2ogr -f GeoJSON`, the driver \
                QGIS's export uses too; geopandas' `to_json`, whose features carry their row number \
                as the id and the properties `{"radius"}`; GDAL and geopandas only where installed), \
                `geotrigger replay --regions FILE empty.ndjson`, all the runs of this table taking turns.

                | regions | written by | file | seconds | MB/s | ÷ compact | peak memory |
                |---|---|---|---|---|---|---|

                """
            let keys = results.layouts.keys.sorted { a, b in
                let (ca, cb) = (Int(a.prefix { $0 != "/" })!, Int(b.prefix { $0 != "/" })!)
                return ca != cb ? ca < cb : (a.hasSuffix("/compact") ? true : b.hasSuffix("/compact") ? false : a < b)
            }
            for key in keys {
                let t = results.layouts[key]!
                let count = String(key.prefix { $0 != "/" }), layout = String(key.drop { $0 != "/" }.dropFirst())
                let bytes = Double(results.layoutFileBytes[key] ?? 0)
                let compact = results.layouts["\(count)/compact"]?.median ?? .nan
                md += "| \(Int(count)!.formatted()) | \(layout) | \(String(format: "%.1f", bytes / 1e6)) MB | \(row(t)) | "
                    + "\(String(format: "%.0f", bytes / 1e6 / t.median)) | \(String(format: "%.2f", t.median / compact))× | "
                    + "\(String(format: "%.0f", t.peakMiB)) MiB |\n"
            }
        }
        let one = results.jobs["1"]?.median ?? .nan
        md += """

            ## `--jobs`: city-like, 50,000 circles, 2,000 devices, 1,000,000 fixes, exact mode

            `geotrigger replay --regions regions.geojson --hysteresis 0 --max-accuracy 0 --jobs N \
            readings.ndjson` (seed 3). Events of every N identical to `--jobs 1`'s: \
            \(results.eventsIdentical ? "yes" : "**no**"). This machine has \(results.cores) cores: \
            jobs beyond that share them.

            | jobs | seconds | speed-up over 1 job | CPU seconds | ÷ 1 job's CPU | reading thread | peak memory |
            |---|---|---|---|---|---|---|

            """
        let oneCPU = results.jobs["1"]?.cpu ?? .nan
        for key in results.jobs.keys.sorted(by: { Int($0)! < Int($1)! }) {
            let t = results.jobs[key]!
            let cpu = t.cpu ?? .nan
            md += "| \(key) | \(row(t)) | \(String(format: "%.2f", one / t.median))× | \(s(cpu)) | "
                + "\(String(format: "%.2f", cpu / oneCPU))× | \(t.readerCPU.map(s) ?? "–") | \(String(format: "%.0f", t.peakMiB)) MiB |\n"
        }
        let load = results.oneJobLoadSeconds
        let bound = one / (load + (one - load) / Double(max(1, results.cores)))
        md += """

            CPU seconds: user + system of the whole process (every thread), median of the runs; the \
            reading thread's from the summary `--jobs` prints (loading, reading, routing, merging). \
            Issue 39's target: `--jobs 2` at most 1.15× one job's CPU.

            The bound on these \(results.cores) cores: with one job the regions are loaded and indexed \
            in \(s(load)) s of the \(s(one)) s (its summary's figure, median), before any reading. \
            Even if everything after that were spread perfectly over \(results.cores) cores, with \
            nothing spent on routing and merging, \(results.cores) jobs could not beat \
            \(String(format: "%.2f", bound))× one job (Amdahl's law).

            """
        if let two = results.jobs["2"], let cpu = two.cpu, let reader = two.readerCPU {
            // The reading thread works alongside the jobs (it hands over batches as it goes), so
            // with N jobs on N cores the run takes at least the longer of its own CPU time and an
            // N-th of the whole CPU time.
            func projected(_ n: Double) -> Double { max(reader, cpu / n) }
            md += """

                Projection from `--jobs 2`'s measured CPU (\(s(cpu)) s, \(s(reader)) s of it on the \
                reading thread), for N jobs on N cores: at least max(reading thread, CPU ÷ N) — \
                8 cores \(s(projected(8))) s (\(String(format: "%.1f", one / projected(8)))× one job's \
                wall time), 16 cores \(s(projected(16))) s (\(String(format: "%.1f", one / projected(16)))×). \
                Where the reading thread bounds it: it loads the regions, takes every reading \
                (decoded by the jobs ahead of it, or by itself), routes it and merges the events.

                """
        }
        try md.write(toFile: "\(out)/startup.md", atomically: true, encoding: .utf8)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: URL(fileURLWithPath: "\(out)/startup.json"))
        print(md)
    }
}
