import GeotriggerCore
import GeotriggerMonitoring
import GeotriggerRuntime

/// `--expire S`: the fourth timer owner. A device silent for S seconds of the stream clock is
/// forgotten (`Engine.expire`), stamped its last reading + S.
///
/// One pending timer per device, not one per reading: a device's first reading arms it at that
/// reading + S; when it comes due, a device heard since (its last reading + S is later) is armed
/// again at last + S, otherwise it expires. So a reading costs nothing here (its time is the
/// monitor's `last`, written anyway), and a device costs one heap entry and one re-arm per S
/// seconds it stays in the stream.
///
/// Boundary: a device expires when the clock reaches last + S (a timer due at a reading's time
/// fires after that reading, as every timer does). A reading of the device itself at exactly
/// last + S comes first and keeps it; a reading of another device at last + S expires it.
package final class DeviceExpiry: TimerOwner {
    /// S, or +∞ when `--expire` is off (then nothing is ever armed).
    let seconds: Double
    let devices: DeviceTable
    unowned(unsafe) let monitor: Monitor
    /// Expiry timers: the device, ranked by the device's rank (first-seen order).
    @exclusivity(unchecked) var timers = TimerQueue<Int32>()
    /// Per device id: whether its expiry timer is pending (armed at its first reading).
    @exclusivity(unchecked) var armed: [Bool] = []
    /// Forgets a device: its id and the expiry time (last reading + S).
    var expire: (Int32, Double) -> Void = { _, _ in }

    init(seconds: Double?, devices: DeviceTable, monitor: Monitor) {
        self.seconds = seconds ?? .infinity
        self.devices = devices
        self.monitor = monitor
    }

    var isOn: Bool { seconds.isFinite }

    /// After a reading of `d` was applied: arms its timer if this was its first.
    @inline(__always)
    func heard(_ d: Int32) {
        if Int(d) < armed.count && armed[Int(d)] { return }
        arm(d)
    }

    private func arm(_ d: Int32) {
        let last = monitor.lastReading(of: d)
        // A rejected first reading (out of order cannot be, but be safe) leaves nothing to time.
        guard last.isFinite else { return }
        while armed.count <= Int(d) { armed.append(false) }
        armed[Int(d)] = true
        timers.schedule(at: last + seconds, rank: devices.rank(d), d)
    }

    package var earliestTimerDue: Double { timers.earliestDue }
    package var nextTimerDue: Double? { timers.nextDue }

    @discardableResult
    package func fireNextTimer() -> Bool {
        guard let (due, rank, d) = timers.popNext() else { return false }
        // Each live, heard device has exactly one timer, and ids are freed only here, so a stale
        // one cannot be; the check costs nothing and keeps it so.
        guard rank == devices.rank(d) else { return true }
        if let until = Self.rearm(due: due, lastReading: monitor.lastReading(of: d), seconds: seconds) {
            timers.schedule(at: until, rank: rank, d)
            return true
        }
        armed[Int(d)] = false
        expire(d, due)
        return true
    }
}

extension DeviceExpiry {
    /// A device's expiry timer, due at `due`: when the device was heard since it was armed (its
    /// last reading + S is later), the time to arm it again; nil when it expires now. The
    /// engine's rule, by which `replay --jobs`' reader forgets devices too.
    @inline(__always)
    package static func rearm(due: Double, lastReading: Double, seconds: Double) -> Double? {
        let until = lastReading + seconds
        return until > due ? until : nil
    }
}

// MARK: Checkpoints

extension DeviceExpiry {
    func writeSnapshot(to w: inout SnapshotWriter) {
        w.tag("expiry")
        w.list(armed) { w, a in w.bool(a) }
        timers.writeSnapshot(to: &w) { w, d in w.i32(d) }
    }

    func restoreSnapshot(from r: inout SnapshotReader) throws(SnapshotError) {
        try r.expect("expiry")
        let count = devices.count
        armed = try r.list { r throws(SnapshotError) in try r.bool() }
        guard armed.count <= count else { throw SnapshotError("snapshot arms expiry for \(armed.count) of \(count) devices") }
        try timers.restoreSnapshot(from: &r) { r throws(SnapshotError) -> Int32 in
            let d = try r.i32()
            guard d >= 0, Int(d) < count else { throw SnapshotError("snapshot has an expiry timer for device \(d) of \(count)") }
            return d
        }
    }
}
