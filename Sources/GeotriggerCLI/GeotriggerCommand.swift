import ArgumentParser

@main
struct GeotriggerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geotrigger",
        abstract: "Evaluate location and beacon triggers: exact geofence events from GPS fixes.",
        discussion: """
            Regions (circles, polygons) are indexed in a packed R-tree; polygons are tested with GEOS, circle decisions are \
            geodesic on the WGS84 ellipsoid. Events are written as NDJSON, one per line.
            """,
        subcommands: [ReplayCommand.self, ConsumeCommand.self, ScenarioCommand.self, MockKafkaCommand.self],
        defaultSubcommand: nil
    )
}
