import ArgumentParser
import Geotrigger
import GeotriggerScenarios

extension Scenario.Kind: ExpressibleByArgument {}

struct ScenarioCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenario",
        abstract: "Generate a benchmark scenario (city, world or beacons) deterministically from a seed.",
        discussion: """
            Writes DIR/regions.csv (or regions.geojson for beacons), DIR/readings.ndjson and \
            DIR/SCENARIO.txt. The same kind, sizes and seed always give the same bytes. Defaults are \
            SPEC §6's sizes (city: 100,000 circles, 10,000 devices, 10 million fixes); use the size \
            options for smaller runs.

            Example:
              geotrigger scenario city --seed 1 --devices 1000 --seconds 60 --out /tmp/city
              geotrigger replay --regions /tmp/city/regions.csv /tmp/city/readings.ndjson -o /dev/null
            """
    )

    @Argument(help: "city, world or beacons.")
    var kind: Scenario.Kind

    @Option(help: "Random seed.")
    var seed: UInt64 = 1

    @Option(help: "Number of regions (default: SPEC §6's).")
    var regions: Int?

    @Option(help: "Number of devices (default: SPEC §6's).")
    var devices: Int?

    @Option(help: "Seconds of readings, one per device per second (default: SPEC §6's).")
    var seconds: Int?

    @Option(help: "Places CSV with lat and lon columns, for the world scenario.")
    var places = "datasets/poi_geonames/cities15000.csv"

    @Option(help: ArgumentHelp("Output directory (created if missing).", valueName: "dir"))
    var out: String

    func validate() throws {
        for (name, value) in [("regions", regions), ("devices", devices), ("seconds", seconds)] {
            if let value, value <= 0 { throw ValidationError("--\(name) must be positive") }
        }
    }

    func run() throws {
        var scenario = Scenario.standard(kind, seed: seed)
        if let regions { scenario.regions = regions }
        if let devices { scenario.devices = devices }
        if let seconds { scenario.seconds = seconds }
        do {
            try makeDirectory(out)
            let placeList = kind == .world ? try Scenario.loadPlaces(path: places) : []
            try scenario.writeRegions(to: RecordBuffer(path: "\(out)/\(scenario.regionsFileName)"), places: placeList)
            try scenario.writeReadings(to: RecordBuffer(path: "\(out)/readings.ndjson"), places: placeList)
            let note = try RecordBuffer(path: "\(out)/SCENARIO.txt")
            note.append(string: """
                geotrigger scenario \(kind.rawValue) --seed \(seed) --regions \(scenario.regions) \
                --devices \(scenario.devices) --seconds \(scenario.seconds)
                \(scenario.regions) regions, \(scenario.devices) devices, \(scenario.devices * scenario.seconds) readings.
                \(kind == .world ? "Places: \(places) (GeoNames, CC BY 4.0, geonames.org).\n" : "")
                """)
            try note.flush()
        } catch let error as IOFailure {
            writeStandardError("geotrigger: \(error)\n")
            throw ExitCode(74)
        } catch let error as RegionFileError {
            writeStandardError("geotrigger: \(error)\n")
            throw ExitCode(error.kind == .fileNotFound ? 66 : 74)
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Creates a directory and its parents, like `mkdir -p`.
func makeDirectory(_ path: String) throws {
    var current = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        current += "/" + part
        if mkdir(current, 0o755) != 0 && errno != EEXIST {
            throw IOFailure("cannot create \(current): \(String(cString: strerror(errno)))")
        }
    }
}
