import GeotriggerCore
import GeotriggerRuntime

// A checkpoint of the beacon regions' state (`replay --checkpoint`).
//
// Written: the beacons seen (in slot order), the sample windows (their samples, oldest first)
// and the free list of their slots, every (device, beacon) track with its filter's state, each
// device's tracks, the fused positions, every (device, region) zone with its key, and the
// silence and dwell timers, the track and zone slots `forget` freed (`--expire`), and each
// device's zones and positioned zones in the order they were made. Doubles as their bit patterns.
//
// Rebuilt, as the monitor builds them: the beacon slots and the regions each matches (the
// matcher over the same regions gives the same lists), and the track and zone hash tables (from
// the tracks' devices and beacons and the zones' keys).
extension BeaconMonitor {
    package func writeSnapshot(to w: inout SnapshotWriter) {
        w.tag("beacons")
        w.list(beaconIDs) { w, id in
            w.u64(id.uuidHigh)
            w.u64(id.uuidLow)
            w.i32(id.major)
            w.i32(id.minor)
        }
        w.tag("windows")
        w.list(windows) { w, window in
            w.count(window.count)
            for i in 0..<window.count {
                w.f64(window[i].t)
                w.f64(window[i].rssi)
            }
        }
        w.list(freeWindows) { w, slot in w.i32(slot) }
        w.tag("tracks")
        w.list(tracks) { w, track in
            w.f64(track.filter.estimate)
            w.f64(track.filter.variance)
            w.f64(track.filter.lastTime)
            w.f64(track.lastSeen)
            w.f64(track.smoothed)
            w.f64(track.tx)
            w.i32(track.beacon)
            w.i32(track.window)
            w.u64(track.qualifies)
        }
        w.list(deviceTracks) { w, slots in w.list(slots) { w, slot in w.i32(slot) } }
        w.list(fusedPositions) { w, fused in
            w.optional(fused) { w, fused in
                w.f64(fused.point.east)
                w.f64(fused.point.north)
                w.f64(fused.t)
            }
        }
        w.tag("zones")
        w.count(zones.count)
        for (zone, key) in zip(zones, zoneKeys) {
            w.i32(key.device)
            w.i32(key.region)
            w.f64(zone.enteredAt)
            w.f64(zone.lastQualifying)
            w.f64(zone.causeDistance)
            w.i32(zone.qualifying)
            w.f64(zone.pendingSince)
            w.i32(zone.pendingTrack)
            w.i32(zone.fusedDisagreements)
            w.i32(zone.cause)
            w.u8((zone.inside ? 1 : 0) | (zone.fusedIn ? 2 : 0) | (zone.fixIn ? 4 : 0) | (zone.timerArmed ? 8 : 0)
                 | (zone.dwelled ? 16 : 0))
        }
        timers.writeSnapshot(to: &w) { w, timer in
            w.i32(timer.device)
            w.i32(timer.zone)
            w.f64(timer.dwellFor)
        }
        // What `forget` (`--expire`) frees: the free slots, and each device's zones and positioned
        // zones in the order they were made (with reused slots, no longer slot order; a fusion
        // decides a device's positioned zones in this order).
        w.tag("beaconSlots")
        w.list(freeTracks) { w, slot in w.i32(slot) }
        w.list(freeZones) { w, slot in w.i32(slot) }
        w.list(deviceZones) { w, slots in w.list(slots) { w, slot in w.i32(slot) } }
        w.list(devicePositionedZones) { w, slots in w.list(slots) { w, slot in w.i32(slot) } }
    }

    /// Restores what `writeSnapshot` wrote into a monitor over the same regions and options that
    /// has seen nothing yet (device ids are the engine's, interned again in the same order).
    package func restoreSnapshot(from r: inout SnapshotReader) throws(SnapshotError) {
        try r.expect("beacons")
        guard beaconIDs.isEmpty, tracks.isEmpty, zones.isEmpty, timers.isEmpty else {
            throw SnapshotError("restoring beacon state into a monitor that has seen sightings")
        }
        let ids = try r.list { r throws(SnapshotError) in
            BeaconID(uuidHigh: try r.u64(), uuidLow: try r.u64(), major: try r.i32(), minor: try r.i32())
        }

        try r.expect("windows")
        let restoredWindows = try r.list { r throws(SnapshotError) -> SampleWindow in
            let n = try r.count()
            guard n <= SampleWindow.capacity else { throw SnapshotError("snapshot has a window of \(n) samples") }
            var window = SampleWindow()
            for _ in 0..<n {
                let t = try r.f64(), rssi = try r.f64()
                guard window.append(rssi: rssi, at: t) else { throw SnapshotError("snapshot has a non-finite sample") }
            }
            return window
        }
        let free = try r.list { r throws(SnapshotError) -> Int32 in
            let slot = try r.i32()
            guard slot >= 0, Int(slot) < restoredWindows.count else { throw SnapshotError("snapshot frees window \(slot)") }
            return slot
        }

        try r.expect("tracks")
        let restoredTracks = try r.list { r throws(SnapshotError) -> Track in
            var filter = RSSIFilter()
            filter.estimate = try r.f64()
            filter.variance = try r.f64()
            filter.lastTime = try r.f64()
            var track = Track(beacon: 0, window: Track.never)
            track.filter = filter
            track.lastSeen = try r.f64()
            track.smoothed = try r.f64()
            track.tx = try r.f64()
            track.beacon = try r.i32()
            track.window = try r.i32()
            track.qualifies = try r.u64()
            guard track.beacon >= 0, Int(track.beacon) < ids.count else {
                throw SnapshotError("snapshot has a track of beacon \(track.beacon) of \(ids.count)")
            }
            guard track.window == Track.never || track.window == Track.idle
                    || (track.window >= 0 && Int(track.window) < restoredWindows.count) else {
                throw SnapshotError("snapshot has a track in window \(track.window)")
            }
            return track
        }
        let restoredDeviceTracks = try r.list { r throws(SnapshotError) -> [Int32] in
            try r.list { r throws(SnapshotError) -> Int32 in
                let slot = try r.i32()
                guard slot >= 0, Int(slot) < restoredTracks.count else { throw SnapshotError("snapshot names track \(slot)") }
                return slot
            }
        }
        let fused = try r.list { r throws(SnapshotError) -> (point: LocalPoint, t: Double)? in
            try r.optional { r throws(SnapshotError) in
                (LocalPoint(east: try r.f64(), north: try r.f64()), try r.f64())
            }
        }

        try r.expect("zones")
        // Devices are interned (the engine's table) before the beacon state is read.
        let deviceCount = devices?.count ?? Int(Int32.max)
        let zoneCount = try r.count()
        var restoredZones: [Zone] = []
        var keys: [(device: Int32, region: Int32)] = []
        restoredZones.reserveCapacity(zoneCount)
        keys.reserveCapacity(zoneCount)
        for _ in 0..<zoneCount {
            let d = try r.i32(), region = try r.i32()
            // A slot `forget` freed.
            let isFree = d == -1 && region == -1
            guard isFree || (d >= 0 && Int(d) < deviceCount), isFree || region >= 0, isFree || (Int(region) < regions.count && isBeaconRegion(region)) else {
                throw SnapshotError("snapshot has a zone of region \(region), no beacon region here")
            }
            var zone = Zone()
            zone.enteredAt = try r.f64()
            zone.lastQualifying = try r.f64()
            zone.causeDistance = try r.f64()
            zone.qualifying = try r.i32()
            zone.pendingSince = try r.f64()
            zone.pendingTrack = try r.i32()
            guard zone.pendingTrack >= -1, Int(zone.pendingTrack) < restoredTracks.count else {
                throw SnapshotError("snapshot has a zone waited on by track \(zone.pendingTrack)")
            }
            zone.fusedDisagreements = try r.i32()
            zone.cause = try r.i32()
            guard zone.cause >= -1, Int(zone.cause) < ids.count else { throw SnapshotError("snapshot has a zone caused by beacon \(zone.cause)") }
            let flags = try r.u8()
            guard flags < 32 else { throw SnapshotError("bad zone flags \(flags) at byte \(r.offset - 1)") }
            zone.inside = flags & 1 != 0
            zone.fusedIn = flags & 2 != 0
            zone.fixIn = flags & 4 != 0
            zone.timerArmed = flags & 8 != 0
            zone.dwelled = flags & 16 != 0
            restoredZones.append(zone)
            keys.append((d, region))
        }
        var restoredTimers = TimerQueue<SilenceTimer>()
        try restoredTimers.restoreSnapshot(from: &r) { r throws(SnapshotError) in
            let timer = SilenceTimer(device: try r.i32(), zone: try r.i32(), dwellFor: try r.f64())
            // A timer of a forgotten device may name a zone slot freed or reused since (it is
            // dropped when it comes due, its rank no longer the device's).
            guard timer.zone >= 0, Int(timer.zone) < zoneCount else {
                throw SnapshotError("snapshot has a timer of zone \(timer.zone) of \(zoneCount)")
            }
            guard timer.device >= 0, Int(timer.device) < deviceCount else {
                throw SnapshotError("snapshot has a timer of device \(timer.device) of \(deviceCount)")
            }
            return timer
        }

        try r.expect("beaconSlots")
        func slots(_ n: Int, _ what: String) -> (inout SnapshotReader) throws(SnapshotError) -> Int32 {
            { r throws(SnapshotError) in
                let slot = try r.i32()
                guard slot >= 0, Int(slot) < n else { throw SnapshotError("snapshot names \(what) \(slot) of \(n)") }
                return slot
            }
        }
        let restoredFreeTracks = try r.list(slots(restoredTracks.count, "track"))
        let restoredFreeZones = try r.list(slots(zoneCount, "zone"))
        let restoredDeviceZones = try r.list { r throws(SnapshotError) in try r.list(slots(zoneCount, "zone")) }
        let restoredPositioned = try r.list { r throws(SnapshotError) in try r.list(slots(zoneCount, "zone")) }

        // All read. The beacons' slots and matching regions, as their first sightings made them.
        for (k, id) in ids.enumerated() {
            guard let b = beaconSlot(id), Int(b) == k else {
                throw SnapshotError("snapshot's beacon \(id.uuidString) \(id.major) \(id.minor) matches no region here, or twice")
            }
        }
        // The track table from each device's tracks: every track is one device's.
        var trackTable: [UInt64: Int32] = [:]
        for (d, slots) in restoredDeviceTracks.enumerated() {
            for slot in slots {
                let key = UInt64(UInt32(d)) << 32 | UInt64(UInt32(bitPattern: restoredTracks[Int(slot)].beacon))
                guard trackTable.updateValue(slot, forKey: key) == nil else { throw SnapshotError("snapshot lists track \(slot) twice") }
            }
        }
        guard trackTable.count + restoredFreeTracks.count == restoredTracks.count else { throw SnapshotError("snapshot has tracks of no device") }
        // The zone table from the zones' keys (free slots have none).
        var zoneTable: [UInt64: Int32] = [:]
        for (z, key) in keys.enumerated() where key.device >= 0 {
            let k = UInt64(UInt32(bitPattern: key.device)) << 32 | UInt64(UInt32(bitPattern: key.region))
            guard zoneTable.updateValue(Int32(z), forKey: k) == nil else { throw SnapshotError("snapshot has zone \(z) twice") }
        }
        guard zoneTable.count + restoredFreeZones.count == zoneCount,
              restoredDeviceZones.reduce(0, { $0 + $1.count }) == zoneTable.count else {
            throw SnapshotError("snapshot's zones and free zone slots do not add up")
        }

        windows = restoredWindows
        freeWindows = free
        tracks = restoredTracks
        trackSlots = trackTable
        deviceTracks = restoredDeviceTracks
        devicePositionedZones = restoredPositioned
        fusedPositions = fused
        zones = restoredZones
        zoneSlots = zoneTable
        zoneKeys = keys
        deviceZones = restoredDeviceZones
        freeTracks = restoredFreeTracks
        freeZones = restoredFreeZones
        timers = restoredTimers
    }
}
