import Geotrigger
import GeotriggerCore
import GeotriggerGeometry
import GeotriggerKafka
import GeotriggerMonitoring
import GeotriggerScheduling
import GeotriggerRuntime
import GeotriggerFormats

/// One input partition's share of `geotrigger consume` (SPEC §8): an engine of its own (its
/// devices, its clock, its timers, its region changes), fed the partition's records in offset
/// order, and the events they cause, each tagged with the id that names it however often it is
/// produced: input partition, input offset, and its index among that record's events.
///
/// A partition's state is nothing but this engine and a few counters, so it moves between
/// processes as a snapshot (`snapshot()`, `restore`), taken between records.
package final class PartitionEngine {
    let partition: Int32
    package let engine: Engine
    let applier: ReadingApplier
    let writer: EventWriter
    /// The events of the records applied since they were last handed on, formatted, one per line.
    private let formatted = RecordBuffer(memory: ())
    /// `--format nmea|gpsd`: the partition's devices' receiver state (an NMEA device's open
    /// cycle, a gpsd device's last report), which the snapshot carries; nil for NDJSON.
    package let receivers: ReceiverMessages?

    /// The offset of the next record to read: every record before it has been applied.
    @exclusivity(unchecked) package var nextOffset: Int64 = 0
    /// Records applied (or rejected) since the last snapshot.
    @exclusivity(unchecked) var sinceSnapshot = 0
    /// Whether the batch being read has a record of this partition (its events are produced
    /// after the batch).
    @exclusivity(unchecked) var touched = false
    /// Whether anything changed since the last snapshot (a record, or `--until`).
    @exclusivity(unchecked) var changed = false

    /// The record being applied: events not from the applier's batch are its.
    @exclusivity(unchecked) private var currentOffset: Int64 = -1
    /// While the applier's batch is applied: the offset of each batched device's fix, by device
    /// id (the devices of a batch are distinct).
    @exclusivity(unchecked) private var batchOffsets: [Int64] = []
    /// The id of the last event tagged: its record's offset and index there.
    @exclusivity(unchecked) private(set) var lastTag: (offset: Int64, index: Int32) = (-1, -1)

    /// An event formatted into `formatted` (its id first): its bytes end at `end`; its key (the device's name)
    /// is `keys[keyStart..<keyEnd]`, copied when the event was made (an expired device's id may
    /// name another device by the time the event is produced).
    struct Tag {
        var end: Int
        var keyStart: Int
        var keyEnd: Int
    }
    @exclusivity(unchecked) private(set) var tags: [Tag] = []
    @exclusivity(unchecked) private var keys: [UInt8] = []
    /// Where each event lies in `formatted` and `keys` (`takeEvents`; scratch space, reused).
    @exclusivity(unchecked) private var entries: [KeyedRecord] = []

    package init(partition: Int32, index: RegionIndex, ids: IDSlots, requests: [NotificationRequest],
         configuration c: EngineConfiguration, receivers: ReceiverMessages.Kind? = nil) throws {
        self.partition = partition
        self.receivers = receivers.map { ReceiverMessages(kind: $0) }
        engine = try Engine(index: index, options: c.monitor, beaconOptions: c.beacons, requests: requests)
        writer = EventWriter(output: formatted, devices: engine.devices, regions: index.regions, ids: ids,
                             echoProperties: c.echoProperties)
        applier = ReadingApplier(engine: engine)
        tags.reserveCapacity(1024)
        keys.reserveCapacity(16 << 10)
        engine.output = TaggingOutput(self)
    }

    var regionEventTable: RegionEventTable { writer.regionEventTable }

    // MARK: Records

    /// Applies the record at `offset` (decoded into `r`); the reason (and what was wrong) when
    /// it is rejected. Its events wait in `formatted` until `takeEvents`.
    @inline(__always)
    package func apply(_ r: Reading, offset: Int64) -> (RejectReason, String?)? {
        sinceSnapshot += 1
        return applyDecoded(r, offset: offset)
    }

    /// `apply`, for one of the readings a receiver message made (the message was counted by
    /// `received`).
    @inline(__always)
    package func applyDecoded(_ r: Reading, offset: Int64) -> (RejectReason, String?)? {
        currentOffset = offset
        changed = true
        switch applier.apply(r) {
        case .batched(let d):
            if Int(d) >= batchOffsets.count { growBatchOffsets(to: Int(d) + 1) }
            batchOffsets[Int(d)] = offset
            return nil
        case .applied:
            return nil
        case .rejected(let reason, let detail):
            return (reason, detail)
        }
    }

    /// A receiver message (`--format nmea|gpsd`) about to be decoded: it counts as read, and its
    /// devices' open state changes whether or not it makes a reading.
    @inline(__always)
    package func received(offset: Int64) {
        currentOffset = offset
        sinceSnapshot += 1
        changed = true
    }

    /// The offset events take when no record is being read (`--until`, the receivers' last
    /// cycles at the end): the last record read's, after its own events.
    package var offsetAfterLastRecord: Int64 { max(lastTag.offset, nextOffset - 1) }

    /// A record that could not be decoded: it counts as read (its offset is passed).
    package func skip(offset: Int64) {
        applier.flush()
        currentOffset = offset
        sinceSnapshot += 1
        changed = true
    }

    @inline(never)
    private func growBatchOffsets(to n: Int) {
        batchOffsets.append(contentsOf: repeatElement(-1, count: max(n, 2 * batchOffsets.count) - batchOffsets.count))
    }

    /// `--until` at the end of a batch job: the clock moves to `t` and due timers fire; their
    /// events belong to the last record read, after its own.
    package func advance(to t: Double) {
        applier.flush()
        guard t > engine.clock || engine.clock.isNaN else { return }
        currentOffset = offsetAfterLastRecord
        engine.advance(to: t)
        applier.resume()
        changed = true
    }

    // MARK: Events

    /// One output of device `d`, written by `write` between its tag's two halves.
    @inline(__always)
    fileprivate func tagged(device d: Int32, _ write: (EventWriter) -> Void) {
        beginEvent(device: d)
        write(writer)
        endEvent(device: d)
    }

    /// Before an event of device `d`: its id, which the writer puts first.
    fileprivate func beginEvent(device d: Int32) {
        let offset = applier.applyingBatch ? batchOffsets[Int(d)] : currentOffset
        lastTag = offset == lastTag.offset ? (offset, lastTag.index + 1) : (offset, 0)
        writer.setNextID(EventID(partition: partition, offset: offset, index: lastTag.index))
    }

    /// After it: where it ends, and its key.
    fileprivate func endEvent(device d: Int32) {
        let keyStart = keys.count
        keys.append(contentsOf: engine.devices.nameBytes(d))
        tags.append(Tag(end: formatted.length, keyStart: keyStart, keyEnd: keys.count))
    }

    /// Writes the events made since the last call to `sink` as one keyed batch, then forgets
    /// them: each event's JSON (with its `"id"` first) as the writer wrote it, keyed by its
    /// device. Returns how many there were.
    @discardableResult
    package func takeEvents(into sink: any RecordSink) throws -> Int {
        applier.flush()
        guard !tags.isEmpty else { return 0 }
        entries.removeAll(keepingCapacity: true)
        var start = 0
        for tag in tags {
            // The value is the line without its newline.
            entries.append(KeyedRecord(key: tag.keyStart..<tag.keyEnd, value: start..<(tag.end - 1)))
            start = tag.end
        }
        try keys.withByteView { k in try formatted.withPending { v in try sink.write(records: v, keys: k, entries: entries) } }
        formatted.discardPending()
        tags.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        return entries.count
    }

    // MARK: Snapshots

    /// The partition's state between records: where it stands in its input, the id of its last
    /// event, and its engine (SPEC §8: the snapshot written to `GROUP-state`).
    package func snapshot(identity: RunIdentity, topic: String) -> [UInt8] {
        applier.flush()
        var w = SnapshotWriter(reservingCapacity: 1 << 16)
        w.tag("geotrigger-partition")
        w.u32(SnapshotFormat.version)
        w.bool(hasRegionChanges)
        identity.write(to: &w)
        w.string(topic)
        w.i32(partition)
        w.zigzag(nextOffset)
        w.zigzag(lastTag.offset)
        w.i32(lastTag.index)
        engine.writeSnapshot(to: &w)
        // After the engine's state, so an NDJSON partition's snapshot is what it always was.
        receivers?.writeSnapshot(to: &w)
        return w.bytes
    }

    /// Whether live region records have changed this partition's regions: its index is then its
    /// own (`Consume` shares one index between the partitions that have none).
    package var hasRegionChanges: Bool { !engine.regionChanges.isEmpty }

    /// Whether a snapshot's engine had region changes (so it must be restored into an engine with
    /// an index of its own); nil if the bytes are not a partition snapshot.
    package static func hasRegionChanges(snapshot bytes: [UInt8]) -> Bool? {
        var r = SnapshotReader(bytes)
        guard (try? r.expect("geotrigger-partition")) != nil, (try? r.u32()) == SnapshotFormat.version else { return nil }
        return try? r.bool()
    }

    /// Restores `snapshot()`'s state into this new partition engine (built from the same
    /// regions, requests and options: `identity` says which, and a snapshot of others is refused).
    package func restore(_ bytes: [UInt8], identity: RunIdentity, topic: String) throws(ConsumeError) {
        var r = SnapshotReader(bytes)
        do {
            try r.expect("geotrigger-partition")
            let version = try r.u32()
            guard version == SnapshotFormat.version else {
                throw ConsumeError.snapshot("\(topic)[\(partition)]: snapshot format \(version), not \(SnapshotFormat.version)")
            }
            let flagged = try r.bool()
            let theirs = try RunIdentity(from: &r)
            if let difference = identity.difference(from: theirs) {
                throw ConsumeError.snapshot("\(topic)[\(partition)]: its snapshot was taken by another configuration: \(difference)")
            }
            let t = try r.string()
            let p = try r.i32()
            guard t == topic && p == partition else {
                throw ConsumeError.snapshot("\(topic)[\(partition)]: the snapshot is \(t)[\(p)]'s")
            }
            nextOffset = try r.zigzag()
            lastTag = (try r.zigzag(), try r.i32())
            // The header's flag chose the index this engine was built on (`Consume.take`): an
            // engine whose region changes it hides would apply them to the index every partition
            // shares. Checked before they are applied (the engine's state begins with them).
            var peek = r
            try peek.expect("engine")
            guard try (peek.count() > 0) == flagged else {
                throw SnapshotError("the header's region-changes flag does not match the engine's state")
            }
            try engine.restoreSnapshot(from: &r)
            // The format is in the identity (a snapshot of another format was refused above).
            try receivers?.restoreSnapshot(from: &r)
            guard r.isAtEnd else { throw SnapshotError("bytes after the engine's state") }
        } catch let e as ConsumeError {
            throw e
        } catch let e as SnapshotError {
            throw ConsumeError.snapshot("\(topic)[\(partition)]: cannot restore its snapshot: \(e.message)")
        } catch {
            throw ConsumeError.snapshot("\(topic)[\(partition)]: cannot restore its snapshot: \(error)")
        }
        applier.resume()
    }
}

/// The engine's output for a partition: formats each event, then tags it. Holds the partition
/// engine unretained (the engine holds its output strongly, and the partition engine the
/// engine): the output is reached only through the engine its owner holds, so it never outlives
/// it. Each call goes through a guaranteed reference, with no reference counting per event (a
/// checked `unowned` was an atomic retain and release at each use, and an `unowned(unsafe)` one
/// was still retained and released around each call).
private final class TaggingOutput: RegionEventTableReader {
    private let owner: Unmanaged<PartitionEngine>
    init(_ owner: PartitionEngine) { self.owner = .passUnretained(owner) }

    var regionEventTable: RegionEventTable { owner._withUnsafeGuaranteedRef { $0.regionEventTable } }

    func regionEvent(_ event: RegionEvent) {
        owner._withUnsafeGuaranteedRef { p in p.tagged(device: event.device) { $0.regionEvent(event) } }
    }

    func delivery(_ delivery: Delivery) {
        owner._withUnsafeGuaranteedRef { p in p.tagged(device: delivery.device) { $0.delivery(delivery) } }
    }

    func response(_ response: NotificationResponse) {
        owner._withUnsafeGuaranteedRef { p in p.tagged(device: response.device) { $0.response(response) } }
    }

    func silentPush(_ push: SilentPush) {
        owner._withUnsafeGuaranteedRef { p in p.tagged(device: push.device) { $0.silentPush(push) } }
    }

    func regionAdded(_ region: Region, number: Int32) {
        owner._withUnsafeGuaranteedRef { $0.writer.regionAdded(region, number: number) }
    }
}
