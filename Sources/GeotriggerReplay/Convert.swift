import GeotriggerCore
import GeotriggerFormats
import GeotriggerEngine
import GeotriggerOutput

/// What `geotrigger convert` needs, as plain values (the CLI fills it from its flags).
public struct ConvertConfiguration: Sendable {
    /// Files to read; empty or `-` means standard input.
    public var inputs: [String] = []
    public var format: ReadingFormat? = nil
    /// `--device`: the device of every fix of a GPX, NMEA or gpsd input (and of NDJSON and CSV
    /// records without one).
    public var device: String? = nil
    /// Where the readings go (standard output for nil or `-`); its extension picks the format.
    public var outputPath: String? = nil
    public var rejectsPath: String? = nil
    public var strict = false
    public var reportedRejectLimit = 20

    public init() {}
}

/// What a conversion read and wrote, for its summary on stderr.
public struct ConvertStatistics: Sendable {
    public var inputs = 0
    public var written = 0
    /// Readings the output's format cannot hold (sightings and control records in GPX, control
    /// records in CSV).
    public var skipped = 0
    public var rejected = [Int](repeating: 0, count: RejectReason.allCases.count)
    public var untimedPoints = 0
    public var passedOver: [String: Int] = [:]
    public var elapsed = 0.0

    public var summary: String {
        var lines = ["geotrigger convert: \(grouped(written)) readings written from \(inputs) input\(inputs == 1 ? "" : "s")"]
        let total = rejected.reduce(0, +)
        if total > 0 {
            let reasons = zip(RejectReason.allCases, rejected).filter { $0.1 > 0 }
                .map { "\(grouped($0.1)) \($0.0.rawValue)" }.joined(separator: ", ")
            lines.append("rejected: \(grouped(total)) (\(reasons))")
        }
        if skipped > 0 { lines.append("not written: \(grouped(skipped)) readings the output's format cannot hold") }
        if !passedOver.isEmpty { lines.append(ReplayStatistics.passedOverLine(passedOver)) }
        if untimedPoints > 0 { lines.append("skipped: \(grouped(untimedPoints)) GPX track points without <time>") }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// `geotrigger convert`: readings exactly as the engine sees them, written back out. Every
/// reading goes through the engine's own applier (with no regions), so a record is rejected
/// here for what `replay` rejects it for (a fix older than its device's previous one
/// included), with the same reports.
public final class Convert {
    public let configuration: ConvertConfiguration
    /// Where reports go (stderr by default).
    public var diagnostics: (String) -> Void = writeStandardError

    public init(_ configuration: ConvertConfiguration) { self.configuration = configuration }

    public func run() throws -> ConvertStatistics {
        let start = monotonicSeconds()
        let config = configuration
        if let device = config.device, !InputLimits.identifierFits(byteCount: device.utf8.count) {
            throw ReplayError.usage(Replay.deviceTooLong(device))
        }
        let paths = config.inputs.isEmpty ? ["-"] : config.inputs
        let decoders = try Replay.openInputs(paths, format: config.format, device: config.device)
        let merged = MergedReadings(decoders)
        let writer: ReadingWriter
        let rejects: RecordBuffer?
        do {
            writer = ReadingWriter(format: ReadingWriter.Format(path: config.outputPath),
                                   output: try RecordBuffer(path: config.outputPath))
            rejects = try config.rejectsPath.map { try RecordBuffer(path: $0) }
        } catch let error as IOFailure {
            throw ReplayError.io(error.description)
        }
        let rejectSink = RejectSink(strict: config.strict, limit: config.reportedRejectLimit, output: rejects,
                                    diagnostics: diagnostics)
        // The engine with no region: its applier decides what is rejected, as in a replay.
        let engine = try Engine(regions: [])
        let applier = ReadingApplier(engine: engine)
        func reject(_ reason: RejectReason, detail: String? = nil, line: ByteView) throws {
            try Replay.reject(reason, detail: detail, place: merged.place, line: line, to: rejectSink)
        }
        readLoop: while true {
            switch merged.next().step {
            case .end:
                break readLoop
            case .rejected(let reason):
                try reject(reason, line: merged.rejectedLine)
            case .reading:
                let r = merged.current
                switch applier.apply(r) {
                case .rejected(let reason, let detail):
                    try reject(reason, detail: detail, line: r.line)
                case .batched, .applied:
                    try Replay.io { try writer.write(r) }
                }
            }
        }
        applier.flush()
        if let error = merged.ioErrors.first { throw ReplayError.io("\(error.source): \(error.message)") }
        try Replay.io {
            try writer.finish()
            try rejects?.flush()
        }
        rejectSink.finish()
        var s = ConvertStatistics()
        s.inputs = decoders.count
        s.written = writer.written
        s.skipped = writer.skipped
        s.rejected = rejectSink.counts
        s.untimedPoints = merged.untimedPoints
        s.passedOver = merged.passedOver
        s.elapsed = monotonicSeconds() - start
        return s
    }
}
