import ArgumentParser
import GeotriggerScenarios

extension Scenario.Kind: @retroactive ExpressibleByArgument {}

struct BenchOptions: ParsableArguments {
    @Option(help: "Fraction of SPEC §6's sizes (regions, devices and fixes of each scenario).")
    var scale: Double = 1

    @Option(help: "Fixes (readings) per scenario (default: SPEC §6's, times --scale).")
    var fixes: Int?

    @Option(help: "Cap on regions, in the scenarios and in the region sweep (1k, 10k, 100k, 1M).")
    var maxRegions = 1_000_000

    @Option(help: "Cap on devices, in the scenarios and in the device sweep (100 … 100k).")
    var maxDevices = 100_000

    @Option(parsing: .upToNextOption, help: "Scenarios to run.")
    var scenarios: [Scenario.Kind] = Scenario.Kind.allCases

    @Option(help: "Fixes per point of the region and device sweeps.")
    var sweepFixes = 500_000

    @Option(help: "Fixes the brute-force scan gets (a prefix of the scenario).")
    var bruteLimit = 2_000

    @Option(help: "Fixes the Python peers get (the same prefix of the scenario for both, and for the geotrigger runs they are compared with).")
    var peerLimit = 1_000_000

    @Flag(help: "Skip the Python peers.")
    var noPeer = false

    @Flag(help: "Skip the region and device sweeps.")
    var noSweeps = false

    @Option(help: "Runs of each timed measurement; the best is reported.")
    var `repeat` = 3

    @Option(help: "Scenario seed.")
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("The geotrigger binary to time (default: ROOT/.build/release/geotrigger).", valueName: "path"))
    var geotrigger: String?

    @Option(help: ArgumentHelp("The repository root (default: the parent of the current directory's bench/).", valueName: "dir"))
    var root: String?

    @Option(help: ArgumentHelp("Where results are written (default: ROOT/bench/results).", valueName: "dir"))
    var out: String?

    @Option(help: ArgumentHelp("Scenario cache (default: ROOT/bench/.data).", valueName: "dir"))
    var data: String?

    func validate() throws {
        if !(scale > 0 && scale <= 1) { throw ValidationError("--scale must be in (0, 1]") }
        if let fixes, fixes <= 0 { throw ValidationError("--fixes must be positive") }
        if `repeat` < 1 { throw ValidationError("--repeat must be at least 1") }
        for (name, value) in [("max-regions", maxRegions), ("max-devices", maxDevices), ("sweep-fixes", sweepFixes),
                              ("brute-limit", bruteLimit), ("peer-limit", peerLimit)] where value <= 0 {
            throw ValidationError("--\(name) must be positive")
        }
    }
}
