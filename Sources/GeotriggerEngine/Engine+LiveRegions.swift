import GeotriggerCore
import GeotriggerGeometry
import GeotriggerMonitoring
import GeotriggerFormats
import GeotriggerRuntime

/// A region record as applied: a checkpoint lists them, and a restore applies them again (in
/// order, before any device's state is read) to rebuild the same region numbers.
package struct RegionChange {
    var op: ControlOp
    var t: Double
    var line: [UInt8]
}

/// Region ids as live changes (SPEC §7) left them, and the scheduler's key for each region.
///
/// The scheduler names a region by a key fixed when a request is stored: the number of the
/// first region that ever had the id. A region added with a new id is its own key; a
/// replacement takes the key of the region it replaces, so requests naming the id follow it.
/// Until the first change, every lookup is the regions file's table and every key the region's
/// own number.
final class LiveRegionNames {
    let base: RegionIDTable
    /// Regions of the index as built; those numbered from here on were added live.
    let baseCount: Int
    /// Ids changed live: their key, and the current region number (-1: removed).
    private var changed: [String: (key: Int32, current: Int32)] = [:]
    /// The key of each region added live, by number − `baseCount`.
    private var addedKeys: [Int32] = []
    /// While a checkpoint's requests are restored: a removed region's id still has its key
    /// (requests stored before the removal name it).
    var includesRemoved = false

    init(base: RegionIDTable, baseCount: Int) {
        self.base = base
        self.baseCount = baseCount
    }

    /// The scheduler's key for a region id a request names; nil when no current region has it.
    func key(_ id: String) -> Int32? {
        if let c = changed[id] { return c.current >= 0 || includesRemoved ? c.key : nil }
        return base.region(id)
    }

    /// The number of the current region named `id`, or nil.
    func current(_ id: String) -> Int32? {
        if let c = changed[id] { return c.current >= 0 ? c.current : nil }
        return base.region(id)
    }

    /// The scheduler's key of region `r`.
    @inline(__always)
    func key(of r: Int32) -> Int32 { Int(r) < baseCount ? r : addedKeys[Int(r) - baseCount] }

    /// Region `r` was added with `id`; it replaces the current region of that id, if any.
    func added(_ id: String, _ r: Int32) {
        let key = changed[id]?.key ?? base.region(id) ?? r
        precondition(Int(r) == baseCount + addedKeys.count)
        addedKeys.append(key)
        changed[id] = (key, r)
    }

    /// The current region named `id` was removed.
    func removed(_ id: String) {
        let key = changed[id]?.key ?? base.region(id)!
        changed[id] = (key, -1)
    }
}

extension Engine {
    /// Applies a device-less region record (`addRegion`, `removeRegion`; SPEC §7), its JSON line
    /// given whole, at `t`. It is a reading for the clock: timers due before `t` fire first, then
    /// it is applied, then the clock moves to `t` (never back) and timers due by then fire. Nil
    /// when applied; else why it cannot be (nothing changed but the clock).
    ///
    /// - `removeRegion`: every visit of the region ends with an exit stamped `t`, `"reason":
    ///   "removed"`, devices in first-seen order; the region is never reported again.
    /// - `addRegion`: the feature is read and checked as a regions file's feature is; a new id is a
    ///   new region, which each device's next fix may enter; an existing id is replaced: its
    ///   visits end with `"reason":"replaced"` and the next fix of each device decides afresh.
    ///
    /// Beacon regions cannot be added, removed or replaced live (the record is refused).
    package func regionRecord(_ op: ControlOp, line: ByteView, t: Double) -> String? {
        let json: JSONValue
        do { json = try JSONValue.parse(Array(line)) } catch { return "\(error)" }
        return deviceless(t: t) {
            let problem = applyRegionChange(op, json, t: t)
            if problem == nil { regionChanges.append(RegionChange(op: op, t: t, line: Array(line))) }
            return problem
        }
    }

    /// Region records applied so far.
    public var regionChangeCount: Int { regionChanges.count }

    private func applyRegionChange(_ op: ControlOp, _ json: JSONValue, t: Double) -> String? {
        func isBeacon(_ r: Int32) -> Bool {
            if case .beacon = index.regions[Int(r)].shape { return true }
            return false
        }
        switch op {
        case .removeRegion:
            guard let id = json["id"]?.stringValue else { return "removeRegion needs an id (a string)" }
            guard let r = names.current(id) else { return "removeRegion: no region has id \"\(id)\"" }
            if isBeacon(r) { return "removeRegion: \"\(id)\" is a beacon region, which cannot be removed live" }
            monitor.endVisits(of: r, at: t, reason: .removed)
            index.remove(r)
            names.removed(id)
        case .addRegion:
            guard let body = json["region"], case .object = body else {
                return "addRegion needs a region (a GeoJSON Feature object)"
            }
            let region: Region
            do { region = try RegionFile.parseFeature(body) } catch { return Self.describe(error) }
            if case .beacon = region.shape {
                return "region \"\(region.id)\": a beacon region cannot be added live"
            }
            let old = names.current(region.id)
            if let old, isBeacon(old) {
                return "region \"\(region.id)\": a beacon region cannot be replaced live"
            }
            // Checked (a polygon's validity) and added before any visit ends: a bad region
            // changes nothing.
            let r: Int32
            do { r = try index.append(region) } catch { return Self.describe(error) }
            if let old {
                monitor.endVisits(of: old, at: t, reason: .replaced)
                index.remove(old)
            }
            names.added(region.id, r)
            monitor.regionAdded(r)
            outputReference.call { $0.regionAdded(region, number: r) }
            // The output's table of ids may have moved as it grew.
            monitor.eventTable = (output as? any RegionEventTableReader)?.regionEventTable
        default:
            return "not a region record"
        }
        return nil
    }

    private static func describe(_ error: RegionFileError) -> String {
        (error.id.map { "region \"\($0)\": " } ?? "region: ") + error.reason
    }

    func writeRegionChanges(to w: inout SnapshotWriter) {
        w.list(regionChanges) { w, c in
            w.u8(c.op.rawValue)
            w.f64(c.t)
            w.raw(c.line)
        }
    }

    /// Applies a checkpoint's region records again, into an engine with no device yet: the same
    /// region numbers, ids and keys, and no event.
    func restoreRegionChanges(from r: inout SnapshotReader) throws(SnapshotError) {
        let changes = try r.list { r throws(SnapshotError) -> RegionChange in
            let raw = try r.u8()
            guard let op = ControlOp(rawValue: raw), op.isRegionChange else { throw SnapshotError("bad region change") }
            return RegionChange(op: op, t: try r.f64(), line: try r.raw())
        }
        for c in changes {
            guard let json = try? JSONValue.parse(c.line), applyRegionChange(c.op, json, t: c.t) == nil else {
                throw SnapshotError("a region record of the checkpoint no longer applies")
            }
            regionChanges.append(c)
        }
    }
}
