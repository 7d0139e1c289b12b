import GeotriggerCore
import GeotriggerRuntime

// A checkpoint of the state machines (`replay --checkpoint`): per device its last reading,
// whether its first fix has been taken, and its visits with their entry times; the clock and the
// dwell timers. The fast path's neighbourhoods and skip bounds are not written: they decide only
// how much work a fix takes, never an event, and a restored device takes a new neighbourhood at
// its next fix.
extension Monitor {
    /// Writes every device's state (the devices themselves are the `DeviceTable`'s to write).
    package func writeSnapshot(to w: inout SnapshotWriter) {
        // A snapshot is taken between readings: a caller that batches fixes has applied its
        // batch by then (`ReadingApplier.flush`), or those fixes would be lost.
        precondition(batch.count == 0, "a snapshot with fixes waiting in the batch")
        w.tag("monitor")
        w.f64(clock)
        w.f64(timeOrigin)
        w.count(stateCount)
        for slot in 0..<stateCount {
            w.f64(states[slot].last)
            w.bool(states[slot].anchorCos >= 0)
            let visits = states[slot].visits
            w.count(Int(visits.count))
            var previousKey: UInt32 = 0
            for i in 0..<Int(visits.count) {
                let v = visits[i]
                // Keys ascend: each as its step from the one before (a byte or two).
                w.varint(UInt64(v.key &- previousKey))
                previousKey = v.key
                Self.writeTime(entryTimes.time(v.code), before: states[slot].last, to: &w)
            }
        }
        timers.writeSnapshot(to: &w) { w, timer in
            w.varint(UInt64(UInt32(bitPattern: timer.device)))
            w.varint(UInt64(UInt32(bitPattern: timer.region)))
        }
    }

    /// An entry time, as whole milliseconds before the device's last reading when that gives it
    /// back bit for bit (two or three bytes for a visit of minutes), else as its eight bytes.
    static func writeTime(_ t: Double, before last: Double, to w: inout SnapshotWriter) {
        let ms = ((last - t) * 1000).rounded()
        if ms >= 0 && ms < 0x1p52 && last - ms / 1000 == t && (last - ms / 1000).sign == t.sign {
            w.varint(UInt64(ms) << 1)
        } else {
            w.varint(1)
            w.f64(t)
        }
    }

    static func readTime(before last: Double, from r: inout SnapshotReader) throws(SnapshotError) -> Double {
        let v = try r.varint()
        if v == 1 { return try r.f64() }
        guard v & 1 == 0 else { throw SnapshotError("bad entry time") }
        return last - Double(v >> 1) / 1000
    }

    /// Restores what `writeSnapshot` wrote into a monitor over the same index and options whose
    /// devices have been interned, in the same order, and have done nothing yet.
    package func restoreSnapshot(from r: inout SnapshotReader) throws(SnapshotError) {
        try r.expect("monitor")
        clock = try r.f64()
        timeOrigin = try r.f64()
        let n = try r.count()
        guard n == stateCount else { throw SnapshotError("snapshot has \(n) devices' region states, the run \(stateCount)") }
        let regions = UInt32(index.regions.count)
        for slot in 0..<n {
            states[slot].last = try r.f64()
            states[slot].anchorCos = try r.bool() ? 0 : -1
            let visits = try r.count()
            var key: UInt64 = 0
            for _ in 0..<visits {
                let step = try r.varint()
                guard step <= UInt64(UInt32.max) - key else {
                    throw SnapshotError("snapshot names a region the index does not have")
                }
                key += step
                guard VisitList.region(ofKey: UInt32(key)) < regions else {
                    throw SnapshotError("snapshot names a region the index does not have")
                }
                let enteredAt = try Self.readTime(before: states[slot].last, from: &r)
                states[slot].visits.append(VisitList.Entry(key: UInt32(key), code: entryTimes.code(enteredAt)))
            }
        }
        try timers.restoreSnapshot(from: &r) { r throws(SnapshotError) in
            // Fired, a timer indexes its device's state and its region's flags.
            let device = try r.varint(), region = try r.varint()
            guard device < UInt64(n), region < UInt64(regions) else {
                throw SnapshotError("snapshot has a dwell timer of device \(device) in region \(region)")
            }
            return Timer(device: Int32(device), region: Int32(region))
        }
    }
}
