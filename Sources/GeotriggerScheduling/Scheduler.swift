import GeotriggerCore
import GeotriggerRuntime

/// A notification delivered to a device (a `deliver` event).
public struct Delivery: Sendable {
    /// When it was delivered: the region event's time, or the timer's due time.
    public var t: Double
    public var device: Int32
    /// The request's identifier.
    public var id: String
    public var trigger: NotificationTrigger
    /// For location triggers, the region key of the event that fired it; -1 otherwise.
    public var region: Int32
    public var content: NotificationContent
    /// What the user saw or heard: the options the content uses that the user allowed (and, in
    /// the foreground, that `willPresent` let through).
    public var presented: PresentationOptions = .all
    /// Whether it went into the delivered list (Notification Center): not when alerts are not
    /// allowed, nor in the foreground without `alert` in the presentation.
    public var listed = true
    /// The actions its category offers, by id; [] when the content names no registered category.
    public var actions: [String] = []
    /// What the service extension did to a `mutable-content` push; nil when it was not asked.
    public var serviceExtension: ServiceExtensionOutcome?
}

/// A notification in a device's delivered list.
public struct DeliveredNotification: Sendable {
    public var request: NotificationRequest
    public var date: Double
}

/// What became of a `push` control record.
public enum PushOutcome: Equatable, Sendable {
    /// A pending push request with that identifier was delivered.
    case deliveredPending
    /// No pending push request had that identifier; the record's own content was delivered.
    case deliveredContent
    /// No pending push request had that identifier and the record carried no content.
    case unknownRequest
    /// An APNs payload with no alert, sound or badge: the app heard of it; nothing was delivered.
    case silent
}

/// The scheduling core: one notification center per device, modelled on UNUserNotificationCenter.
///
/// It knows nothing of geometry: regions are integer keys (the caller's region numbers), named in
/// requests by id through `regionKey`. Its clock is the caller's stream clock: time triggers sit in
/// one heap and fire, in time order, when `fireTimers(before:)` / `advance(to:)` pass them; a
/// location trigger fires on the region event handed to `handleRegionEvent`. Nothing here runs per
/// reading unless a trigger fires: no scan over devices or requests.
public final class Scheduler: TimerOwner {
    public let devices: DeviceTable
    /// Region id → key used in `handleRegionEvent`, or nil for an unknown id.
    public let regionKey: (String) -> Int32?
    /// Called for every delivery, in order.
    public var onDeliver: ((Delivery) -> Void)?
    /// Called for every response that reaches the app (the delegate's
    /// `userNotificationCenter(_:didReceive:withCompletionHandler:)`).
    public var onResponse: ((NotificationResponse) -> Void)?
    /// Called for every silent push (`application(_:didReceiveRemoteNotification:…)`).
    public var onSilentPush: ((SilentPush) -> Void)?
    /// Asked to rewrite every push whose payload shows an alert and has `mutable-content`.
    public var serviceExtension: (any NotificationServiceExtension)?

    struct Stored {
        var request: NotificationRequest
        var regionKey: Int32
        var calendar: ZonedCalendar?
    }

    /// A list entry that refers to a stored request.
    protocol StoredEntry { var stored: Int32 { get } }

    struct Pending: StoredEntry {
        var stored: Int32
        var instance: UInt32
    }

    struct Delivered: StoredEntry {
        var stored: Int32
        var t: Double
    }

    @usableFromInline struct Center {
        var seen = false
        /// In the order added, as `pendingNotificationRequests` lists them.
        var pending: [Pending] = []
        /// In delivery order.
        var delivered: [Delivered] = []
        /// `setCategories`: the app's registered categories.
        var categories: [NotificationCategory] = []
        /// What the user allowed (`authorize`; everything until the first one).
        var granted: PresentationOptions = .all
        /// Whether an `authorize` record came (the state lists it then).
        var authorized = false
        var app: AppState = .background
    }

    /// A time trigger's next firing: the pending instance of a request on a device.
    @usableFromInline struct Timer {
        var device: Int32
        var instance: UInt32
    }

    // Not private: the checkpoint (`Scheduler+Snapshot.swift`) writes and restores it.
    var stored: [Stored] = []
    /// How many of `stored` the init made (the requests file's); later ones were appended by
    /// `add` and by pushes delivered with their own content.
    private(set) var storedByInit = 0
    /// Requests for every device (no `devices` list), added at each device's first reading.
    private var everyDevice: [Int32] = []
    /// Requests for named devices, added at that device's first reading.
    private var forDevice: [String: [Int32]] = [:]
    /// Whether a device's first reading adds any request (either list above is not empty; both
    /// are fixed at init). Without, `deviceSeen` has nothing to do and keeps no per-device state.
    @exclusivity(unchecked) public private(set) var addsAtFirstSight = false
    @exclusivity(unchecked) @usableFromInline var centers: [Center] = []
    @exclusivity(unchecked) @usableFromInline var timers = TimerQueue<Timer>()
    var instanceCounter: UInt32 = 0

    /// - Parameters:
    ///   - requests: the `--requests` file's requests (checked already; see `RequestsFile`).
    ///   - regionKeys: every region id a location trigger may name, with its key.
    public convenience init(requests: [NotificationRequest] = [], regionKeys: [String: Int32], devices: DeviceTable = DeviceTable()) throws(RequestError) {
        try self.init(requests: requests, regionKey: { regionKeys[$0] }, devices: devices)
    }

    /// - Parameters:
    ///   - requests: the `--requests` file's requests (checked already; see `RequestsFile`).
    ///   - regionKey: the key of a region id a location trigger names, nil if there is none. Asked
    ///     only for location triggers, so a lookup built on first use costs nothing without them.
    public init(requests: [NotificationRequest] = [], regionKey: @escaping (String) -> Int32?, devices: DeviceTable = DeviceTable()) throws(RequestError) {
        self.devices = devices
        self.regionKey = regionKey
        for request in requests {
            let s = try store(request)
            if let names = request.devices {
                for name in names { forDevice[name, default: []].append(s) }
            } else {
                everyDevice.append(s)
            }
        }
        addsAtFirstSight = !everyDevice.isEmpty || !forDevice.isEmpty
        storedByInit = stored.count
    }

    // MARK: Devices

    /// Interns a device name.
    public func device(_ name: String) -> Int32 {
        let d = devices.intern(name)
        ensure(d)
        return d
    }

    /// A device's reading arrived: at its first one, the requests meant for it are added (time
    /// triggers count from `t`). Call before handing that reading's region events in.
    /// Inlinable, so that a run without such requests pays one load and branch per reading.
    @inlinable @inline(__always)
    public func deviceSeen(_ d: Int32, at t: Double) {
        if addsAtFirstSight { deviceSeenAddingRequests(d, at: t) }
    }

    @usableFromInline
    func deviceSeenAddingRequests(_ d: Int32, at t: Double) {
        if Int(d) < centers.count && centers[Int(d)].seen { return }
        firstSeen(d, at: t)
    }

    private func firstSeen(_ d: Int32, at t: Double) {
        ensure(d)
        centers[Int(d)].seen = true
        for s in everyDevice { add(stored: s, device: d, at: t) }
        if !forDevice.isEmpty, let mine = forDevice[devices.name(d)] {
            for s in mine { add(stored: s, device: d, at: t) }
        }
    }

    func ensure(_ d: Int32) {
        while centers.count <= Int(d) { centers.append(Center()) }
    }

    /// Drops a device's notification center (`--expire`): its pending and delivered lists are
    /// freed, and its next reading is a first one again (requests for it are added anew). Its
    /// time triggers stay in the heap and find no pending instance when they come due (instance
    /// numbers are never reused), so they never fire.
    public func dropCenter(device d: Int32) {
        guard Int(d) < centers.count else { return }
        centers[Int(d)] = Center()
    }

    // MARK: UNUserNotificationCenter operations

    /// Adds a request for a device. A pending request with the same identifier is replaced, and a
    /// time trigger counts from `t`, the time of the add.
    public func add(_ request: NotificationRequest, device d: Int32, at t: Double) throws(RequestError) {
        ensure(d)
        add(stored: try store(request), device: d, at: t)
    }

    /// The device's pending requests, in the order they were added.
    public func pending(device d: Int32) -> [NotificationRequest] {
        guard Int(d) < centers.count else { return [] }
        return centers[Int(d)].pending.map { stored[Int($0.stored)].request }
    }

    /// The device's delivered notifications, oldest first.
    public func delivered(device d: Int32) -> [DeliveredNotification] {
        guard Int(d) < centers.count else { return [] }
        return centers[Int(d)].delivered.map { DeliveredNotification(request: stored[Int($0.stored)].request, date: $0.t) }
    }

    /// Removes pending requests by identifier; unknown identifiers are ignored.
    public func removePending(ids: [String], device d: Int32) {
        guard Int(d) < centers.count else { return }
        centers[Int(d)].pending.removeAll(where: matching(ids))
    }

    public func removeAllPending(device d: Int32) {
        guard Int(d) < centers.count else { return }
        centers[Int(d)].pending.removeAll()
    }

    /// Removes delivered notifications by identifier; unknown identifiers are ignored.
    public func removeDelivered(ids: [String], device d: Int32) {
        guard Int(d) < centers.count else { return }
        centers[Int(d)].delivered.removeAll(where: matching(ids))
    }

    /// A predicate on pending or delivered entries: whether the request's identifier is in `ids`.
    private func matching<Entry: StoredEntry>(_ ids: [String]) -> (Entry) -> Bool {
        let ids = Set(ids)
        return { [stored] in ids.contains(stored[Int($0.stored)].request.id) }
    }

    public func removeAllDelivered(device d: Int32) {
        guard Int(d) < centers.count else { return }
        centers[Int(d)].delivered.removeAll()
    }

    // MARK: Triggers

    /// A region event for a device: fires its pending location triggers on that region (entry or
    /// exit as each asks), in the order they were added, stamped `t`.
    @inlinable @inline(__always)
    public func handleRegionEvent(device d: Int32, region: Int32, entry: Bool, at t: Double) {
        // Without a device's center (no request was ever added), no call: the usual replay.
        if hasCenters { deliverOnRegionEvent(device: d, region: region, entry: entry, at: t) }
    }

    /// Whether any device has a notification center yet (a request was added for one).
    @inlinable var hasCenters: Bool { !centers.isEmpty }

    @usableFromInline
    func deliverOnRegionEvent(device d: Int32, region: Int32, entry: Bool, at t: Double) {
        guard Int(d) < centers.count, !centers[Int(d)].pending.isEmpty else { return }
        var k = 0
        while k < centers[Int(d)].pending.count {
            let p = centers[Int(d)].pending[k]
            let s = stored[Int(p.stored)]
            guard s.regionKey == region, case .location(_, let onEntry, let onExit, let repeats) = s.request.trigger,
                  entry ? onEntry : onExit
            else {
                k += 1
                continue
            }
            if repeats { k += 1 } else { centers[Int(d)].pending.remove(at: k) }
            deliver(stored: p.stored, device: d, at: t, region: region, content: s.request.content)
        }
    }

    /// A `push` control record: delivers the pending push request with that identifier (with the
    /// record's content, if it has one), or else the record's content under that identifier.
    @discardableResult
    public func push(id: String, content: NotificationContent?, device d: Int32, at t: Double) -> PushOutcome {
        push(id: id, content: content, device: d, at: t, serviceExtension: nil)
    }

    func push(id: String, content: NotificationContent?, device d: Int32, at t: Double,
              serviceExtension outcome: ServiceExtensionOutcome?) -> PushOutcome {
        ensure(d)
        if let k = centers[Int(d)].pending.firstIndex(where: {
            let r = stored[Int($0.stored)].request
            return r.id == id && r.trigger == .push
        }) {
            let p = centers[Int(d)].pending.remove(at: k)
            deliver(stored: p.stored, device: d, at: t, region: -1,
                    content: content ?? stored[Int(p.stored)].request.content, serviceExtension: outcome)
            return .deliveredPending
        }
        guard let content else { return .unknownRequest }
        let s = try! store(NotificationRequest(id: id, content: content, trigger: .push))  // push needs no region
        deliver(stored: s, device: d, at: t, region: -1, content: content, serviceExtension: outcome)
        return .deliveredContent
    }

    // MARK: Clock

    /// Due time of the earliest timer (cancelled ones may be included).
    public var nextTimerDue: Double? { timers.nextDue }

    /// Due time of the earliest pending timer, +∞ if none: one load, inlined into the engine's
    /// check for every reading.
    @inlinable public var earliestTimerDue: Double { timers.earliestDue }

    /// Fires every timer due strictly before `t`, in time order.
    public func fireTimers(before t: Double) {
        while let (due, _, timer) = timers.popDue(before: t) { fire(timer, due: due) }
    }

    /// Fires every timer due at or before `t`, in time order.
    public func advance(to t: Double) {
        while let (due, _, timer) = timers.popDue(through: t) { fire(timer, due: due) }
    }

    /// Fires the earliest timer; returns whether there was one.
    @discardableResult
    public func fireNextTimer() -> Bool {
        guard let (due, _, timer) = timers.popNext() else { return false }
        fire(timer, due: due)
        return true
    }

    // MARK: Internals

    private func store(_ request: NotificationRequest) throws(RequestError) -> Int32 {
        stored.append(try makeStored(request))
        return Int32(stored.count - 1)
    }

    /// A request as `stored` keeps it: with its region's key and its calendar looked up.
    func makeStored(_ request: NotificationRequest) throws(RequestError) -> Stored {
        var key: Int32 = -1
        var calendar: ZonedCalendar?
        switch request.trigger {
        case .location(let region, _, _, _):
            guard let k = regionKey(region) else { throw RequestError("unknown region \"\(region)\"") }
            key = k
        case .calendar(_, let zone, _):
            do { calendar = try ZonedCalendar(timeZoneIdentifier: zone) } catch { throw RequestError("\(error)") }
        case .timeInterval, .push:
            break
        }
        return Stored(request: request, regionKey: key, calendar: calendar)
    }

    private func add(stored s: Int32, device d: Int32, at t: Double) {
        let id = stored[Int(s)].request.id
        centers[Int(d)].pending.removeAll { stored[Int($0.stored)].request.id == id }
        instanceCounter &+= 1
        centers[Int(d)].pending.append(Pending(stored: s, instance: instanceCounter))
        arm(stored: s, device: d, instance: instanceCounter, after: t)
    }

    /// Schedules the next firing of a time trigger, if it has one.
    private func arm(stored s: Int32, device d: Int32, instance: UInt32, after t: Double) {
        let due: Double?
        switch stored[Int(s)].request.trigger {
        case .timeInterval(let seconds, _):
            due = t + seconds
        case .calendar(let components, _, _):
            due = stored[Int(s)].calendar?.nextDate(after: t, matching: components)
        case .location, .push:
            due = nil
        }
        guard let due else { return }
        timers.schedule(at: due, rank: devices.rank(d), Timer(device: d, instance: instance))
    }

    private func fire(_ timer: Timer, due: Double) {
        let d = Int(timer.device)
        // Timers are cancelled lazily: the instance must still be pending.
        guard let k = centers[d].pending.firstIndex(where: { $0.instance == timer.instance }) else { return }
        let p = centers[d].pending[k]
        let request = stored[Int(p.stored)].request
        if request.trigger.repeats {
            arm(stored: p.stored, device: timer.device, instance: p.instance, after: due)
        } else {
            centers[d].pending.remove(at: k)
        }
        deliver(stored: p.stored, device: timer.device, at: due, region: -1, content: request.content)
    }

    func deliver(stored s: Int32, device d: Int32, at t: Double, region: Int32, content: NotificationContent,
                 serviceExtension outcome: ServiceExtensionOutcome? = nil) {
        var s = s
        let request = stored[Int(s)].request
        if content != request.content {
            // A push with its own content: keep what was actually delivered.
            var r = request
            r.content = content
            stored.append(Stored(request: r, regionKey: -1, calendar: nil))
            s = Int32(stored.count - 1)
        }
        let center = centers[Int(d)]
        let presentation = center.presentation(of: content)
        if presentation.listed {
            // A new delivery replaces a delivered notification with the same identifier.
            centers[Int(d)].delivered.removeAll { stored[Int($0.stored)].request.id == request.id }
            centers[Int(d)].delivered.append(Delivered(stored: s, t: t))
        }
        guard let onDeliver else { return }
        var delivery = Delivery(t: t, device: d, id: request.id, trigger: request.trigger, region: region, content: content)
        delivery.presented = presentation.presented
        delivery.listed = presentation.listed
        delivery.actions = center.category(content.categoryIdentifier)?.actions.map(\.id) ?? []
        delivery.serviceExtension = outcome
        onDeliver(delivery)
    }
}
