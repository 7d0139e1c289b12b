import ArgumentParser
import Foundation

@main
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geotrigger-bench",
        abstract: "SPEC §6 benchmarks: the engine against the plain GEOS-tree path, a brute-force scan and two Python peers.",
        discussion: """
            Scenarios are generated from a seed and cached under bench/.data. Results go to \
            bench/results: RESULTS.md, results.json, regions.svg and devices.svg. bench/run builds \
            everything in release first and is the usual way in.
            """,
        subcommands: [AllCommand.self, SmokeCommand.self, ReportCommand.self, KafkaCommand.self, ExtensionCommand.self, StartupCommand.self, MapCommand.self, NMEACommand.self]
    )
}

struct AllCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all", abstract: "Run every measurement at SPEC §6's sizes (times --scale) and write the results.")

    @OptionGroup var options: BenchOptions

    func run() throws {
        try Bench(options: options).runAll()
    }
}

struct SmokeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smoke",
        abstract: "A tiny run of every measurement, for the test suite (seconds; the figures mean nothing).")

    @OptionGroup var options: BenchOptions

    func run() throws {
        var options = options
        options.scale = 0.0005
        options.maxRegions = min(options.maxRegions, 1_000)
        options.maxDevices = min(options.maxDevices, 100)
        options.fixes = min(options.fixes ?? 5_000, 5_000)
        options.sweepFixes = 2_000
        options.bruteLimit = 200
        options.peerLimit = 2_000
        options.repeat = 1
        try Bench(options: options).runAll()
    }
}

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Render RESULTS.md and the charts again from a run's results.json, measuring nothing.",
        discussion: "For a change to the report itself: the figures stay those of the run that wrote results.json.")

    @Option(help: ArgumentHelp("The folder holding results.json; RESULTS.md and the charts are written beside it.",
                               valueName: "dir"))
    var out = "bench/results"

    func run() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(out)/results.json"))
        try Bench.render(try JSONDecoder().decode(Results.self, from: data), to: out)
        print("geotrigger-bench: wrote \(out)/RESULTS.md, regions.svg, devices.svg from \(out)/results.json")
    }
}
