import Geotrigger
import GeotriggerCore
import GeotriggerGeometry
import GeotriggerKafka
import GeotriggerMonitoring
import GeotriggerScheduling
import GeotriggerFormats
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything `geotrigger consume` needs (SPEC §8), as plain values.
public struct ConsumeConfiguration: Sendable {
    /// The regions, requests and engine options, as `replay` takes them (`until` applies when the
    /// process stops for `--exit-when-idle`).
    public var engine: EngineConfiguration
    /// `bootstrap.servers`.
    public var brokers: String
    /// Topic IN: readings, one NDJSON record per message, keyed by device.
    public var topic: String
    /// What a message of IN holds: an NDJSON record (SPEC §8), or (an extension) NMEA 0183
    /// lines or gpsd reports of the receiver its key names (`ReceiverMessages`).
    public var format: ReadingFormat = .ndjson
    public var group: String
    /// Topic OUT: events, keyed by device, each with its `"id"`.
    public var eventsTopic: String
    /// Stop (checkpoint, leave the group) after this many seconds without a record.
    public var exitWhenIdle: Double?
    /// Records of a partition between its snapshots.
    public var checkpointEvery = 100_000
    /// librdkafka settings passed through (`--kafka-config`), applied after ours.
    public var kafkaSettings: [(String, String)] = []
    /// Write a line on stderr for each partition assigned or revoked.
    public var verbose = true

    /// The group member's heartbeat, where `--kafka-config` shortens `session.timeout.ms` and
    /// leaves `heartbeat.interval.ms` alone: a third of the session (Kafka's rule), so that one
    /// late heartbeat does not end the session. librdkafka's default heartbeat (3 s) equals a
    /// 3 s session, and a member on a busy machine then loses its partitions over and over.
    public var derivedGroupSettings: [(String, String)] {
        guard !kafkaSettings.contains(where: { $0.0 == "heartbeat.interval.ms" }),
              let session = kafkaSettings.last(where: { $0.0 == "session.timeout.ms" }).flatMap({ Int($0.1) }),
              session / 3 < 3000 else { return [] }
        return [("heartbeat.interval.ms", String(max(1, session / 3)))]
    }

    public var stateTopic: String { group + "-state" }
    public var rejectsTopic: String { group + "-rejects" }

    public init(engine: EngineConfiguration, brokers: String, topic: String, group: String, eventsTopic: String) {
        self.engine = engine
        self.brokers = brokers
        self.topic = topic
        self.group = group
        self.eventsTopic = eventsTopic
    }
}

/// Why `consume` stopped early; each maps to one exit status of SPEC §2.
public enum ConsumeError: Error, CustomStringConvertible {
    /// The regions or requests file, or the command line (as `replay`'s).
    case replay(ReplayError)
    /// A partition's snapshot cannot be used: of another configuration, corrupt or gone (65).
    case snapshot(String)
    /// Kafka refused or failed (74): a setting, a client, a delivery.
    case kafka(String)
    /// A bad reading under `--strict` (65).
    case strictRejection(String)

    public var exitStatus: Int32 {
        switch self {
        case .replay(let e): return e.exitStatus
        case .snapshot, .strictRejection: return 65
        case .kafka: return 74
        }
    }

    public var description: String {
        switch self {
        case .replay(let e): return e.description
        case .snapshot(let s), .kafka(let s): return s
        case .strictRejection(let s): return "\(s) (stopped by --strict)"
        }
    }
}

/// What a consumer process did: the replay's counts, and the group's doings.
public struct ConsumeStatistics: Sendable {
    public var replay = ReplayStatistics()
    public var partitionsAssigned = 0
    public var partitionsRevoked = 0
    public var partitionsLost = 0
    /// Partitions that resumed from a snapshot, and the time loading them took.
    public var snapshotsLoaded = 0
    public var snapshotLoadSeconds = 0.0
    public var snapshotsWritten = 0
    public var snapshotBytes = 0
    public var snapshotSeconds = 0.0
    /// Devices in the snapshots written (for bytes per device).
    public var snapshotDevices = 0
    public var commits = 0
    /// Commits refused (a rebalance under way, a broker down), retried later or left to the
    /// partition's next owner.
    public var commitsFailed = 0
    public var eventsProduced = 0
    /// Messages passed over: of a partition not (or no longer) assigned here, or before the
    /// partition's next offset (read again after a rebalance).
    public var staleMessages = 0
    /// Of the run, the time spent on batches of records (applying, producing, snapshots).
    public var busySeconds = 0.0
    /// Wall-clock times (Unix seconds) of the start of the first batch of records and the end
    /// of the last: the span a member was consuming, comparable across processes (the bench
    /// adds members up by it).
    public var firstRecordAt: Double?
    public var lastRecordAt: Double?
    /// CPU time over that span (seconds): this process's consuming thread (decoding, engines,
    /// events, snapshots), and the process as a whole (that thread and librdkafka's).
    public var consumingThreadCPUSeconds = 0.0
    public var processCPUSeconds = 0.0

    public var summary: String {
        var s = replay.summary
        var lines: [String] = []
        lines.append("partitions: \(grouped(partitionsAssigned)) assigned (\(grouped(snapshotsLoaded)) resumed from snapshots "
                     + "in \(formatSeconds(snapshotLoadSeconds))), \(grouped(partitionsRevoked)) revoked, "
                     + "\(grouped(partitionsLost)) lost")
        var written = "snapshots: \(grouped(snapshotsWritten)) written, \(formatMebibytes(snapshotBytes)) in \(formatSeconds(snapshotSeconds))"
        if snapshotDevices > 0 {
            written += ", \(grouped(snapshotBytes / max(1, snapshotDevices))) bytes per device"
        }
        lines.append(written + "; commits: \(grouped(commits)) (\(grouped(commitsFailed)) refused)")
        lines.append("produced \(grouped(eventsProduced)) events; \(grouped(staleMessages)) stale messages passed over")
        if let first = firstRecordAt, let last = lastRecordAt {
            let span = last - first
            let pace = span > 0 ? "\(grouped(Int((Double(replay.records) / span).rounded()))) records/s" : "one batch"
            lines.append("consuming: \(grouped(replay.records)) records from \(RFC3339.format(first)) to \(RFC3339.format(last)), "
                         + "\(formatSeconds(span)) (\(pace); busy \(formatSeconds(busySeconds)), the rest waiting for Kafka)")
            lines.append("CPU while consuming: \(formatSeconds(consumingThreadCPUSeconds)) on the consuming thread, "
                         + "\(formatSeconds(max(0, processCPUSeconds - consumingThreadCPUSeconds))) on the others "
                         + "(librdkafka's, the message releaser's)")
        }
        s += lines.map { "geotrigger: " + $0 + "\n" }.joined()
        return s
    }
}

/// `geotrigger consume`: a member of a Kafka consumer group that runs one engine per input
/// partition it is given (SPEC §8).
///
/// Design: a partition is the unit of state. Kafka keeps a device's readings in one partition
/// (they are keyed by device), so a partition's devices need nothing from any other partition;
/// each gets its own `PartitionEngine` (engine, clock, timers), built when the partition is
/// assigned and dropped when it is revoked. Its snapshot goes to `GROUP-state` every
/// `--checkpoint-every` records and on revocation; the input offset is committed only once the
/// snapshot and every event before it are stored, with the snapshot's place in the commit's
/// metadata. A process given the partition reads the commit, loads that snapshot and reads on
/// from the committed offset: the records after it are applied again from the same state, so
/// their events come again with the same ids and bytes (at least once; consumers drop repeats
/// by `"id"`).
///
/// One thread does the work: it polls batches of messages, applies each to its partition's
/// engine, then produces the batch's events. librdkafka's own threads do the network.
public final class Consume: KafkaRebalanceHandler, KafkaDeliveryHandler {
    public let configuration: ConsumeConfiguration
    let diagnostics: (String) -> Void
    /// The figures counted here; the rejected records are counted by the reject sink.
    @exclusivity(unchecked) private var tally = ConsumeStatistics()
    /// What the member read, rejected, produced and wrote so far (the summary's figures).
    public var statistics: ConsumeStatistics {
        var s = tally
        if let rejects { s.replay.rejected = rejects.counts }
        return s
    }
    /// Set when the process stopped at SIGINT or SIGTERM.
    public private(set) var stoppedBySignal = false

    // Made in `run`.
    private var template: RegionIndex!
    private var regions: [Region] = []
    private var ids: IDSlots!
    private var requests: [NotificationRequest] = []
    private var identity: RunIdentity!
    private var consumer: KafkaConsumer!
    private var producer: KafkaProducer!
    private var state: StateTopic!
    private let decoder: NDJSONDecoder
    /// `--format`'s receivers (nmea, gpsd), or nil for NDJSON.
    private let receiverKind: ReceiverMessages.Kind?
    /// The formats a message of IN may hold.
    public static let formats: [ReadingFormat] = [.ndjson, .nmea, .gpsd]

    /// The engines of the partitions held now, by partition number.
    @exclusivity(unchecked) private var partitions: [Int32: PartitionEngine] = [:] {
        didSet {
            let n = Int((partitions.keys.max() ?? -1) + 1)
            slots = (0..<n).map { partitions[Int32($0)] }
        }
    }
    /// The same, as an array indexed by partition number, for the per-message lookup.
    @exclusivity(unchecked) private var slots: [PartitionEngine?] = []
    /// A failure inside a rebalance callback, thrown by the loop once the callback returns.
    private var fatal: ConsumeError?
    /// Commits refused, by partition: retried once the group has settled.
    private var pendingCommits: [Int32: (offset: Int64, metadata: String)] = [:]
    /// The run's rejected records (`GROUP-rejects`, stderr, `--strict`), once the producer is made.
    private var rejects: RejectSink!
    /// `GROUP-events`, once the producer is made.
    private var events: EventsTopic!

    public init(configuration: ConsumeConfiguration, diagnostics: @escaping (String) -> Void = { writeStandardError($0) }) {
        self.configuration = configuration
        self.diagnostics = diagnostics
        decoder = NDJSONDecoder(recordsNamed: configuration.topic)
        switch configuration.format {
        case .nmea: receiverKind = .nmea
        case .gpsd: receiverKind = .gpsd
        default: receiverKind = nil
        }
    }

    /// The settings every client of this process gets, then the user's (`--kafka-config`).
    private func settings(_ ours: [(String, String)]) -> KafkaSettings {
        KafkaSettings([("bootstrap.servers", configuration.brokers), ("log_level", "3")] + ours) + configuration.kafkaSettings
    }

    @discardableResult
    public func run() throws(ConsumeError) -> ConsumeStatistics {
        let start = monotonicSeconds()
        let c = configuration
        do {
            // Read once; each partition builds its own index from them (live region changes are
            // the partition's), and every partition shares the id table made here.
            let setup = try RunSetup(c.engine, keepingRegions: true)
            (regions, template, ids, requests) = (setup.regions, setup.index, setup.ids, setup.requests)
            guard Self.formats.contains(c.format) else {
                throw ReplayError.usage("consume reads --format ndjson, nmea or gpsd, not \(c.format.rawValue)")
            }
            // NDJSON's as it always was, so that snapshots taken before --format still load.
            identity = try RunIdentity(engine: c.engine, inputs: ["kafka:" + c.topic],
                                       format: c.format == .ndjson ? nil : c.format)
        } catch let e as ReplayError {
            throw .replay(e)
        } catch let e as RegionFileError {
            throw .replay(.badRegions(e))
        } catch {
            throw .replay(.io("\(error)"))
        }
        tally.replay.loadSeconds = monotonicSeconds() - start
        tally.replay.regions = template.count
        // One topic, of as many partitions as the group gives: no inputs counted in the summary.
        tally.replay.inputs = 0

        do {
            // Events keep their order per device and are not duplicated by the producer's retries.
            // Their delivery reports are wanted only for failures: a report per event would cost
            // the consuming thread a callback and a message to free per event. The state topic's
            // chunks, whose offsets the commits name, have a producer of their own that reports
            // every message.
            producer = try KafkaProducer(settings: settings([("enable.idempotence", "true"), ("linger.ms", "5"),
                                                             ("queue.buffering.max.messages", "1000000"),
                                                             ("delivery.report.only.error", "true")]))
            events = EventsTopic(producer: producer, topic: c.eventsTopic)
            rejects = RejectSink(strict: c.engine.strict, limit: c.engine.reportedRejectLimit,
                                 output: RecordBuffer(sink: RejectsTopic(producer: producer, topic: c.rejectsTopic)), diagnostics: diagnostics)
            let stateProducer = try KafkaProducer(settings: settings([("enable.idempotence", "true"), ("linger.ms", "5")]),
                                                  delivery: self)
            let reader = try KafkaPartitionReader(settings: settings([]), group: c.group + "-state-reader")
            reader.connect()
            state = StateTopic(name: c.stateTopic, producer: stateProducer, after: producer, reader: reader)
            consumer = try KafkaConsumer(
                settings: settings([("group.id", c.group), ("enable.auto.commit", "false"),
                                    ("enable.auto.offset.store", "false"), ("auto.offset.reset", "earliest"),
                                    ("partition.assignment.strategy", "cooperative-sticky"),
                                    // librdkafka 2.0 counts queued.min.messages over the one
                                    // consumer queue every partition feeds, and backs a paused
                                    // partition off for a whole second: a member slower than
                                    // its fetches idled two thirds of the time. Bound the queue
                                    // by bytes only (256 MB), and answer caught-up fetches soon.
                                    ("queued.min.messages", "10000000"), ("queued.max.messages.kbytes", "262144"),
                                    ("fetch.wait.max.ms", "100")] + c.derivedGroupSettings),
                rebalance: self)
            try consumer.subscribe([c.topic])
        } catch {
            throw .kafka("\(error)")
        }
        StopSignals.catchSignals()
        try loop()
        try stop()
        tally.replay.elapsed = monotonicSeconds() - start
        tally.replay.peakResidentBytes = peakResidentBytes()
        return statistics
    }

    // MARK: The loop

    /// When the last record arrived, or partitions were last assigned or lost
    /// (`--exit-when-idle`): a member that lost its partitions is rejoining, not idle.
    private var lastActivity = 0.0
    /// CPU time at the start of the first batch of records (`ConsumeStatistics`' CPU figures).
    private var cpuAtFirstBatch = CPUTime(thread: 0, process: 0)
    private var settleAttempts = 0

    private func loop() throws(ConsumeError) {
        let batch = KafkaMessageBatch(capacity: 8192)
        // Every message it was handed is destroyed when the loop ends, before the consumer closes.
        let releaser = MessageReleaser()
        defer { releaser.finish() }
        lastActivity = monotonicSeconds()
        var touched: [PartitionEngine] = []
        touched.reserveCapacity(64)
        while true {
            if StopSignals.requested {
                stoppedBySignal = true
                return
            }
            let n = consumer.poll(into: batch, milliseconds: 100)
            if let fatal { throw fatal }
            let began = monotonicSeconds()
            if n > 0 && tally.firstRecordAt == nil { cpuAtFirstBatch = CPUTime.now() }
            for k in 0..<n {
                let m = batch[k]
                if m.error != 0 {
                    // -191 (_PARTITION_EOF) is no error; others are librdkafka's to retry.
                    if m.error != -191 {
                        diagnostics("geotrigger: \(c.topic)[\(m.partition)]: \(String(decoding: m.value, as: UTF8.self))\n")
                    }
                    continue
                }
                let k = Int(m.partition)
                guard k >= 0 && k < slots.count, let p = slots[k], m.offset >= p.nextOffset else {
                    tally.staleMessages += 1
                    continue
                }
                p.nextOffset = m.offset + 1
                if !p.touched {
                    p.touched = true
                    touched.append(p)
                }
                let applied = try apply(m, to: p)
                if applied !== p {
                    touched.removeAll { $0 === p }
                    applied.touched = true
                    touched.append(applied)
                }
            }
            releaser.release(batch)
            for p in touched {
                p.touched = false
                try produceEvents(of: p)
                if p.sinceSnapshot >= configuration.checkpointEvery { try checkpoint(p) }
            }
            touched.removeAll(keepingCapacity: true)
            producer.poll()
            let (failed, first) = producer.failures
            if failed > 0 {
                throw .kafka("\(failed) events could not be delivered to \(configuration.eventsTopic): \(first.map { "\($0)" } ?? "")")
            }
            if !pendingCommits.isEmpty { retryCommits() }
            let now = monotonicSeconds()
            if n > 0 {
                lastActivity = now
                tally.busySeconds += now - began
                let wall = wallClockSeconds()
                // From the start of the first batch: its records count, so its time does too.
                if tally.firstRecordAt == nil { tally.firstRecordAt = wall - (now - began) }
                tally.lastRecordAt = wall
                let used = CPUTime.now() - cpuAtFirstBatch
                (tally.consumingThreadCPUSeconds, tally.processCPUSeconds) = (used.thread, used.process)
            } else if let idle = configuration.exitWhenIdle, now - lastActivity >= idle {
                // Idle: every partition's state is written and committed before the process
                // leaves. A commit refused now (the group rebalancing as another member leaves)
                // makes librdkafka drop the assignment; the partitions come back from their last
                // commit, are read up to here again, and the next idle moment tries again.
                if try settle() { return }
                settleAttempts += 1
                if settleAttempts >= 4 {
                    diagnostics("geotrigger: leaving with commits refused \(settleAttempts) times: the partitions' next owners "
                                + "resume from their last commits\n")
                    return
                }
                lastActivity = now
            }
        }
    }

    private var c: ConsumeConfiguration { configuration }

    /// Applies a message to its partition's engine; returns the engine that applied it (another
    /// one when a region record moved the partition to an index of its own).
    @inline(__always)
    private func apply(_ m: KafkaMessageView, to p: PartitionEngine) throws(ConsumeError) -> PartitionEngine {
        if let receivers = p.receivers {
            try apply(m, receivers: receivers, to: p)
            return p
        }
        switch decoder.decode(record: ByteView(unsafe: m.value)) {
        case .end:
            // A blank message: skipped, as a blank line is.
            p.skip(offset: m.offset)
        case .rejected(let reason):
            p.skip(offset: m.offset)
            try reject(reason, detail: nil, partition: m.partition, offset: m.offset, key: ByteView(unsafe: m.key),
                       record: decoder.rejectedLine)
        case .reading:
            let r = decoder.current
            var p = p
            if r.kind == .control && r.op.isRegionChange && p.engine.index === template { p = try ownIndex(p) }
            if let (reason, detail) = p.apply(r, offset: m.offset) {
                try reject(reason, detail: detail, partition: m.partition, offset: m.offset, key: ByteView(unsafe: m.key),
                           record: r.line)
            }
            return p
        }
        return p
    }

    /// A message of NMEA lines or gpsd reports (`--format nmea|gpsd`): the readings it makes
    /// (an NMEA cycle's fix comes with a later message of its device, the one that ends the
    /// cycle) are applied as of this message, so their events' ids carry its offset.
    private func apply(_ m: KafkaMessageView, receivers: ReceiverMessages, to p: PartitionEngine) throws(ConsumeError) {
        p.received(offset: m.offset)
        let key = ByteView(unsafe: m.key)
        try receivers.decode(key: key, value: ByteView(unsafe: m.value), offset: m.offset) { step throws(ConsumeError) in
            try take(step, of: receivers, to: p, at: m.offset, partition: m.partition, key: key)
        }
    }

    /// One reading or rejection of a receiver message (or of the cycles ended at the end).
    @inline(__always)
    private func take(_ step: ReceiverMessages.Step, of receivers: ReceiverMessages, to p: PartitionEngine, at offset: Int64,
                      partition: Int32, key: ByteView) throws(ConsumeError) {
        switch step {
        case .rejected(let reason, let lineOffset):
            try reject(reason, detail: nil, partition: partition, offset: lineOffset, key: key, record: receivers.rejectedLine)
        case .reading(let lineOffset):
            let r = receivers.current
            if let (reason, detail) = p.applyDecoded(r, offset: offset) {
                try reject(reason, detail: detail, partition: partition, offset: lineOffset, key: r.device, record: r.line)
            }
        }
    }

    /// The end of the input (`--exit-when-idle`): every device's open NMEA cycle ends, as at the
    /// end of a file, and its fix is applied after the partition's last record.
    private func finishReceivers(of p: PartitionEngine) throws(ConsumeError) {
        guard let receivers = p.receivers else { return }
        let offset = p.offsetAfterLastRecord
        try receivers.finish { step throws(ConsumeError) in
            try take(step, of: receivers, to: p, at: offset, partition: p.partition, key: receivers.finishedDevice)
        }
    }

    /// A bad record: to the reject sink, which counts it, reports it on stderr (the first few)
    /// and writes it with its place and reason to `GROUP-rejects`, or stops the run (`--strict`).
    private func reject(_ reason: RejectReason, detail: String?, partition: Int32, offset: Int64,
                        key: ByteView, record: ByteView) throws(ConsumeError) {
        let place = "\(c.topic)[\(partition)]@\(offset)"
        let stop: String?
        do {
            stop = try rejects.reject(reason, detail: detail, place: place, record: record, key: key.count > 0 ? key : nil)
        } catch {
            throw .kafka("cannot write to \(c.rejectsTopic): \(error)")
        }
        if let stop { throw .strictRejection(stop) }
    }

    private func produceEvents(of p: PartitionEngine) throws(ConsumeError) {
        do {
            tally.eventsProduced += try p.takeEvents(into: events)
        } catch {
            throw .kafka("cannot produce events to \(c.eventsTopic): \(error)")
        }
    }

    // MARK: Snapshots and commits

    /// Writes partition `p`'s snapshot and commits its next offset with the snapshot's place.
    private func checkpoint(_ p: PartitionEngine, forceCommit: Bool = false) throws(ConsumeError) {
        let began = monotonicSeconds()
        try produceEvents(of: p)
        let bytes = p.snapshot(identity: identity, topic: c.topic)
        let ref = try state.write(bytes, key: stateKey(p.partition))
        tally.snapshotsWritten += 1
        tally.snapshotBytes += bytes.count
        tally.snapshotDevices += p.engine.devices.liveCount
        tally.snapshotSeconds += monotonicSeconds() - began
        p.sinceSnapshot = 0
        p.changed = false
        commit(p.partition, offset: p.nextOffset, metadata: ref.metadata, force: forceCommit)
    }

    private func stateKey(_ partition: Int32) -> String { "\(c.topic)/\(partition)" }

    /// Commits, or keeps the commit for later when the group refuses it (a rebalance under way:
    /// REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID; a coordinator away). After a
    /// refusal no commit is sent until the group has rebalanced (an assignment has come, even an
    /// empty one: a revocation comes before the new generation is known) or
    /// `commitHold` seconds have passed: commits sent into a rebalance are refused in turn, and
    /// each ILLEGAL_GENERATION makes librdkafka drop the assignment and rejoin, which starts
    /// another rebalance for every member. The newest snapshot's commit replaces an older one
    /// still waiting.
    private func commit(_ partition: Int32, offset: Int64, metadata: String, force: Bool = false) {
        if !force, let held = commitsHeld {
            if consumer.rebalances.assigned == held.rebalances && monotonicSeconds() - held.since < Self.commitHold {
                pendingCommits[partition] = (offset, metadata)
                return
            }
            commitsHeld = nil
        }
        do {
            try consumer.commit(topic: c.topic, partition: partition, offset: offset, metadata: metadata)
            tally.commits += 1
            pendingCommits[partition] = nil
        } catch {
            tally.commitsFailed += 1
            pendingCommits[partition] = (offset, metadata)
            commitsHeld = (consumer.rebalances.assigned, monotonicSeconds())
            if c.verbose {
                diagnostics("geotrigger: \(c.topic)[\(partition)]: commit of offset \(offset) refused (\(error)); "
                            + "sent again once the group has rebalanced\n")
            }
        }
    }

    /// Set by a refused commit: the assignment count then, and when.
    private var commitsHeld: (rebalances: Int, since: Double)?
    private static let commitHold = 5.0
    private var lastRetry = 0.0

    private func retryCommits() {
        let now = monotonicSeconds()
        guard now - lastRetry >= 0.2 else { return }
        lastRetry = now
        for (partition, pending) in pendingCommits.sorted(by: { $0.key < $1.key }) {
            guard partitions[partition] != nil else {
                pendingCommits[partition] = nil
                continue
            }
            commit(partition, offset: pending.offset, metadata: pending.metadata)
        }
    }

    /// `--until` (for a batch job that has read everything), then a snapshot and a commit for
    /// every partition that changed since its last; true when nothing is left uncommitted.
    private func settle() throws(ConsumeError) -> Bool {
        for p in partitions.values.sorted(by: { $0.partition < $1.partition }) {
            try finishReceivers(of: p)
            if let until = c.engine.until {
                p.advance(to: until)
                try produceEvents(of: p)
            }
            // Leaving: whatever refusals came before, this is the moment to commit.
            if p.changed {
                try checkpoint(p, forceCommit: true)
            } else if let pending = pendingCommits[p.partition] {
                commit(p.partition, offset: pending.offset, metadata: pending.metadata, force: true)
            }
        }
        return pendingCommits.isEmpty
    }

    /// The end of the run (idle, or a stop signal): whatever changed is written and committed,
    /// and the group left cleanly (whatever is revoked then has nothing new to write).
    private func stop() throws(ConsumeError) {
        if stoppedBySignal {
            for p in partitions.values.sorted(by: { $0.partition < $1.partition }) {
                if p.changed {
                    try checkpoint(p, forceCommit: true)
                } else if let pending = pendingCommits[p.partition] {
                    commit(p.partition, offset: pending.offset, metadata: pending.metadata, force: true)
                }
            }
            settleCommitsBeforeLeaving()
        }
        consumer.close()
        if let fatal { throw fatal }
        do {
            try producer.flush(milliseconds: 60_000)
            try state.flush()
        } catch {
            throw .kafka("cannot deliver the last events: \(error)")
        }
        let (failed, first) = producer.failures
        if failed > 0 { throw .kafka("\(failed) messages could not be delivered: \(first.map { "\($0)" } ?? "")") }
        for p in partitions.values { drop(p) }
        partitions.removeAll()
    }

    /// Commits refused as the run stops (the group was rebalancing, a broker was away), sent again
    /// while the group settles, for up to `2 × commitHold` seconds, before the group is left: a next
    /// member would otherwise read again, and produce again, what this one has read and produced.
    /// Records that arrive meanwhile are not applied (the next owner reads them).
    private func settleCommitsBeforeLeaving() {
        guard !pendingCommits.isEmpty else { return }
        let batch = KafkaMessageBatch(capacity: 256)
        let deadline = monotonicSeconds() + 2 * Self.commitHold
        while !pendingCommits.isEmpty && monotonicSeconds() < deadline && fatal == nil {
            _ = consumer.poll(into: batch, milliseconds: 100)
            batch.release()
            for (partition, pending) in pendingCommits.sorted(by: { $0.key < $1.key }) {
                guard partitions[partition] != nil else {
                    pendingCommits[partition] = nil
                    continue
                }
                commit(partition, offset: pending.offset, metadata: pending.metadata, force: true)
            }
        }
        if !pendingCommits.isEmpty {
            diagnostics("geotrigger: \(pendingCommits.count) partition(s) left uncommitted at the stop: "
                        + "their next owner reads on from their last commit\n")
        }
    }

    /// A partition leaves this process: its counts join the totals.
    private func drop(_ p: PartitionEngine) {
        p.applier.flush()
        tally.replay.add(p.applier.counts)
        if let receivers = p.receivers { tally.replay.passedOver.merge(receivers.passedOver, uniquingKeysWith: +) }
        tally.replay.events = zip(tally.replay.events, p.writer.counts).map(+)
        tally.replay.deliveries = zip(tally.replay.deliveries, p.writer.deliveryCounts).map(+)
    }

    // MARK: KafkaRebalanceHandler

    public func assigned(_ given: [KafkaPartition]) -> [Int64?] {
        var starts: [Int64?] = []
        for kp in given {
            guard kp.topic == c.topic else {
                starts.append(nil)
                continue
            }
            tally.partitionsAssigned += 1
            do throws(ConsumeError) {
                starts.append(try take(kp.partition))
            } catch {
                fatal = fatal ?? error
                starts.append(nil)
            }
        }
        return starts
    }

    /// Builds partition `partition`'s engine, from its snapshot when its commit names one;
    /// returns the offset to read from.
    private func take(_ partition: Int32) throws(ConsumeError) -> Int64 {
        let began = monotonicSeconds()
        let committed: (offset: Int64, metadata: String)
        do {
            committed = try consumer.committed(topic: c.topic, partition: partition)
        } catch {
            throw .kafka("\(c.topic)[\(partition)]: cannot read its committed offset: \(error)")
        }
        var note: String
        let p: PartitionEngine
        if let ref = SnapshotReference(metadata: committed.metadata) {
            let bytes = try state.read(ref, key: stateKey(partition))
            p = try engine(for: partition, privateIndex: PartitionEngine.hasRegionChanges(snapshot: bytes) ?? false)
            try p.restore(bytes, identity: identity, topic: c.topic)
            guard p.nextOffset == committed.offset else {
                throw .snapshot("\(c.topic)[\(partition)]: the snapshot is at offset \(p.nextOffset), the commit at \(committed.offset)")
            }
            tally.snapshotsLoaded += 1
            tally.snapshotLoadSeconds += monotonicSeconds() - began
            note = "resumed at offset \(committed.offset) from a snapshot of \(grouped(p.engine.devices.liveCount)) devices "
                + "(\(grouped(bytes.count)) bytes, \(ref.topic)[\(ref.partition)]@\(ref.first))"
        } else if committed.offset >= 0 {
            // Committed by something else than geotrigger: no state to go on from.
            p = try engine(for: partition, privateIndex: false)
            p.nextOffset = committed.offset
            note = "no snapshot in the commit's metadata: starting afresh at its offset \(committed.offset)"
        } else {
            p = try engine(for: partition, privateIndex: false)
            p.nextOffset = 0
            note = "nothing committed: starting at the partition's beginning"
        }
        partitions[partition] = p
        pendingCommits[partition] = nil
        lastActivity = monotonicSeconds()
        if c.verbose {
            diagnostics("geotrigger: \(c.topic)[\(partition)] assigned: \(note) in \(formatSeconds(monotonicSeconds() - began))\n")
        }
        if committed.offset >= 0 { return committed.offset }
        // Nothing committed: the partition's first offset still held, asked here rather than
        // left to the fetcher (-2, BEGINNING), whose offset lookups, one partition after another,
        // held the first fetches back.
        if let low = try? consumer.watermarks(topic: c.topic, partition: partition).low, low >= 0 {
            p.nextOffset = low
            return low
        }
        return -2
    }

    /// A new engine for `partition`: on the index every partition shares, or (for a partition
    /// whose regions changed live) on one of its own.
    private func engine(for partition: Int32, privateIndex: Bool) throws(ConsumeError) -> PartitionEngine {
        do {
            let index = privateIndex
                ? try RegionIndex(regions: regions, hysteresis: c.engine.hysteresis, tree: c.engine.tree, order: .spatial)
                : template!
            return try PartitionEngine(partition: partition, index: index, ids: ids, requests: requests, configuration: c.engine,
                                       receivers: receiverKind)
        } catch {
            throw .kafka("\(c.topic)[\(partition)]: cannot build its engine: \(error)")
        }
    }

    /// The partitions share one region index, read-only; a live region record changes regions
    /// for its own partition only, so before the first one the partition moves to an index of its
    /// own: its state goes over through a snapshot (which carries everything but the index).
    private func ownIndex(_ p: PartitionEngine) throws(ConsumeError) -> PartitionEngine {
        try produceEvents(of: p)
        let bytes = p.snapshot(identity: identity, topic: c.topic)
        let own = try engine(for: p.partition, privateIndex: true)
        try own.restore(bytes, identity: identity, topic: c.topic)
        own.nextOffset = p.nextOffset
        own.sinceSnapshot = p.sinceSnapshot
        own.changed = p.changed
        drop(p)
        partitions[p.partition] = own
        return own
    }

    public func revoked(_ taken: [KafkaPartition], lost: Bool) {
        for kp in taken where kp.topic == c.topic {
            guard let p = partitions.removeValue(forKey: kp.partition) else { continue }
            if lost {
                // Someone else's already: anything committed now could overwrite their progress.
                tally.partitionsLost += 1
                lastActivity = monotonicSeconds()
                if c.verbose { diagnostics("geotrigger: \(kp) lost: its next owner resumes from its last commit\n") }
            } else {
                tally.partitionsRevoked += 1
                // The last chance to commit this partition (the generation is still this
                // member's while it revokes): sent whatever refusals came before.
                do {
                    if p.changed {
                        try checkpoint(p, forceCommit: true)
                    } else if let pending = pendingCommits[kp.partition] {
                        commit(kp.partition, offset: pending.offset, metadata: pending.metadata, force: true)
                    }
                } catch {
                    diagnostics("geotrigger: \(kp) revoked without a snapshot (\(error)): its next owner resumes from its last commit\n")
                }
                if c.verbose { diagnostics("geotrigger: \(kp) revoked at offset \(p.nextOffset)\n") }
            }
            pendingCommits[kp.partition] = nil
            drop(p)
        }
    }

    // MARK: KafkaDeliveryHandler

    // Only the state topic's producer has this handler (the events' producer has none: it counts
    // its failures itself).
    public func delivered(token: Int, topic: String, partition: Int32, offset: Int64, error: KafkaError?) {
        state.delivered(token: token, partition: partition, offset: offset, error: error)
    }
}

/// Unix seconds, now.
func wallClockSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// `GROUP-events`: a partition's events, produced by the batch, each keyed by its device.
private final class EventsTopic: RecordSink {
    let producer: KafkaProducer
    let topic: String
    private(set) var length = 0
    /// The batch's messages (scratch space, reused).
    private var messages: [KafkaProducer.BatchEntry] = []

    init(producer: KafkaProducer, topic: String) {
        self.producer = producer
        self.topic = topic
    }

    var blockSize: Int { 0 }

    func write(records: ByteView, keys: ByteView, entries: [KeyedRecord]) throws {
        messages.removeAll(keepingCapacity: true)
        for e in entries { messages.append(KafkaProducer.BatchEntry(key: e.key, value: e.value)) }
        try producer.produceBatch(topic: topic, keys: keys.unsafeBytes, values: records.unsafeBytes, entries: messages)
        length += records.count
    }

    func write(record: ByteView, key: ByteView?) throws {
        try producer.produce(topic: topic, key: key?.unsafeBytes, value: record.unsafeBytes)
        length += record.count
    }

    /// Lines without a key (none is written so: events come by the batch).
    func write(_ records: ByteView) throws {
        try forEachRecord(in: records) { try write(record: $0, key: nil) }
    }
}

/// `GROUP-rejects`: a message per rejected record, keyed as the record was.
private final class RejectsTopic: RecordSink {
    let producer: KafkaProducer
    let topic: String
    private(set) var length = 0

    init(producer: KafkaProducer, topic: String) {
        self.producer = producer
        self.topic = topic
    }

    /// One message per record, as it is rejected.
    var blockSize: Int { 0 }

    func write(record: ByteView, key: ByteView?) throws {
        try producer.produce(topic: topic, key: key?.unsafeBytes, value: record.unsafeBytes)
        length += record.count
    }

    /// Lines without a key (none is written so: rejections come through `write(record:key:)`).
    func write(_ records: ByteView) throws {
        try forEachRecord(in: records) { try write(record: $0, key: nil) }
    }
}
