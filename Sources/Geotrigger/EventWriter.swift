import GeotriggerCore
import GeotriggerMonitoring
import GeotriggerScheduling

/// Writes region events and deliveries as NDJSON (SPEC §4 field names) and counts them by kind.
public final class EventWriter: EngineOutput {
    public let output: OutputFile
    let devices: DeviceTable
    /// The index's regions, shared (not copied): events name them by `id`.
    let regions: [Region]
    /// Serialised `properties` per region, when `--echo-properties` is on.
    let echoedProperties: [String?]?
    @exclusivity(unchecked) public private(set) var counts = [Int](repeating: 0, count: RegionEvent.Kind.allCases.count)
    /// The first write failure; the driver stops at the next reading when it is set.
    public private(set) var failure: IOFailure?
    /// Deliveries by trigger kind, in `Self.triggerKinds` order.
    public private(set) var deliveryCounts = [Int](repeating: 0, count: EventWriter.triggerKinds.count)
    public static let triggerKinds = ["location", "timeInterval", "calendar", "push"]

    public init(output: OutputFile, devices: DeviceTable, regions: [Region], echoProperties: Bool = false) {
        self.output = output
        self.devices = devices
        self.regions = regions
        self.echoedProperties = echoProperties ? regions.map { $0.properties.map { $0.serialized() } } : nil
    }

    public func regionEvent(_ e: RegionEvent) {
        counts[Int(e.kind.rawValue)] += 1
        let o = output
        o.append("{\"t\":")
        o.appendTime(e.t)
        switch e.kind {
        case .enter: o.append(",\"event\":\"enter\",\"device\":")
        case .exit: o.append(",\"event\":\"exit\",\"device\":")
        case .dwell: o.append(",\"event\":\"dwell\",\"device\":")
        }
        devices.withName(e.device) { o.appendJSONString($0) }
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
        o.append("{\"t\":")
        o.appendTime(d.t)
        o.append(",\"event\":\"deliver\",\"device\":")
        devices.withName(d.device) { o.appendJSONString($0) }
        o.append(",\"request\":")
        o.appendJSONString(d.id)
        o.append(",\"trigger\":\"")
        o.append(string: d.trigger.kind)
        o.append("\"")
        if d.region >= 0 {
            o.append(",\"region\":")
            o.appendJSONString(regions[Int(d.region)].id)
        }
        o.append(",\"content\":")
        o.append { d.content.json.write(into: &$0) }
        o.append("}\n")
        endRecord()
    }

    private func endRecord() {
        do { try output.endRecord() } catch let error as IOFailure { failure = failure ?? error } catch {}
    }
}
