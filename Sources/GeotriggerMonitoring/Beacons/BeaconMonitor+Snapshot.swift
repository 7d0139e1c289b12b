import GeotriggerCore

// A checkpoint of the beacon regions' state (`replay --checkpoint`).
extension BeaconMonitor {
    public func writeSnapshot(to w: inout SnapshotWriter) {
        w.tag("beacons")
        // TODO(issue 23): tracks, filters, windows, zones, fused positions, timers.
    }

    public func restoreSnapshot(from r: inout SnapshotReader) throws(SnapshotError) {
        try r.expect("beacons")
        throw SnapshotError("restoring beacon state is not built yet")
    }
}
