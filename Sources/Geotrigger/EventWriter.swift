import GeotriggerCore
import GeotriggerMonitoring

/// Writes region events as NDJSON (SPEC §4 field names) and counts them by kind.
public final class EventWriter: RegionEventSink {
    public let output: OutputFile
    let devices: DeviceTable
    let regionIDs: [String]
    /// Serialised `properties` per region, when `--echo-properties` is on.
    let echoedProperties: [String?]?
    public private(set) var counts = [Int](repeating: 0, count: RegionEvent.Kind.allCases.count)
    /// The first write failure; the driver stops at the next reading when it is set.
    public private(set) var failure: IOFailure?
    /// Called after each event is written (the scheduling core plugs in here).
    public var next: ((RegionEvent) -> Void)?

    public init(output: OutputFile, devices: DeviceTable, regions: [Region], echoProperties: Bool = false) {
        self.output = output
        self.devices = devices
        self.regionIDs = regions.map(\.id)
        self.echoedProperties = echoProperties ? regions.map { $0.properties.map { $0.serialized() } } : nil
    }

    public func handle(_ e: RegionEvent) {
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
        o.appendJSONString(regionIDs[Int(e.region)])
        if e.distance.isFinite {
            o.append(",\"distance\":")
            o.appendFixed2(e.distance)
        }
        if e.kind != .enter && !e.enteredAt.isNaN {
            o.append(",\"enteredAt\":")
            o.appendTime(e.enteredAt)
        }
        if let echoedProperties, let p = echoedProperties[Int(e.region)] {
            o.append(",\"properties\":")
            o.append(p)
        }
        o.append("}\n")
        do { try o.endRecord() } catch let error as IOFailure { failure = failure ?? error } catch {}
        next?(e)
    }
}
