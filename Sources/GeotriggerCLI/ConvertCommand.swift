import ArgumentParser
import Geotrigger

struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Write readings as the engine sees them: decoded, merged by time, bad records rejected.",
        discussion: """
            Reads the inputs as `geotrigger replay` does (files by extension or --format, \
            standard input for none or -), merges them by time, and writes each reading the \
            engine would take, one a line: NDJSON by default \
            ({"t":"RFC 3339","device":…,"lat":…,"lon":…,"accuracy":…}, or a sighting's fields; \
            control records as they came), CSV or GPX when -o names a .csv or .gpx file. A record \
            replay would reject (a bad line, a fix older than its device's previous one, …) is \
            reported as replay reports it (stderr, --rejects) and not written.

            It is how to see what Geotrigger made of a receiver's log, and how to move traces \
            between tools. CSV holds fixes and sightings (one header for both; a row leaves empty \
            what its kind has not); GPX holds fixes, one track per device.

            Examples:
              geotrigger convert receiver.log                      # NMEA or gpsd JSON, by content
              geotrigger convert --device bus7 trip.gpx -o trip.csv
              geotrigger convert a.ndjson b.csv -o merged.ndjson

            Exit status: 0 success, 64 usage error, 65 a bad record under --strict, 66 an input \
            file missing, 74 an I/O error.
            """
    )

    @Argument(help: ArgumentHelp("Readings files, or directories of them (every file in it, in name order); none or - for standard input.", valueName: "readings"))
    var readings: [String] = []

    @Option(help: ArgumentHelp("Input format, overriding the extension (where the extension says nothing — .log, .txt, standard input — the content decides between NMEA 0183 and NDJSON).", valueName: "ndjson|csv|gpx|nmea"))
    var format: ReadingFormat?

    @Option(help: ArgumentHelp("Device id for GPX and NMEA input (default: the file name without extension, stdin for standard input), and for NDJSON and CSV records without one.", valueName: "id"))
    var device: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("Where the readings go: FILE.ndjson (or any other name, or - for standard output), FILE.csv or FILE.gpx.", valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("Write each rejected record to FILE: PLACE<TAB>reason<TAB>record.", valueName: "file"))
    var rejects: String?

    @Flag(help: "Stop at the first bad record (exit 65) instead of reporting and skipping it.")
    var strict = false

    @Flag(name: .shortAndLong, help: "Do not print the summary on stderr.")
    var quiet = false

    func run() throws {
        var config = ConvertConfiguration()
        config.inputs = try readingFiles(readings)
        config.format = format
        config.device = device
        config.outputPath = output
        config.rejectsPath = rejects
        config.strict = strict
        do {
            let stats = try Convert(config).run()
            if !quiet { writeStandardError(stats.summary) }
        } catch let error as ReplayError {
            writeStandardError("geotrigger: \(error)\n")
            throw ExitCode(error.exitStatus)
        }
    }
}
