import GeotriggerCore
import GeotriggerMonitoring
import GeotriggerScheduling
import GeotriggerRuntime
import GeotriggerEngine

/// Writes region events and deliveries as NDJSON (SPEC §4 field names) and counts them by kind.
public final class EventWriter: RegionEventTableReader {
    public let output: RecordBuffer
    let devices: DeviceTable
    /// The index's regions, shared (not copied): events name them by `id`. Those added live are
    /// appended (`regionAdded`).
    @exclusivity(unchecked) private(set) var regions: [Region]
    /// Serialised `properties` per region, when `--echo-properties` is on.
    @exclusivity(unchecked) private(set) var echoedProperties: [String?]?
    /// Events written by kind: enter, exit, dwell (a tuple: counting needs no array uniqueness check).
    @exclusivity(unchecked) private var kindCounts = (0, 0, 0)
    /// Events written by kind, in `RegionEvent.Kind` order.
    public var counts: [Int] { [kindCounts.0, kindCounts.1, kindCounts.2] }

    /// A resumed run's counts (`replay --checkpoint`): `counts` and `deliveryCounts` as they were.
    package func restoreCounts(events: [Int], deliveries: [Int]) {
        if events.count == 3 { kindCounts = (events[0], events[1], events[2]) }
        if deliveries.count == deliveryCounts.count { deliveryCounts = deliveries }
    }
    /// `consume`: the id the next event is written with, first (`"id":"P-O-I"`: SPEC §8); nil
    /// for none (`replay`). Its owner sets it before each event.
    @exclusivity(unchecked) package var nextID: EventID?
    /// Sets `nextID` through a call: from another module (`consume`, per event) a stored
    /// property's write is checked for exclusivity whatever its attribute.
    package func setNextID(_ id: EventID?) { nextID = id }
    /// The first write failure; the driver stops at the next reading when it is set.
    @exclusivity(unchecked) public private(set) var failure: IOFailure?
    /// Deliveries by trigger kind, in `Self.triggerKinds` order, then what followed them, in
    /// `AfterDelivery` order.
    public private(set) var deliveryCounts = [Int](repeating: 0, count: EventWriter.countedKinds)
    public static let triggerKinds = ["location", "timeInterval", "calendar", "push"]

    /// SPEC §5.1's counts: responses written, silent pushes, deliveries kept out of the delivered
    /// list, and the service extension's outcomes.
    public enum AfterDelivery: Int, CaseIterable, Sendable {
        case response, silentPush, unlisted, extensionModified, extensionTimeout, extensionFailed

        init(_ outcome: ServiceExtensionOutcome) {
            switch outcome {
            case .modified: self = .extensionModified
            case .timeout: self = .extensionTimeout
            case .failed: self = .extensionFailed
            }
        }

        /// Where it is counted in `deliveryCounts`.
        public var slot: Int { EventWriter.triggerKinds.count + rawValue }
    }
    package static let countedKinds = triggerKinds.count + AfterDelivery.allCases.count
    private func count(_ a: AfterDelivery) { deliveryCounts[a.slot] += 1 }

    /// Each region's id as a JSON string literal, quotes included, in a 16-byte slot of its own
    /// (`IDSlots`): the plain event copies it without touching the region's `String`.
    @exclusivity(unchecked) private(set) var ids: IDSlots
    /// Whether `ids` is this writer's own (made by `regionAdded`), not the run's shared table.
    private var ownsIDs = false

    /// A writer of `engine`'s events (set it as `engine.output`), formatted into `output`.
    public convenience init(output: RecordBuffer, engine: Engine, echoProperties: Bool = false) {
        self.init(output: output, devices: engine.devices, regions: engine.regions, echoProperties: echoProperties)
    }

    /// `ids`, when given, must be `IDSlots(regions:)` of these regions (the replay makes them while
    /// it loads the regions and shares them with its jobs); otherwise they are made here.
    public convenience init(output: RecordBuffer, devices: DeviceTable, regions: [Region], echoProperties: Bool = false) {
        self.init(output: output, devices: devices, regions: regions, ids: IDSlots(regions: regions),
                  echoProperties: echoProperties)
    }

    package init(output: RecordBuffer, devices: DeviceTable, regions: [Region], ids: IDSlots, echoProperties: Bool = false) {
        self.output = output
        self.devices = devices
        self.regions = regions
        self.echoedProperties = echoProperties ? regions.map { $0.properties.map { $0.serialized() } } : nil
        self.ids = ids
    }

    /// The id slots: the monitor prefetches a region's as soon as it decides an event for it.
    package var regionEventTable: RegionEventTable { ids.eventTable }

    /// A region added live: its id and properties join the tables, before any event names it.
    /// The shared id table is copied the first time (every job has its own writer), then grows
    /// in place, doubling.
    public func regionAdded(_ region: Region, number: Int32) {
        precondition(Int(number) == regions.count)
        regions.append(region)
        echoedProperties?.append(region.properties.map { $0.serialized() })
        if !ownsIDs || ids.capacity == Int(number) {
            ids = IDSlots(copying: ids, count: Int(number), capacity: max(64, 2 * Int(number)))
            ownsIDs = true
        }
        ids.set(Int(number), region.id)
    }

    public func regionEvent(_ e: RegionEvent) {
        switch e.kind {
        case .enter: kindCounts.0 += 1
        case .exit: kindCounts.1 += 1
        case .dwell: kindCounts.2 += 1
        }
        let o = output
        let name = devices.nameBytes(e.device)
        let slot = ids.slot(Int(e.region))
        // Plain events, the stream's bulk, are written as one record into reserved room.
        guard e.beacon == nil, e.proximity == nil, e.reason == nil, echoedProperties == nil,
              slot.length != 0, name.count <= 64
        else { return regionEventInFull(e) }
        o.appendRecord(maximum: 200 + 6 * 64 + EventID.maximumLength) { c in
            if let id = nextID { c.putOpening(id) } else { c.put("{\"t\":") }
            o.putTime(e.t, &c)
            switch e.kind {
            case .enter:
                c.put(",\"event\":\"enter\",\"device\":")
            case .exit:
                c.put(",\"event\":\"exit\",\"device\":")
            case .dwell:
                c.put(",\"event\":\"dwell\",\"device\":")
            }
            c.putJSONString(name)
            c.put(",\"region\":")
            c.putSlot(slot)
            if e.distance.isFinite {
                c.put(",\"distance\":")
                c.putFixed2(e.distance)
            }
            if e.kind != .enter && !e.enteredAt.isNaN {
                c.put(",\"enteredAt\":")
                o.putTime(e.enteredAt, &c)
            }
            c.put("}\n")
        }
        endRecord()
    }

    /// Any event, field by field (beacon events, `--echo-properties`, very long names); the
    /// caller has counted it.
    private func regionEventInFull(_ e: RegionEvent) {
        let o = output
        openRecord()
        o.appendTime(e.t)
        switch e.kind {
        case .enter: o.append(",\"event\":\"enter\",\"device\":")
        case .exit: o.append(",\"event\":\"exit\",\"device\":")
        case .dwell: o.append(",\"event\":\"dwell\",\"device\":")
        }
        o.appendJSONString(devices.nameBytes(e.device))
        o.append(",\"region\":")
        o.appendJSONString(regions[Int(e.region)].id)
        if let b = e.beacon {
            o.append(",\"beacon\":")
            o.appendBeacon(b)
        }
        if let p = e.proximity {
            o.append(",\"proximity\":\"")
            o.append(string: p.name)
            o.append("\"")
        }
        if e.distance.isFinite {
            o.append(",\"distance\":")
            o.appendFixed2(e.distance)
        }
        if let reason = e.reason {
            o.append(",\"reason\":\"")
            o.append(string: reason.rawValue)
            o.append("\"")
        }
        if e.kind != .enter && !e.enteredAt.isNaN {
            o.append(",\"enteredAt\":")
            o.appendTime(e.enteredAt)
        }
        if let echoedProperties, let p = echoedProperties[Int(e.region)] {
            o.append(",\"properties\":")
            o.append(string: p)
        }
        o.append("}\n")
        endRecord()
    }

    public func delivery(_ d: Delivery) {
        deliveryCounts[Self.triggerKinds.firstIndex(of: d.trigger.kind) ?? 0] += 1
        let o = output
        begin("deliver", t: d.t, device: d.device, request: d.id)
        o.append(",\"trigger\":\"")
        o.append(string: d.trigger.kind)
        o.append("\"")
        if d.region >= 0 {
            o.append(",\"region\":")
            o.appendJSONString(regions[Int(d.region)].id)
        }
        o.append(",\"content\":")
        o.append { d.content.json.write(into: &$0) }
        o.append(",\"actions\":")
        o.append { JSONValue.array(d.actions.map { .string($0) }).write(into: &$0) }
        o.append(",\"presented\":")
        o.append { d.presented.json.write(into: &$0) }
        if !d.listed {
            o.append(",\"listed\":false")
            count(.unlisted)
        }
        if let outcome = d.serviceExtension {
            o.append(",\"extension\":\"")
            o.append(string: outcome.rawValue)
            o.append("\"")
            count(AfterDelivery(outcome))
        }
        o.append("}\n")
        endRecord()
    }

    /// SPEC §5.1: the user's response, as the app receives it.
    public func response(_ r: NotificationResponse) {
        count(.response)
        let o = output
        begin("response", t: r.t, device: r.device, request: r.id)
        o.append(",\"action\":")
        o.appendJSONString(r.action)
        if let text = r.text {
            o.append(",\"text\":")
            o.appendJSONString(text)
        }
        if r.foreground { o.append(",\"foreground\":true") }
        o.append("}\n")
        endRecord()
    }

    /// SPEC §5.1: a push that showed nothing.
    public func silentPush(_ p: SilentPush) {
        count(.silentPush)
        let o = output
        begin("silentPush", t: p.t, device: p.device, request: p.id)
        if p.contentAvailable { o.append(",\"contentAvailable\":true") }
        if let userInfo = p.userInfo {
            o.append(",\"userInfo\":")
            o.append { userInfo.write(into: &$0) }
        }
        o.append("}\n")
        endRecord()
    }

    /// A notification event's opening: `{"t":…,"event":…,"device":…,"request":…`.
    private func begin(_ event: StaticString, t: Double, device: Int32, request: String) {
        let o = output
        openRecord()
        o.appendTime(t)
        o.append(",\"event\":\"")
        o.append(event)
        o.append("\",\"device\":")
        devices.withName(device) { o.appendJSONString($0) }
        o.append(",\"request\":")
        o.appendJSONString(request)
    }

    /// A record's opening, up to its time: `{"t":`, or `{"id":…,"t":` with an id.
    private func openRecord() {
        let id = nextID
        output.appendRecord(maximum: EventID.maximumLength) { c in
            if let id { c.putOpening(id) } else { c.put("{\"t\":") }
        }
    }

    /// Hands every event written so far to the sink now (a live input that would block); a
    /// write failure is kept in `failure`, as any other.
    public func flush() {
        do { try output.flush() } catch let error as IOFailure { failure = failure ?? error } catch {}
    }

    private func endRecord() {
        do { try output.endRecord() } catch let error as IOFailure { failure = failure ?? error } catch {}
    }
}

/// A `consume` event's id (SPEC §8): its input partition, the offset of the record that caused
/// it and its index among that record's events, the same however often it is produced.
package struct EventID {
    package var partition: Int32
    package var offset: Int64
    package var index: Int32

    package init(partition: Int32, offset: Int64, index: Int32) {
        (self.partition, self.offset, self.index) = (partition, offset, index)
    }

    /// `{"id":"P-O-I","t":` at most: three integers of at most 20 characters and 15 more bytes.
    static let maximumLength = 70
}

extension RecordCursor {
    /// `{"id":"P-O-I","t":`: at most `EventID.maximumLength` bytes.
    @inline(never)
    mutating func putOpening(_ id: EventID) {
        put("{\"id\":\"")
        putInteger(Int64(id.partition))
        put(UInt8(ascii: "-"))
        putInteger(id.offset)
        put(UInt8(ascii: "-"))
        putInteger(Int64(id.index))
        put("\",\"t\":")
    }
}
