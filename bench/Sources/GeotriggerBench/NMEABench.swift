import ArgumentParser
import BenchSupport
import Foundation
import Geotrigger
import GeotriggerScenarios
#if canImport(Glibc)
import Glibc
#endif

/// Issue 37's speed targets for real receivers' input.
///
/// (1) Decoder throughput: gpsd's 45 regression logs (`../shared/datasets/gpsd_nmea_logs`, read
/// there at run time, never copied into the repository) concatenated and repeated to at least
/// `--megabytes` in a file under the data folder, decoded on one thread through `ReadingInput`
/// and the NMEA decoder (replay's path, without the engine); the same for the logs' gpsd JSON
/// reports (the `{` lines of each `.log.chk`) through the gpsd decoder, for context.
///
/// (2) The city scenario as NMEA, whole process: its readings written as one `.nmea` file per
/// device (NMEA has no device field: the file name is the device), a receiver cycle per fix
/// (GGA, GSA, RMC with checksums and CR LF), replayed by `geotrigger replay` and timed against
/// the replay of the same readings as the scenario's one NDJSON file; the events compared.
struct NMEACommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nmea",
        abstract: "Issue 37: NMEA decoding MB/s on gpsd's logs, and the city scenario as NMEA against NDJSON, whole process.",
        discussion: """
            Builds nothing: run `swift build -c release` in the root first. Needs gpsd's logs in \
            ROOT/../shared/datasets/gpsd_nmea_logs (or --logs). Writes nmea.md and nmea.json to --out.
            """)

    @Option(help: "Runs of each measurement (best and median reported; whole-process runs take turns).")
    var `repeat` = 5
    @Option(help: "Size the logs are repeated to for the decoder throughput, in MB (10⁶ bytes).")
    var megabytes = 50
    @Option(help: "Circles in the city.")
    var regions = 100_000
    @Option(help: "Devices of the city, one .nmea file each.")
    var devices = 2_000
    @Option(help: "Seconds of readings (a fix per device per second).")
    var seconds = 300
    @Option(help: "Scenario seed.")
    var seed: UInt64 = 1
    @Flag(help: "Skip the city run (decoder throughput only).")
    var noCity = false
    @Option(help: "Repository root (default: the current directory).")
    var root: String?
    @Option(help: "Results folder (default: ROOT/bench/results).")
    var out: String?
    @Option(help: "Scenario cache and the repeated logs (default: ROOT/bench/.data).")
    var data: String?
    @Option(help: "gpsd's NMEA logs (default: ROOT/../shared/datasets/gpsd_nmea_logs).")
    var logs: String?

    func validate() throws {
        if `repeat` < 1 { throw ValidationError("--repeat must be at least 1") }
        for (name, value) in [("megabytes", megabytes), ("regions", regions), ("devices", devices), ("seconds", seconds)]
        where value <= 0 {
            throw ValidationError("--\(name) must be positive")
        }
    }

    struct Throughput: Codable {
        var files: Int
        /// Bytes of the logs once, and of the repeated input decoded.
        var onceBytes: Int
        var bytes: Int
        var copies: Int
        var fixes: Int
        var rejected: Int
        var seconds: [Double]
        var bestMBPerSecond: Double
        var medianMBPerSecond: Double
        var bestFixesPerSecond: Double
        var medianFixesPerSecond: Double
    }

    struct Timing: Codable {
        var best: Double
        var median: Double
        var max: Double
        var peakMiB: Double
    }

    struct City: Codable {
        var regions: Int
        var devices: Int
        var seconds: Int
        var fixes: Int
        var ndjsonBytes: Int
        var nmeaBytes: Int
        var ndjson: Timing
        /// The `.nmea` files' directory as the input, as a user replays a fleet's logs.
        var nmea: Timing
        /// For context: the same files named one by one on the command line, in device order;
        /// the same readings as one NDJSON file per device, their directory (what reading 2,000
        /// inputs costs whatever their format); a directory of 2,000 empty files (the cost of
        /// listing, opening and closing them, regions included).
        var nmeaNamed: Timing
        var ndjsonPerDevice: Timing
        var emptyFiles: Timing
        /// Whether the per-device NDJSON directory's events are byte-identical to the NMEA
        /// directory's (the same inputs in the same order), and the named `.nmea` files' to the
        /// one NDJSON file's (device order, as that file's).
        var ndjsonPerDeviceIdentical: Bool
        var namedIdentical: Bool
        /// NMEA's median over NDJSON's (and best over best).
        var ratioMedian: Double
        var ratioBest: Double
        var ndjsonEvents: Int
        var nmeaEvents: Int
        var eventsIdentical: Bool
        var eventsSortedEqual: Bool
        /// Lines in one event file and not the other (both ways, as multisets).
        var eventsDiffering: Int
        /// Fixes whose NMEA text decodes to the very doubles (position, accuracy, time) the
        /// NDJSON decoder gives.
        var fixesBitIdentical: Int
        var nmeaSummary: String
        var ndjsonSummary: String
    }

    struct Results: Codable {
        var nmea: Throughput
        var gpsd: Throughput
        var city: City?
        var repeats: Int
        var machine: String
        var date: String
        var command: String
    }

    func run() throws {
        let setup = try WholeProcessRun(root: root, out: out, name: "nmea")
        let (binary, out, work) = (setup.binary, setup.out, setup.work)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let root = root ?? FileManager.default.currentDirectoryPath
        let data = data ?? "\(root)/bench/.data"
        let logs = logs ?? "\(root)/../shared/datasets/gpsd_nmea_logs"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)

        let names = ((try? FileManager.default.contentsOfDirectory(atPath: logs)) ?? []).filter { $0.hasSuffix(".log") }.sorted()
        guard !names.isEmpty else {
            throw ValidationError("""
                no gpsd logs (*.log) in \(logs): the decoder's throughput is measured on gpsd's regression \
                logs, kept outside the repository (../shared/datasets/gpsd_nmea_logs, BSD-2-Clause); \
                give their folder with --logs
                """)
        }
        let target = megabytes * 1_000_000
        let nmeaOnce = try names.map { try Self.bytes(of: "\(logs)/\($0)") }
        let gpsdOnce = try names.map { name -> [UInt8] in
            let chk = "\(logs)/\(name).chk"
            guard FileManager.default.fileExists(atPath: chk) else { return [] }
            return Self.jsonLines(try Self.bytes(of: chk))
        }
        let nmeaInput = try Self.repeated(nmeaOnce, toAtLeast: target, path: "\(data)/gpsd-logs-nmea.log")
        let gpsdInput = try Self.repeated(gpsdOnce, toAtLeast: target, path: "\(data)/gpsd-logs-json.log")
        log("decoding \(mb(nmeaInput.bytes)) of NMEA and \(mb(gpsdInput.bytes)) of gpsd JSON, \(`repeat`) times each")
        var nmeaSeconds: [Double] = [], gpsdSeconds: [Double] = []
        var nmeaCounts = (fixes: 0, rejected: 0), gpsdCounts = (fixes: 0, rejected: 0)
        for _ in 0..<`repeat` {
            let n = try Self.decodeAll(path: nmeaInput.path, format: .nmea)
            nmeaSeconds.append(n.seconds)
            nmeaCounts = (n.fixes, n.rejected)
            let g = try Self.decodeAll(path: gpsdInput.path, format: .gpsd)
            gpsdSeconds.append(g.seconds)
            gpsdCounts = (g.fixes, g.rejected)
        }
        func throughput(_ input: (path: String, bytes: Int, copies: Int), once: [[UInt8]], counts: (fixes: Int, rejected: Int),
                        seconds: [Double]) -> Throughput {
            let sorted = seconds.sorted()
            let best = sorted.first!, median = sorted[sorted.count / 2]
            return Throughput(files: once.filter { !$0.isEmpty }.count, onceBytes: input.bytes / input.copies,
                              bytes: input.bytes, copies: input.copies,
                              fixes: counts.fixes, rejected: counts.rejected, seconds: seconds,
                              bestMBPerSecond: Double(input.bytes) / 1e6 / best,
                              medianMBPerSecond: Double(input.bytes) / 1e6 / median,
                              bestFixesPerSecond: Double(counts.fixes) / best,
                              medianFixesPerSecond: Double(counts.fixes) / median)
        }
        let nmea = throughput(nmeaInput, once: nmeaOnce, counts: nmeaCounts, seconds: nmeaSeconds)
        let gpsd = throughput(gpsdInput, once: gpsdOnce, counts: gpsdCounts, seconds: gpsdSeconds)

        let city = noCity ? nil : try cityRun(binary: binary, work: work, data: data)
        var command = "geotrigger-bench nmea --repeat \(`repeat`) --megabytes \(megabytes)"
        command += noCity ? " --no-city" : " --regions \(regions) --devices \(devices) --seconds \(seconds) --seed \(seed)"
        let cores = commandOutput(["nproc"])
        let results = Results(nmea: nmea, gpsd: gpsd, city: city, repeats: `repeat`,
                              machine: "\(cores) cores, " + commandOutput(["uname", "-m"]),
                              date: ISO8601DateFormatter().string(from: Date()), command: command)
        try write(results, to: out)
    }

    // MARK: Decoder throughput

    static func bytes(of path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The lines of a `.chk` that are gpsd's JSON reports (`{` first), each ending in a newline.
    static func jsonLines(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: true) where line.first == UInt8(ascii: "{") {
            out += line
            out.append(0x0A)
        }
        return out
    }

    /// `files` one after another (each made to end with a newline, so no two lines join), the
    /// whole repeated until it holds at least `target` bytes, written to `path`.
    static func repeated(_ files: [[UInt8]], toAtLeast target: Int, path: String) throws -> (path: String, bytes: Int, copies: Int) {
        var once: [UInt8] = []
        for f in files where !f.isEmpty {
            once += f
            if f.last != 0x0A { once.append(0x0A) }
        }
        guard !once.isEmpty else { throw ValidationError("nothing to decode for \(path)") }
        let copies = (target + once.count - 1) / once.count
        var all: [UInt8] = []
        all.reserveCapacity(copies * once.count)
        for _ in 0..<copies { all += once }
        try Data(all).write(to: URL(fileURLWithPath: path))
        return (path, all.count, copies)
    }

    /// Every record of `path` through `ReadingInput.open` (replay's decoders), counted; the time
    /// from opening to the end of the input.
    static func decodeAll(path: String, format: ReadingFormat) throws -> (seconds: Double, fixes: Int, rejected: Int) {
        let start = now()
        let decoder = try ReadingInput.open(path: path, format: format)
        var fixes = 0, rejected = 0
        var latitudes = 0.0  // each reading taken, as replay takes it
        loop: while true {
            switch decoder.next() {
            case .reading:
                fixes += 1
                latitudes += decoder.current.latitude
            case .rejected:
                rejected += 1
            case .end:
                break loop
            }
        }
        let seconds = now() - start
        keep(latitudes)
        return (seconds, fixes, rejected)
    }

    /// Uses `x` where the optimizer cannot see, so the work that made it is not left out.
    @inline(never) static func keep(_ x: Double) { _ = x }

    // MARK: The city as NMEA

    func cityRun(binary: String, work: String, data: String) throws -> City {
        let scenario = Scenario(kind: .city, seed: seed, regions: regions, devices: devices, seconds: seconds)
        log("city: \(regions) circles, \(devices) devices × \(seconds) s (cached in \(data))")
        let files = try ScenarioFiles.prepare(scenario, dataDirectory: data, placesPath: "")
        let nmeaDirectory = "\(files.directory)/nmea"
        let perDeviceDirectory = "\(files.directory)/per-device", emptyDirectory = "\(files.directory)/empty"
        let paths = (0..<devices).map { "\(nmeaDirectory)/d\($0).nmea" }
        let perDevice = (0..<devices).map { "\(files.directory)/per-device/d\($0).ndjson" }
        let empty = (0..<devices).map { "\(files.directory)/empty/d\($0).nmea" }
        // The marker is a dot file, so that replaying the directory passes over it.
        let done = "\(nmeaDirectory)/.done"
        if FileManager.default.fileExists(atPath: "\(nmeaDirectory)/DONE") {
            try FileManager.default.moveItem(atPath: "\(nmeaDirectory)/DONE", toPath: done)
        }
        if !FileManager.default.fileExists(atPath: done) {
            for dir in [nmeaDirectory, "\(files.directory)/per-device", "\(files.directory)/empty"] {
                try? FileManager.default.removeItem(atPath: dir)
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            }
            try NMEAWriter.write(readings: files.readingsPath, devices: devices, to: paths)
            try NMEAWriter.splitNDJSON(readings: files.readingsPath, to: perDevice)
            for path in empty { try Data().write(to: URL(fileURLWithPath: path)) }
            try Data("one .nmea file per device of \(files.readingsPath)\n".utf8)
                .write(to: URL(fileURLWithPath: done))
        }
        let identical = try NMEAWriter.bitIdentical(readings: files.readingsPath, nmea: paths)
        let nmeaBytes = try paths.reduce(0) { $0 + (try FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int ?? 0) }
        let ndjsonBytes = try FileManager.default.attributesOfItem(atPath: files.readingsPath)[.size] as? Int ?? 0

        // Both replays pinned to one core, taking turns.
        let common = [binary, "replay", "--regions", files.regionsPath]
        let commands: [(name: String, arguments: [String])] = [
            ("ndjson", pinToOneCore + common + ["-o", "\(work)/events-ndjson.ndjson", files.readingsPath]),
            ("nmea", pinToOneCore + common + ["-o", "\(work)/events-nmea.ndjson", nmeaDirectory]),
            ("nmea-named", pinToOneCore + common + ["-o", "\(work)/events-nmea-named.ndjson"] + paths),
            ("per-device", pinToOneCore + common + ["-o", "\(work)/events-per-device.ndjson", perDeviceDirectory]),
            ("empty", pinToOneCore + common + ["-o", "\(work)/events-empty.ndjson", emptyDirectory]),
        ]
        var runs: [String: [(seconds: Double, peak: Double)]] = [:]
        var summaries: [String: String] = [:]
        log("city: replaying \(files.readingsPath), the directories of \(devices) .nmea, .ndjson and empty files, and the .nmea files named, \(`repeat`) times each")
        for _ in 0..<`repeat` {
            for c in commands {
                let stderr = "\(work)/stderr-\(c.name).txt"
                let run = spawn(c.arguments, stderr: stderr)
                let summary = (try? readText(stderr)) ?? ""
                guard run.status == 0 else { throw ValidationError("geotrigger replay (\(c.name)) exited \(run.status): \(summary)") }
                runs[c.name, default: []].append((run.seconds, Double(reportedPeakMemory(summary) ?? 0) / 1_048_576))
                summaries[c.name] = summary
            }
        }
        func timing(_ name: String) -> Timing {
            let s = runs[name]!.map(\.seconds).sorted()
            return Timing(best: s.first!, median: s[s.count / 2], max: s.last!, peakMiB: runs[name]!.map(\.peak).max() ?? 0)
        }
        let a = try Self.bytes(of: "\(work)/events-ndjson.ndjson"), b = try Self.bytes(of: "\(work)/events-nmea.ndjson")
        let linesA = a.split(separator: 0x0A).map { Array($0) }, linesB = b.split(separator: 0x0A).map { Array($0) }
        var counts: [[UInt8]: Int] = [:]
        for l in linesA { counts[l, default: 0] += 1 }
        for l in linesB { counts[l, default: 0] -= 1 }
        let differing = counts.values.reduce(0) { $0 + abs($1) }
        let ndjson = timing("ndjson"), nmea = timing("nmea")
        let perDeviceIdentical = try b == Self.bytes(of: "\(work)/events-per-device.ndjson")
        let namedIdentical = try a == Self.bytes(of: "\(work)/events-nmea-named.ndjson")
        func lastLines(_ s: String) -> String {
            s.split(separator: "\n").suffix(3).joined(separator: "\n").replacingOccurrences(of: "\(files.directory)/", with: "")
        }
        return City(regions: regions, devices: devices, seconds: seconds, fixes: devices * seconds,
                    ndjsonBytes: ndjsonBytes, nmeaBytes: nmeaBytes, ndjson: ndjson, nmea: nmea,
                    nmeaNamed: timing("nmea-named"), ndjsonPerDevice: timing("per-device"), emptyFiles: timing("empty"),
                    ndjsonPerDeviceIdentical: perDeviceIdentical, namedIdentical: namedIdentical,
                    ratioMedian: nmea.median / ndjson.median, ratioBest: nmea.best / ndjson.best,
                    ndjsonEvents: linesA.count, nmeaEvents: linesB.count, eventsIdentical: a == b,
                    eventsSortedEqual: differing == 0, eventsDiffering: differing, fixesBitIdentical: identical,
                    nmeaSummary: lastLines(summaries["nmea"] ?? ""), ndjsonSummary: lastLines(summaries["ndjson"] ?? ""))
    }

    // MARK: Results

    private func write(_ r: Results, to out: String) throws {
        func f0(_ x: Double) -> String { String(format: "%.0f", x) }
        func f1(_ x: Double) -> String { String(format: "%.1f", x) }
        func f2(_ x: Double) -> String { String(format: "%.2f", x) }
        func f3(_ x: Double) -> String { String(format: "%.3f", x) }
        func row(_ name: String, _ t: Throughput) -> String {
            "| \(name) | \(f1(Double(t.bytes) / 1e6)) MB (\(t.copies) × \(f2(Double(t.onceBytes) / 1e6)) MB, \(t.files) files) | "
                + "\(f1(t.bestMBPerSecond)) / \(f1(t.medianMBPerSecond)) | "
                + "\(f0(t.bestFixesPerSecond).formattedInteger) / \(f0(t.medianFixesPerSecond).formattedInteger) | "
                + "\(t.fixes.formatted()) | \(t.rejected.formatted()) |\n"
        }
        let met = r.nmea.medianMBPerSecond >= 50
        var md = """
            # Real receivers' input: NMEA speed (issue 37)

            `\(r.command)` on \(r.date) (\(r.machine)).

            ## Decoder throughput

            gpsd's 45 regression logs (`../shared/datasets/gpsd_nmea_logs`, BSD-2-Clause, read there, \
            not shipped) one after another, repeated to at least \(megabytes) MB in one file, decoded \
            on one thread (not pinned: it is one thread whichever core it runs on) through `ReadingInput.open` and the library's NMEA decoder (replay's path, \
            without the engine), from opening the file to its end (page cache warm); best / median \
            of \(r.repeats) runs. The gpsd row is the logs' `.chk` reports (their `{` lines: what \
            `gpspipe -w` prints for that receiver) through the gpsd JSON decoder, for context.

            | input | bytes | MB/s (best / median) | fixes/s (best / median) | fixes | rejected |
            |---|---|---|---|---|---|

            """
        md += row("NMEA", r.nmea) + row("gpsd JSON", r.gpsd)
        md += "\nTarget ≥ 50 MB/s on one core (median): **\(met ? "met" : "not met")**.\n"
        if let c = r.city {
            let metRatio = c.ratioMedian <= 2
            md += """

                ## The city scenario as NMEA, whole process

                `geotrigger scenario city --seed \(seed) --regions \(c.regions) --devices \(c.devices) \
                --seconds \(c.seconds)` (\(c.fixes.formatted()) fixes), its readings written as NMEA: \
                one file per device (`d0.nmea` …, the file name is the device), a receiver cycle per \
                fix (GGA with HDOP = accuracy ÷ 8, GSA, RMC; checksums, CR LF; positions in \
                `ddmm.mmmmmmm`, 7 decimals of minutes). Timed: `taskset -c 0 geotrigger replay \
                --regions regions.csv -o events readings.ndjson` against the same with the \
                directory of the \(c.devices.formatted()) `.nmea` files (`… -o events nmea/`, as a user \
                replays a fleet's logs) instead of the NDJSON file; wall time of the process, runs \
                taking turns.

                | input | bytes | seconds (best / median / worst) | fixes/s (median) | peak memory |
                |---|---|---|---|---|
                | NDJSON, 1 file | \(f1(Double(c.ndjsonBytes) / 1e6)) MB | \(f3(c.ndjson.best)) / \(f3(c.ndjson.median)) / \(f3(c.ndjson.max)) | \
                \(f0(Double(c.fixes) / c.ndjson.median).formattedInteger) | \(f0(c.ndjson.peakMiB)) MiB |
                | NMEA, a directory of \(c.devices.formatted()) files | \(f1(Double(c.nmeaBytes) / 1e6)) MB | \(f3(c.nmea.best)) / \(f3(c.nmea.median)) / \(f3(c.nmea.max)) | \
                \(f0(Double(c.fixes) / c.nmea.median).formattedInteger) | \(f0(c.nmea.peakMiB)) MiB |
                | for context: NMEA, the \(c.devices.formatted()) files named | \(f1(Double(c.nmeaBytes) / 1e6)) MB | \
                \(f3(c.nmeaNamed.best)) / \(f3(c.nmeaNamed.median)) / \(f3(c.nmeaNamed.max)) | \
                \(f0(Double(c.fixes) / c.nmeaNamed.median).formattedInteger) | \(f0(c.nmeaNamed.peakMiB)) MiB |
                | for context: NDJSON, a directory of \(c.devices.formatted()) files (one per device) | \(f1(Double(c.ndjsonBytes) / 1e6)) MB | \
                \(f3(c.ndjsonPerDevice.best)) / \(f3(c.ndjsonPerDevice.median)) / \(f3(c.ndjsonPerDevice.max)) | \
                \(f0(Double(c.fixes) / c.ndjsonPerDevice.median).formattedInteger) | \(f0(c.ndjsonPerDevice.peakMiB)) MiB |
                | for context: a directory of \(c.devices.formatted()) empty files | 0 | \
                \(f3(c.emptyFiles.best)) / \(f3(c.emptyFiles.median)) / \(f3(c.emptyFiles.max)) | — | \(f0(c.emptyFiles.peakMiB)) MiB |

                NMEA ÷ NDJSON: **\(f2(c.ratioMedian))×** (median; best \(f2(c.ratioBest))×); target ≤ 2×: \
                **\(metRatio ? "met" : "not met")**. The context rows split the gap: the same \
                readings as \(c.devices.formatted()) NDJSON files take \(f2(c.ndjsonPerDevice.median / c.ndjson.median))× \
                the one file, and \(c.devices.formatted()) empty files alone \(f3(c.emptyFiles.median)) s \
                (start-up and the regions, then listing, opening and closing the files); NMEA's own cost \
                is the rest, \(f3(c.nmea.median - c.ndjsonPerDevice.median)) s over the per-device NDJSON \
                files. Naming the \(c.devices.formatted()) files instead of their directory costs \
                \(f3(c.nmeaNamed.median - c.nmea.median)) s more (the argument parser's time grows with the \
                square of the number of arguments).

                Events: \(c.ndjsonEvents.formatted()) from NDJSON, \(c.nmeaEvents.formatted()) from NMEA; \
                the same lines in any order: \(c.eventsSortedEqual ? "yes" : "no, \(c.eventsDiffering) lines differ") \
                (a directory's files are merged in byte order of their names, `d0`, `d1`, `d10` …, so \
                events of one second come in another order than the NDJSON file's, by device); \
                byte-identical to the per-device NDJSON directory's: \(c.ndjsonPerDeviceIdentical ? "yes" : "**no**"); \
                the named `.nmea` files' (device order) byte-identical to the NDJSON file's: \
                \(c.namedIdentical ? "yes" : "**no**"). Fixes whose NMEA \
                decodes to the very doubles NDJSON gives (time, position, accuracy): \
                \(c.fixesBitIdentical.formatted()) of \(c.fixes.formatted()) (degrees and minutes are \
                read as one correctly rounded quotient, the double nearest the angle, as the NDJSON's \
                decimal degrees are).

                Summaries, last lines:

                ```
                NDJSON: \(c.ndjsonSummary)
                NMEA:   \(c.nmeaSummary)
                ```

                """
        }
        try md.write(toFile: "\(out)/nmea.md", atomically: true, encoding: .utf8)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(r).write(to: URL(fileURLWithPath: "\(out)/nmea.json"))
        print(md)
    }

    private func mb(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }

    private func log(_ s: String) {
        FileHandle.standardError.write(Data("geotrigger-bench nmea: \(s)\n".utf8))
    }
}

private extension String {
    /// "1234567" as "1,234,567".
    var formattedInteger: String { Int(self).map { $0.formatted() } ?? self }
}

/// Scenario readings (NDJSON) as receivers' NMEA, one file per device.
enum NMEAWriter {
    /// Writes each device's fixes of `readings` (devices `d0` … as the city names them) to
    /// `paths[k]` for device `dk`, a receiver cycle per fix.
    static func write(readings: String, devices: Int, to paths: [String]) throws {
        var outputs = [[UInt8]](repeating: [], count: devices)
        var previous = [(latitude: Double, longitude: Double, t: Double)?](repeating: nil, count: devices)
        let decoder = try ReadingInput.open(path: readings, format: .ndjson)
        loop: while true {
            switch decoder.next() {
            case .reading:
                let r = decoder.current
                guard let d = deviceIndex(r.deviceString), d < devices else { throw ValidationError("unexpected device \(r.deviceString)") }
                cycle(r, previous: previous[d], into: &outputs[d])
                previous[d] = (r.latitude, r.longitude, r.t)
            case .rejected(let reason):
                throw ValidationError("\(readings): line \(decoder.lineNumber) rejected (\(reason))")
            case .end:
                break loop
            }
        }
        for (k, bytes) in outputs.enumerated() { try Data(bytes).write(to: URL(fileURLWithPath: paths[k])) }
    }

    /// The lines of `readings` (the city's, devices `d0` …) split into one file per device,
    /// `paths[k]` for `dk`, in their order.
    static func splitNDJSON(readings: String, to paths: [String]) throws {
        var outputs = [[UInt8]](repeating: [], count: paths.count)
        let key = Array(#""device":"d"#.utf8)
        for line in try bytes(of: readings).split(separator: 0x0A) {
            guard let at = line.firstRange(of: key) else { throw ValidationError("\(readings): a line without a device") }
            var d = 0
            for b in line[at.upperBound...] {
                guard b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") else { break }
                d = d * 10 + Int(b - UInt8(ascii: "0"))
            }
            guard d < paths.count else { throw ValidationError("\(readings): unexpected device d\(d)") }
            outputs[d] += line
            outputs[d].append(0x0A)
        }
        for (k, bytes) in outputs.enumerated() { try Data(bytes).write(to: URL(fileURLWithPath: paths[k])) }
    }

    static func bytes(of path: String) throws -> [UInt8] { try NMEACommand.bytes(of: path) }

    /// How many fixes decode from `nmea` (file k for device `dk`) to exactly the time, position
    /// and accuracy the NDJSON decoder gives for the same reading.
    static func bitIdentical(readings: String, nmea: [String]) throws -> Int {
        var expected = [[(Double, Double, Double, Double)]](repeating: [], count: nmea.count)
        let decoder = try ReadingInput.open(path: readings, format: .ndjson)
        while decoder.next() == .reading {
            let r = decoder.current
            if let d = deviceIndex(r.deviceString), d < nmea.count { expected[d].append((r.t, r.latitude, r.longitude, r.accuracy)) }
        }
        var same = 0
        for (d, path) in nmea.enumerated() {
            let n = try ReadingInput.open(path: path)
            var k = 0
            while true {
                let step = n.next()
                if step == .end { break }
                guard step == .reading else { continue }
                let r = n.current
                if k < expected[d].count, expected[d][k] == (r.t, r.latitude, r.longitude, r.accuracy) { same += 1 }
                k += 1
            }
        }
        return same
    }

    /// `d123` → 123.
    static func deviceIndex(_ device: String) -> Int? {
        guard device.first == "d" else { return nil }
        return Int(device.dropFirst())
    }

    /// One receiver cycle for `r`: GGA (position, quality 1, 8 satellites, HDOP = accuracy ÷ 8,
    /// altitude), GSA (3D fix, 8 satellites, DOPs), RMC (status A, speed and course from the
    /// previous fix, date, mode A), each with its checksum and CR LF, as a u-blox or SiRF
    /// receiver sends them once a second.
    static func cycle(_ r: Reading, previous: (latitude: Double, longitude: Double, t: Double)?, into out: inout [UInt8]) {
        let seconds = r.t.rounded(.down)
        let hundredths = Int(((r.t - seconds) * 100).rounded())
        var time = time_t(seconds)
        var tm = tm()
        gmtime_r(&time, &tm)
        var hhmmss: [UInt8] = []
        two(Int(tm.tm_hour), &hhmmss); two(Int(tm.tm_min), &hhmmss); two(Int(tm.tm_sec), &hhmmss)
        hhmmss.append(UInt8(ascii: ".")); two(hundredths, &hhmmss)
        var date: [UInt8] = []
        two(Int(tm.tm_mday), &date); two(Int(tm.tm_mon) + 1, &date); two(Int(tm.tm_year) % 100, &date)
        var position: [UInt8] = []
        angle(r.latitude, degreeDigits: 2, positive: "N", negative: "S", &position)
        position.append(UInt8(ascii: ","))
        angle(r.longitude, degreeDigits: 3, positive: "E", negative: "W", &position)
        let hdop = r.accuracy.isNaN ? "" : "\(r.accuracy / 8)"

        var gga = Array("GPGGA,".utf8) + hhmmss + [UInt8(ascii: ",")] + position
        gga += Array(",1,08,\(hdop),212.4,M,45.3,M,,".utf8)
        sentence(gga, &out)
        let pdop = r.accuracy.isNaN ? "" : String(format: "%.2f", r.accuracy / 8 * 1.4)
        sentence(Array("GPGSA,A,3,02,05,06,09,12,17,19,25,,,,,\(pdop),\(hdop),\(pdop.isEmpty ? "" : "1.10")".utf8), &out)
        var speed = 0.0, course = 0.0
        if let p = previous, r.t > p.t {
            let north = (r.latitude - p.latitude) * 111_132.954
            let east = (r.longitude - p.longitude) * 111_319.49 * cos(p.latitude * .pi / 180)
            speed = (north * north + east * east).squareRoot() / (r.t - p.t) * 3600 / 1852
            course = atan2(east, north) * 180 / .pi
            if course < 0 { course += 360 }
        }
        var rmc = Array("GPRMC,".utf8) + hhmmss + Array(",A,".utf8) + position
        rmc += Array(String(format: ",%.3f,%.2f,", speed, course).utf8) + date + Array(",,,A".utf8)
        sentence(rmc, &out)
    }

    /// `$`, `body`, `*`, the XOR of `body`'s bytes in two hex digits, CR LF.
    private static func sentence(_ body: [UInt8], _ out: inout [UInt8]) {
        let sum = body.reduce(0, ^)
        let hex = Array("0123456789ABCDEF".utf8)
        out.append(UInt8(ascii: "$"))
        out += body
        out += [UInt8(ascii: "*"), hex[Int(sum >> 4)], hex[Int(sum & 15)], 0x0D, 0x0A]
    }

    private static func two(_ v: Int, _ out: inout [UInt8]) {
        out += [UInt8(ascii: "0") + UInt8(v / 10 % 10), UInt8(ascii: "0") + UInt8(v % 10)]
    }

    /// `ddmm.mmmmmmm,N` (`dddmm…,E` for longitude): whole degrees, then minutes with 7 decimals,
    /// the most receivers write (a scenario's 6 decimals of a degree are 6 of a minute, exactly).
    private static func angle(_ value: Double, degreeDigits: Int, positive: Character, negative: Character,
                              _ out: inout [UInt8]) {
        let a = abs(value)
        var degrees = Int(a.rounded(.down))
        var minutes = Int(((a - Double(degrees)) * 60 * 1e7).rounded())
        if minutes >= 600_000_000 {
            degrees += 1
            minutes -= 600_000_000
        }
        var digits = String(degrees)
        while digits.count < degreeDigits { digits = "0" + digits }
        var m = String(minutes)
        while m.count < 9 { m = "0" + m }
        out += Array(digits.utf8) + Array(m.prefix(2).utf8) + [UInt8(ascii: ".")] + Array(m.dropFirst(2).utf8)
        out += [UInt8(ascii: ","), value < 0 ? negative.asciiValue! : positive.asciiValue!]
    }
}
