import ArgumentParser
import Geotrigger
import GeotriggerMap
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerFormats

struct MapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "map",
        abstract: "Draw a replay: regions, each device's track and the events, as SVG or HTML.",
        discussion: """
            The regions are drawn to scale (circles as geodesic circles, polygons, positioned \
            beacon zones) in a local projection fitted to the tracks, with each device's track in \
            a colour of its own (arrowheads show its direction), enter, exit, dwell and deliver \
            events as markers where the device was, region names, a scale bar, a north arrow, \
            a legend and the time span. An .html file adds a tooltip over each marker (device, \
            region, time, distance) and a time slider that shows tracks, positions and events \
            up to a moment. Nothing is fetched from the network: no tiles, no scripts.

            What a pixel cannot show is thinned: tracks keep a point a pixel or more from the \
            last, events of one kind in the same 3-pixel cell share a marker, and beyond \
            --max-regions regions in view the rest become a density layer.

            Examples:
              # replay, then draw
              geotrigger replay --regions zones.geojson --dwell 300 \\
                -o events.ndjson a.gpx b.gpx
              geotrigger map --regions zones.geojson --events events.ndjson \\
                a.gpx b.gpx -o map.html
              # both at once
              geotrigger replay --regions zones.geojson --map map.svg a.gpx b.gpx
              # only the regions
              geotrigger map --regions zones.geojson -o zones.svg

            Exit status: 0 success, 64 usage error, 65 bad regions file, 66 input file missing, \
            74 I/O error.
            """
    )

    @Option(help: ArgumentHelp("Regions file: GeoJSON FeatureCollection, or CSV with header id,lat,lon,radius.", valueName: "file"))
    var regions: String

    @Option(help: ArgumentHelp("Events written by `geotrigger replay` (NDJSON): enter, exit, dwell and deliver are marked.", valueName: "file"))
    var events: String?

    @Argument(help: ArgumentHelp("Reading files (NDJSON, CSV, GPX, NMEA or gpsd's reports), or directories of them, whose fixes make the tracks.", valueName: "readings"))
    var readings: [String] = []

    @Option(help: ArgumentHelp("Input format, overriding the extension (where the extension says nothing — .log, .txt, standard input — the content decides between NMEA 0183 and NDJSON).", valueName: "ndjson|csv|gpx|nmea"))
    var format: ReadingFormat?

    @Option(help: ArgumentHelp("Device id for GPX and NMEA input (default: the file name without extension, stdin for standard input).", valueName: "id"))
    var device: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("The map: FILE.svg or FILE.html.", valueName: "file"))
    var output: String

    @OptionGroup var drawing: MapDrawingOptions

    @Flag(name: .shortAndLong, help: "Do not print the summary on stderr.")
    var quiet = false

    func validate() throws {
        guard MapFile.kind(ofPath: output) != nil else { throw ValidationError("-o \(output): \(MapFile.kindProblem)") }
        if readings.contains("-") { throw ValidationError("map reads its readings from files, not standard input") }
        try drawing.check()
    }

    func run() throws {
        let start = monotonicSeconds()
        let regionList: [Region]
        do {
            regionList = try Replay.loadRegions(path: regions)
        } catch let error as ReplayError {
            writeStandardError("geotrigger: \(error)\n")
            throw ExitCode(error.exitStatus)
        }
        let paths = try readingFiles(readings)
        var data = MapData(regions: regionList)
        do {
            try data.readTracks(paths: paths, format: format, device: device)
        } catch let error as ReadingInputError {
            writeStandardError("geotrigger: \(error)\n")
            throw ExitCode(error.exitCode)
        } catch {
            writeStandardError("geotrigger: \(error)\n")
            throw ExitCode(74)
        }
        if let events {
            do {
                data.readEvents(bytes: try RegionFile.readFile(path: events), fileName: events)
            } catch {
                writeStandardError("geotrigger: \(error)\n")
                throw ExitCode(error.kind == .fileNotFound ? 66 : 74)
            }
        }
        try draw(data, to: output, options: drawing.options, quiet: quiet, start: start)
    }
}

/// How the picture is drawn; `map` and `replay --map` share them.
struct MapDrawingOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The map's title (default: \"Geotrigger replay\").", valueName: "text"))
    var title: String?

    @Option(help: ArgumentHelp("Picture size in pixels.", valueName: "W"))
    var width = 1200

    @Option(help: ArgumentHelp("Picture size in pixels.", valueName: "H"))
    var height = 900

    @Option(help: ArgumentHelp("Regions in view drawn as shapes; beyond, a density layer stands for the rest (regions with events stay shapes).", valueName: "N"))
    var maxRegions = 3000

    func check() throws {
        guard (200...20_000).contains(width), (200...20_000).contains(height) else {
            throw ValidationError("--width and --height must be between 200 and 20000 pixels")
        }
        guard maxRegions >= 0 else { throw ValidationError("--max-regions must be 0 or more") }
    }

    var options: MapOptions {
        var o = MapOptions()
        o.width = Double(width)
        o.height = Double(height)
        o.title = title
        o.maxRegionShapes = maxRegions
        return o
    }
}

/// Renders, writes and reports a map (what was drawn, what could not be used).
/// `placesReported`: the readings' rejections were reported already (by `replay --map`'s replay),
/// so only their count is repeated.
func draw(_ data: MapData, to path: String, options: MapOptions, quiet: Bool, start: Double,
          placesReported: Bool = false) throws {
    let renderer = MapRenderer(data: data, options: options)
    let bytes: Int
    do {
        bytes = try MapFile.write(renderer, to: path)
    } catch {
        writeStandardError("geotrigger: \(error)\n")
        throw ExitCode(74)
    }
    guard !quiet else { return }
    let p = data.problems
    for example in (placesReported ? [] : p.readingExamples) + p.eventExamples {
        writeStandardError("geotrigger: map: \(example)\n")
    }
    var lines = ["geotrigger: map \(path): \(renderer.summary), \(grouped(bytes)) bytes in "
                 + "\(Int((monotonicSeconds() - start) * 1000)) ms"]
    if p.rejectedReadings > 0 {
        lines.append("geotrigger: map: \(grouped(p.rejectedReadings)) \(p.rejectedReadings == 1 ? "reading" : "readings") rejected (not drawn)")
    }
    if p.badEventLines > 0 {
        lines.append("geotrigger: map: \(grouped(p.badEventLines)) \(p.badEventLines == 1 ? "line" : "lines") of the events file skipped: not events")
    }
    if p.otherEvents > 0 { lines.append("geotrigger: map: \(grouped(p.otherEvents)) events of other kinds (responses, silent pushes) not marked") }
    let unplaced = renderer.unplacedEvents
    if unplaced > 0 { lines.append("geotrigger: map: \(grouped(unplaced)) events with no place to mark them (no fix of their device, no region to stand for it)") }
    writeStandardError(lines.joined(separator: "\n") + "\n")
}
