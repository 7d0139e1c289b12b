import GeotriggerCore
import GeotriggerGeometry
import GeotriggerMonitoring
import GeotriggerFormats
import GeotriggerScheduling
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerRuntime
import GeotriggerEngine
import GeotriggerOutput

/// What `replay` and `consume` share: the regions, the requests and the engine's options, and
/// how rejected records are handled (the CLI fills it from the options the two commands share).
public struct EngineConfiguration: Sendable {
    public var regionsPath: String
    /// `--requests`: a JSON array of notification requests.
    public var requestsPath: String? = nil
    public var hysteresis: Hysteresis = .automatic
    /// The tree over the regions' envelopes (`--index`).
    public var tree: SpatialIndexKind = .packed
    public var monitor = MonitorOptions()
    public var beacons = BeaconOptions()
    /// Advance the clock to this time at the end of the input (`consume`: when it stops for
    /// `--exit-when-idle`), firing due timers.
    public var until: Double? = nil
    public var strict = false
    public var echoProperties = false
    /// How many rejected records are reported one by one on stderr.
    public var reportedRejectLimit = 20

    public init(regionsPath: String) { self.regionsPath = regionsPath }
}

/// Everything `geotrigger replay` needs, as plain values (the CLI fills it from its flags): the
/// engine's configuration (its fields are also reachable here by name) and the replay's own.
@dynamicMemberLookup
public struct ReplayConfiguration: Sendable {
    public var engine: EngineConfiguration
    /// Files to read; empty or `-` means standard input.
    public var inputs: [String] = []
    public var format: ReadingFormat? = nil
    /// Device id for GPX input (default: the file name without extension).
    public var device: String? = nil
    public var outputPath: String? = nil
    public var rejectsPath: String? = nil
    public var statePath: String? = nil
    /// Draw a progress bar on stderr (the CLI turns it on for files when stderr is a terminal).
    public var progress = false
    /// `--jobs`: threads the devices are spread over (by a hash of the device id). The output is
    /// byte for byte the one thread's.
    public var jobs = 1
    /// `--checkpoint`: the folder of the run's snapshots; the run resumes from the newest.
    public var checkpointDirectory: String? = nil
    /// `--checkpoint-every`: records between snapshots.
    public var checkpointEvery = 1_000_000
    /// `--service-extension`: a command that rewrites `mutable-content` pushes (SPEC §5.1).
    public var serviceExtension: String? = nil
    /// `--extension-timeout`: seconds of wall time to wait for its answer.
    public var extensionTimeout = 30.0
    /// Keep a copy of the events written to standard output (`keptEvents`), for `replay --map`.
    public var keepsEvents = false

    public init(engine: EngineConfiguration) { self.engine = engine }
    public init(regionsPath: String) { engine = EngineConfiguration(regionsPath: regionsPath) }

    /// The engine's fields by name (`config.monitor`, `config.strict`, …).
    public subscript<T>(dynamicMember field: WritableKeyPath<EngineConfiguration, T>) -> T {
        get { engine[keyPath: field] }
        set { engine[keyPath: field] = newValue }
    }
}

/// Why a replay stopped early; each maps to one exit status of SPEC §2.
public enum ReplayError: Error, CustomStringConvertible {
    /// A bad regions file (65).
    case badRegions(RegionFileError)
    /// A bad requests file (65).
    case badRequests(RequestFileError)
    /// A bad reading under `--strict` (65).
    case strictRejection(String)
    /// An input file that does not exist (66).
    case inputMissing(String)
    /// Reading or writing failed (74).
    case io(String)
    /// The command line cannot work, e.g. an input whose format cannot be told (64).
    case usage(String)
    /// `--checkpoint`: the folder's snapshot belongs to another run, or cannot be read (65).
    case checkpoint(String)

    public var exitStatus: Int32 {
        switch self {
        case .badRegions, .badRequests, .strictRejection, .checkpoint: return 65
        case .inputMissing: return 66
        case .io: return 74
        case .usage: return 64
        }
    }

    public var description: String {
        switch self {
        case .badRegions(let e): return e.description
        case .badRequests(let e): return e.description
        case .strictRejection(let s): return "\(s) (stopped by --strict)"
        case .inputMissing(let path): return "\(path): no such file"
        case .io(let s), .usage(let s), .checkpoint(let s): return s
        }
    }
}

/// Runs a whole replay: regions → index → monitor, readings merged by time, events to NDJSON.
///
/// Data flows one way: decoders produce readings, the monitor asks the index and emits events,
/// the event writer formats them. Timers fire from the stream clock before each reading.
public final class Replay {
    public let configuration: ReplayConfiguration
    /// What the run read, rejected and emitted so far (the summary's figures).
    public var statistics: ReplayStatistics {
        var s = tally
        if let checkpointer {
            s.checkpointsWritten = checkpointer.written
            s.lastCheckpointBytes = checkpointer.lastBytes
            s.checkpointSeconds = checkpointer.seconds
        }
        if let counts = applier?.counts { s.add(counts) }
        if let rejectSink { s.rejected = rejectSink.counts }
        return s
    }
    /// The figures counted here (rejections, the run's sizes and times); with one thread, what
    /// was applied is counted by the applier (`statistics` adds the two).
    @exclusivity(unchecked) var tally = ReplayStatistics()
    /// The one-thread run's applier, once there is one.
    private var applier: ReadingApplier?
    /// Counts, reports and writes the run's rejected records, once the outputs are open.
    var rejectSink: RejectSink?
    /// `--checkpoint`: the run's snapshots, and how the read loop takes one.
    var checkpointer: Checkpointer?
    private var checkpointNow: (() throws -> Void)?
    /// The run stopped at SIGINT or SIGTERM after writing a checkpoint, before its end.
    public internal(set) var stoppedBySignal = false
    private var keptOutput: RecordBuffer?
    /// The run's inputs, open and mapped for as long as the replay (`run` sets it).
    private var inputs: MergedReadings?
    /// With `keepsEvents`, the events this run wrote (not those of a run it resumed).
    public var keptEvents: [UInt8] { keptOutput?.copy ?? [] }
    /// Written to stderr: reject reports, progress and the summary.
    let diagnostics: (String) -> Void
    /// `--service-extension`: the one child every engine (job) asks; ended with the run.
    let serviceExtension: ServiceExtensionProcess?

    public init(configuration: ReplayConfiguration, diagnostics: @escaping (String) -> Void = { writeStandardError($0) }) {
        self.configuration = configuration
        self.diagnostics = diagnostics
        serviceExtension = configuration.serviceExtension.map {
            ServiceExtensionProcess(command: $0, timeout: configuration.extensionTimeout, report: diagnostics)
        }
    }

    deinit { serviceExtension?.finish() }

    /// Reads and checks the regions file; a bad file stops here, with the exit status SPEC §2 gives it.
    public static func loadRegions(path: String) throws -> [Region] {
        do {
            return try RegionFile.load(path: path)
        } catch {
            var error = error
            if error.file.isEmpty { error.file = path }
            switch error.kind {
            case .fileNotFound: throw ReplayError.inputMissing(path)
            case .unreadable: throw ReplayError.io(error.description)
            case .invalidContent: throw ReplayError.badRegions(error)
            }
        }
    }

    /// Loads `--requests`; a bad file stops here, before any reading.
    public static func loadRequests(path: String, index: RegionIndex) throws -> [NotificationRequest] {
        let bytes: [UInt8]
        do { bytes = try RegionFile.readFile(path: path) } catch {
            if error.kind == .fileNotFound { throw ReplayError.inputMissing(path) }
            throw ReplayError.io(error.description)
        }
        let ids = Set(index.regions.map(\.id))
        do {
            return try RequestsFile.parse(bytes: bytes, fileName: path, knownRegion: { ids.contains($0) })
        } catch {
            throw ReplayError.badRequests(error)
        }
    }

    /// The configuration's own times and ids within the input limits (SPEC §3), as the command
    /// line checks them: a usage error otherwise, before anything is read.
    package static func checkLimits(_ config: EngineConfiguration, device: String? = nil) throws {
        if let until = config.until, !InputLimits.timeIsWritable(until) {
            throw ReplayError.usage(untilOutOfRange)
        }
        if let device, !InputLimits.identifierFits(device) {
            throw ReplayError.usage(deviceTooLong(device))
        }
    }

    /// Why `--until` is refused when it is outside the years 0001–9999.
    public static let untilOutOfRange = "--until must be a time in the years 0001–9999 (RFC 3339 "
        + "0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, Unix seconds -62135596800 to 253402300799.999)"

    /// Why `--device` is refused when it is longer than the identifier limit.
    public static func deviceTooLong(_ device: String) -> String {
        "--device: " + InputLimits.identifierTooLong("the device id", byteCount: device.utf8.count)
    }

    @discardableResult
    public func run() throws -> ReplayStatistics {
        let start = monotonicSeconds()
        let config = configuration
        let setup = try RunSetup(config.engine, device: config.device)
        let (index, ids, requests) = (setup.index, setup.ids, setup.requests)
        tally.loadSeconds = setup.loadSeconds
        tally.regions = index.count

        // Open every input before reading any, so a missing file stops the run cleanly.
        let paths = config.inputs.isEmpty ? ["-"] : config.inputs
        let decoders = try Self.openInputs(paths, format: config.format, device: config.device,
                                           mapsFiles: config.jobs > 1)
        tally.inputs = decoders.count
        tally.eventsToStandardOutput = config.outputPath == nil || config.outputPath == "-"
        // For the progress bar only: a stat of each of a fleet's thousands of logs is not free.
        let totalBytes = config.progress ? paths.map(fileSize).reduce(0, +) : 0
        let merged = MergedReadings(decoders)
        inputs = merged

        // --checkpoint: the newest snapshot of this run, if there is one, is where it goes on.
        var checkpointer: Checkpointer?
        var resumed: Checkpointer.Resumed?
        if let directory = config.checkpointDirectory {
            let c = try Checkpointer(directory: directory, every: config.checkpointEvery,
                                     identity: try RunIdentity(configuration: config, inputs: paths), paths: paths)
            resumed = try c.resumable(note: diagnostics)
            tally.resumedAtRecord = resumed?.records
            if let resumed {
                try c.verifyInputs()
                if let k = merged.resume(at: resumed.inputs.map(\.position)) {
                    throw ReplayError.checkpoint("cannot resume: \(paths[k]) ends before the place the checkpoint recorded")
                }
            }
            checkpointer = c
            StopSignals.catchSignals()
        }
        self.checkpointer = checkpointer

        let output: RecordBuffer
        let rejects: RecordBuffer?
        do {
            if let resumed, let path = config.outputPath, path != "-" {
                output = try RecordBuffer(path: path, resumingAt: resumed.outputLength)
            } else {
                output = try RecordBuffer(path: config.outputPath)
            }
            output.keepsCopy = config.keepsEvents
            keptOutput = output
            if let resumed, let path = config.rejectsPath {
                rejects = try RecordBuffer(path: path, resumingAt: resumed.rejectsLength)
            } else {
                rejects = try config.rejectsPath.map { try RecordBuffer(path: $0) }
            }
        } catch let error as IOFailure {
            throw ReplayError.io(error.description)
        }
        let rejectSink = RejectSink(strict: config.strict, limit: config.reportedRejectLimit, output: rejects,
                                    diagnostics: diagnostics)
        self.rejectSink = rejectSink
        // The counts so far (with one job, the applier counts on from zero: `statistics` adds them).
        if let resumed {
            tally.restoreCounts(from: resumed.tally)
            rejectSink.counts = resumed.tally.rejected
            rejectSink.reported = resumed.reported
        }
        if config.jobs > 1 {
            try runJobs(index: index, ids: ids, requests: requests, readings: merged, output: output, rejects: rejects,
                        totalBytes: totalBytes, resumed: resumed)
            tally.gpxPointsWithoutTime = merged.untimedPoints
            tally.passedOver = merged.passedOver
            return finished(since: start)
        }

        // Requests were checked against the regions already, so this cannot refuse them.
        let engine = try Engine(index: index, options: config.monitor, beaconOptions: config.beacons, requests: requests)
        engine.serviceExtension = serviceExtension
        let writer = EventWriter(output: output, devices: engine.devices, regions: index.regions, ids: ids,
                                 echoProperties: config.echoProperties)
        engine.output = writer
        let applier = ReadingApplier(engine: engine)
        self.applier = applier
        let progress = config.progress && totalBytes > 0 ? ProgressBar(totalBytes: totalBytes, write: diagnostics) : nil

        if let resumed {
            var r = SnapshotReader(resumed.body, offset: resumed.engineOffset)
            do {
                try engine.restoreSnapshot(from: &r)
            } catch {
                throw ReplayError.checkpoint("cannot resume: \(error.message)")
            }
            writer.restoreCounts(events: resumed.eventCounts, deliveries: resumed.deliveryCounts)
        }
        /// A checkpoint of the one-thread run, now (between records).
        func checkpoint() throws {
            guard let checkpointer else { return }
            applier.flush()
            if let failure = writer.failure { throw ReplayError.io(failure.description) }
            try checkpointer.synchronize(output, rejects)
            let s = statistics
            try checkpointer.write(records: s.records, positions: merged.positions, outputLength: output.written,
                                   rejectsLength: rejects?.written ?? 0, reported: rejectSink.reported, statistics: s,
                                   eventCounts: writer.counts, deliveryCounts: writer.deliveryCounts) { w in
                engine.writeSnapshot(to: &w)
            }
        }
        checkpointNow = checkpoint
        // The closure holds this replay (and the output files): let go of it however the run ends,
        // or the files are never flushed and closed.
        defer { checkpointNow = nil }
        // One input (the usual case) is read through its concrete type: direct calls, no
        // existential copied and retained per reading. Several go through the merge by time.
        if decoders.count == 1, let d = decoders[0] as? NDJSONDecoder {
            try readAll(d, applier: applier, writer: writer, progress: progress)
        } else if decoders.count == 1, let d = decoders[0] as? CSVDecoder {
            try readAll(d, applier: applier, writer: writer, progress: progress)
        } else {
            try readAll(merged, applier: applier, writer: writer, progress: progress)
        }
        if let error = merged.ioErrors.first { throw ReplayError.io("\(error.source): \(error.message)") }
        progress?.finish()
        tally.gpxPointsWithoutTime = merged.untimedPoints
        tally.passedOver = merged.passedOver
        if checkpointer != nil && StopSignals.requested {
            // Stopped by SIGINT or SIGTERM: the snapshot is the run's state; the same command goes on.
            try checkpoint()
            stoppedBySignal = true
            return finished(since: start)
        }

        // The last snapshot, at the end of the input and before --until and --state-out, which a
        // run resumed from it does again: the same command run again writes the same files again,
        // and an input that has grown since is read on as if the run had never ended.
        try checkpoint()
        if let until = config.until { engine.advance(to: until) }
        if let failure = writer.failure { throw ReplayError.io(failure.description) }
        try finish(output: output, rejects: rejects, counts: writer.counts,
                   deliveryCounts: writer.deliveryCounts) { StateWriter.write(engine: engine, to: $0) }
        return finished(since: start)
    }

    /// The run's statistics once it has ended (successfully or at a stop signal), with its time
    /// and peak memory.
    private func finished(since start: Double) -> ReplayStatistics {
        tally.elapsed = monotonicSeconds() - start
        tally.peakResidentBytes = peakResidentBytes()
        if configuration.jobs > 1 {
            // The jobs' threads are joined by now: their time is in the process's.
            let cpu = CPUTime.now()
            tally.jobs = configuration.jobs
            (tally.cpuSeconds, tally.readerCPUSeconds) = (cpu.process, cpu.thread)
        }
        return statistics
    }

    /// The single-threaded read loop: every record of `source` through the applier, rejects
    /// reported, progress shown. Generic, so that each concrete source gets its own copy.
    private func readAll<Source: ReplaySource>(_ source: Source, applier: ReadingApplier, writer: EventWriter,
                                               progress: ProgressBar?) throws {
        // Records between stops of the plain lane (progress, checkpoints, stop signals).
        let stride = checkpointer.map { min(4096, $0.every) } ?? 4096
        var sinceProgress = 0
        defer { applier.flush() }
        // Live input (SPEC §2): whenever the input would block, what is decided so far (the
        // batched fixes' events, the timers they fired, the reports) leaves at once.
        let rejects = rejectSink
        source.whenIdle { [unowned applier, unowned writer] in
            applier.flush()
            writer.flush()
            try? rejects?.flush()
        }
        func reject(_ reason: RejectReason, detail: String? = nil, line: ByteView) throws {
            // Under --strict the run stops here: the events before this record are written first.
            applier.flush()
            try self.reject(reason, detail: detail, place: source.rejectPlace, line: line)
        }
        readLoop: while true {
            // Whether fixes may be batched is asked again once per lane, as records that are not
            // plain fixes may have changed the answer.
            applier.resume()
            // Runs of plain fixes go straight from the decoder's buffer to the applier, which
            // stops the lane for what needs the loop (a rejected fix, a progress update, a write
            // failure); that is done here, the line still current.
            let lane = source.takePlainFixes(into: applier, budget: stride - sinceProgress) {
                writer.failure == nil
            }
            sinceProgress += lane.taken
            if let reason = lane.rejected {
                try reject(reason, line: source.rejectedLine)
                sinceProgress += 1
            }
            if sinceProgress >= stride {
                sinceProgress = 0
                let records = statistics.records
                progress?.update(bytes: source.bytesRead, records: records)
                if let checkpointer, records >= checkpointer.nextAt { try checkpointNow?() }
            }
            // A stop signal ends the input here; the run then writes a checkpoint and stops.
            if checkpointer != nil && StopSignals.requested { break readLoop }
            if let failure = writer.failure { throw ReplayError.io(failure.description) }
            switch source.nextStep() {
            case .end:
                break readLoop
            case .rejected(let reason):
                try reject(reason, line: source.rejectedLine)
            case .reading:
                let r = source.current
                if case .rejected(let reason, let detail) = applier.apply(r) {
                    try reject(reason, detail: detail, line: r.line)
                }
                if let failure = writer.failure { throw ReplayError.io(failure.description) }
            }
            sinceProgress += 1
        }
    }

    /// The end of a run: flushes the events and `--rejects`, writes `--state-out` with `writeState`,
    /// and completes the summary.
    func finish(output: RecordBuffer, rejects: RecordBuffer?, counts: [Int], deliveryCounts: [Int],
                writeState: (RecordBuffer) -> Void) throws {
        do {
            try output.flush()
            try rejects?.flush()
            if let statePath = configuration.statePath {
                let state = try RecordBuffer(path: statePath)
                writeState(state)
                try state.flush()
            }
        } catch let error as IOFailure {
            throw ReplayError.io(error.description)
        }
        rejectSink?.finish()
        tally.events = counts
        tally.deliveries = deliveryCounts
    }

    /// A record rejected at `place` (`FILE:LINE`): to the run's reject sink, which stops the run
    /// under `--strict`.
    private func reject(_ reason: RejectReason, detail: String? = nil, place: String, line: ByteView) throws {
        try Self.reject(reason, detail: detail, place: place, line: line, to: rejectSink!)
    }

    /// A record rejected at `place` (`FILE:LINE`), to `sink`; the run's error under `--strict`
    /// (`replay` and `convert`).
    static func reject(_ reason: RejectReason, detail: String? = nil, place: String,
                       line: ByteView, to sink: RejectSink) throws {
        if let stop = try io({ try sink.reject(reason, detail: detail, place: place, record: line) }) {
            throw ReplayError.strictRejection(stop)
        }
    }

    /// Every input opened before any is read, so a missing file stops the run cleanly, with the
    /// exit status SPEC §2 gives it (`replay` and `convert`).
    /// With several inputs, regular files are mapped rather than read (`LineReader`'s `mapsFile`);
    /// with one, where `mapsFiles` says so (`--jobs`, whose jobs decode the file ahead of the
    /// reader: `DecodeAhead`).
    static func openInputs(_ paths: [String], format: ReadingFormat?, device: String?,
                           mapsFiles: Bool = false) throws -> [any ReadingDecoder] {
        let mapped = paths.count > 1 || mapsFiles
        return try paths.map { path in
            do {
                return try ReadingInput.open(path: path, format: format, device: device, mapsFile: mapped)
            } catch let error as ReadingInputError {
                switch error {
                case .missing(let p): throw ReplayError.inputMissing(p)
                case .unreadable: throw ReplayError.io(error.description)
                }
            }
        }
    }

    /// `body`, its write failure made the run's I/O error.
    static func io<R>(_ body: () throws -> R) throws -> R {
        do { return try body() } catch let error as IOFailure { throw ReplayError.io(error.description) }
    }
}

public func writeStandardError(_ s: String) {
    var s = s
    s.withByteView { _ = SystemIO.writeAll(STDERR_FILENO, $0) }
}

/// `s` to standard output at once, unbuffered (a parent reading the pipe sees it now).
public func writeStandardOutput(_ s: String) {
    var s = s
    s.withByteView { _ = SystemIO.writeAll(STDOUT_FILENO, $0) }
}

public func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// Size of a regular file, 0 for standard input, pipes and anything unknown.
func fileSize(_ path: String) -> Int {
    guard path != "-" else { return 0 }
    var st = stat()
    guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return 0 }
    return Int(st.st_size)
}

/// What the replay loop reads: a decoder of a known type, or several merged by time.
protocol ReplaySource: AnyObject {
    func nextStep() -> DecodeStep
    /// The plain lane, through the applier (`ReadingApplier.takePlainFixes`).
    func takePlainFixes(into applier: ReadingApplier, budget: Int, keepGoing: () -> Bool) -> ReadingApplier.Lane
    func whenIdle(_ body: @escaping () -> Void)
    /// The reading of the last `.reading` step.
    var current: Reading { get }
    var rejectedLine: ByteView { get }
    /// Where the last step was, `FILE:LINE`, for reject reports.
    var rejectPlace: String { get }
    var bytesRead: Int { get }
}

/// A single decoder is its own source.
extension ReplaySource where Self: ReadingDecoder {
    @inline(__always) func nextStep() -> DecodeStep { next() }
    var rejectPlace: String { "\(sourceName):\(lineNumber)" }
}

extension NDJSONDecoder: ReplaySource {
    func takePlainFixes(into applier: ReadingApplier, budget: Int, keepGoing: () -> Bool) -> ReadingApplier.Lane {
        applier.takePlainFixes(from: self, budget: budget, keepGoing: keepGoing)
    }
}

extension CSVDecoder: ReplaySource {
    func takePlainFixes(into applier: ReadingApplier, budget: Int, keepGoing: () -> Bool) -> ReadingApplier.Lane {
        applier.takePlainFixes(from: self, budget: budget, keepGoing: keepGoing)
    }
}

extension MergedReadings: ReplaySource {
    @inline(__always) func nextStep() -> DecodeStep { next().step }
    func takePlainFixes(into applier: ReadingApplier, budget: Int, keepGoing: () -> Bool) -> ReadingApplier.Lane {
        applier.takePlainFixes(from: self, budget: budget, keepGoing: keepGoing)
    }
    var rejectPlace: String { place }
}
