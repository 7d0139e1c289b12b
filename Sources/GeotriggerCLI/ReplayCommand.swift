import ArgumentParser
import Geotrigger
import GeotriggerMap
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerFormats
import GeotriggerRuntime

extension InitialPolicy: ExpressibleByArgument {}
extension ReadingFormat: ExpressibleByArgument {}
extension SpatialIndexKind: ExpressibleByArgument {}

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay GPS fixes against regions: enter/exit/dwell events and the notifications they trigger.",
        discussion: """
            Readings come from the files given, merged by time (each file in time order), \
            or from standard input. Formats: NDJSON (.ndjson, .jsonl), CSV with a header \
            (.csv), GPX (.gpx).

            Events go to standard output, one JSON object per line:
              {"t":"…","event":"enter","device":"d1","region":"home","distance":48.20}
              {"t":"…","event":"exit","device":"d1","region":"home","enteredAt":"…"}
            A summary goes to standard error: what was read (GPS fixes, beacon sightings, \
            control records), the region events and notifications by kind, and what was \
            skipped and why. Bad records are reported as FILE:LINE: reason, counted and \
            skipped (or stop the run with --strict).

            Examples:
              # the demo: a real hike in Slovenia, notifications, a map
              geotrigger replay --regions datasets/regions/slovenia-croatia.geojson \\
                --requests examples/demo/requests.json --dwell 600 --map demo-map.html \\
                datasets/gpxpy_tracks/cerknicko-jezero.gpx examples/demo/pushes.ndjson
              # from a pipe, with dwell events after 5 minutes inside
              cat fixes.ndjson | geotrigger replay --regions zones.geojson --dwell 300
              # exact mode: events are exactly the geodesic boundary crossings
              geotrigger replay --regions zones.csv --hysteresis 0 --max-accuracy 0 a.gpx
              # a long run that survives kill -9: the same command again resumes it
              geotrigger replay --regions zones.csv --checkpoint ck -o out.ndjson a.ndjson

            With --requests, the scheduling core delivers notifications like Apple's \
            UserNotifications: location triggers fire on region events, time-interval and \
            calendar triggers on the stream clock, push triggers on {"op":"push"} records. \
            Each delivery is a "deliver" event right after what caused it, with the actions \
            its category offers and what the user was shown ("presented"). What follows a \
            delivery comes as records too: {"op":"setCategories","categories":[…]}, \
            {"op":"respond","id":"…","action":"default"|"dismiss"|ACTION,"text":"…"} (a \
            "response" event), {"op":"authorize","options":["alert","sound"],"granted":true}, \
            {"op":"appState","state":"foreground","presentation":["sound"]}, and pushes with \
            an APNs payload: {"op":"push","id":"…","payload":{"aps":{"alert":"Hi"}}} (one \
            without alert, sound or badge is a "silentPush" event). --service-extension \
            rewrites "mutable-content" pushes.

            Regions may change mid-stream: {"t":…,"op":"addRegion","region":{GeoJSON Feature}} \
            and {"t":…,"op":"removeRegion","id":"…"} (visits end with "reason":"removed" or \
            "replaced"); --expire S forgets devices silent for S seconds.

            Exit status: 0 success (also after SIGINT/SIGTERM with --checkpoint), 64 usage \
            error, 65 bad regions or requests file (or a bad reading under --strict, or a \
            checkpoint of another run), 66 input file missing, 74 I/O error.
            """
    )



    @OptionGroup(title: "Regions and decisions")
    var engine: EngineOptions

    @Argument(help: ArgumentHelp("Reading files (NDJSON, CSV, GPX, NMEA or gpsd's reports), or directories of them (a file per device: every file in it, in name order). None, or -, reads standard input.", valueName: "readings"))
    var readings: [String] = []

    @Option(help: ArgumentHelp("Input format, overriding the extension (where the extension says nothing — .log, .txt, standard input — the content decides between NMEA 0183 and NDJSON).", valueName: "ndjson|csv|gpx|nmea"))
    var format: ReadingFormat?

    @Option(help: ArgumentHelp("Device id for GPX and NMEA input (default: the file name without extension, stdin for standard input); at most 256 bytes of UTF-8.", valueName: "id"))
    var device: String?











    @Option(name: .shortAndLong, help: ArgumentHelp("Write events to FILE instead of standard output.", valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("Also draw the replay (regions, tracks, events) to FILE.svg or FILE.html, as `geotrigger map` does; needs reading files, not standard input.", valueName: "file"))
    var map: String?

    @Option(help: ArgumentHelp("Write every rejected record as SOURCE:LINE<TAB>reason<TAB>record.", valueName: "file"))
    var rejects: String?

    @Option(help: ArgumentHelp("At the end, write JSON with each device's region states.", valueName: "file"))
    var stateOut: String?

    @Option(help: ArgumentHelp("Spread devices over N threads (by a hash of the device id), each with its own region index and engine. Events, rejected-record reports, --state-out and the summary counts are byte for byte those of --jobs 1: timers still fire in stream-clock order across devices. Besides the N jobs, one thread reads, routes and merges; each job builds its own copy of the index (memory and start-up time grow with N).", valueName: "N"))
    var jobs: Int = 1

    @Option(help: ArgumentHelp("Keep the run's state in DIR: a snapshot every --checkpoint-every records, at the end, and on SIGINT/SIGTERM (then exit 0). Running the same command again resumes from the newest snapshot: output and --rejects are cut back to where it was taken, inputs are read on from there, and the final files are byte for byte those of a run never interrupted. A snapshot of another run (other regions, requests, options or inputs) is refused (exit 65).", valueName: "DIR"))
    var checkpoint: String?

    @Option(help: ArgumentHelp("Records between snapshots with --checkpoint.", valueName: "N"))
    var checkpointEvery: Int = 1_000_000


    @Option(help: ArgumentHelp("A notification service extension: CMD (run by /bin/sh) is started once and asked to rewrite every push whose APNs payload has an alert and \"mutable-content\":1. It reads one JSON line per push, {\"device\",\"request\",\"content\"}, and answers one line, {\"content\":{…}}; it may change title, subtitle, body, badge, sound, userInfo and attachments. Without an answer in time, or if it exits or answers nonsense, the push is delivered as sent (\"extension\":\"timeout\" or \"failed\") and the next push starts it again.", valueName: "CMD"))
    var serviceExtension: String?

    @Option(help: ArgumentHelp("Seconds of wall time the service extension has to answer (iOS gives about 30). The only option that makes a replay depend on wall time.", valueName: "S"))
    var extensionTimeout: Double = 30

    @Flag(inversion: .prefixedNo, help: "Show a progress bar on stderr (default: when replaying files to a terminal).")
    var progress: Bool?

    @Flag(name: .shortAndLong, help: "Do not print the summary on stderr.")
    var quiet = false

    func validate() throws {
        if !(1...256).contains(jobs) { throw ValidationError("--jobs must be between 1 and 256") }
        if let device, !InputLimits.identifierFits(device) { throw ValidationError(Replay.deviceTooLong(device)) }
        if checkpointEvery < 1 { throw ValidationError("--checkpoint-every must be a positive number of records") }
        if !(extensionTimeout > 0 && extensionTimeout <= 3600) {
            throw ValidationError("--extension-timeout must be a number of seconds above 0, at most 3600")
        }
        if serviceExtension?.isEmpty == true { throw ValidationError("--service-extension needs a command") }
        if let map {
            if MapFile.kind(ofPath: map) == nil { throw ValidationError("--map \(map): \(MapFile.kindProblem)") }
            if readings.isEmpty || readings.contains("-") {
                throw ValidationError("--map needs reading files: standard input cannot be read again to draw the tracks")
            }
        }
    }

    func run() throws {
        FreedMemory.keepForReuse()
        var config = ReplayConfiguration(engine: engine.configuration())
        config.inputs = try readingFiles(readings)
        config.format = format
        config.device = device
        config.outputPath = output
        config.rejectsPath = rejects
        config.statePath = stateOut
        config.jobs = jobs
        config.checkpointDirectory = checkpoint
        config.checkpointEvery = checkpointEvery
        config.serviceExtension = serviceExtension
        config.extensionTimeout = extensionTimeout
        let eventsFile = output.flatMap { $0 == "-" ? nil : $0 }
        config.keepsEvents = map != nil && eventsFile == nil
        let readsFiles = readings.contains { $0 != "-" }
        config.progress = progress ?? (readsFiles && isatty(STDERR_FILENO) != 0)

        let replay = Replay(configuration: config)
        do {
            let stats = try replay.run()
            if replay.stoppedBySignal {
                writeStandardError("geotrigger: stopped by a signal; the checkpoint in \(checkpoint ?? "") holds the run: "
                                   + "run the same command again to go on\n")
            }
            if !quiet { writeStandardError(stats.summary) }
            LeftForExit.keep(replay)
            if let map, !replay.stoppedBySignal {
                try drawReplay(to: map, events: eventsFile.map { .file($0) } ?? .bytes(replay.keptEvents))
            }
        } catch let error as ReplayError {
            writeStandardError("geotrigger: \(error)\n")
            if !quiet && error.exitStatus == 65, case .strictRejection = error {
                writeStandardError(replay.statistics.summary)
            }
            throw ExitCode(error.exitStatus)
        }
    }
}

extension ReplayCommand {
    enum Events {
        case file(String)
        case bytes([UInt8])
    }

    /// `--map`: the regions and reading files read again, with the events this run wrote.
    func drawReplay(to path: String, events: Events) throws {
        let start = monotonicSeconds()
        let paths = try readingFiles(readings)
        var data = MapData(regions: try Replay.loadRegions(path: engine.regions))
        do {
            try data.readTracks(paths: paths, format: format, device: device)
            switch events {
            case .file(let p): data.readEvents(bytes: try RegionFile.readFile(path: p), fileName: p)
            case .bytes(let b): data.readEvents(bytes: b, fileName: "events")
            }
        } catch {
            writeStandardError("geotrigger: --map: \(error)\n")
            throw ExitCode(74)
        }
        try draw(data, to: path, options: MapOptions(), quiet: quiet, start: start, placesReported: true)
    }
}

/// Unix seconds or RFC 3339.
func parseTime(_ s: String) -> Double? {
    if let v = Double(s), v.isFinite { return v }
    return RFC3339.parse(s)
}

/// The options `replay` and `consume` share: what the engine is given and how it decides.
struct EngineOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Regions file: GeoJSON FeatureCollection, or CSV with header id,lat,lon,radius.", valueName: "file"))
    var regions: String

    @Option(help: ArgumentHelp("Notification requests: a JSON array of {id, content, trigger, devices}. Location, timeInterval, calendar and push triggers; deliveries are written as \"deliver\" events.", valueName: "file"))
    var requests: String?

    @Option(help: ArgumentHelp("Leave a circle only beyond radius + M metres. Default: max(20, 10 % of the radius) per region; 0 = exact boundary.", valueName: "M"))
    var hysteresis: Double?

    @Option(help: ArgumentHelp("Ignore fixes whose horizontal accuracy is worse than M metres (0 = no limit).", valueName: "M"))
    var maxAccuracy: Double = 200

    @Option(help: ArgumentHelp("Fast path: each device keeps the regions near where it last asked the index, and tests only those whose boundary it may have reached. How near (the reach) adapts to the device's speed and the clearances around it, between 0.7 M and 10 M metres (0 = plain path: query the index and test every nearby region at every fix). Events are identical either way.", valueName: "M"))
    var safeDistance: Double = 100

    @Option(name: .customLong("index"), help: ArgumentHelp("The tree over the regions' envelopes: packed (a flat Hilbert-sorted R-tree, 36 bytes per region, no GEOS call per query) or geos (the GEOS STRtree of SPEC §1). Both give the same candidates, hence the same events.", valueName: "packed|geos"))
    var tree: SpatialIndexKind = .packed

    @Option(help: ArgumentHelp("Emit dwell once per visit after S seconds continuously inside (default: off).", valueName: "S"))
    var dwell: Double?

    @Option(help: ArgumentHelp("Forget a device silent for S seconds of the stream clock: its visits end with exit and \"reason\":\"expired\" (stamped its last reading + S), its timers and notification center are dropped, its memory is freed; heard again, it is a new device. Memory stays bounded on an endless stream of new devices, with --jobs N too (default: off).", valueName: "S"))
    var expire: Double?

    @Option(help: ArgumentHelp("Whether a device's first fix inside a region emits enter.", valueName: "enter|none"))
    var initial: InitialPolicy = .enter

    @Option(help: ArgumentHelp("Beacon region exit after S seconds without a qualifying sighting.", valueName: "S"))
    var beaconExit: Double = 30

    @Option(help: ArgumentHelp("A beacon zone decided per beacon is entered only once its enter rule has held at every sighting for S seconds: shorter \"visits\" are grazes and fades, the flapping a real walk shows (0: enter at once). Zones decided by a fused position wait for their own beacon instead.", valueName: "S"))
    var beaconMinVisit: Double = BeaconOptions().minimumVisit

    @Option(help: ArgumentHelp("At the end of input, advance the clock to TIME (Unix seconds or RFC 3339, in the years 0001–9999) and fire due timers.", valueName: "TIME"))
    var until: String?

    @Flag(help: "Stop at the first bad reading (exit 65) instead of reporting and skipping it.")
    var strict = false

    @Flag(help: "Echo each region's properties in its events.")
    var echoProperties = false

    func validate() throws {
        if let hysteresis, !(hysteresis >= 0 && hysteresis.isFinite) {
            throw ValidationError("--hysteresis must be a finite number of metres ≥ 0")
        }
        if !(maxAccuracy >= 0 && maxAccuracy.isFinite) { throw ValidationError("--max-accuracy must be a finite number of metres ≥ 0") }
        if let dwell, !(dwell > 0 && dwell.isFinite) { throw ValidationError("--dwell must be a positive number of seconds") }
        if !(safeDistance >= 0 && safeDistance.isFinite) { throw ValidationError("--safe-distance must be a finite number of metres ≥ 0") }
        if let expire, !(expire > 0 && expire.isFinite) { throw ValidationError("--expire must be a positive number of seconds") }
        if !(beaconExit > 0 && beaconExit.isFinite) { throw ValidationError("--beacon-exit must be a positive number of seconds") }
        if !(beaconMinVisit >= 0 && beaconMinVisit.isFinite) {
            throw ValidationError("--beacon-min-visit must be a finite number of seconds ≥ 0")
        }
        if let until {
            guard let t = parseTime(until) else {
                throw ValidationError("--until must be Unix seconds or an RFC 3339 time, not \"\(until)\"")
            }
            if !InputLimits.timeIsWritable(t) { throw ValidationError("\(Replay.untilOutOfRange), not \"\(until)\"") }
        }
    }

    /// The engine's configuration with these options set.
    func configuration() -> EngineConfiguration {
        var config = EngineConfiguration(regionsPath: regions)
        config.requestsPath = requests
        config.hysteresis = hysteresis.map { .metres($0) } ?? .automatic
        config.monitor = MonitorOptions(maxAccuracy: maxAccuracy, dwell: dwell, initial: initial,
                                        safeDistance: safeDistance > 0 ? safeDistance : nil, expire: expire)
        config.beacons.exitAfter = beaconExit
        config.beacons.minimumVisit = beaconMinVisit
        config.until = until.flatMap(parseTime)
        config.strict = strict
        config.echoProperties = echoProperties
        config.tree = tree
        return config
    }
}
