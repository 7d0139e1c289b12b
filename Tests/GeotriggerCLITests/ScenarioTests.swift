import Foundation
import Geotrigger
import GeotriggerScenarios
import Testing

/// SPEC §6's scenarios: deterministic from their seed, the sizes they say, and replayable without
/// a single rejection (a tiny run of each, so the benchmark inputs cannot rot; nothing is timed).
@Suite("Benchmark scenarios")
struct ScenarioTests {
    static let places = CLI.root.appendingPathComponent("datasets/poi_geonames/cities15000.csv").path

    func generate(_ kind: Scenario.Kind, seed: UInt64, in dir: URL) throws -> (regions: Data, readings: Data) {
        let scenario = Scenario(kind: kind, seed: seed, regions: 500, devices: 20, seconds: 30)
        let places = kind == .world ? try Scenario.loadPlaces(path: Self.places) : []
        let regions = dir.appendingPathComponent(scenario.regionsFileName), readings = dir.appendingPathComponent("readings.ndjson")
        try scenario.writeRegions(to: RecordBuffer(path: regions.path), places: places)
        try scenario.writeReadings(to: RecordBuffer(path: readings.path), places: places)
        return (try Data(contentsOf: regions), try Data(contentsOf: readings))
    }

    @Test("the same seed gives the same bytes; another seed gives others", arguments: Scenario.Kind.allCases)
    func deterministic(kind: Scenario.Kind) throws {
        let a = try generate(kind, seed: 42, in: CLI.temporaryDirectory())
        let b = try generate(kind, seed: 42, in: CLI.temporaryDirectory())
        let c = try generate(kind, seed: 43, in: CLI.temporaryDirectory())
        #expect(a.regions == b.regions && a.readings == b.readings)
        #expect(a.readings != c.readings)
        // Sizes: one reading per device per second, one region per line (CSV) or feature.
        #expect(a.readings.filter { $0 == 0x0A }.count == 20 * 30)
        let regionText = String(decoding: a.regions, as: UTF8.self)
        #expect(kind == .beacons ? regionText.components(separatedBy: "\"type\":\"Feature\"").count - 1 == 500
                                 : regionText.split(separator: "\n").count == 501)
    }

    @Test("a tiny scenario of each kind replays with no rejection", arguments: Scenario.Kind.allCases)
    func replays(kind: Scenario.Kind) throws {
        let dir = try CLI.temporaryDirectory()
        let made = try CLI.run(["scenario", kind.rawValue, "--seed", "7", "--regions", "3000", "--devices", "40",
                                "--seconds", "60", "--places", Self.places, "--out", dir.path])
        #expect(made.status == 0, "\(made.stderr)")
        let regions = dir.appendingPathComponent(kind == .beacons ? "regions.geojson" : "regions.csv").path
        let r = try CLI.run(["replay", "--regions", regions, dir.appendingPathComponent("readings.ndjson").path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("2,400 records from 1 input"))
        #expect(!r.stderr.contains("rejected"), "\(r.stderr)")
        #expect(r.lines.count > 0, "the scenario should produce events")
    }

    @Test("the safe-distance fast path gives exactly the events of evaluating every fix",
          arguments: [(Scenario.Kind.city, ["--hysteresis", "0", "--max-accuracy", "0"]), (.city, ["--dwell", "20"]),
                      // Small and large neighbourhoods: many re-queries; long odometer runs.
                      (.city, ["--hysteresis", "0", "--safe-distance", "15"]), (.city, ["--safe-distance", "1500"]),
                      // The GEOS STRtree gives the same candidates as the packed tree.
                      (.city, ["--hysteresis", "0", "--max-accuracy", "0", "--index", "geos"]),
                      // Vehicles at 20–30 m/s among circles of 1–5 km: reaches grow to their longest.
                      (.world, ["--hysteresis", "0", "--max-accuracy", "0"]), (.world, ["--dwell", "20"])])
    func fastPathIsExact(kind: Scenario.Kind, options: [String]) throws {
        let dir = try CLI.temporaryDirectory()
        let made = try CLI.run(["scenario", kind.rawValue, "--seed", "11", "--regions", "20000", "--devices", "100",
                                "--seconds", kind == .world ? "600" : "120", "--places", Self.places, "--out", dir.path])
        #expect(made.status == 0)
        let args = ["replay", "--regions", dir.appendingPathComponent("regions.csv").path] + options
            + [dir.appendingPathComponent("readings.ndjson").path]
        let fast = try CLI.run(args)
        let plain = try CLI.run(args + ["--safe-distance", "0"])
        #expect(fast.status == 0 && plain.status == 0)
        #expect(plain.lines.count > 100, "the scenario should cross many boundaries")
        #expect(fast.stdout == plain.stdout)
    }
}
