import GeotriggerCore
import GeotriggerGeometry
import GeotriggerMonitoring
import GeotriggerScheduling
import GeotriggerRuntime
import GeotriggerFormats
import GeotriggerEngine
import GeotriggerOutput

/// A record routed to a replay job, or a clock tick: another job's reading moved the stream clock.
/// Plain values only (`JobItemList`): a sighting's beacon and a control record's bytes wait in
/// the batch's `beacons` and `controls`.
struct JobItem {
    enum Kind: UInt8 {
        case fix, sighting, control, tick
        /// A device-less region record (`addRegion`, `removeRegion`), sent to every job.
        case region
    }

    /// The record's sequence number in the merged input.
    var seq: Int
    var t: Double
    /// A fix's position and accuracy; a sighting keeps its RSSI and tx in the first two.
    var latitude = 0.0, longitude = 0.0, accuracy = 0.0
    var rssi: Double {
        get { latitude }
        set { latitude = newValue }
    }
    var tx: Double {
        get { longitude }
        set { longitude = newValue }
    }
    /// The device's id in the whole run (the reader's; with `--expire` an expired device's id is
    /// given to a later new device).
    var device: Int32 = 0
    /// Control or region record: its index in the batch's `controls`; sighting: in `beacons`.
    var side: Int32 = -1
    var kind: Kind

    init(kind: Kind, device: Int32 = 0, seq: Int, t: Double, latitude: Double = 0, longitude: Double = 0,
         accuracy: Double = 0) {
        self.kind = kind
        self.device = device
        self.seq = seq
        self.t = t
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
    }
}

/// A control record's bytes, copied (the decoder's buffer moves on; control records are rare).
struct JobControl {
    var op: ControlOp
    var line: [UInt8]
    var place: String
}

/// A device's rank, handed to its job with the record that gives it one (`JobBatch.devices`): a
/// new device (its name) or, with `--expire`, a device renewed by its own reading (no name).
struct JobDeviceNote {
    /// The record: the job applies the note right before it.
    var seq: Int
    /// The device's id in the whole run.
    var device: Int32
    /// Its rank: every new device and every renewal takes the next value of the reader's counter,
    /// in input order, as on one thread (`DeviceTable.intern`, `renew`).
    var rank: UInt64
    /// A new device's name; nil for a renewal (the device expires in the timers before its own
    /// reading, which applies to it as a new device under the same id: `Engine.expire`).
    var name: [UInt8]?
}

/// What the reader hands a job at once.
struct JobBatch {
    /// The records (the reader's `JobOutboxes` until the batch goes).
    var items = JobItemList()
    /// New devices and renewals, in record order (at most one per record).
    var devices: [JobDeviceNote] = []
    var controls: [JobControl] = []
    /// The sightings' beacons, in record order.
    var beacons: [BeaconID] = []
    /// Memory for the job's next result's bytes and tags: a result's the merge has written out
    /// (the tags emptied).
    var spareBytes: ByteBlock? = nil
    var spareTags: [JobTag]? = nil
    /// Every record up to this sequence number has been routed.
    var through = 0
    /// No batch follows.
    var last = false
    /// `--checkpoint`: once this batch is applied, the job hands its state over (`JobResult.snapshot`).
    var snapshot = false
}

/// Orders one emitted record in the single-threaded output: the input record it belongs to, the
/// engine phase (timers before it, the record itself, timers after it) and, for a timer, its due
/// time, owner (`Engine.TimerSource`) and device rank — the order `Engine.nextTimer` and
/// `TimerQueue` fire in.
struct JobTag {
    var seq: Int
    var phase: UInt8
    var source: UInt8
    var due: Double
    var rank: UInt64
    /// End of the record in the result's bytes (it starts where the previous one ends).
    var end: Int

    func precedes(_ o: JobTag) -> Bool {
        (seq, phase, due, source, rank) < (o.seq, o.phase, o.due, o.source, o.rank)
    }
}

/// A rejected record, reported by the merge in input order.
struct PendingRejection {
    var seq: Int
    var reason: RejectReason
    var detail: String?
    var place: String
    var line: [UInt8]
    /// Found by a job (a control record its scheduler refused): the reader counted it as applied.
    var byJob: Bool
}

/// What a job hands back per batch: its events formatted and tagged.
struct JobResult {
    var job: Int
    var bytes: ByteBlock
    var tags: [JobTag]
    var rejections: [PendingRejection]
    var through: Int
    var last: Bool
    /// With the last result: event and delivery counts, and `--state-out` entries by device rank.
    var counts: [Int] = []
    var deliveryCounts: [Int] = []
    var states: [(rank: UInt64, bytes: [UInt8])] = []
    /// The job's state after this batch, when the batch asked for it (`JobBatch.snapshot`).
    var snapshot: [UInt8]? = nil
    /// The batch's records list, emptied, for the reader to fill again: a new one per batch
    /// cost the reader a page fault every few kilobytes.
    var spareItems: JobItemList? = nil
}

/// What every job builds its engine from.
struct JobSetup {
    /// The run's index's regions, in its order (`givenOrder` says where each was given).
    var regions: [Region]
    /// The regions' ids as events write them, shared by every job's writer.
    var ids: IDSlots
    var givenOrder: RegionOrder
    var hysteresis: Hysteresis
    var tree: SpatialIndexKind
    var monitor: MonitorOptions
    var beacons: BeaconOptions
    var requests: [NotificationRequest]
    var echoProperties: Bool
    var writeState: Bool
    /// `--service-extension`: one child for every job (it serves one push at a time).
    var serviceExtension: ServiceExtensionProcess? = nil
    /// A resumed run: each job's state from the checkpoint (`ReplayJob.snapshot()`).
    var resumed: [[UInt8]]? = nil
}

// The records cross threads by value, whole: the reader builds a batch and never touches it again.
extension JobItem: Sendable {}
extension JobControl: Sendable {}
extension JobDeviceNote: Sendable {}
extension JobBatch: Sendable {}
extension JobTag: Sendable {}
extension PendingRejection: Sendable {}
extension JobResult: Sendable {}
extension JobSetup: Sendable {}

/// One `replay --jobs` worker: its own region index (its own GEOS context and query scratch, made
/// and used on this thread only, over the circle tables and tree the jobs share), engine and
/// event formatting, for the devices hashed to it.
final class ReplayJob {
    let job: Int
    let engine: Engine
    /// Room for a first batch's events without growing: a device's first fix enters every
    /// region around it at once, so the first batches are the largest, and each doubling
    /// copies into fresh pages. Only the bytes written are ever touched.
    let memory = RecordBuffer(memory: (), capacity: 1 << 20)
    let writer: EventWriter
    let writeState: Bool
    // The job's own state, touched only on its thread: `@exclusivity(unchecked)`, as the
    // runtime's check of a class's stored property (a thread-local lookup at each access) is
    // otherwise paid at every fix and every event.
    @exclusivity(unchecked) private var seq = 0
    /// Room for a first batch's tags, as `memory` has for its events (a doubling array copies
    /// into fresh pages each time).
    @exclusivity(unchecked) private var tags: [JobTag] = {
        var tags: [JobTag] = []
        tags.reserveCapacity(1 << 14)
        return tags
    }()
    @exclusivity(unchecked) private var rejections: [PendingRejection] = []
    /// Global device id → this engine's id (-1: never this job's), and back. With `--expire` both
    /// ids are reused: the reader gives an expired device's global id to a later new device,
    /// announced to its own job, which sets its entry; an entry of a device this engine has
    /// forgotten is stale and never read (the reader routes that id to its new owner only), and a
    /// forgotten local id's `globalOf` entry is stale until the engine reuses the id.
    @exclusivity(unchecked) private var localOf: [Int32] = []
    @exclusivity(unchecked) private var globalOf: [Int32] = []
    /// While the monitor's batch is applied: the sequence number of each batched device's fix
    /// (by this engine's id), which tags that fix's events. The devices of a batch are distinct.
    /// Raw memory (`PodList`, freed in `deinit`): written for every fix, where an array would
    /// check its uniqueness each time.
    @exclusivity(unchecked) private var batchSeqs = PodList<Int>()
    private let applier: ReadingApplier

    /// The engine on an index over `shared` (the run's index's tables and tree), or, with a GEOS
    /// tree, on one of its own; call on the job's own thread.
    convenience init(job: Int, setup: JobSetup, sharing shared: SharedRegionIndex?) {
        do {
            // The run built the same index from the same regions before starting the jobs, so
            // this cannot fail except by a bug.
            let index = try shared.map { try RegionIndex(sharing: $0) }
                ?? RegionIndex(regions: setup.regions, hysteresis: setup.hysteresis, tree: setup.tree, order: setup.givenOrder)
            self.init(job: job, setup: setup, index: index)
        } catch {
            preconditionFailure("replay job \(job): \(error)")
        }
    }

    /// The engine on `index`; call on the job's own thread.
    init(job: Int, setup: JobSetup, index: RegionIndex) {
        self.job = job
        do {
            // The run built an engine from the same index and requests before starting the jobs,
            // so this cannot fail except by a bug.
            engine = try Engine(index: index, options: setup.monitor, beaconOptions: setup.beacons, requests: setup.requests)
            engine.serviceExtension = setup.serviceExtension
        } catch {
            preconditionFailure("replay job \(job): \(error)")
        }
        writer = EventWriter(output: memory, devices: engine.devices, regions: setup.regions, ids: setup.ids,
                             echoProperties: setup.echoProperties)
        writeState = setup.writeState
        applier = ReadingApplier(engine: engine)
        engine.output = Output(job: self)
        if let states = setup.resumed {
            do {
                try restore(states[job])
            } catch {
                // The run read the checkpoint whole (its checksum held) and checked its identity.
                preconditionFailure("replay job \(job): cannot restore its checkpoint: \(error)")
            }
        }
    }

    deinit { batchSeqs.free() }

    /// The job's part of a checkpoint: its devices' global ids, its writer's counts and its engine.
    func snapshot() -> [UInt8] {
        var w = SnapshotWriter(reservingCapacity: 1 << 16)
        w.tag("job")
        w.list(globalOf) { w, g in w.varint(UInt64(g)) }
        w.list(writer.counts) { w, n in w.varint(UInt64(n)) }
        w.list(writer.deliveryCounts) { w, n in w.varint(UInt64(n)) }
        engine.writeSnapshot(to: &w)
        return w.bytes
    }

    private func restore(_ bytes: [UInt8]) throws(SnapshotError) {
        var r = SnapshotReader(bytes)
        try r.expect("job")
        globalOf = try r.list { r throws(SnapshotError) in Int32(truncatingIfNeeded: try r.varint()) }
        let counts = try r.list { r throws(SnapshotError) in try r.natural() }
        let deliveries = try r.list { r throws(SnapshotError) in try r.natural() }
        writer.restoreCounts(events: counts, deliveries: deliveries)
        try engine.restoreSnapshot(from: &r)
        guard engine.devices.count == globalOf.count else { throw SnapshotError("job devices differ") }
        // Only live devices: a forgotten one's entry is stale, its global id perhaps another's now.
        for (d, g) in globalOf.enumerated() where engine.devices.isLive(Int32(d)) {
            guard g >= 0 else { throw SnapshotError("job device \(d) has no global id") }
            while localOf.count <= Int(g) { localOf.append(-1) }
            localOf[Int(g)] = Int32(d)
        }
        batchSeqs.removeAll()
        growBatchSeqs()
    }

    /// One entry in `batchSeqs` per engine device id.
    private func growBatchSeqs() {
        while Int(batchSeqs.count) < globalOf.count { batchSeqs.append(0) }
    }

    /// The engine's output: the job owns the engine, which owns this, so it holds the job
    /// unretained and calls it through a guaranteed reference (no cycle, no reference counting
    /// per event: an `unowned(unsafe)` reference was still retained and released around each call).
    private final class Output: RegionEventTableReader {
        let job: Unmanaged<ReplayJob>
        init(job: ReplayJob) { self.job = .passUnretained(job) }
        func regionEvent(_ event: RegionEvent) { job._withUnsafeGuaranteedRef { $0.regionEvent(event) } }
        func delivery(_ delivery: Delivery) { job._withUnsafeGuaranteedRef { $0.delivery(delivery) } }
        func response(_ response: NotificationResponse) { job._withUnsafeGuaranteedRef { $0.response(response) } }
        func silentPush(_ push: SilentPush) { job._withUnsafeGuaranteedRef { $0.silentPush(push) } }
        func regionAdded(_ region: Region, number: Int32) {
            job._withUnsafeGuaranteedRef { $0.writer.regionAdded(region, number: number) }
        }
        var regionEventTable: RegionEventTable { job._withUnsafeGuaranteedRef { $0.writer.regionEventTable } }
    }

    func run(input: JobQueue<JobBatch>, output: JobQueue<JobResult>, spare: SpareWork) {
        while true {
            let batch = input.pop(whileEmpty: spare)
            apply(batch)
            var result = JobResult(job: job, bytes: memory.takeBlock(replacingWith: batch.spareBytes), tags: tags,
                                   rejections: rejections,
                                   through: batch.through, last: batch.last)
            batch.items.removeAll()
            result.spareItems = batch.items
            if batch.snapshot { result.snapshot = snapshot() }
            // The result holds the tags now: emptied in place, they would be copied first.
            if let spare = batch.spareTags {
                tags = spare
            } else {
                let capacity = tags.capacity
                tags = []
                tags.reserveCapacity(capacity)
            }
            rejections.removeAll()
            if batch.last {
                result.counts = writer.counts
                result.deliveryCounts = writer.deliveryCounts
                if writeState { result.states = stateEntries() }
                output.push(result)
                return
            }
            output.push(result)
        }
    }

    /// A new device or a renewal, right before its record: in record order, since with `--expire`
    /// a name may come back after its device expired (here too, at the same record), and its
    /// local id may be one freed since.
    private func take(_ note: JobDeviceNote) {
        // The rank the device takes: a new one's at `intern`, a renewal's at `DeviceTable.renew`
        // when the engine expires it in the timers before its reading (`Engine.expire`).
        engine.devices.setNextRank(note.rank)
        guard let name = note.name else { return }
        let g = Int(note.device)
        let d = name.withByteView { applier.device($0) }
        engine.devices.setRank(d, note.rank)
        while localOf.count <= g { localOf.append(-1) }
        localOf[g] = d
        while globalOf.count <= Int(d) { globalOf.append(-1) }
        globalOf[Int(d)] = note.device
        growBatchSeqs()
    }

    private func apply(_ batch: JobBatch) {
        applier.resume()
        let notes = batch.devices
        var nextNote = 0
        let items = batch.items
        for k in 0..<items.count {
            let item = items[k]
            if item.kind == .tick {
                seq = item.seq
                applier.tick(to: item.t)
                continue
            }
            if nextNote < notes.count && notes[nextNote].seq == item.seq && item.kind != .region {
                take(notes[nextNote])
                nextNote += 1
            }
            // Events tagged with `seq`, unless they come from the applier's batch: those carry
            // their own fix's number (`batchSeqs`, set once the fix has joined the batch).
            seq = item.seq
            // The engine's rules, through the applier as on one thread: the reader has only
            // rejected what needs no state (decoding, a reading older than its device's last).
            if item.kind == .fix {
                let d = localOf[Int(item.device)]
                switch applier.fix(device: d, t: item.t, at: Coordinate(latitude: item.latitude, longitude: item.longitude),
                                   accuracy: item.accuracy) {
                case .batched: batchSeqs[Int(d)] = item.seq
                case .applied: break
                case .rejected(let reason):
                    // The reader lets only fixes no older than their device's last one through.
                    assertionFailure("replay job \(job): a routed fix rejected (\(reason))")
                }
                continue
            }
            var r = Reading()
            r.t = item.t
            if item.kind == .sighting {
                let d = localOf[Int(item.device)]
                r.kind = .sighting
                (r.rssi, r.tx, r.beacon) = (item.rssi, item.tx, batch.beacons[Int(item.side)])
                _ = applier.apply(r, device: d)
                continue
            }
            // A control or region record.
            let control = batch.controls[Int(item.side)]
            r.kind = .control
            r.op = control.op
            let outcome = control.line.withByteView { line in
                r.line = line
                return item.kind == .region ? applier.apply(r) : applier.apply(r, device: localOf[Int(item.device)])
            }
            // A record a job refuses is reported by the merge: a region record by job 0
            // alone (every job decides it alike).
            if case .rejected(let reason, let detail) = outcome, item.kind == .control || job == 0 {
                rejections.append(PendingRejection(seq: item.seq, reason: reason, detail: detail,
                                                   place: control.place, line: control.line, byJob: true))
            }
        }
        precondition(nextNote == notes.count, "replay job \(job): a device note without its record")
        applier.flush()
    }

    /// Its live devices' `--state-out` entries, each with its rank: the run sorts them all by rank
    /// (first-seen order), as `StateWriter.write` does on one thread.
    private func stateEntries() -> [(rank: UInt64, bytes: [UInt8])] {
        let regionIDs = engine.index.regions.map(\.id)
        let devices = engine.devices
        return (0..<Int32(devices.count)).filter { devices.isLive($0) }.map { d in
            StateWriter.writeDevice(d, engine: engine, regionIDs: regionIDs, to: memory)
            return (devices.rank(d), memory.takeBytes())
        }
    }

    /// Tags the record just written: `seq` is the input record it belongs to.
    private func tag(device: Int32, seq: Int) {
        // In the reading phase the device's rank orders the events of one record across jobs:
        // only a region record (every job's devices at once, in first-seen order:
        // `Monitor.endVisits`) has events of several devices. A timer's rank is the one it was
        // armed with (a stale one fires nothing), which is the device's now; an expired device's
        // exits come before `DeviceTable.remove`/`renew`.
        let moment = engine.moment
        tags.append(JobTag(seq: seq, phase: moment.phase, source: moment.source, due: moment.due,
                           rank: engine.devices.rank(device), end: memory.length))
    }
}

extension ReplayJob {
    // Events from the applier's batch belong to their own fixes (`batchSeqs`); any other, to the
    // record being applied (`seq`).
    func regionEvent(_ event: RegionEvent) {
        writer.regionEvent(event)
        tag(device: event.device, seq: applier.applyingBatch ? batchSeqs[Int(event.device)] : seq)
    }

    func delivery(_ delivery: Delivery) {
        writer.delivery(delivery)
        tag(device: delivery.device, seq: applier.applyingBatch ? batchSeqs[Int(delivery.device)] : seq)
    }

    // Responses and silent pushes come only from control records: the record being applied's.
    func response(_ response: NotificationResponse) {
        writer.response(response)
        tag(device: response.device, seq: seq)
    }

    func silentPush(_ push: SilentPush) {
        writer.silentPush(push)
        tag(device: push.device, seq: seq)
    }
}
