import ArgumentParser
import Geotrigger

@main
struct GeotriggerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geotrigger",
        abstract: "Evaluate location and beacon triggers: exact geofence events from GPS fixes.",
        discussion: """
            Regions (circles, polygons, iBeacon zones) are indexed in a packed R-tree; polygons are \
            tested with GEOS, circle decisions are geodesic on the WGS84 ellipsoid. GPS fixes and \
            beacon sightings become enter, exit and dwell events, written as NDJSON, one per line; \
            with --requests, a notification scheduling core modelled on Apple's UserNotifications \
            turns them (and time, calendar and push triggers) into "deliver" events.

            Examples:
              # the demo: a real hike, real places, notifications, a map
              geotrigger replay --regions datasets/regions/slovenia-croatia.geojson \\
                --requests examples/demo/requests.json --dwell 600 --map demo-map.html \\
                datasets/gpxpy_tracks/cerknicko-jezero.gpx examples/demo/pushes.ndjson
              # your own fences and fixes; events to a file, then a map of them
              geotrigger replay --regions zones.geojson -o events.ndjson fixes.ndjson
              geotrigger map --regions zones.geojson --events events.ndjson \\
                fixes.ndjson -o map.svg
              # a synthetic city to try things at scale
              geotrigger scenario city --regions 50000 --devices 2000 --out city
              # devices spread over processes with Kafka
              geotrigger consume --regions zones.geojson --brokers localhost:9092 \\
                --topic fixes --group fences --events-topic events

            `geotrigger help SUBCOMMAND` tells more about each.
            """,
        subcommands: [ReplayCommand.self, ConvertCommand.self, MapCommand.self, ConsumeCommand.self, ScenarioCommand.self, MockKafkaCommand.self],
        defaultSubcommand: nil
    )
}

/// READINGS as the commands read them: each directory replaced by the files in it
/// (`ReadingInput.expandingDirectories`). A directory that cannot be listed, or holds no file,
/// ends the command with its status.
func readingFiles(_ paths: [String]) throws -> [String] {
    do {
        return try ReadingInput.expandingDirectories(paths)
    } catch {
        writeStandardError("geotrigger: \(error)\n")
        throw ExitCode(error.exitCode)
    }
}
