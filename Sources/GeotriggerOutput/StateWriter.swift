import GeotriggerCore
import GeotriggerMonitoring
import GeotriggerScheduling
import GeotriggerEngine

/// Writes `--state-out`: the clock, and per device its latest reading, the regions it is in, and
/// its notification center's pending and delivered lists.
///
/// Every visit that began and has not ended in an `exit` is listed here, so nothing is lost at the
/// end of a replay. Devices appear in the order they were first seen.
package enum StateWriter {
    package static func write(engine: Engine, to o: RecordBuffer) {
        let regionIDs = engine.index.regions.map(\.id)
        writeHeader(clock: engine.monitor.clock, to: o)
        // Live devices only (`--expire` frees ids and reuses them): in first-seen order, which is
        // rank order (without removals, id order).
        let devices = engine.devices
        var live = (0..<Int32(devices.count)).filter { devices.isLive($0) }
        if devices.liveCount != devices.count || devices.nextRank != UInt64(devices.count) {
            live.sort { devices.rank($0) < devices.rank($1) }
        }
        for (k, d) in live.enumerated() {
            if k > 0 { o.append(",") }
            writeDevice(d, engine: engine, regionIDs: regionIDs, to: o)
        }
        writeFooter(to: o)
    }

    package static func writeHeader(clock: Double, to o: RecordBuffer) {
        o.append("{\"clock\":")
        if clock.isFinite { o.appendTime(clock) } else { o.append("null") }
        o.append(",\"devices\":{")
    }

    package static func writeFooter(to o: RecordBuffer) { o.append("\n}}\n") }

    /// One device's entry (without the separating comma): a replay job writes its devices' entries
    /// and the run puts them in first-seen order.
    package static func writeDevice(_ d: Int32, engine: Engine, regionIDs: [String], to o: RecordBuffer) {
        let monitor = engine.monitor, scheduler = engine.scheduler
        o.append("\n")
        monitor.devices.withName(d) { o.appendJSONString($0) }
        o.append(":{\"lastReading\":")
        o.appendTime(monitor.lastReading(of: d))
        o.append(",\"inside\":[")
        var first = true
        func separator() {
            if !first { o.append(",") }
            first = false
        }
        // A positioned beacon region's circle visit is only half its state: the beacon monitor's
        // visit is the one to list.
        for v in monitor.visits(of: d) where !engine.beacons.isBeaconRegion(v.region) {
            separator()
            o.append("{\"region\":")
            o.appendJSONString(regionIDs[Int(v.region)])
            o.append(",\"enteredAt\":")
            o.appendTime(v.enteredAt)
            o.append(v.dwelled ? ",\"dwelled\":true" : ",\"dwelled\":false")
            if v.silent { o.append(",\"initial\":true") }
            o.append("}")
        }
        for v in engine.beacons.visits(of: d) {
            separator()
            o.append("{\"region\":")
            o.appendJSONString(regionIDs[Int(v.region)])
            o.append(",\"enteredAt\":")
            o.appendTime(v.enteredAt)
            if let b = v.beacon {
                o.append(",\"beacon\":")
                o.appendBeacon(b)
            }
            o.append("}")
        }
        o.append("],\"pending\":[")
        for (k, r) in scheduler.pending(device: d).enumerated() {
            if k > 0 { o.append(",") }
            o.append { r.json.write(into: &$0) }
        }
        o.append("],\"delivered\":[")
        for (k, n) in scheduler.delivered(device: d).enumerated() {
            if k > 0 { o.append(",") }
            o.append("{\"date\":")
            o.appendTime(n.date)
            o.append(",\"request\":")
            o.append { n.request.json.write(into: &$0) }
            o.append("}")
        }
        o.append("]")
        // SPEC §5.1's settings, where a record set them.
        let categories = scheduler.categories(device: d)
        if !categories.isEmpty {
            o.append(",\"categories\":")
            o.append { JSONValue.array(categories.map(\.json)).write(into: &$0) }
        }
        let authorization = scheduler.authorization(device: d)
        if authorization.set {
            o.append(",\"authorized\":")
            o.append { authorization.granted.json.write(into: &$0) }
        }
        let app = scheduler.appState(device: d)
        if app.foreground {
            o.append(",\"appState\":{\"state\":\"foreground\",\"presentation\":")
            o.append { app.presentation.json.write(into: &$0) }
            o.append("}")
        }
        o.append("}")
    }
}
