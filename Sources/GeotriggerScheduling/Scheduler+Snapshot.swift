import GeotriggerCore

// A checkpoint of the notification centers (`replay --checkpoint`).
extension Scheduler {
    public func writeSnapshot(to w: inout SnapshotWriter) {
        w.tag("scheduler")
        // TODO(issue 23): centers, stored requests, timers.
    }

    public func restoreSnapshot(from r: inout SnapshotReader) throws(SnapshotError) {
        try r.expect("scheduler")
        throw SnapshotError("restoring notification centers is not built yet")
    }
}
