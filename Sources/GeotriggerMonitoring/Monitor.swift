import GeotriggerCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerGeometry
import GeotriggerReadings

/// Whether a device's first fix inside a region emits `enter`.
public enum InitialPolicy: String, Sendable, CaseIterable {
    /// Yes: the first fix inside a region enters it, as any later one would.
    case enter
    /// No: the device is silently inside; it gets no `enter` and no `dwell` for that visit, but its
    /// `exit` is reported when it leaves (a visit that began always ends in an exit).
    case none
}

public struct MonitorOptions: Sendable {
    /// Fixes whose horizontal accuracy is worse than this many metres change no state; 0 = no limit.
    public var maxAccuracy: Double = 200
    /// Emit `dwell` once per visit after this many seconds continuously inside; nil = never.
    public var dwell: Double? = nil
    public var initial: InitialPolicy = .enter
    /// Safe distance (metres): after a full evaluation, a device's fixes skip the index and every
    /// test until it has moved as far as its clearance to the nearest boundary (at most this).
    /// nil evaluates every fix in full; the events are the same either way.
    public var safeDistance: Double? = 25

    public init(maxAccuracy: Double = 200, dwell: Double? = nil, initial: InitialPolicy = .enter,
                safeDistance: Double? = 25) {
        self.maxAccuracy = maxAccuracy
        self.dwell = dwell
        self.initial = initial
        self.safeDistance = safeDistance
    }
}

/// The per-(device, region) state machines for geographic regions, with their timers.
///
/// Feed it fixes in time order per device; it asks the `RegionIndex` for nearby regions, decides
/// each transition exactly, and hands events to `sink` in the order they happen. Its clock is the
/// largest time read; `dwell` timers fire when the clock passes them (see `fireTimers`).
public final class Monitor {
    public let index: RegionIndex
    public let devices: DeviceTable
    public let options: MonitorOptions
    public weak var sink: (any RegionEventSink)?
    /// The largest reading time seen (Unix seconds), or -∞ before the first.
    public private(set) var clock: Double = -.infinity

    /// One visit: the device is inside `region` since `enteredAt`.
    public struct Visit: Sendable {
        public var region: Int32
        public var enteredAt: Double
        /// Whether `dwell` has been emitted for this visit.
        public var dwelled: Bool
        /// Entered silently at the device's first fix (`--initial none`).
        public var silent: Bool
        var serial: UInt32
    }

    struct DeviceState {
        var last: Double = -.infinity
        var hasFix = false
        /// Where the last full evaluation was, and how far from there (as a haversine threshold:
        /// sin²(θ/2) of the largest safe central angle) no decision can change; 0 = evaluate.
        var anchorLat = 0.0, anchorLon = 0.0, anchorCosLat = 0.0
        var safeH = 0.0
        /// Sorted by region.
        var visits: [Visit] = []
    }

    /// A dwell timer: the visit (by its serial) of a device in a region.
    struct Timer {
        var device: Int32
        var region: Int32
        var serial: UInt32
    }

    public enum Outcome: Equatable, Sendable {
        case applied
        /// The fix's accuracy was worse than `maxAccuracy`: it moved the clock but changed no state.
        case ignoredForAccuracy
        case rejected(RejectReason)
    }

    private var states: [DeviceState] = []
    private var timers = TimerQueue<Timer>()
    private var visitSerial: UInt32 = 0
    /// Reused between fixes so building a device's new visit list does not allocate.
    private var scratch: [Visit] = []
    /// Per region, a bit per event kind its `notifyOnEntry` / `notifyOnExit` turn off. As with
    /// Core Location's flags, the state is still tracked; only the event is not reported.
    private let silenced: [UInt8]

    public init(index: RegionIndex, options: MonitorOptions = MonitorOptions(), devices: DeviceTable = DeviceTable()) {
        self.index = index
        self.options = options
        self.devices = devices
        silenced = index.regions.map { region in
            (region.notifyOnEntry ? 0 : 1 << RegionEvent.Kind.enter.rawValue) |
                (region.notifyOnExit ? 0 : 1 << RegionEvent.Kind.exit.rawValue)
        }
    }

    /// The device's state slot, adding one for a new device.
    @inline(__always)
    public func device(_ name: UnsafeRawBufferPointer) -> Int32 {
        let (id, isNew) = devices.intern(name)
        if isNew { states.append(DeviceState()) }
        return id
    }

    public func device(_ name: String) -> Int32 {
        var name = name
        return name.withUTF8 { device(UnsafeRawBufferPointer($0)) }
    }

    /// Applies one GPS fix. Timers due before `t` should have been fired first (`fireTimers(before:)`).
    public func fix(device d: Int32, t: Double, at p: Coordinate, accuracy: Double = .nan) -> Outcome {
        let di = Int(d)
        if t < states[di].last { return .rejected(.outOfOrder) }
        states[di].last = t
        if t > clock { clock = t }
        if options.maxAccuracy > 0 && accuracy > options.maxAccuracy { return .ignoredForAccuracy }

        let first = !states[di].hasFix
        states[di].hasFix = true
        if states[di].safeH > 0 && movedLess(states[di], p) { return .applied }

        // A box query around the fix finds every region within `safeDistance`, so the smallest
        // clearance among them (and the box itself) bounds how far the device can go unchecked.
        let box = options.safeDistance.flatMap { index.candidates(around: p, metres: $0) }
        let candidates = box ?? index.candidates(at: p)
        var safe = box == nil ? 0 : options.safeDistance ?? 0
        var changed = false
        scratch.removeAll(keepingCapacity: true)
        states[di].visits.withUnsafeBufferPointer { visits in
            var i = 0, j = 0
            while i < candidates.count || j < visits.count {
                if j == visits.count || (i < candidates.count && candidates[i] < visits[j].region) {
                    // Not inside yet: enter on distance ≤ r (or covered).
                    let r = candidates[i]
                    i += 1
                    guard index.isInside(Int(r), p) else {
                        if safe > 0 { safe = min(safe, index.clearance(Int(r), p, inside: false)) }
                        continue
                    }
                    if safe > 0 { safe = min(safe, index.clearance(Int(r), p, inside: true)) }
                    changed = true
                    visitSerial &+= 1
                    let silent = first && options.initial == .none
                    scratch.append(Visit(region: r, enteredAt: t, dwelled: false, silent: silent, serial: visitSerial))
                    if silent { continue }
                    if let dwell = options.dwell {
                        timers.schedule(at: t + dwell, Timer(device: d, region: r, serial: visitSerial))
                    }
                    emit(RegionEvent(kind: .enter, t: t, device: d, region: r,
                                     distance: index.distanceFromCenter(Int(r), p) ?? .nan))
                } else {
                    let visit = visits[j]
                    // A visit whose region is no candidate is beyond its envelope, hence beyond exit.
                    let stillCandidate = i < candidates.count && candidates[i] == visit.region
                    if stillCandidate { i += 1 }
                    j += 1
                    if stillCandidate && !index.isBeyondExit(Int(visit.region), p) {
                        if safe > 0 { safe = min(safe, index.clearance(Int(visit.region), p, inside: true)) }
                        scratch.append(visit)
                        continue
                    }
                    if stillCandidate && safe > 0 {
                        safe = min(safe, index.clearance(Int(visit.region), p, inside: false))
                    }
                    changed = true
                    emit(RegionEvent(kind: .exit, t: t, device: d, region: visit.region,
                                     distance: index.distanceFromCenter(Int(visit.region), p) ?? .nan,
                                     enteredAt: visit.enteredAt))
                }
            }
        }
        if changed { swap(&states[di].visits, &scratch) }
        states[di].anchorLat = p.latitude
        states[di].anchorLon = p.longitude
        states[di].anchorCosLat = cos(p.latitude * .pi / 180)
        states[di].safeH = safe > 0 ? GeodesicCircle.insideThreshold(safe / GeodesicCircle.maxCurvatureRadius) : 0
        return .applied
    }

    /// Whether `p` is certainly closer to the device's anchor than its safe distance: the
    /// haversine of the move against the stored threshold (no inverse trig on this path).
    @inline(__always)
    private func movedLess(_ s: DeviceState, _ p: Coordinate) -> Bool {
        var dLon = p.longitude - s.anchorLon
        if abs(dLon) > 180 { dLon -= Double(signOf: dLon, magnitudeOf: 360) }
        let a = sin((p.latitude - s.anchorLat) * (Double.pi / 360))
        let b = sin(dLon * (Double.pi / 360))
        let h = a * a + s.anchorCosLat * cos(p.latitude * .pi / 180) * (b * b)
        return h < s.safeH
    }

    /// Due time of the earliest pending timer, if any (cancelled timers may be included).
    public var nextTimerDue: Double? { timers.nextDue }

    /// Fires every timer due strictly before `t`, in time order.
    public func fireTimers(before t: Double) {
        while let (due, timer) = timers.popDue(before: t) { fire(timer, due: due) }
    }

    /// Fires every timer due at or before `t`, in time order, and moves the clock to `t`.
    public func advance(to t: Double) {
        while let (due, timer) = timers.popDue(through: t) { fire(timer, due: due) }
        if t > clock { clock = t }
    }

    /// Fires the earliest timer, if any; returns whether one was taken.
    @discardableResult
    public func fireNextTimer() -> Bool {
        guard let (due, timer) = timers.popNext() else { return false }
        fire(timer, due: due)
        return true
    }

    private func fire(_ timer: Timer, due: Double) {
        let di = Int(timer.device)
        // Timers are cancelled lazily: the visit must still be the one that armed it.
        guard let k = states[di].visits.firstIndex(where: { $0.region == timer.region }),
              states[di].visits[k].serial == timer.serial, !states[di].visits[k].dwelled
        else { return }
        states[di].visits[k].dwelled = true
        emit(RegionEvent(kind: .dwell, t: due, device: timer.device, region: timer.region,
                         enteredAt: states[di].visits[k].enteredAt))
    }

    @inline(__always)
    private func emit(_ e: RegionEvent) {
        if silenced[Int(e.region)] & (1 << e.kind.rawValue) != 0 { return }
        sink?.handle(e)
    }

    // MARK: Inspection

    /// The regions a device is inside of, in region order.
    public func visits(of device: Int32) -> [Visit] { states[Int(device)].visits }

    /// Time of the device's latest reading.
    public func lastReading(of device: Int32) -> Double { states[Int(device)].last }

    /// Records a reading's time for ordering without a fix (beacon sightings, control records).
    /// Returns `.outOfOrder` if it is older than the device's previous reading.
    public func touch(device d: Int32, t: Double) -> RejectReason? {
        if t < states[Int(d)].last { return .outOfOrder }
        states[Int(d)].last = t
        if t > clock { clock = t }
        return nil
    }
}
