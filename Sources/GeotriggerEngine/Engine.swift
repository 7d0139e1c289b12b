import GeotriggerCore
import GeotriggerGeometry
import GeotriggerMonitoring
import GeotriggerFormats
import GeotriggerScheduling
import GeotriggerRuntime

/// Receives what an engine produces, in order: region events and the deliveries they (or timers) cause.
public protocol EngineOutput: AnyObject {
    func regionEvent(_ event: RegionEvent)
    func delivery(_ delivery: Delivery)
    /// A user's response that reached the app (SPEC §5.1), right after the `respond` record.
    func response(_ response: NotificationResponse)
    /// A push that showed nothing (SPEC §5.1).
    func silentPush(_ push: SilentPush)
    /// A region was added live (`Engine.addRegion`) as number `number`, before any event names it.
    func regionAdded(_ region: Region, number: Int32)
}

extension EngineOutput {
    public func regionAdded(_ region: Region, number: Int32) {}
}

/// An output that reads a table entry per region for each region event (the event writer's
/// preformatted ids): the monitor prefetches the entry as soon as it decides the event.
package protocol RegionEventTableReader: EngineOutput {
    /// The table's start and the bytes an entry takes.
    var regionEventTable: RegionEventTable { get }
}

/// The whole engine as a library: regions and their state machines, and the scheduling core.
///
/// Readings flow one way: a fix goes to the monitor, which asks the index and emits region
/// events; each event goes out, then to the scheduler, whose deliveries go out right after it with
/// the same time. Both keep their timers on the one stream clock: timers due before a reading fire
/// first (dwell before a delivery due at the same instant), then the reading, then timers due at it.
///
/// ```swift
/// let engine = try Engine(regions: RegionFile.load(path: "zones.geojson"))
/// engine.onEvent = { e in print(e.kind.name, engine.regionID(e.region), engine.deviceName(e.device)) }
/// engine.fix(device: "bus-7", t: 1_700_000_000, latitude: 45.78, longitude: 14.36, accuracy: 8)
/// engine.advance(to: 1_700_000_600)   // fires dwell timers due by then
/// ```
///
/// Not thread-safe (it owns a GEOS context): use one engine per thread.
public final class Engine {
    // The subsystems, each driven through the engine (its clock fires every owner's timers in
    // order): package, so that no caller outside can apply a reading past the clock.
    package let index: RegionIndex
    package let monitor: Monitor
    /// Beacon regions: sightings, zones, fusion.
    package let beacons: BeaconMonitor
    package let scheduler: Scheduler
    /// Called for every region event, in order (after `output`).
    @exclusivity(unchecked) public var onEvent: ((RegionEvent) -> Void)?
    /// Called for every delivery, in order (after `output`).
    @exclusivity(unchecked) public var onDeliver: ((Delivery) -> Void)?
    /// Called for every response that reaches the app (the delegate's `didReceive`), after the
    /// output has it.
    public var onResponse: ((NotificationResponse) -> Void)?
    /// Receives events and deliveries before the closures (the replay's writer). Held strongly
    /// (a weak load per event cost an atomic operation and slow-path reference counting): an
    /// output that owns the engine must not be set here itself, but through an object that holds
    /// it without a strong reference, as `ReplayJob` does.
    public var output: (any EngineOutput)? {
        get { outputReference.value }
        set {
            outputReference.value = newValue
            monitor.eventTable = (newValue as? any RegionEventTableReader)?.regionEventTable
        }
    }
    /// `output`, called without reference counting on the per-event path.
    let outputReference = HeldReference<any EngineOutput>()
    private let relay = Relay()
    /// Whether any region is a beacon region (whose fix events go to the beacon monitor).
    private let hasBeaconRegions: Bool
    private let beaconRelay = BeaconRelay()
    /// `--expire`: forgets devices silent for S seconds (`MonitorOptions.expire`).
    let expiry: DeviceExpiry
    /// Whether `expiry` is on (a constant: the reading path tests it once).
    private let expires: Bool
    /// The device whose reading is being applied (−1 outside a reading), with `--expire`: if it
    /// expires in the timers due before its reading, its id, looked up already, stays its own.
    @exclusivity(unchecked) private var readingDevice: Int32 = -1
    /// Devices forgotten so far (`--expire`), for the summary.
    @exclusivity(unchecked) package private(set) var expiredDevices = 0
    /// Region ids as live changes left them (`addRegion`, `removeRegion`), and the scheduler's key
    /// per region.
    let names: LiveRegionNames
    /// The region records applied so far, in order: a checkpoint re-applies them on restore.
    @exclusivity(unchecked) package var regionChanges: [RegionChange] = []

    /// Where in the clock order the engine is, for an output that interleaves several engines
    /// (`replay --jobs`): what is being emitted and, for a timer, which one.
    package enum Phase: UInt8, Sendable {
        /// Timers due before the reading being applied.
        case timersBefore
        /// The reading itself (and anything outside a reading).
        case reading
        /// Timers due at or before the clock after the reading.
        case timersAfter
    }
    @exclusivity(unchecked) package private(set) var phase = Phase.reading

    /// The four timer owners, in the order their timers fire when due at the same time: region
    /// timers (dwell, then beacon silence) before notification timers, and expiry last.
    package enum TimerSource: UInt8, Sendable, CaseIterable {
        /// `Monitor`: dwell in geographic regions.
        case dwell
        /// `BeaconMonitor`: beacon silence (exit) and beacon dwell.
        case beacon
        /// `Scheduler`: time-interval, calendar and repeating triggers.
        case notification
        /// `DeviceExpiry` (`--expire`): a device silent for S seconds is forgotten. Last at equal
        /// times: whatever the device had due at the instant it expires (a dwell, a beacon
        /// silence exit, a time trigger) still happens, as it would had the device been heard
        /// at that instant, and only then are its visits ended and its center dropped.
        case expiry
    }
    /// The timer firing now: its due time and owner.
    @exclusivity(unchecked) package private(set) var firingDue = 0.0
    @exclusivity(unchecked) package private(set) var firingSource = TimerSource.dwell

    /// `phase`, and while a timer fires `firingSource` and `firingDue` (0 and 0 in the reading
    /// phase, where they are left from the last timer), as raw values in one call, for code in
    /// other modules that asks per event (`replay --jobs` orders its jobs' output by them):
    /// there, a stored property's every read is checked for exclusivity whatever its attribute,
    /// and an enum's `==` is a generic call.
    package var moment: (phase: UInt8, source: UInt8, due: Double) {
        phase == .reading ? (phase.rawValue, 0, 0) : (phase.rawValue, firingSource.rawValue, firingDue)
    }

    public convenience init(regions: [Region], hysteresis: Hysteresis = .automatic, options: MonitorOptions = MonitorOptions(),
                            beaconOptions: BeaconOptions = BeaconOptions(), requests: [NotificationRequest] = []) throws {
        try self.init(index: RegionIndex(regions: regions, hysteresis: hysteresis), options: options,
                      beaconOptions: beaconOptions, requests: requests)
    }

    /// An engine over an index already built; `requests` are checked (unknown regions are refused).
    public init(index: RegionIndex, options: MonitorOptions = MonitorOptions(), beaconOptions: BeaconOptions = BeaconOptions(),
                requests: [NotificationRequest] = []) throws(RequestError) {
        self.index = index
        monitor = Monitor(index: index, options: options)
        var beaconOptions = beaconOptions
        beaconOptions.dwell = options.dwell
        beacons = BeaconMonitor(regions: index.regions, beaconRegions: index.summary.beaconRegions, options: beaconOptions)
        hasBeaconRegions = !beacons.isEmpty
        let names = LiveRegionNames(base: RegionIDTable(regions: index.regions), baseCount: index.count)
        self.names = names
        expiry = DeviceExpiry(seconds: options.expire, devices: monitor.devices, monitor: monitor)
        expires = expiry.isOn
        scheduler = try Scheduler(requests: requests, regionKey: { names.key($0) }, devices: monitor.devices)
        relay.engine = Unmanaged.passUnretained(self)
        monitor.sink = relay
        beaconRelay.engine = Unmanaged.passUnretained(self)
        beacons.sink = beaconRelay
        beacons.devices = monitor.devices
        expiry.expire = { [unowned self] d, t in expire(d, at: t) }
        scheduler.onDeliver = { [unowned self] d in
            outputReference.call { $0.delivery(d) }
            onDeliver?(d)
        }
        scheduler.onResponse = { [unowned self] r in
            outputReference.call { $0.response(r) }
            onResponse?(r)
        }
        scheduler.onSilentPush = { [unowned self] p in outputReference.call { $0.silentPush(p) } }
    }

    // MARK: Readings

    /// Whether plain fixes may go through the monitor's batches (`Monitor.batchAppend`,
    /// `applyBatch`) rather than `fix` one at a time, now: nothing is on the clock (no timer
    /// pending, and none a fix could arm: no dwell), and a fix does nothing beyond the monitor
    /// and the output (no beacon regions, no requests added at a device's first reading, no
    /// polygons). The events are the same either way.
    package var batchesFixes: Bool {
        // With `--expire` a first fix arms a timer and later ones are timed by it: never batched.
        !expires && monitor.batchesFixes && !hasBeaconRegions && !scheduler.addsAtFirstSight
            && monitor.earliestTimerDue == .infinity && beacons.earliestTimerDue == .infinity
            && scheduler.earliestTimerDue == .infinity
    }

    /// Every device seen, by id: names, first-seen ranks.
    public var devices: DeviceTable { monitor.devices }

    /// The device's id, interned on its first reading (no allocation for a known device).
    @inline(__always)
    package func device(_ name: ByteView) -> Int32 { monitor.device(name) }

    /// The device's id, interned on first sight.
    public func device(_ name: String) -> Int32 { monitor.device(name) }

    // The batch of fixes of distinct devices (`Monitor.batchAppend`), for `ReadingApplier`.
    @inline(__always)
    func batchAppend(device d: Int32, t: Double, at p: Coordinate, accuracy: Double) -> Bool {
        monitor.batchAppend(device: d, t: t, at: p, accuracy: accuracy)
    }
    @inline(__always) var batchCount: Int { monitor.batchCount }
    /// Applies the batch; returns how many of its fixes were ignored for their accuracy.
    func applyBatch() -> Int { monitor.applyBatch() }

    /// Applies a fix for a device given by name.
    @discardableResult
    public func fix(device: String, t: Double, latitude: Double, longitude: Double, accuracy: Double = .nan) -> Monitor.Outcome {
        fix(device: monitor.device(device), t: t, at: Coordinate(latitude: latitude, longitude: longitude), accuracy: accuracy)
    }

    /// Applies a fix for an interned device (`monitor.device(_:)`); no allocation for known devices.
    @discardableResult
    public func fix(device: Int32, t: Double, at p: Coordinate, accuracy: Double = .nan) -> Monitor.Outcome {
        reading(device: device, t: t) { monitor.fix(device: device, t: t, at: p, accuracy: accuracy) }
    }

    /// Applies a beacon sighting (RSSI in dBm; `tx` NaN when absent). Nil if it is older than the
    /// device's previous reading.
    public func sighting(device: Int32, t: Double, beacon: BeaconID, rssi: Double, tx: Double = .nan) -> BeaconMonitor.Outcome? {
        if isOutOfOrder(t, after: monitor.lastReading(of: device)) { return nil }
        return reading(device: device, t: t) {
            _ = monitor.touch(device: device, t: t)
            return beacons.sighting(device: device, t: t, beacon: beacon, rssi: rssi, tx: tx)
        }
    }

    /// A reading that is not a fix (a sighting, a control record): orders it on the device's and the
    /// stream's clock. Returns `.outOfOrder` if it is older than the device's previous reading.
    public func touch(device: Int32, t: Double) -> RejectReason? {
        if isOutOfOrder(t, after: monitor.lastReading(of: device)) { return .outOfOrder }
        reading(device: device, t: t) { _ = monitor.touch(device: device, t: t) }
        return nil
    }

    /// The clock order every reading follows: timers due before it fire, the device's first reading
    /// adds its requests, the reading is applied, then timers due at its time fire.
    /// Usually no timer is due (no `--dwell`, no time triggers, or none yet), and three inlined
    /// loads before and after the reading say so: no call, and `phase` stays `.reading`, as
    /// nothing runs that could read it. The clock itself moved with the reading.
    @inline(__always)
    private func reading<R>(device: Int32, t: Double, _ apply: () -> R) -> R {
        if !nothingDue(before: t) {
            phase = .timersBefore
            if expires { readingDevice = device }
            fireTimers(before: t)
            readingDevice = -1
            phase = .reading
        }
        scheduler.deviceSeen(device, at: t)
        let result = apply()
        if expires { expiry.heard(device) }
        let now = monitor.currentClock
        if !nothingDue(through: now) {
            phase = .timersAfter
            advance(to: now)
            phase = .reading
        }
        return result
    }

    /// A device-less reading at `t` (a region record): timers due before `t` fire, `apply` runs,
    /// then the clock moves to `t` (never back) and timers due by then fire, as for any reading.
    func deviceless<R>(t: Double, _ apply: () -> R) -> R {
        if !nothingDue(before: t) {
            phase = .timersBefore
            fireTimers(before: t)
            phase = .reading
        }
        let result = apply()
        phase = .timersAfter
        advance(to: max(clock, t))
        phase = .reading
        return result
    }

    /// What a reading of another engine's device at `t` does to this engine's clock: timers due
    /// before `t` fire, then the clock moves to `t` and timers due at it fire (`replay --jobs`
    /// sends this to every job but the reading's own when a reading moves the clock forward).
    func tick(to t: Double) {
        phase = .timersBefore
        fireTimers(before: t)
        phase = .timersAfter
        advance(to: t)
        phase = .reading
    }

    // MARK: Clock

    /// Fires every timer (dwell and notification) due strictly before `t`, earliest first.
    public func fireTimers(before t: Double) {
        if nothingDue(before: t) { return }
        while let (due, source) = nextTimer(), due < t { fireNext(source, due: due) }
    }

    /// Whether no timer of the four owners is due strictly before `t`: four loads, the usual
    /// answer for every reading (a NaN `t` answers no, so the loops decide it, as before).
    @inline(__always)
    private func nothingDue(before t: Double) -> Bool {
        monitor.earliestTimerDue >= t && beacons.earliestTimerDue >= t && scheduler.earliestTimerDue >= t
            && expiry.timers.earliestDue >= t
    }

    /// Whether no timer of the four owners is due at or before `t`.
    @inline(__always)
    private func nothingDue(through t: Double) -> Bool {
        monitor.earliestTimerDue > t && beacons.earliestTimerDue > t && scheduler.earliestTimerDue > t
            && expiry.timers.earliestDue > t
    }

    /// Moves the clock to `t` (never back) and fires every timer due by then, earliest first.
    public func advance(to t: Double) {
        if !nothingDue(through: t) {
            while let (due, source) = nextTimer(), due <= t { fireNext(source, due: due) }
        }
        monitor.advance(to: t)
    }

    public var clock: Double { monitor.currentClock }

    /// The earliest timer of the three owners; at equal times the first in `TimerSource` order.
    @inline(__always)
    private func nextTimer() -> (due: Double, source: TimerSource)? {
        // Three plain comparisons: this runs for every reading, so no array of candidates.
        var best: (due: Double, source: TimerSource)?
        if let due = monitor.nextTimerDue { best = (due, .dwell) }
        if let due = beacons.nextTimerDue, best == nil || due < best!.due { best = (due, .beacon) }
        if let due = scheduler.nextTimerDue, best == nil || due < best!.due { best = (due, .notification) }
        if let due = expiry.nextTimerDue, best == nil || due < best!.due { best = (due, .expiry) }
        return best
    }

    private func owner(of source: TimerSource) -> any TimerOwner {
        switch source {
        case .dwell: return monitor
        case .beacon: return beacons
        case .notification: return scheduler
        case .expiry: return expiry
        }
    }

    private func fireNext(_ source: TimerSource, due: Double) {
        firingDue = due
        firingSource = source
        owner(of: source).fireNextTimer()
    }

    // MARK: Expiry

    /// Forgets device `d`, silent since `t` − S (`--expire`). Its notification center is dropped
    /// first, so the exits below deliver nothing (the device is gone: no location trigger fires
    /// for it). Then each visit, geographic or beacon, ends in an `exit` stamped `t` with
    /// `"reason":"expired"` and no distance (no fix decided it), in the regions' given order as
    /// the events of one fix are; then its state is freed and its id given back (or, if it is the
    /// device whose reading is being applied, kept for that reading as a new device). Its dwell,
    /// beacon and notification timers stay in their heaps and are dropped when they come due: its
    /// rank changes here, and each owner checks the rank a timer was armed with (the scheduler
    /// its never-reused instance numbers).
    private func expire(_ d: Int32, at t: Double) {
        expiredDevices += 1
        scheduler.dropCenter(device: d)
        var exits: [RegionEvent] = []
        monitor.forget(device: d) { r, enteredAt in
            // A positioned beacon region's fix half is the beacon monitor's to end (below).
            if hasBeaconRegions && beacons.isBeaconRegion(r) { return }
            if monitor.isSilenced(.exit, region: r) { return }
            exits.append(RegionEvent(kind: .exit, t: t, device: d, region: r, distance: .nan, enteredAt: enteredAt,
                                     beacon: nil, proximity: nil, reason: .expired))
        }
        if hasBeaconRegions {
            beacons.forget(device: d) { r, enteredAt, beacon in
                exits.append(RegionEvent(kind: .exit, t: t, device: d, region: r, distance: .nan, enteredAt: enteredAt,
                                         beacon: beacon, proximity: nil, reason: .expired))
            }
        }
        // Each list is in region-id order; the regions' given order is what a fix's events follow.
        if exits.count > 1 { exits.sort { index.givenPosition($0.region) < index.givenPosition($1.region) } }
        for e in exits { report(e) }
        if d == readingDevice { devices.renew(d) } else { devices.remove(d) }
    }

    // MARK: Notification center

    /// Adds a request for a device at the current clock (or at `t`).
    public func add(_ request: NotificationRequest, device: String, at t: Double? = nil) throws(RequestError) {
        try scheduler.add(request, device: monitor.device(device), at: t ?? clock)
    }

    public func pending(device: String) -> [NotificationRequest] { scheduler.pending(device: monitor.device(device)) }
    public func delivered(device: String) -> [DeliveredNotification] { scheduler.delivered(device: monitor.device(device)) }
    public func removePending(ids: [String], device: String) { scheduler.removePending(ids: ids, device: monitor.device(device)) }
    public func removeDelivered(ids: [String], device: String) { scheduler.removeDelivered(ids: ids, device: monitor.device(device)) }

    // SPEC §5.1: what happens after a notification fires. Each goes to the output as the
    // control record of the same name would (responses and silent pushes as events).

    /// Replaces the device's categories of actions (`setNotificationCategories`).
    public func setCategories(_ categories: [NotificationCategory], device: String) {
        scheduler.setCategories(categories, device: monitor.device(device))
    }

    /// The user answers a delivered notification; nil for a dismissal the app does not hear of.
    @discardableResult
    public func respond(id: String, action: String, text: String? = nil, device: String, at t: Double? = nil) throws(RequestError) -> NotificationResponse? {
        try scheduler.respond(id: id, action: action, text: text, device: monitor.device(device), at: t ?? clock)
    }

    /// What the device's user allows (`granted: false`: nothing).
    public func authorize(_ options: PresentationOptions, granted: Bool = true, device: String) {
        scheduler.authorize(options, granted: granted, device: monitor.device(device))
    }

    /// The app comes to the foreground (with what its `willPresent` returns) or goes back.
    public func setAppState(_ state: AppState, device: String) {
        scheduler.setAppState(state, device: monitor.device(device))
    }

    /// A remote notification arrives (`id`: its `apns-collapse-id`).
    @discardableResult
    public func push(id: String, payload: RemotePayload, device: String, at t: Double? = nil) -> PushOutcome {
        scheduler.push(id: id, payload: payload, device: monitor.device(device), at: t ?? clock)
    }

    /// The service extension asked to rewrite `mutable-content` pushes (`--service-extension`).
    public var serviceExtension: (any NotificationServiceExtension)? {
        get { scheduler.serviceExtension }
        set { scheduler.serviceExtension = newValue }
    }

    // MARK: Names

    public func regionID(_ region: Int32) -> String { index.regions[Int(region)].id }
    public func deviceName(_ device: Int32) -> String { monitor.devices.name(device) }
    /// The regions by their numbers in events (`RegionEvent.region`), those added live included:
    /// an `EventWriter` of this engine's events is made with them.
    public var regions: [Region] { index.regions }

    /// A geographic event: the beacon monitor takes those of positioned beacon regions.
    fileprivate func handle(_ e: RegionEvent) {
        if hasBeaconRegions && beacons.takesFixEvent(e) { return }
        report(e)
    }

    fileprivate func report(_ e: RegionEvent) {
        outputReference.call { $0.regionEvent(e) }
        onEvent?(e)
        // A region removed or replaced stops being monitored: as when an iOS app calls
        // `stopMonitoring(for:)`, nothing is delivered for the visit it ends.
        if e.kind != .dwell && e.reason != .removed && e.reason != .replaced {
            scheduler.handleRegionEvent(device: e.device, region: names.key(of: e.region), entry: e.kind == .enter, at: e.t)
        }
    }

    // The engine owns its relays and is the only caller of what calls them, so the back
    // reference needs no reference counting on the per-event path: it is held unretained, and
    // called as a guaranteed reference (an `unowned(unsafe)` property was still retained around
    // each call).
    private final class Relay: RegionEventSink {
        @exclusivity(unchecked) var engine: Unmanaged<Engine>?
        func handle(_ event: RegionEvent) { engine.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.handle(event) } }
    }

    private final class BeaconRelay: RegionEventSink {
        @exclusivity(unchecked) var engine: Unmanaged<Engine>?
        func handle(_ event: RegionEvent) { engine.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.report(event) } }
    }
}

// MARK: Checkpoints

extension Engine {
    /// The whole engine's state between readings, for `replay --checkpoint`: the devices, the
    /// region state machines, the beacon regions and the notification centers, with their
    /// timers. The regions, requests and options are not written: a restore is into an engine
    /// built from the same ones (`restoreSnapshot`).
    package func writeSnapshot(to w: inout SnapshotWriter) {
        w.tag("engine")
        writeRegionChanges(to: &w)
        devices.writeSnapshot(to: &w)
        monitor.writeSnapshot(to: &w)
        beacons.writeSnapshot(to: &w)
        scheduler.writeSnapshot(to: &w)
        expiry.writeSnapshot(to: &w)
    }

    /// Restores `writeSnapshot`'s state into this engine, which must be new (no reading yet) and
    /// built from the same regions, requests and options.
    package func restoreSnapshot(from r: inout SnapshotReader) throws(SnapshotError) {
        guard devices.count == 0 else { throw SnapshotError("restoring into an engine that has read already") }
        try r.expect("engine")
        try restoreRegionChanges(from: &r)
        let table = try DeviceTable.readSnapshot(from: &r)
        // Interned through the monitor, which makes each device's state as it interns.
        try devices.restore(names: table.devices.map(\.name), free: table.free, nextRank: table.nextRank) { monitor.device($0) }
        for (id, (_, rank)) in table.devices.enumerated() { devices.setRank(Int32(id), rank) }
        try monitor.restoreSnapshot(from: &r)
        try beacons.restoreSnapshot(from: &r)
        // Requests stored before a region was removed still name it.
        names.includesRemoved = true
        defer { names.includesRemoved = false }
        try scheduler.restoreSnapshot(from: &r)
        try expiry.restoreSnapshot(from: &r)
    }
}
