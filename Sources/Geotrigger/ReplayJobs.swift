import GeotriggerCore
import GeotriggerGeometry
import GeotriggerMonitoring
import GeotriggerReadings
import GeotriggerScheduling

/// `replay --jobs N`: devices spread over N threads, output byte for byte the one thread's.
///
/// This thread reads and decodes, interns devices (their first-seen order is the global device id
/// and their rank for timer ties), rejects what the single engine would reject without state
/// (decoding, a reading older than its device's previous one), counts the summary, and routes each
/// reading to job FNV-1a(device id) mod N in batches. A reading that moves the stream clock forward
/// is also sent to every other job as a tick, so each job's timers fire at the same point of the
/// input as on one thread. Jobs tag what they emit with the record's sequence number, the phase and
/// the timer's (due, queue, rank); the merge, also on this thread, puts the records back in that
/// order, reports rejected records in input order and stops `--strict` at the first one.
extension Replay {
    func runJobs(index: RegionIndex, ids: IDSlots, requests: [NotificationRequest], readings merged: MergedReadings,
                 output: OutputFile, rejects: OutputFile?, totalBytes: Int) throws {
        let config = configuration
        let jobs = config.jobs
        let setup = JobSetup(regions: index.regions, ids: ids,
                             givenOrder: index.givenPositions.map { .reordered(givenPositions: $0) } ?? .given,
                             hysteresis: config.hysteresis, tree: config.tree,
                             monitor: config.monitor,
                             beacons: config.beacons, requests: requests, echoProperties: config.echoProperties,
                             writeState: config.statePath != nil)
        let matcher = BeaconMatcher(regions: index.regions)
        let inputs = (0..<jobs).map { _ in JobQueue<JobBatch>(capacity: 4) }
        let results = JobQueue<JobResult>()
        // From here on only job 0 touches `index`.
        let handoff = IndexHandoff(index: index)
        let threads = (0..<jobs).map { j in
            JobThread { [inputs] in
                ReplayJob(job: j, setup: setup, index: j == 0 ? handoff.index : nil).run(input: inputs[j], output: results)
            }
        }
        let merge = JobMerge(jobs: jobs, strict: config.strict)
        var sentLast = false
        // Whatever happens, every job gets its last batch and every thread is joined.
        defer {
            if !sentLast { for q in inputs { q.push(JobBatch(through: .max, last: true)) } }
            while merge.running > 0 { merge.receive(results.pop()) }
            for thread in threads { thread.join() }
        }

        let devices = DeviceTable()
        var owner: [Int] = []
        var last: [Double] = []
        var clock = -Double.infinity
        var batches = [JobBatch](repeating: JobBatch(), count: jobs)
        var seq = 0
        var sinceFlush = 0
        let flushEvery = 8192 * jobs
        var snapshots: [Int: ReplayStatistics] = [:]
        var reported = 0
        let maxAccuracy = config.monitor.maxAccuracy
        let progress = config.progress && totalBytes > 0 ? ProgressBar(totalBytes: totalBytes, write: diagnostics) : nil
        var sinceProgress = 0

        func flush() throws {
            for j in 0..<jobs {
                batches[j].through = seq
                inputs[j].push(batches[j])
                batches[j] = JobBatch()
            }
            try merge.drain(results.popAll(), into: output, replay: self, rejects: rejects, reported: &reported)
        }
        /// Returns false when `--strict` stops the run here.
        func reject(_ reason: RejectReason, source: any ReadingDecoder, line: UnsafeRawBufferPointer) -> Bool {
            statistics.reject(reason)
            let place = "\(source.sourceName):\(source.lineNumber)"
            if config.strict {
                merge.readerStop = (seq, "\(place): \(Self.message(reason, nil))")
                return false
            }
            merge.rejections.append(PendingRejection(seq: seq, reason: reason, place: place, line: Array(line), byJob: false))
            return true
        }

        readLoop: while true {
            switch merged.next().step {
            case .end:
                break readLoop
            case .rejected(let reason):
                seq += 1
                if !reject(reason, source: merged.currentSource, line: merged.rejectedLine) { break readLoop }
            case .reading:
                seq += 1
                let r = merged.current
                let (g, isNew) = devices.intern(r.device)
                if isNew {
                    owner.append(Int(DeviceTable.fnv1a(r.device) % UInt64(jobs)))
                    last.append(-.infinity)
                    batches[owner[Int(g)]].names.append((g, Array(r.device)))
                }
                if r.t < last[Int(g)] {
                    if !reject(.outOfOrder, source: merged.currentSource, line: r.line) { break readLoop }
                    break
                }
                last[Int(g)] = r.t
                let j = owner[Int(g)]
                if r.t > clock {
                    clock = r.t
                    for k in 0..<jobs where k != j { batches[k].items.append(JobItem(kind: .tick, seq: seq, t: r.t)) }
                }
                var item = JobItem(kind: .fix, device: g, seq: seq, t: r.t)
                switch r.kind {
                case .fix:
                    (item.a, item.b, item.c) = (r.latitude, r.longitude, r.accuracy)
                    statistics.fixes += 1
                    if maxAccuracy > 0 && r.accuracy > maxAccuracy { statistics.ignoredForAccuracy += 1 }
                case .sighting:
                    item.kind = .sighting
                    (item.a, item.b, item.beacon) = (r.rssi, r.tx, r.beacon)
                    statistics.sightings += 1
                    var matches = false
                    matcher.forEachMatch(r.beacon) { _ in matches = true }
                    if !matches { statistics.sightingsUnmatched += 1 }
                case .control:
                    // A job may still refuse it; under --strict the summary is then this one's.
                    if config.strict { snapshots[seq] = statistics }
                    item.kind = .control
                    item.control = Int32(batches[j].controls.count)
                    batches[j].controls.append(JobControl(op: r.op, line: Array(r.line),
                                                          place: "\(merged.currentSource.sourceName):\(merged.currentSource.lineNumber)"))
                    statistics.controls += 1
                }
                batches[j].items.append(item)
            }
            sinceFlush += 1
            if sinceFlush >= flushEvery {
                sinceFlush = 0
                try flush()
                if merge.jobStop != nil { break }
            }
            sinceProgress += 1
            if let progress, sinceProgress >= 4096 {
                sinceProgress = 0
                progress.update(bytes: merged.bytesRead, records: statistics.records)
            }
        }
        if merge.readerStop == nil && merge.jobStop == nil, let until = config.until {
            seq += 1
            for j in 0..<jobs { batches[j].items.append(JobItem(kind: .tick, seq: seq, t: until)) }
            clock = max(clock, until)
        }
        for j in 0..<jobs { batches[j].last = true }
        sentLast = true  // `flush` pushes them before anything in it can throw
        try flush()
        while merge.running > 0 {
            try merge.drain([results.pop()], into: output, replay: self, rejects: rejects, reported: &reported)
        }
        if let (s, message) = merge.jobStop {
            statistics = snapshots[s] ?? statistics
            statistics.reject(.badControl)
            throw ReplayError.strictRejection(message)
        }
        if let (_, message) = merge.readerStop { throw ReplayError.strictRejection(message) }
        if let error = merged.ioErrors.first { throw ReplayError.io("\(error.source): \(error.message)") }
        progress?.finish()

        try finish(output: output, rejects: rejects, reported: reported, counts: merge.counts,
                   deliveryCounts: merge.deliveryCounts) { state in
            StateWriter.writeHeader(clock: clock, to: state)
            for (k, entry) in merge.states.sorted(by: { $0.device < $1.device }).enumerated() {
                if k > 0 { state.append(",") }
                entry.bytes.withUnsafeBytes { state.append($0) }
            }
            StateWriter.writeFooter(to: state)
        }
    }
}

/// The index the run built to check the regions, handed to job 0 so that it need not build its
/// own. `@unchecked Sendable`: after the hand-off only that job's thread uses the index and its
/// GEOS context (still one context per thread, never two at once), and the run releases its
/// reference only after joining the threads.
struct IndexHandoff: @unchecked Sendable {
    let index: RegionIndex
}

/// The merge side of `replay --jobs`: the jobs' results back into the single-threaded order.
final class JobMerge {
    let jobs: Int
    let strict: Bool
    /// Per job, results not yet written, and how far into the first one the merge is.
    private var pending: [[JobResult]]
    private var tagIndex: [Int]
    /// Per job, every record up to this sequence number has been handled.
    private var through: [Int]
    private(set) var running: Int
    /// Rejections not yet reported, the reader's (in order) and the jobs'.
    var rejections: [PendingRejection] = []
    /// `--strict`: the first rejection found by the reader, and the first found by a job.
    var readerStop: (Int, String)?
    private(set) var jobStop: (Int, String)?
    private(set) var counts = [Int](repeating: 0, count: RegionEvent.Kind.allCases.count)
    private(set) var deliveryCounts = [Int](repeating: 0, count: EventWriter.triggerKinds.count)
    private(set) var states: [(device: Int32, bytes: [UInt8])] = []

    init(jobs: Int, strict: Bool) {
        self.jobs = jobs
        self.strict = strict
        pending = Array(repeating: [], count: jobs)
        tagIndex = Array(repeating: 0, count: jobs)
        through = Array(repeating: 0, count: jobs)
        running = jobs
    }

    func receive(_ r: JobResult) {
        pending[r.job].append(r)
        through[r.job] = r.through
        rejections += r.rejections
        if r.last {
            running -= 1
            for k in counts.indices { counts[k] += r.counts[k] }
            for k in deliveryCounts.indices { deliveryCounts[k] += r.deliveryCounts[k] }
            states += r.states
        }
    }

    /// Takes `results` in, then writes every record and reports every rejection that all jobs are
    /// past: those are final.
    func drain(_ results: [JobResult], into output: OutputFile, replay: Replay, rejects: OutputFile?,
               reported: inout Int) throws {
        for r in results { receive(r) }
        guard jobStop == nil else { return }
        var limit = through.min() ?? 0
        var ready = rejections.filter { $0.seq <= limit }.sorted { $0.seq < $1.seq }
        rejections.removeAll { $0.seq <= limit }
        if strict, let first = ready.first(where: { $0.byJob }) {
            // The single engine stops after this control record: its own events are written.
            jobStop = (first.seq, "\(first.place): \(Replay.message(first.reason, first.detail))")
            limit = first.seq
            ready = []
        }
        for r in ready {
            if r.byJob {
                replay.statistics.controls -= 1
                replay.statistics.reject(r.reason)
            }
            try r.line.withUnsafeBytes {
                try replay.report(r.reason, detail: r.detail, place: r.place, line: $0, rejects: rejects, reported: &reported)
            }
        }
        try write(through: limit, into: output)
    }

    /// Writes the tagged records with sequence numbers up to `limit`, smallest tag first.
    private func write(through limit: Int, into output: OutputFile) throws {
        while true {
            var best = -1
            var bestTag = JobTag(seq: 0, phase: 0, queue: 0, due: 0, rank: 0, end: 0)
            for j in 0..<jobs {
                guard let tag = head(j), tag.seq <= limit else { continue }
                if best < 0 || tag.precedes(bestTag) {
                    best = j
                    bestTag = tag
                }
            }
            guard best >= 0 else { return }
            let k = tagIndex[best]
            let start = k == 0 ? 0 : pending[best][0].tags[k - 1].end
            pending[best][0].bytes.withUnsafeBytes { output.append(UnsafeRawBufferPointer(rebasing: $0[start..<bestTag.end])) }
            tagIndex[best] = k + 1
            do { try output.endRecord() } catch let error as IOFailure { throw ReplayError.io(error.description) }
        }
    }

    /// The job's next record, dropping results written completely.
    private func head(_ j: Int) -> JobTag? {
        // Subscripts, not `first`: a copy of the result would retain its four arrays per look.
        while !pending[j].isEmpty {
            if tagIndex[j] < pending[j][0].tags.count { return pending[j][0].tags[tagIndex[j]] }
            pending[j].removeFirst()
            tagIndex[j] = 0
        }
        return nil
    }
}
