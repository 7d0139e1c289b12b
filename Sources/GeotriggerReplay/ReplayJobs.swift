import GeotriggerCore
import GeotriggerGeometry
import GeotriggerMonitoring
import GeotriggerScheduling
import GeotriggerRuntime
import GeotriggerFormats
import GeotriggerEngine
import GeotriggerOutput

/// `replay --jobs N`: devices spread over N threads, output byte for byte the one thread's.
///
/// This thread reads and decodes, interns devices (their first-seen order is the global device id
/// and their rank for timer ties), rejects what the single engine would reject without state
/// (decoding, a reading older than its device's previous one), counts the summary, and routes each
/// reading to job FNV-1a(device id) mod N in batches. A reading that moves the stream clock forward
/// is also sent to every other job as a tick, so each job's timers fire at the same point of the
/// input as on one thread. Jobs tag what they emit with the record's sequence number, the phase and
/// the timer's (due, owner, rank); the merge, also on this thread, puts the records back in that
/// order, reports rejected records in input order and stops `--strict` at the first one.
extension Replay {
    func runJobs(index: RegionIndex, ids: IDSlots, requests: [NotificationRequest], readings merged: MergedReadings,
                 output: RecordBuffer, rejects: RecordBuffer?, totalBytes: Int, resumed: Checkpointer.Resumed?) throws {
        let run = try JobRun(replay: self, index: index, ids: ids, requests: requests, readings: merged,
                             output: output, rejects: rejects, totalBytes: totalBytes, resumed: resumed)
        // Whatever happens, every job gets its last batch and every thread is joined.
        defer { run.shutDown() }
        try run.readAll()
        try run.end()
    }
}

/// One `replay --jobs` run: the reader (this thread), the jobs' threads and the merge.
private final class JobRun {
    /// Held strongly: the run lives only within `runJobs`, so there is no cycle, and an
    /// `unowned` reference is checked (retained and released) at every use, which is every fix.
    let replay: Replay
    let config: ReplayConfiguration
    let jobs: Int
    let merged: MergedReadings
    let output: RecordBuffer
    let rejects: RecordBuffer?
    let rd: JobReader
    let merge: JobMerge
    let inputs: [JobQueue<JobBatch>]
    let results = JobQueue<JobResult>()
    let threads: [JobThread]
    let sink: RejectSink
    let checkpointer: Checkpointer?
    let progress: ProgressBar?
    /// The engine's beacon matcher, for the summary's count of sightings that match no region.
    let matcher: BeaconMatcher
    let flushEvery: Int
    /// Whether every job has been sent its last batch.
    var sentLast = false
    /// `--strict`: the summary as at each control record a job may still refuse.
    var snapshots: [Int: ReplayStatistics] = [:]
    /// Records lists the jobs are done with, filled again (`JobResult.spareItems`).
    var spareItems: [JobItemList] = []

    init(replay: Replay, index: RegionIndex, ids: IDSlots, requests: [NotificationRequest], readings merged: MergedReadings,
         output: RecordBuffer, rejects: RecordBuffer?, totalBytes: Int, resumed: Checkpointer.Resumed?) throws {
        self.replay = replay
        let config = replay.configuration
        self.config = config
        jobs = config.jobs
        self.merged = merged
        self.output = output
        self.rejects = rejects
        // A resumed run: the reader's state, then each job's (`takeCheckpoint` below).
        rd = JobReader(jobs: jobs, expire: config.monitor.expire)
        var jobStates: [[UInt8]]?
        if let resumed {
            var r = SnapshotReader(resumed.body, offset: resumed.engineOffset)
            do {
                jobStates = try rd.restore(from: &r)
            } catch {
                throw ReplayError.checkpoint("cannot resume: \(error.message)")
            }
            guard jobStates?.count == jobs else { throw ReplayError.checkpoint("cannot resume: the jobs differ") }
        }
        var setup = JobSetup(regions: index.regions, ids: ids,
                             givenOrder: index.givenPositions.map { .reordered(givenPositions: $0) } ?? .given,
                             hysteresis: config.hysteresis, tree: config.tree,
                             monitor: config.monitor,
                             beacons: config.beacons, requests: requests, echoProperties: config.echoProperties,
                             writeState: config.statePath != nil)
        setup.resumed = jobStates
        setup.serviceExtension = replay.serviceExtension
        matcher = BeaconMatcher(regions: index.regions, beaconRegions: index.summary.beaconRegions)
        let inputs = (0..<jobs).map { _ in JobQueue<JobBatch>(capacity: 4) }
        self.inputs = inputs
        let results = results
        // Between batches the jobs decode the input ahead of this thread, which then only looks
        // each plain line's fix up (`DecodeAhead`).
        let spare = SpareWork()
        merged.decodeAhead(on: spare)
        // The other jobs read its circle tables and tree (each with its own GEOS context and
        // query scratch); from here on only job 0 uses `index` itself.
        let shared = index.sharedWithThreads()
        let handoff = IndexHandoff(index: index)
        threads = (0..<jobs).map { [setup] j in
            JobThread {
                let job = j == 0 ? ReplayJob(job: j, setup: setup, index: handoff.index)
                    : ReplayJob(job: j, setup: setup, sharing: shared)
                job.run(input: inputs[j], output: results, spare: spare)
            }
        }
        merge = JobMerge(jobs: jobs, strict: config.strict)
        checkpointer = replay.checkpointer
        flushEvery = min(2048 * jobs, checkpointer?.every ?? .max)
        sink = replay.rejectSink!
        progress = config.progress && totalBytes > 0 ? ProgressBar(totalBytes: totalBytes, write: replay.diagnostics) : nil
    }

    /// Sends every job its last batch if it has not had it, waits for every result and joins the
    /// threads.
    func shutDown() {
        if !sentLast { for q in inputs { q.push(JobBatch(through: .max, last: true)) } }
        while merge.running > 0 { merge.receive(results.pop()) }
        for thread in threads { thread.join() }
    }

    /// The batches to the jobs, and whatever results have come to the merge.
    func flush() throws {
        for j in 0..<jobs {
            rd.batches[j].through = rd.seq
            (rd.batches[j].spareBytes, rd.batches[j].spareTags) = merge.spareOutput(of: j)
            // A new list has room for a share of the records as `flushEvery` sends (each list
            // goes round the reader and a job, and grows to its largest batch).
            rd.batches[j].items = rd.outboxes.take(j, into: spareItems.popLast() ?? JobItemList(reserving: flushEvery / jobs * 5 / 4))
            inputs[j].push(rd.batches[j])
            rd.batches[j] = JobBatch()
        }
        var done = results.popAll()
        for k in done.indices {
            if let spare = done[k].spareItems {
                spareItems.append(spare)
                done[k].spareItems = nil
            }
        }
        try merge.drain(done, into: output, replay: replay)
    }

    /// Where the record just read stands in the input: `FILE:LINE`.
    var currentPlace: String { merged.place }

    /// The record just read is rejected (`line`: its bytes); false when `--strict` stops the run.
    func reject(_ reason: RejectReason, line: ByteView) -> Bool {
        // Counted now, in input order; reported by the merge once the jobs are past it.
        sink.count(reason)
        let place = currentPlace
        if sink.strict {
            merge.readerStop = (rd.seq, "\(place): \(RejectSink.message(reason, nil))")
            return false
        }
        merge.rejections.append(PendingRejection(seq: rd.seq, reason: reason, place: place, line: Array(line), byJob: false))
        return true
    }

    /// `--checkpoint`: every job hands over its state once it has applied every record read
    /// so far, all their output up to there is written, then the snapshot: the reader's state
    /// and the jobs'. `last`: the run's end (the jobs stop after it).
    func takeCheckpoint(last: Bool = false) throws {
        guard let checkpointer else { return }
        for j in 0..<jobs {
            rd.batches[j].snapshot = true
            rd.batches[j].last = last
        }
        if last { sentLast = true }
        try flush()
        while merge.jobStates.contains(where: { $0 == nil }) {
            try merge.drain([results.pop()], into: output, replay: replay)
        }
        guard merge.jobStop == nil else { return }
        snapshots.removeAll()
        try checkpointer.synchronize(output, rejects)
        let states = merge.takeJobStates()
        let s = replay.statistics
        try checkpointer.write(records: s.records, positions: merged.positions, outputLength: output.written,
                               rejectsLength: rejects?.written ?? 0, reported: sink.reported, statistics: s,
                               eventCounts: [], deliveryCounts: []) { [rd] w in
            rd.write(to: &w, jobStates: states)
        }
    }

    /// Between records: the batches go to the jobs every `flushEvery` records (or `--checkpoint-every`),
    /// the progress bar moves every 4,096 (`JobReader.counted`), checkpoints are taken when due;
    /// false when a job has stopped the run, or a stop signal with `--checkpoint`.
    func betweenRecords() throws -> Bool {
        if rd.sinceFlush >= flushEvery {
            rd.sinceFlush = 0
            if let checkpointer, replay.statistics.records >= checkpointer.nextAt {
                try takeCheckpoint()
            } else {
                try flush()
            }
            if merge.jobStop != nil { return false }
        }
        // Counted down with or without a bar: the plain-fix lane stops at 4,096, and a count never
        // set back would stop it at every record after that.
        if rd.sinceProgress >= 4096 {
            rd.sinceProgress = 0
            progress?.update(bytes: merged.bytesRead, records: replay.statistics.records)
        }
        return !(checkpointer != nil && StopSignals.requested)
    }

    /// A fix routed to its job, counted for the summary by the engine's accuracy rule.
    @inline(__always)
    func countFix(accuracy: Double) {
        replay.tally.fixes += 1
        if config.monitor.ignores(accuracy: accuracy) { replay.tally.ignoredForAccuracy += 1 }
    }

    /// Live input (SPEC §2): the input would block. Every record read so far goes to its job,
    /// the reader waits until every job has applied them, and their output and the rejects
    /// reported leave before the wait for more input.
    func catchUp() throws {
        try flush()
        while merge.handledThrough < rd.seq && merge.running > 0 {
            try merge.drain([results.pop()], into: output, replay: replay)
        }
        try Replay.io {
            try output.flush()
            try sink.flush()
        }
    }

    /// Reads, rejects and routes every record until the input ends, `--strict` or a job stops the
    /// run, or a stop signal comes (with `--checkpoint`).
    func readAll() throws {
        let rd = rd
        // The decoder calls this before it would block, in the middle of a record: whatever fails
        // in it is thrown from the loop below once the decoder has returned.
        var idleFailure: (any Error)?
        merged.whenIdle { [unowned self] in
            guard idleFailure == nil else { return }
            do { try self.catchUp() } catch { idleFailure = error }
        }
        defer { merged.whenIdle {} }
        readLoop: while true {
            // Runs of plain fix lines are routed straight from the decoder's buffer, as the
            // one-thread replay reads them, without a `Reading` copied for each.
            merged.drainPlainFixes { t, name, latitude, longitude, accuracy in
                rd.seq += 1
                guard let (g, j) = rd.route(name, t: t) else {
                    rd.laneRejected = true
                    return false
                }
                rd.outboxes.append(JobItem(kind: .fix, device: g, seq: rd.seq, t: t, latitude: latitude, longitude: longitude,
                                           accuracy: accuracy), to: j)
                countFix(accuracy: accuracy)
                rd.counted()
                return rd.sinceFlush < flushEvery && rd.sinceProgress < 4096
            }
            if rd.laneRejected {
                rd.laneRejected = false
                if !reject(.outOfOrder, line: merged.rejectedLine) { break readLoop }
                rd.counted()
            }
            if let idleFailure { throw idleFailure }
            guard try betweenRecords() else { break readLoop }
            switch merged.next().step {
            case .end:
                break readLoop
            case .rejected(let reason):
                rd.seq += 1
                if !reject(reason, line: merged.rejectedLine) { break readLoop }
            case .reading:
                rd.seq += 1
                guard route(merged.current) else { break readLoop }
            }
            rd.counted()
            if let idleFailure { throw idleFailure }
            guard try betweenRecords() else { break }
        }
        if let idleFailure { throw idleFailure }
    }

    /// A decoded reading to its job (a region record to every job); false when `--strict` stops
    /// the run at it.
    func route(_ r: Reading) -> Bool {
        if r.kind == .control && r.op.isRegionChange {
            // A region record reaches every job at its place in the input: each applies it
            // to its own index and devices (job 0 reports it if it is refused; every job
            // decides alike). It moves the stream clock as any reading does.
            if config.strict { snapshots[rd.seq] = replay.statistics }
            let control = JobControl(op: r.op, line: Array(r.line), place: currentPlace)
            for k in 0..<jobs {
                var item = JobItem(kind: .region, seq: rd.seq, t: r.t)
                item.side = Int32(rd.batches[k].controls.count)
                rd.batches[k].controls.append(control)
                rd.outboxes.append(item, to: k)
            }
            rd.clock = max(rd.clock, r.t)
            rd.expireDue()
            replay.tally.controls += 1
            return true
        }
        guard let (g, j) = rd.route(r.device, t: r.t) else {
            return reject(.outOfOrder, line: r.line)
        }
        var item = JobItem(kind: .fix, device: g, seq: rd.seq, t: r.t)
        switch r.kind {
        case .fix:
            (item.latitude, item.longitude, item.accuracy) = (r.latitude, r.longitude, r.accuracy)
            countFix(accuracy: r.accuracy)
        case .sighting:
            item.kind = .sighting
            (item.rssi, item.tx) = (r.rssi, r.tx)
            item.side = Int32(rd.batches[j].beacons.count)
            rd.batches[j].beacons.append(r.beacon)
            replay.tally.sightings += 1
            if !matcher.matchesAny(r.beacon) { replay.tally.sightingsUnmatched += 1 }
        case .control:
            // A job may still refuse it; under --strict the summary is then this one's.
            if config.strict { snapshots[rd.seq] = replay.statistics }
            item.kind = .control
            item.side = Int32(rd.batches[j].controls.count)
            rd.batches[j].controls.append(JobControl(op: r.op, line: Array(r.line), place: currentPlace))
            replay.tally.controls += 1
        }
        rd.outboxes.append(item, to: j)
        return true
    }

    /// After the read loop: the last checkpoint (or the one a stop signal asks for), `--until`,
    /// the jobs' last results merged, a `--strict` stop reported, the files finished.
    func end() throws {
        if checkpointer != nil && StopSignals.requested && merge.readerStop == nil && merge.jobStop == nil {
            // Stopped by SIGINT or SIGTERM: the snapshot is the run's state; the same command goes on.
            try takeCheckpoint(last: true)
            while merge.running > 0 { merge.receive(results.pop()) }
            replay.stoppedBySignal = true
            return
        }
        // The last snapshot, at the end of the input and before --until and --state-out (as with
        // one job); not after a stop by --strict, which a resumed run meets again.
        if checkpointer != nil && merge.readerStop == nil && merge.jobStop == nil { try takeCheckpoint() }
        if merge.readerStop == nil && merge.jobStop == nil, let until = config.until {
            rd.seq += 1
            for j in 0..<jobs { rd.outboxes.append(JobItem(kind: .tick, seq: rd.seq, t: until), to: j) }
            rd.clock = max(rd.clock, until)
        }
        for j in 0..<jobs { rd.batches[j].last = true }
        sentLast = true  // `flush` pushes them before anything in it can throw
        try flush()
        while merge.running > 0 {
            try merge.drain([results.pop()], into: output, replay: replay)
        }
        if let (s, message) = merge.jobStop {
            // The summary is the one the single engine stops with: as at that control record.
            if let snapshot = snapshots[s] {
                replay.tally = snapshot
                sink.counts = snapshot.rejected
            }
            sink.count(.badControl)
            throw ReplayError.strictRejection(message)
        }
        if let (_, message) = merge.readerStop { throw ReplayError.strictRejection(message) }
        if let error = merged.ioErrors.first { throw ReplayError.io("\(error.source): \(error.message)") }
        progress?.finish()

        let clock = rd.clock
        let states = merge.states
        try replay.finish(output: output, rejects: rejects, counts: merge.counts,
                          deliveryCounts: merge.deliveryCounts) { state in
            StateWriter.writeHeader(clock: clock, to: state)
            for (k, entry) in states.sorted(by: { $0.rank < $1.rank }).enumerated() {
                if k > 0 { state.append(",") }
                state.append(entry.bytes)
            }
            StateWriter.writeFooter(to: state)
        }
    }
}

/// `runJobs`' reader state: devices (interned here: the global id), each one's job and last
/// time, the rank counter, the stream clock, the batches being filled and the record count.
///
/// With `--expire S` the reader forgets devices as each job's engine does, at the same record, so
/// its tables stay as small as the live devices: a device expires when the clock reaches its last
/// reading + S (`expiry`: one entry per live device, re-armed when it comes due if the device was
/// heard since, as `DeviceExpiry` does), its global id is freed and given to a later new name
/// (announced to that name's job). A device whose own reading comes after last + S but before
/// the clock got there expires in the timers before that reading, which then applies to it as a
/// new device under the same id (`DeviceTable.renew`): the reader renews it too and tells its job
/// the rank. Ranks (first-seen order, `DeviceTable.nextRank`) are counted here for the whole run,
/// in input order, as one engine counts them, and handed to the jobs (`JobDeviceNote`).
private final class JobReader {
    let jobs: Int
    /// S, or +∞ without `--expire`.
    let expire: Double
    let expires: Bool
    let devices = DeviceTable()
    /// Per global id: its job and its last reading (a freed id's entry is stale until reused), in
    /// raw memory as the batches' records are (`JobOutboxes`).
    @exclusivity(unchecked) var routes = PodList<DeviceRoute>()
    /// `--expire`: per live device one entry, due at (a past) last reading + S.
    @exclusivity(unchecked) var expiry = TimerQueue<Int32>()
    @exclusivity(unchecked) var clock = -Double.infinity
    /// Per job, the batch being filled: its records in `outboxes` until it goes (`JobRun.flush`).
    @exclusivity(unchecked) var batches: [JobBatch]
    let outboxes: JobOutboxes
    @exclusivity(unchecked) var seq = 0
    @exclusivity(unchecked) var sinceFlush = 0
    @exclusivity(unchecked) var sinceProgress = 0
    /// The plain lane stopped at a fix older than its device's last reading.
    @exclusivity(unchecked) var laneRejected = false

    deinit { routes.free() }

    init(jobs: Int, expire: Double?) {
        self.jobs = jobs
        self.expire = expire ?? .infinity
        expires = expire != nil
        batches = (0..<jobs).map { _ in JobBatch() }
        outboxes = JobOutboxes(jobs: jobs)
    }

    /// A record of device `name` at `t`, the `seq`th: the device interned (a new one assigned to
    /// job FNV-1a(name) mod jobs and announced to it with its rank; with `--expire`, one silent
    /// since before `t` − S renewed), its clock moved, and the stream's, with a tick to every
    /// other job when it moves; then devices whose expiry the clock reached are forgotten. Returns
    /// the device's global id and job, or nil when the record is older than the device's previous
    /// one (to be rejected; nothing is routed).
    @inline(__always)
    func route(_ name: ByteView, t: Double) -> (device: Int32, job: Int)? {
        let (g, isNew) = devices.intern(name)
        if isNew {
            let j = Int(DeviceTable.fnv1a(name) % UInt64(jobs))
            if Int(g) == routes.count {
                routes.append(DeviceRoute(job: j, last: -.infinity))
            } else {
                routes[Int(g)] = DeviceRoute(job: j, last: -.infinity)
            }
            batches[j].devices.append(JobDeviceNote(seq: seq, device: g, rank: devices.rank(g), name: Array(name)))
        } else if isOutOfOrder(t, after: routes[Int(g)].last) {
            return nil
        } else if expires && routes[Int(g)].last + expire < t {
            // Its expiry (due before `t`, after the clock) fires in the timers before this reading.
            devices.renew(g)
            batches[routes[Int(g)].job].devices.append(JobDeviceNote(seq: seq, device: g, rank: devices.rank(g), name: nil))
        }
        routes[Int(g)].last = t
        let j = routes[Int(g)].job
        if expires && isNew { expiry.schedule(at: t + expire, g) }
        if t > clock {
            clock = t
            for k in 0..<jobs where k != j { outboxes.append(JobItem(kind: .tick, seq: seq, t: t), to: k) }
        }
        if expires { expireDue() }
        return (g, j)
    }

    /// `--expire`: forgets every device whose last reading + S the clock has reached, as the
    /// engines do in the timers after the record that moved the clock (`DeviceExpiry`).
    @inline(__always)
    func expireDue() {
        while expiry.earliestDue <= clock {
            guard let (due, _, g) = expiry.popNext() else { return }
            if let until = DeviceExpiry.rearm(due: due, lastReading: routes[Int(g)].last, seconds: expire) {
                expiry.schedule(at: until, g)
            } else {
                devices.remove(g)
            }
        }
    }

    /// The reader's part of a checkpoint: the devices by global id with their last reading, the
    /// stream clock and the record count; with `--expire` the free ids (written with empty
    /// names), the rank counter and the expiry queue; then each job's state.
    func write(to w: inout SnapshotWriter, jobStates: [[UInt8]]) {
        w.tag("reader")
        w.count(Int(devices.count))
        for g in 0..<Int32(devices.count) {
            if devices.isLive(g) { w.raw(devices.nameBytes(g)) } else { w.raw([UInt8]()) }
            w.f64(routes[Int(g)].last)
        }
        w.f64(clock)
        w.varint(UInt64(seq))
        if expires {
            w.list(devices.freeList) { w, g in w.i32(g) }
            w.varint(devices.nextRank)
            expiry.writeSnapshot(to: &w) { w, g in w.i32(g) }
        }
        w.list(jobStates) { w, b in w.raw(b) }
    }

    /// Restores `write`'s state into a new reader; returns the jobs' states. The jobs know their
    /// devices already (from their own state), so none is announced to them again.
    func restore(from r: inout SnapshotReader) throws(SnapshotError) -> [[UInt8]] {
        try r.expect("reader")
        let n = try r.count()
        var names: [[UInt8]] = [], lasts: [Double] = []
        for _ in 0..<n {
            names.append(try r.raw())
            lasts.append(try r.f64())
        }
        clock = try r.f64()
        seq = try r.natural()
        var free: [Int32] = []
        var nextRank = UInt64(n)
        if expires {
            var seen = Set<Int32>()
            free = try r.list { r throws(SnapshotError) -> Int32 in
                let g = try r.i32()
                guard g >= 0, Int(g) < n, seen.insert(g).inserted else { throw SnapshotError("the reader frees device \(g) of \(n)") }
                return g
            }
            nextRank = try r.varint()
            try expiry.restoreSnapshot(from: &r) { r throws(SnapshotError) -> Int32 in
                let g = try r.i32()
                guard g >= 0, Int(g) < n, !seen.contains(g) else { throw SnapshotError("the reader times device \(g) of \(n)") }
                return g
            }
        }
        // A device's job follows from its name (a free id's placeholder: no device is routed by it).
        try devices.restore(names: names, free: free, nextRank: nextRank) { name in
            routes.append(DeviceRoute(job: Int(DeviceTable.fnv1a(name) % UInt64(jobs)), last: lasts[Int(routes.count)]))
            return devices.intern(name).id
        }
        return try r.list { r throws(SnapshotError) in try r.raw() }
    }

    /// One record more since the last flush and progress update.
    @inline(__always)
    func counted() {
        sinceFlush += 1
        sinceProgress += 1
    }
}

/// A device's job and last reading (`JobReader.routes`).
struct DeviceRoute {
    var job: Int
    var last: Double
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
    /// Per job, its results not yet written (used on the reading thread only).
    private let lanes: [MergeLane]
    /// Per job, the bytes and tag lists of results written out, to go back to the job, one of
    /// each with every batch (`JobBatch.spareBytes`, `spareTags`): several results are in
    /// flight at once, and a job given none writes its next one into fresh memory, whose every
    /// page is a fault. At most `keptSpares` each, which is more than are ever in flight.
    private var spareBytes: [[ByteBlock]]
    private var spareTags: [[[JobTag]]]
    private static let keptSpares = 8
    /// Per job, every record up to this sequence number has been handled.
    @exclusivity(unchecked) private var through: [Int]
    private(set) var running: Int
    /// Rejections not yet reported, the reader's (in order) and the jobs'.
    var rejections: [PendingRejection] = []
    /// `--strict`: the first rejection found by the reader, and the first found by a job.
    var readerStop: (Int, String)?
    private(set) var jobStop: (Int, String)?
    private(set) var counts = [Int](repeating: 0, count: RegionEvent.Kind.allCases.count)
    private(set) var deliveryCounts = [Int](repeating: 0, count: EventWriter.countedKinds)
    private(set) var states: [(rank: UInt64, bytes: [UInt8])] = []
    /// Per job, its state for the checkpoint being taken (`JobBatch.snapshot`), once it came.
    private(set) var jobStates: [[UInt8]?]

    init(jobs: Int, strict: Bool) {
        jobStates = Array(repeating: nil, count: jobs)
        self.jobs = jobs
        self.strict = strict
        lanes = (0..<jobs).map { _ in MergeLane() }
        spareBytes = Array(repeating: [], count: jobs)
        spareTags = Array(repeating: [], count: jobs)
        through = Array(repeating: 0, count: jobs)
        running = jobs
    }

    /// The jobs' states for a checkpoint, once every job's has come; the slots are emptied.
    /// Every record up to this sequence number has been handled by every job.
    var handledThrough: Int { through.min() ?? 0 }

    /// Memory for job `j`'s next result, where the merge has some (`JobBatch.spareBytes`,
    /// `spareTags`).
    func spareOutput(of j: Int) -> (ByteBlock?, [JobTag]?) {
        (spareBytes[j].popLast(), spareTags[j].popLast())
    }

    func takeJobStates() -> [[UInt8]] {
        defer { jobStates = Array(repeating: nil, count: jobs) }
        return jobStates.map { $0! }
    }

    func receive(_ r: JobResult) {
        if let s = r.snapshot { jobStates[r.job] = s }
        lanes[r.job].queue.append(MergeLane.Waiting(tags: r.tags, bytes: r.bytes))
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
    func drain(_ results: [JobResult], into output: RecordBuffer, replay: Replay) throws {
        for r in results { receive(r) }
        guard jobStop == nil else { return }
        var limit = through.min() ?? 0
        var ready = rejections.filter { $0.seq <= limit }.sorted { $0.seq < $1.seq }
        rejections.removeAll { $0.seq <= limit }
        if strict, let first = ready.first(where: { $0.byJob }) {
            // The single engine stops after this control record: its own events are written.
            jobStop = (first.seq, "\(first.place): \(RejectSink.message(first.reason, first.detail))")
            limit = first.seq
            ready = []
        }
        let sink = replay.rejectSink!
        for r in ready {
            if r.byJob {
                replay.tally.controls -= 1
                sink.count(r.reason)
            }
            try Replay.io {
                try r.line.withByteView { try sink.report(r.reason, detail: r.detail, place: r.place, record: $0) }
            }
        }
        try write(through: limit, into: output)
    }

    /// Writes the tagged records with sequence numbers up to `limit`, smallest tag first: the
    /// job whose next record comes first writes every record of its result that comes before
    /// any other job's next one, at once (a job's records lie one after another in its bytes).
    private func write(through limit: Int, into output: RecordBuffer) throws {
        // Each job's next record, looked up again only for the job just written from.
        var heads = (0..<jobs).map { head($0) }
        while true {
            var best = -1, second = -1
            var bestTag = JobTag(seq: 0, phase: 0, source: 0, due: 0, rank: 0, end: 0), secondTag = bestTag
            for j in 0..<jobs {
                guard let tag = heads[j], tag.seq <= limit else { continue }
                if best < 0 || tag.precedes(bestTag) {
                    second = best
                    secondTag = bestTag
                    best = j
                    bestTag = tag
                } else if second < 0 || tag.precedes(secondTag) {
                    second = j
                    secondTag = tag
                }
            }
            guard best >= 0 else { return }
            let lane = lanes[best]
            // The run: this result's records up to the limit that precede the other jobs' next
            // (its tags read through one reference, let go before `head` may recycle them).
            let start: Int
            var next = lane.index + 1, end = bestTag.end
            do {
                let tags = lane.tags
                start = lane.index == 0 ? 0 : tags[lane.index - 1].end
                while next < tags.count, tags[next].seq <= limit, second < 0 || tags[next].precedes(secondTag) {
                    end = tags[next].end
                    next += 1
                }
            }
            output.append(lane.bytes!.bytes[start..<end])
            lane.index = next
            do { try output.endRecord() } catch let error as IOFailure { throw ReplayError.io(error.description) }
            heads[best] = head(best)
        }
    }

    /// The job's next record, going on to its next result when one is written completely.
    private func head(_ j: Int) -> JobTag? {
        let lane = lanes[j]
        while true {
            if lane.index < lane.tags.count { return lane.tags[lane.index] }
            if let done = lane.bytes {
                if spareBytes[j].count < Self.keptSpares { spareBytes[j].append(done) }
                if spareTags[j].count < Self.keptSpares {
                    var tags: [JobTag] = []
                    swap(&tags, &lane.tags)
                    tags.removeAll(keepingCapacity: true)
                    spareTags[j].append(tags)
                }
            }
            lane.bytes = nil
            guard !lane.queue.isEmpty else { return nil }
            let waiting = lane.queue.removeFirst()
            lane.tags = waiting.tags
            lane.bytes = waiting.bytes
            lane.index = 0
        }
    }
}

/// One job's results in the merge: the one being written (its tags, its bytes, the next tag),
/// then those waiting. A class per job, so that the merge's look at a job's next record, made
/// for every record written, reaches its tags without going through arrays of results.
private final class MergeLane {
    struct Waiting {
        var tags: [JobTag]
        var bytes: ByteBlock
    }

    @exclusivity(unchecked) var tags: [JobTag] = []
    @exclusivity(unchecked) var bytes: ByteBlock?
    @exclusivity(unchecked) var index = 0
    @exclusivity(unchecked) var queue: [Waiting] = []
}
