import ArgumentParser
import BenchSupport
import Foundation

/// Issue 28 / SPEC §9: `geotrigger map` at scale, whole process. A city of `--regions` circles and
/// `--devices` devices for `--seconds` (a fix per device per second) is replayed once for its
/// events, then drawn as SVG and as HTML, runs taking turns; the median time, the file sizes and
/// what the map drew (its own summary line) are reported.
struct MapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "map",
        abstract: "Issue 28: geotrigger map on a large city (100,000 circles, 1,000,000 fixes), whole process.",
        discussion: "Builds nothing: run `swift build -c release` in the root first. Writes map.md and map.json to --out.")

    @Option(help: "Circles in the city.")
    var regions = 100_000
    @Option(help: "Devices, each with a fix a second.")
    var devices = 2_000
    @Option(help: "Seconds of readings.")
    var seconds = 500
    @Option(help: "Runs of each (the median is reported).")
    var `repeat` = 3
    @Option(help: "Repository root (default: the current directory).")
    var root: String?
    @Option(help: "Results folder (default: ROOT/bench/results).")
    var out: String?

    struct Drawn: Codable {
        var medianSeconds: Double
        var minSeconds: Double
        var maxSeconds: Double
        var bytes: Int
        var summary: String
    }

    struct Results: Codable {
        var regions: Int
        var devices: Int
        var fixes: Int
        var events: Int
        var svg: Drawn
        var html: Drawn
        var machine: String
        var date: String
    }

    func run() throws {
        let setup = try WholeProcessRun(root: root, out: out, name: "map")
        let (binary, out, work) = (setup.binary, setup.out, setup.work)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let city = "\(work)/city", events = "\(work)/events.ndjson"
        try setup.city(seed: 3, regions: regions, devices: devices, seconds: seconds, into: city)
        let replayed = spawn([binary, "replay", "--regions", "\(city)/regions.csv", "-q", "\(city)/readings.ndjson"], stdout: events)
        guard replayed.status == 0 else { throw ValidationError("geotrigger replay exited \(replayed.status)") }
        let eventCount = try readText(events).utf8.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }

        var runs: [String: [(seconds: Double, stderr: String)]] = ["svg": [], "html": []]
        for _ in 0..<max(1, `repeat`) {
            for kind in ["svg", "html"] {
                let run = spawn([binary, "map", "--regions", "\(city)/regions.csv", "--events", events, "\(city)/readings.ndjson",
                                 "-o", "\(work)/city.\(kind)"], stderr: "\(work)/stderr.txt")
                let stderr = (try? readText("\(work)/stderr.txt")) ?? ""
                guard run.status == 0 else { throw ValidationError("geotrigger map exited \(run.status): \(stderr)") }
                runs[kind]!.append((run.seconds, stderr))
            }
        }
        func drawn(_ kind: String) throws -> Drawn {
            let r = runs[kind]!
            let seconds = r.map(\.seconds).sorted()
            let bytes = (try FileManager.default.attributesOfItem(atPath: "\(work)/city.\(kind)")[.size] as? Int) ?? 0
            let summary = r.last!.stderr.split(separator: "\n").first { $0.hasPrefix("geotrigger: map ") }.map(String.init) ?? ""
            return Drawn(medianSeconds: seconds[seconds.count / 2], minSeconds: seconds.first!, maxSeconds: seconds.last!,
                         bytes: bytes, summary: summary)
        }
        let results = Results(regions: regions, devices: devices, fixes: devices * seconds, events: eventCount,
                              svg: try drawn("svg"), html: try drawn("html"),
                              machine: commandOutput(["nproc"]) + " cores, " + commandOutput(["uname", "-m"]),
                              date: ISO8601DateFormatter().string(from: Date()))
        func s(_ x: Double) -> String { String(format: "%.2f", x) }
        func mb(_ b: Int) -> String { String(format: "%.1f MB", Double(b) / 1e6) }
        let command = "geotrigger-bench map --regions \(regions) --devices \(devices) --seconds \(seconds) --repeat \(`repeat`)"
        let md = """
            # `geotrigger map` at scale (issue 28)

            `\(command)` on \(results.date) (\(results.machine)): `geotrigger scenario city --seed 3` with \
            \(regions.formatted()) circles and \(devices.formatted()) devices for \(seconds) s \
            (\(results.fixes.formatted()) fixes), replayed once for its \(eventCount.formatted()) events, then \
            `geotrigger map --regions regions.csv --events events.ndjson readings.ndjson -o city.svg|city.html`, \
            whole process, median of \(`repeat`) runs taking turns (range in brackets).

            | output | seconds | file |
            |---|---|---|
            | SVG | \(s(results.svg.medianSeconds)) (\(s(results.svg.minSeconds))–\(s(results.svg.maxSeconds))) | \(mb(results.svg.bytes)) |
            | HTML | \(s(results.html.medianSeconds)) (\(s(results.html.minSeconds))–\(s(results.html.maxSeconds))) | \(mb(results.html.bytes)) |

            What the map drew (its summary): `\(results.svg.summary.replacingOccurrences(of: "\(work)/", with: ""))`

            A track keeps a fix only a pixel or more from the last one kept; events of one kind in one \
            3-pixel cell share a marker (markers shrink to 0.4 of full size when there are many); beyond \
            3,000 regions in view the others are a density layer of 8-pixel cells. Most of the map's \
            own time is reading the events file (each line parsed as JSON).

            """
        try md.write(toFile: "\(out)/map.md", atomically: true, encoding: .utf8)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: URL(fileURLWithPath: "\(out)/map.json"))
        print(md)
    }
}
