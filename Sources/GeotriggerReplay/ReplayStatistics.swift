import GeotriggerMonitoring
import GeotriggerFormats
import GeotriggerEngine
import GeotriggerOutput
import GeotriggerCore

/// What a replay read, rejected and emitted: the stderr summary's content.
public struct ReplayStatistics: Sendable {
    public var fixes = 0
    public var sightings = 0
    public var controls = 0
    /// Rejected records by reason (indexed like `RejectReason.allCases`).
    public var rejected = [Int](repeating: 0, count: RejectReason.allCases.count)
    public var ignoredForAccuracy = 0
    /// GPX track points without a `<time>`: not readings, but reported so nothing vanishes unseen.
    public var gpxPointsWithoutTime = 0
    /// Lines that are no record, by kind (NMEA's other sentences, comments, binary bytes).
    public var passedOver: [String: Int] = [:]
    /// Sightings of beacons that no beacon region matches.
    public var sightingsUnmatched = 0
    /// Deliveries by trigger kind, in `EventWriter.triggerKinds` order.
    public var deliveries = [Int](repeating: 0, count: EventWriter.countedKinds)
    public var events = [Int](repeating: 0, count: RegionEvent.Kind.allCases.count)
    public var elapsed: Double = 0
    /// Of `elapsed`, the time spent reading the regions file and building the index, and how many
    /// regions it held.
    public var loadSeconds: Double = 0
    public var regions = 0
    public var inputs = 0
    /// Whether the events went to standard output, which the summary then says (a file the
    /// user named needs no reminder).
    public var eventsToStandardOutput = false
    /// The most memory the process held resident during the run (bytes), nil where unknown.
    public var peakResidentBytes: Int?
    /// `--jobs N` (N > 1): the jobs, and the CPU time (user + system, seconds) of the whole
    /// process and of the reading thread (loading, reading, routing, merging), which bounds how
    /// far more cores could take the run.
    public var jobs = 1
    public var cpuSeconds = 0.0
    public var readerCPUSeconds = 0.0
    /// `--checkpoint`: snapshots written by this process, the last one's size, the time all took
    /// (output files flushed to disk, input prefixes hashed, the snapshot built and written), and
    /// the record count of the snapshot the run resumed from (nil: it started afresh).
    public var checkpointsWritten = 0
    public var lastCheckpointBytes = 0
    public var checkpointSeconds = 0.0
    public var resumedAtRecord: Int?

    public init() {}

    public var rejectedTotal: Int { rejected.reduce(0, +) }
    /// Every record read, good or bad (blank lines excluded).
    public var records: Int { fixes + sightings + controls + rejectedTotal }

    /// Adds what an applier applied (fixes, of them ignored, sightings, of them unmatched, controls).
    package mutating func add(_ c: ReadingApplier.Counts) {
        fixes += c.fixes
        ignoredForAccuracy += c.ignoredForAccuracy
        sightings += c.sightings
        sightingsUnmatched += c.sightingsUnmatched
        controls += c.controls
    }

    /// What a checkpoint keeps of the counts (`replay --checkpoint`): records by kind and rejections.
    mutating func restoreCounts(from c: ReplayStatistics) {
        fixes = c.fixes
        ignoredForAccuracy = c.ignoredForAccuracy
        sightings = c.sightings
        sightingsUnmatched = c.sightingsUnmatched
        controls = c.controls
        rejected = c.rejected
    }

    public func count(of reason: RejectReason) -> Int {
        rejected[RejectReason.allCases.firstIndex(of: reason)!]
    }

    public func count(of kind: RegionEvent.Kind) -> Int { events[Int(kind.rawValue)] }

    /// The summary printed on stderr.
    public var summary: String {
        var lines: [String] = []
        let rate = elapsed > 0 ? Double(records) / elapsed : 0
        // A stream with no inputs of its own to count (a Kafka topic's partitions) says no "from".
        let from = inputs > 0 ? " from \(inputs) input\(inputs == 1 ? "" : "s")" : ""
        var read = "\(grouped(records)) records\(from): \(grouped(fixes)) GPS fix" + (fixes == 1 ? "" : "es")
        if sightings > 0 { read += ", \(grouped(sightings)) beacon sighting" + (sightings == 1 ? "" : "s") }
        if controls > 0 {
            read += ", \(grouped(controls)) control record" + (controls == 1 ? "" : "s") + " (scheduler or region changes)"
        }
        if rejectedTotal > 0 { read += ", \(grouped(rejectedTotal)) rejected" }
        lines.append(read)
        if rejectedTotal > 0 {
            let parts = RejectReason.allCases.enumerated().filter { rejected[$0.offset] > 0 }
                .map { "\($0.element.rawValue) \(grouped(rejected[$0.offset]))" }
            lines.append("  rejected: " + parts.joined(separator: ", "))
        }
        if ignoredForAccuracy > 0 {
            lines.append("  ignored: \(grouped(ignoredForAccuracy)) fixes less accurate than --max-accuracy")
        }
        if !passedOver.isEmpty { lines.append("  " + Self.passedOverLine(passedOver)) }
        if gpxPointsWithoutTime > 0 {
            lines.append("  skipped: \(grouped(gpxPointsWithoutTime)) GPX track points without <time>")
        }
        if sightingsUnmatched > 0 {
            lines.append("  unmatched: \(grouped(sightingsUnmatched)) beacon sightings match no beacon region")
        }
        let ev = RegionEvent.Kind.allCases.map { "\(grouped(events[Int($0.rawValue)])) \($0.name)" }
        lines.append("region events: " + ev.joined(separator: ", ") + (eventsToStandardOutput ? ", written to standard output" : ""))
        let kinds = EventWriter.triggerKinds.count
        let total = deliveries.prefix(kinds).reduce(0, +)
        if total > 0 {
            let byKind = EventWriter.triggerKinds.enumerated().filter { deliveries[$0.offset] > 0 }
                .map { "\(grouped(deliveries[$0.offset])) \($0.element)" }
            lines.append("deliveries: \(grouped(total)) notifications delivered (" + byKind.joined(separator: ", ") + ")")
        }
        // SPEC §5.1: what followed the deliveries, in words.
        func after(_ a: EventWriter.AfterDelivery) -> Int { a.slot < deliveries.count ? deliveries[a.slot] : 0 }
        func counted(_ n: Int, _ one: String, _ many: String) -> String { "\(grouped(n)) " + (n == 1 ? one : many) }
        var followed: [String] = []
        if after(.unlisted) > 0 {
            followed.append("\(grouped(after(.unlisted))) kept out of Notification Center (alerts not allowed, or the app in front showed them itself)")
        }
        if after(.response) > 0 { followed.append(counted(after(.response), "response", "responses") + " reached the app") }
        if after(.silentPush) > 0 { followed.append(counted(after(.silentPush), "silent push", "silent pushes") + " reached the app only") }
        if !followed.isEmpty { lines.append("  " + followed.joined(separator: "; ")) }
        let modified = after(.extensionModified), timedOut = after(.extensionTimeout), failed = after(.extensionFailed)
        if modified + timedOut + failed > 0 {
            lines.append("  service extension: " + counted(modified, "push", "pushes") + " rewritten, \(grouped(timedOut)) timed out and "
                         + "\(grouped(failed)) failed (those delivered as sent)")
        }
        if let resumedAtRecord {
            lines.append("checkpoint: resumed after record \(grouped(resumedAtRecord))")
        }
        if checkpointsWritten > 0 {
            lines.append("checkpoints: \(grouped(checkpointsWritten)) written in \(formatSeconds(checkpointSeconds)), "
                         + "the last \(formatMebibytes(lastCheckpointBytes))")
        }
        if let peak = peakResidentBytes { lines.append("peak memory \(formatMebibytes(peak))") }
        if jobs > 1 {
            lines.append("cpu \(formatSeconds(cpuSeconds)), \(formatSeconds(readerCPUSeconds)) of it on the reading thread "
                         + "and \(formatSeconds(cpuSeconds - readerCPUSeconds)) on \(jobs) jobs")
        }
        lines.append("elapsed \(formatSeconds(elapsed)), \(grouped(Int(rate.rounded()))) records/s "
                     + "(\(grouped(regions)) regions loaded and indexed in \(formatSeconds(loadSeconds)))")
        return lines.map { "geotrigger: " + $0 }.joined(separator: "\n") + "\n"
    }
}

package func formatSeconds(_ s: Double) -> String {
    let ms = Int((s * 1000).rounded())
    return "\(ms / 1000).\(String(repeating: "0", count: 3 - String(ms % 1000).count))\(ms % 1000) s"
}

/// 54,927,360 → "52.4 MiB" (one decimal).
package func formatMebibytes(_ bytes: Int) -> String {
    let tenths = Int((Double(bytes) / 104_857.6).rounded())
    return "\(grouped(tenths / 10)).\(tenths % 10) MiB"
}

extension ReplayStatistics {
    /// `passed over: 1,234 lines (640 GSV, 320 GSA, 12 comment, …)`, the kinds most common first.
    static func passedOverLine(_ counts: [String: Int]) -> String {
        let kinds = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { "\(grouped($0.value)) \($0.key)" }.joined(separator: ", ")
        return "passed over: \(grouped(counts.values.reduce(0, +))) lines (\(kinds))"
    }
}
