import CBoxes
import CPrefetch
import GeotriggerCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerGeometry
import GeotriggerRuntime
import GeotriggerFormats

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
    /// Neighbourhood radius (metres) of the fast path. A device asks the index for the regions
    /// near it once, keeps those whose boundary lies within the neighbourhood's reach, and tests
    /// only them until it has moved that far; in between, its fixes skip every test until it has
    /// moved as far as its clearance to the nearest boundary. Each neighbourhood's reach adapts
    /// to the device's speed and the clearances around it, between 0.7 and 10 times this
    /// (`Monitor.reach(base:speed:limit:)`). nil is the plain path: every fix queries the index
    /// and tests every region there. The events are the same either way.
    public var safeDistance: Double? = 100
    /// `--expire S`: forget a device silent for this many seconds of the clock (its visits end in
    /// `exit` with `"reason":"expired"`, its timers and notification center are dropped, its
    /// memory freed); nil = never. The engine does it (`Engine`, `DeviceExpiry`).
    public var expire: Double? = nil

    public init(maxAccuracy: Double = 200, dwell: Double? = nil, initial: InitialPolicy = .enter,
                safeDistance: Double? = 100, expire: Double? = nil) {
        self.maxAccuracy = maxAccuracy
        self.dwell = dwell
        self.initial = initial
        self.safeDistance = safeDistance
        self.expire = expire
    }

    /// Whether a fix this accurate (metres) changes no state: worse than `maxAccuracy`, when
    /// there is a limit. The engine's rule, by which `replay --jobs`' reader counts too.
    @inlinable @inline(__always)
    public func ignores(accuracy: Double) -> Bool { maxAccuracy > 0 && accuracy > maxAccuracy }
}

/// The order a device's readings must come in: one older than the device's previous reading is
/// rejected (SPEC §3). The engine's rule, by which `replay --jobs`' reader routes too.
@inlinable @inline(__always)
public func isOutOfOrder(_ t: Double, after last: Double) -> Bool { t < last }

/// The per-(device, region) state machines for geographic regions, with their timers.
///
/// Feed it fixes in time order per device; it asks the `RegionIndex` for nearby regions, decides
/// each transition exactly, and hands events to `sink` in the order they happen. Its clock is the
/// largest time read; `dwell` timers fire when the clock passes them (see `fireTimers`).
public final class Monitor: TimerOwner {
    public let index: RegionIndex
    public let devices: DeviceTable
    public let options: MonitorOptions
    /// Receives every event. Held strongly: a weak reference costs an atomic load and release
    /// per event, and moves the sink's reference count to a side table where every retain takes
    /// the slow path. A sink that holds the monitor must not hold it strongly (the engine's relay
    /// holds the engine unretained).
    public var sink: (any RegionEventSink)? {
        get { sinkReference.value }
        set { sinkReference.value = newValue }
    }
    /// `sink`, called without reference counting on the per-event path.
    let sinkReference = HeldReference<any RegionEventSink>()
    /// The largest reading time seen (Unix seconds), or -∞ before the first.
    @exclusivity(unchecked) public internal(set) var clock: Double = -.infinity
    /// `clock`, read without an exclusivity check in other modules too (a direct read of a
    /// class's stored property from another module is checked at run time, whatever its
    /// attribute here): the engine reads it after every reading.
    @inlinable public var currentClock: Double { clock }

    /// One visit: the device is inside `region` since `enteredAt`. A device's visits are stored
    /// packed (`VisitList`); this is the value a visit is read as.
    public struct Visit: Sendable {
        public var region: Int32
        public var enteredAt: Double
        /// Entered silently at the device's first fix (`--initial none`).
        public var silent: Bool
        /// Whether `dwell` has been emitted for this visit.
        public internal(set) var dwelled: Bool

        init(region: Int32, enteredAt: Double, silent: Bool, dwelled: Bool = false) {
            self.region = region
            self.enteredAt = enteredAt
            self.silent = silent
            self.dwelled = dwelled
        }
    }

    /// 104 bytes, what a skipped fix reads first. Bounds kept as Floats are rounded the way that
    /// keeps them bounds (a cosine up, an angle down), so they only ever cost a skip, never
    /// change a decision.
    struct DeviceState {
        var last: Double = -.infinity
        /// Where the last evaluation was (radians, with an upper bound of its cos φ), and the
        /// central angle around it within which no decision can change; 0 = evaluate the next fix.
        /// anchorCos is −1 until the device's first fix (that counts): then it has none.
        var anchorPhi = 0.0, anchorLambda = 0.0
        var anchorCos: Float = -1
        var safeAngle: Float = 0
        /// The centre of the neighbourhood (radians, an upper bound of its cos φ) and its reach
        /// (metres); `near` holds the regions whose decision may change within that reach of it,
        /// in region order, each with the odometer reading at which it must be retested. reach 0 =
        /// none.
        var centrePhi = 0.0, centreLambda = 0.0
        var centreCos: Float = 0
        var reach: Float = 0
        /// An upper bound on the path length (metres) from where the neighbourhood was taken,
        /// through every evaluated fix since, to the last one: the sum of the bounds between
        /// successive evaluated fixes.
        var odometer = 0.0
        /// The longest reach the next neighbourhood may take: a few times the smallest clearance
        /// found in this one (`reach(base:speed:limit:)`); 0 = none yet.
        var reachLimit: Float = 0
        /// When the neighbourhood was taken, in seconds after `timeOrigin` (a Float: the device's
        /// speed since then sets the next one's reach, which decides only how much work is done).
        var centreTakenAt: Float = 0
        var near = Neighbourhood()
        /// Sorted by region.
        var visits = VisitList()
    }

    /// A dwell timer: a device's visit of a region. The visit it was armed for is the one whose
    /// entry time plus `dwell` is the timer's due time.
    @usableFromInline struct Timer {
        var device: Int32
        var region: Int32
    }

    public enum Outcome: Equatable, Sendable {
        case applied
        /// The fix's accuracy was worse than `maxAccuracy`: it moved the clock but changed no state.
        case ignoredForAccuracy
        case rejected(RejectReason)
    }

    /// Per device, by id (`DeviceStates`).
    @exclusivity(unchecked) var states = DeviceStates()
    var stateCount: Int { @inline(__always) get { states.count } }
    @exclusivity(unchecked) @usableFromInline var timers = TimerQueue<Timer>()
    /// The first fix's time: `DeviceState.centreTakenAt` counts from it.
    @exclusivity(unchecked) var timeOrigin = Double.nan
    /// Every visit's entry time, coded in 4 bytes (`VisitList.Entry.code`).
    @exclusivity(unchecked) var entryTimes = EntryTimes()
    /// Reused between fixes so building a device's new visit list does not allocate.
    @exclusivity(unchecked) var scratch = VisitList()
    /// A region of a device's neighbourhood: it was last tested at some fix, where its boundary
    /// was farther than c metres; `clearance` is c plus the odometer at that fix. By the triangle
    /// inequality its decision cannot have changed while the odometer is below `clearance`.
    ///
    /// `key` is the region shifted left by one, its low bit whether the device has a visit of it
    /// (only tests change visits, and every test of a neighbourhood region rewrites its entry),
    /// so a retest that changes nothing need not look the region up in the visit list. Keys
    /// sort as their regions do.
    struct NearRegion {
        var key: UInt32
        var clearance: Float

        /// Rounds down, so the stored clearance stays a lower bound.
        init(region: Int32, inside: Bool, clearance: Double) {
            self.key = UInt32(bitPattern: region) << 1 | (inside ? 1 : 0)
            self.clearance = .belowNonNegative(max(0, clearance))
        }

        @inline(__always) init(key: UInt32, clearance: Float) {
            self.key = key
            self.clearance = clearance
        }

        /// The region a key names.
        @inline(__always) static func region(ofKey key: UInt32) -> Int32 { Int32(bitPattern: key >> 1) }
    }

    /// An enter or exit decided during the current fix, held until the fix is done when the index
    /// keeps its regions in another order than the given one: a fix's events are reported in
    /// the given order (`givenPositions`), whatever order the regions were tested in.
    struct HeldEvent {
        var order: Int32
        var region: Int32
        var isEnter: Bool
        var distance: Double
        var enteredAt: Double
    }

    /// The index's given positions when it reordered its regions (then events are held), or nil.
    @exclusivity(unchecked) var givenPositions: [Int32]?
    /// Whether events are held until the fix is done (the index reordered its regions).
    let holdsEvents: Bool
    @exclusivity(unchecked) var held = PodList<HeldEvent>()
    /// Reused to collect a device's new neighbourhood, in region order.
    @exclusivity(unchecked) var newNear = PodList<NearRegion>()
    /// A table the event consumer reads per region (its start and entry size), prefetched for a
    /// region as soon as an event of it is decided; nil: the index's region itself is prefetched.
    @exclusivity(unchecked) package var eventTable: RegionEventTable?

    /// Starts loading what reporting an event of region `r` reads (`eventTable`).
    @inline(__always)
    func prefetchForEvent(_ r: Int32) {
        if let eventTable {
            eventTable.prefetch(r)
        } else {
            index.prefetchForEvent(r)
        }
    }

    /// Per region, a bit per event kind its `notifyOnEntry` / `notifyOnExit` turn off. As with
    /// Core Location's flags, the state is still tracked; only the event is not reported. Empty
    /// while no region silences anything (`anySilenced` false), as most sets do not.
    @exclusivity(unchecked) var silenced: [UInt8] = []
    /// Whether any region silences an event kind (most sets do not, and then no lookup is made).
    @exclusivity(unchecked) var anySilenced = false

    public init(index: RegionIndex, options: MonitorOptions = MonitorOptions(), devices: DeviceTable = DeviceTable()) {
        precondition(index.regions.count <= VisitList.maxRegions, "more than 2^30 regions")
        self.index = index
        self.options = options
        self.devices = devices
        if !index.summary.notifiesAll {
            silenced = index.regions.map(Self.silencedKinds)
            anySilenced = true
        }
        givenPositions = index.givenPositions
        holdsEvents = index.givenPositions != nil
    }

    deinit {
        states.free { state in
            state.near.free()
            state.visits.free()
        }
        scratch.free()
        entryTimes.free()
        newNear.free()
        held.free()
        batch.free()
    }

    /// The event kinds a region's `notifyOnEntry` / `notifyOnExit` turn off, a bit each.
    static func silencedKinds(_ region: Region) -> UInt8 {
        (region.notifyOnEntry ? 0 : 1 << RegionEvent.Kind.enter.rawValue) |
            (region.notifyOnExit ? 0 : 1 << RegionEvent.Kind.exit.rawValue)
    }

    // MARK: Live regions (SPEC §7)

    /// Region `r` was added to the index (`RegionIndex.append`): its flags, its given position,
    /// and the neighbourhoods that may reach it dropped, so that the next fix of each such
    /// device asks the index (and may enter it).
    public func regionAdded(_ r: Int32) {
        precondition(Int(r) < index.count)
        let kinds = Self.silencedKinds(index.regions[Int(r)])
        if kinds != 0 && !anySilenced {
            silenced = [UInt8](repeating: 0, count: Int(r))
            anySilenced = true
        }
        if anySilenced {
            precondition(Int(r) == silenced.count)
            silenced.append(kinds)
        }
        if givenPositions != nil { givenPositions = index.givenPositions }
        // Only devices whose neighbourhood, or skip distance, may reach the new region's
        // envelope lose them: their next fix asks the index again and finds it.
        let boxes = index.envelopes(ofAdded: r)
        for slot in 0..<stateCount where states[slot].reach > 0 || states[slot].safeAngle > 0 {
            let s = states[slot]
            if s.reach > 0 && Self.mayReach(boxes, phi: s.centrePhi, lambda: s.centreLambda, metres: Double(s.reach))
                || s.safeAngle > 0 && Self.mayReach(boxes, phi: s.anchorPhi, lambda: s.anchorLambda,
                                                     metres: Double(s.safeAngle) * GeodesicCircle.maxCurvatureRadius) {
                states[slot].reach = 0
                states[slot].safeAngle = 0
            }
        }
    }

    /// Whether a point (radians) within `metres` of (`phi`, `lambda`) may lie in one of `boxes`
    /// (degrees): the point's box of degrees that certainly covers `metres`, as
    /// `RegionIndex.candidates(around:metres:)` makes it, meets one of them; true wherever such a
    /// box would near a pole or the antimeridian.
    static func mayReach(_ boxes: [(minX: Double, minY: Double, maxX: Double, maxY: Double)], phi: Double, lambda: Double,
                         metres: Double) -> Bool {
        let lat = phi * (180 / Double.pi), lon = lambda * (180 / Double.pi)
        let dLat = metres / 110_000
        let poleward = abs(lat) + dLat
        guard poleward < 89 else { return true }
        let dLon = metres / (111_000 * cos(poleward * .pi / 180))
        guard lon - dLon > -180, lon + dLon < 180 else { return true }
        return boxes.contains { b in
            b.minY <= lat + dLat && b.maxY >= lat - dLat && b.minX <= lon + dLon && b.maxX >= lon - dLon
        }
    }

    /// Ends every visit of region `r` with an exit stamped `t` and `reason` (`.removed`,
    /// `.replaced`), devices in first-seen order (rank order: id order unless `--expire` reused
    /// ids, and in a `replay --jobs` job the whole run's order); their neighbourhoods, which hold
    /// `r` as visited, are dropped. Its dwell timers find no visit and fire nothing. The caller
    /// then removes `r` from the index, which makes it never inside: other devices'
    /// neighbourhoods that still hold it retest it as outside, and removing a region only moves
    /// boundaries away, so their skip distances stay lower bounds.
    public func endVisits(of r: Int32, at t: Double, reason: RegionEvent.ExitReason) {
        var visiting: [Int] = []
        for slot in 0..<stateCount where states[slot].visits.index(of: r) != nil { visiting.append(slot) }
        if visiting.count > 1 { visiting.sort { devices.rank(Int32($0)) < devices.rank(Int32($1)) } }
        for slot in visiting {
            guard let k = states[slot].visits.index(of: r) else { continue }
            let visit = states[slot].visits[k]
            states[slot].visits.remove(at: k)
            let enteredAt = entryTimes.time(visit.code)
            entryTimes.release(visit.code)
            // Its neighbourhood holds `r` as visited: taken again at its next fix.
            states[slot].reach = 0
            states[slot].safeAngle = 0
            emit(RegionEvent(kind: .exit, t: t, device: Int32(slot), region: r, distance: .nan, enteredAt: enteredAt,
                             beacon: nil, proximity: nil, reason: reason))
        }
    }


    /// The slot of a device id handed in from outside (ids come from `device(_:)`).
    @inline(__always)
    func checked(_ d: Int32) -> Int {
        precondition(d >= 0 && Int(d) < stateCount, "unknown device id \(d)")
        return Int(d)
    }

    func appendState() { states.append(DeviceState()) }

    /// The device's state slot, adding one for a new device.
    @inline(__always)
    package func device(_ name: ByteView) -> Int32 {
        let (id, isNew) = devices.intern(name)
        // A reused id (`forget`) has its slot, reset already.
        if isNew && Int(id) == stateCount { appendState() }
        prefetch(after: id)
        return id
    }

    /// Starts loading what the next readings will probably touch, so the cache misses overlap
    /// this reading's work. When devices recur in the same order (`DeviceTable.successor(of:)`),
    /// a device's data is asked for in two steps, one reading apart, the second needing what the
    /// first brought in: its state (and name), then its neighbourhood and visit lists. A hint
    /// only: nothing depends on it, and a wrong guess costs a few wasted loads. (A third step,
    /// the hot entries of the regions the next fix would probably retest, cost about 100
    /// instructions a fix on city, reading the next device's neighbourhood to find them, and
    /// saved no time on the 2-core EPYC: 20 alternating runs each of the first million city
    /// fixes, with and without, took a median 301 and 308 ms.)
    @inline(__always)
    func prefetch(after d: Int32) {
        let n1 = devices.successor(of: d)
        guard n1 >= 0 && Int(n1) < stateCount else { return }
        let n2 = devices.successor(of: n1)
        guard n2 >= 0 && Int(n2) < stateCount else { return }
        prefetchLists(Int(n2))
        let n3 = devices.successor(of: n2)
        guard n3 >= 0 && Int(n3) < stateCount else { return }
        // A state spans two or three lines.
        states.prefetchForWriting(Int(n3))
        devices.prefetchName(n3)
    }

    /// Prefetches the device's neighbourhood (its first block) and the first keys of its visit
    /// list, with no branch on their lengths: a retest scans the first and binary-searches the
    /// second.
    @inline(__always)
    func prefetchLists(_ slot: Int) {
        states[slot].near.prefetch()
        states[slot].visits.prefetchKeys()
    }

    public func device(_ name: String) -> Int32 {
        var name = name
        return name.withByteView { device($0) }
    }

    /// Applies one GPS fix. Timers due before `t` should have been fired first (`fireTimers(before:)`).
    public func fix(device d: Int32, t: Double, at p: Coordinate, accuracy: Double = .nan) -> Outcome {
        let outcome = apply(device: d, t: t, at: p, accuracy: accuracy)
        if held.count > 0 { reportHeld(d, t) }
        return outcome
    }

    @inline(__always)
    func apply(device d: Int32, t: Double, at p: Coordinate, accuracy: Double) -> Outcome {
        let slot = checked(d)
        if isOutOfOrder(t, after: states[slot].last) { return .rejected(.outOfOrder) }
        var step = 0.0
        switch begin(slot, t, p, accuracy: accuracy, step: &step) {
        case .ignored:
            return .ignoredForAccuracy
        case .skipped:
            return .applied
        case .plain(let first):
            let q = GeoPoint(p)
            evaluate(slot, d, t, q, index.candidates(at: q.coordinate), first: first, safe: nil)
        case .retest(let moved):
            let q = GeoPoint(p)
            let safe = retestNeighbourhood(slot, d, t, q, odometer: states[slot].odometer, first: false)
            setAnchor(slot, q, safe: min(safe, Double(states[slot].reach) - moved))
        case .refresh(let first):
            refresh(slot, d, t, GeoPoint(p), first: first, step: step)
        }
        return .applied
    }

    /// What a fix needs once `begin` has seen it.
    enum Start {
        /// Its accuracy is worse than `maxAccuracy`: it moved the clocks, nothing else.
        case ignored
        /// Within its device's safe distance of the last evaluated fix: nothing can change.
        case skipped
        /// The plain path (`safeDistance` nil).
        case plain(first: Bool)
        /// Within the neighbourhood (`moved`: the bound on its distance from the centre): its
        /// step is on the odometer; the regions due are retested.
        case retest(moved: Double)
        /// Beyond the neighbourhood, or the device's first fix: a new one is taken.
        case refresh(first: Bool)
    }

    /// The start of every fix, in order (`apply`, a batch's first stage): its device's clock and
    /// the stream's, its accuracy, its skip test, and which way it goes on. `step` is set to the
    /// bound on its distance from the last evaluated fix unless it is ignored or skipped. The
    /// caller has checked that it is not older than its device's last reading.
    @inline(__always)
    func begin(_ slot: Int, _ t: Double, _ p: Coordinate, accuracy: Double, step: inout Double) -> Start {
        states[slot].last = t
        if t > clock { clock = t }
        if options.ignores(accuracy: accuracy) { return .ignored }

        let first = states[slot].anchorCos < 0
        if first { states[slot].anchorCos = 0 }
        if first && timeOrigin.isNaN { timeOrigin = t }
        let phi = p.latitude * (Double.pi / 180), lambda = p.longitude * (Double.pi / 180)
        // From the last evaluated fix: whether this one may skip, else the odometer's step.
        let fromAnchor = Self.angleBound(phi, lambda, states[slot].anchorPhi, states[slot].anchorLambda,
                                         Double(states[slot].anchorCos))
        if states[slot].safeAngle > 0 && fromAnchor < Double(states[slot].safeAngle) { return .skipped }
        step = GeodesicCircle.maxCurvatureRadius * fromAnchor
        guard options.safeDistance != nil else { return .plain(first: first) }
        // Within the neighbourhood: only its regions whose clearance the move may have used up
        // can change. Beyond it: ask the index again.
        if states[slot].reach > 0 {
            let moved = GeodesicCircle.maxCurvatureRadius
                * Self.angleBound(phi, lambda, states[slot].centrePhi, states[slot].centreLambda, Double(states[slot].centreCos))
            if moved < Double(states[slot].reach) {
                states[slot].odometer += step
                return .retest(moved: moved)
            }
        }
        return .refresh(first: first)
    }

    @exclusivity(unchecked) var batch = FixBatch()

    /// An enter or exit found by a retest: the visit list edited in place (see `retestRegion`),
    /// the event reported. Out of line: about one retest in five crosses on city, and inlined, this
    /// made the compiler outline the whole retest instead.
    @inline(never)
    func cross(_ slot: Int, _ d: Int32, _ t: Double, _ r: Int32, _ p: GeoPoint, leaving: Bool, first: Bool,
                       from: inout Int) {
        prefetchForEvent(r)
        // The first visit at or after r.
        let lo = states[slot].visits.lowerBound(r, from: from)
        if leaving {
            let visit = states[slot].visits[lo]
            states[slot].visits.remove(at: lo)
            from = lo
            leave(d, t, visit, p)
        } else {
            enter(d, t, r, first: first, p) { states[slot].visits.insert($0, at: lo) }
            from = lo + 1
        }
    }

    /// Starts a visit of `r`: the visit handed to `store`, then (unless it is a silent first visit)
    /// its dwell timer and the enter event.
    @inline(__always)
    func enter(_ d: Int32, _ t: Double, _ r: Int32, first: Bool, _ p: GeoPoint,
                       store: (VisitList.Entry) -> Void) {
        let silent = first && options.initial == .none
        store(VisitList.Entry(region: r, code: entryTimes.code(t), silent: silent))
        if silent { return }
        let distance = index.reportedDistance(Int(r), p)
        if holdsEvents {
            held.append(HeldEvent(order: index.givenPosition(r), region: r, isEnter: true,
                                  distance: distance, enteredAt: t))
            return
        }
        reportEnter(d, t, r, distance: distance)
    }

    /// Arms the visit's dwell timer and reports its enter.
    @inline(__always)
    func reportEnter(_ d: Int32, _ t: Double, _ r: Int32, distance: Double) {
        if let dwell = options.dwell {
            timers.schedule(at: t + dwell, rank: devices.rank(d), Timer(device: d, region: r))
        }
        emit(RegionEvent(kind: .enter, t: t, device: d, region: r, distance: distance))
    }

    /// Reports the end of `visit` (the caller has taken it off the device's list) and gives back
    /// its entry time's code.
    @inline(__always)
    func leave(_ d: Int32, _ t: Double, _ visit: VisitList.Entry, _ p: GeoPoint) {
        let enteredAt = entryTimes.time(visit.code)
        entryTimes.release(visit.code)
        let distance = index.reportedDistance(Int(visit.region), p)
        if holdsEvents {
            held.append(HeldEvent(order: index.givenPosition(visit.region), region: visit.region,
                                  isEnter: false, distance: distance, enteredAt: enteredAt))
            return
        }
        emit(RegionEvent(kind: .exit, t: t, device: d, region: visit.region, distance: distance,
                         enteredAt: enteredAt))
    }

    /// Reports the fix's held events in the regions' given order (timers armed in that order
    /// too, so timers due together fire as they would have).
    func reportHeld(_ d: Int32, _ t: Double) {
        if held.count > 1 {
            var list = held.buffer
            list.insertionSort { $0.order < $1.order }
        }
        for k in 0..<Int(held.count) {
            let e = held[k]
            if e.isEnter {
                reportEnter(d, t, e.region, distance: e.distance)
            } else {
                emit(RegionEvent(kind: .exit, t: t, device: d, region: e.region, distance: e.distance,
                                 enteredAt: e.enteredAt))
            }
        }
        held.removeAll()
    }

    /// Tests `candidates` (ascending, every region whose envelope holds the fix) against the
    /// device's visits, deciding enters and exits in region order. A visit whose region is no
    /// candidate is beyond its envelope, hence beyond exit.
    ///
    /// - safe: nil on the plain path; otherwise an upper bound for the returned safe distance, the
    ///   smallest clearance of any candidate tested.
    /// - keepBelow: candidates whose clearance is below it are added to `newNear`.
    @discardableResult
    func evaluate(_ slot: Int, _ d: Int32, _ t: Double, _ q: GeoPoint, _ candidates: RegionCandidates,
                          first: Bool, safe limit: Double?, keepBelow: Double = 0, keepAround: GeoPoint? = nil) -> Double {
        var safe = limit ?? 0
        let tracking = limit != nil
        var changed = false
        scratch.removeAll()
        let visits = states[slot].visits
        var i = 0, j = 0
        while i < candidates.count || j < Int(visits.count) {
            if j == Int(visits.count) || (i < candidates.count && candidates[i] < visits.region(j)) {
                // Not inside yet: enter on distance ≤ r (or covered).
                let r = candidates[i]
                i += 1
                // One chord for the decision and the clearance; the plain path needs no clearance.
                let (inside, c) = tracking ? index.test(Int(r), q, visited: false) : (index.isInside(Int(r), q), 0)
                if inside { prefetchForEvent(r) }
                if tracking {
                    safe = min(safe, c)
                    if keeps(r, inside, c, keepBelow, keepAround) {
                        newNear.append(NearRegion(region: r, inside: inside, clearance: c))
                    }
                }
                guard inside else { continue }
                changed = true
                enter(d, t, r, first: first, q) { scratch.append($0) }
            } else {
                let visit = visits[j]
                let isCandidate = i < candidates.count && candidates[i] == visit.region
                if isCandidate { i += 1 }
                j += 1
                let (stays, c) = !isCandidate ? (false, 0)
                    : tracking ? index.test(Int(visit.region), q, visited: true)
                    : (!index.isBeyondExit(Int(visit.region), q), 0)
                if !stays { prefetchForEvent(visit.region) }
                if tracking && isCandidate {
                    safe = min(safe, c)
                    if keeps(visit.region, stays, c, keepBelow, keepAround) {
                        newNear.append(NearRegion(region: visit.region, inside: stays, clearance: c))
                    }
                }
                if stays {
                    scratch.append(visit)
                    continue
                }
                changed = true
                leave(d, t, visit, q)
            }
        }
        if changed { states[slot].visits.assign(scratch) }
        if !tracking {
            states[slot].safeAngle = 0
        }
        return safe
    }

    /// Due time of the earliest pending timer, if any (cancelled timers may be included).
    public var nextTimerDue: Double? { timers.nextDue }

    /// Due time of the earliest pending timer, +∞ if none: one load, inlined into the engine's
    /// check for every reading.
    @inlinable public var earliestTimerDue: Double { timers.earliestDue }

    /// Fires every timer due strictly before `t`, in time order.
    public func fireTimers(before t: Double) {
        while let (due, rank, timer) = timers.popDue(before: t) { fire(timer, due: due, rank: rank) }
    }

    /// Fires every timer due at or before `t`, in time order, and moves the clock to `t`.
    public func advance(to t: Double) {
        while let (due, rank, timer) = timers.popDue(through: t) { fire(timer, due: due, rank: rank) }
        if t > clock { clock = t }
    }

    /// Fires the earliest timer, if any; returns whether one was taken.
    @discardableResult
    public func fireNextTimer() -> Bool {
        guard let (due, rank, timer) = timers.popNext() else { return false }
        fire(timer, due: due, rank: rank)
        return true
    }

    func fire(_ timer: Timer, due: Double, rank: UInt64) {
        let slot = Int(timer.device)
        // Armed for a device since forgotten (`--expire`): its id may be another device's now,
        // with another rank.
        guard rank == devices.rank(timer.device) else { return }
        // Timers are cancelled lazily: the visit must still be the one that armed it. A visit
        // that ended and began again at the same instant is armed twice for the same time; the
        // first of its two timers reports it, the second finds it dwelled.
        let visits = states[slot].visits
        guard let k = visits.index(of: timer.region), !visits[k].dwelled else { return }
        let enteredAt = entryTimes.time(visits[k].code)
        guard enteredAt + (options.dwell ?? .nan) == due else { return }
        visits.setDwelled(k)
        emit(RegionEvent(kind: .dwell, t: due, device: timer.device, region: timer.region, enteredAt: enteredAt))
    }

    @inline(__always)
    func emit(_ e: RegionEvent) {
        if anySilenced && silenced[Int(e.region)] & (1 << e.kind.rawValue) != 0 { return }
        sinkReference.call { $0.handle(e) }
    }

    // MARK: Inspection

    /// The regions a device is inside of, in the order the regions were given to the index.
    public func visits(of device: Int32) -> [Visit] {
        let list = states[checked(device)].visits
        let visits = (0..<Int(list.count)).map { i in
            let v = list[i]
            return Visit(region: v.region, enteredAt: entryTimes.time(v.code), silent: v.silent, dwelled: v.dwelled)
        }
        guard let givenPositions else { return visits }
        return visits.sorted { givenPositions[Int($0.region)] < givenPositions[Int($1.region)] }
    }

    /// Entry times of current visits held whole rather than as offsets (`EntryTimes`).
    var heldEntryTimes: Int { entryTimes.slotsInUse }

    /// Time of the device's latest reading.
    public func lastReading(of device: Int32) -> Double { states[checked(device)].last }

    // MARK: Expiry

    /// Whether events of this kind are reported for region `r` (its `notifyOnEntry`/`notifyOnExit`).
    public func isSilenced(_ kind: RegionEvent.Kind, region r: Int32) -> Bool {
        anySilenced && silenced[Int(r)] & (1 << kind.rawValue) != 0
    }

    /// Forgets a device (`--expire`): hands each of its visits (region, entry time) to `visit`,
    /// in region-id order, then resets its slot to a new device's and frees its lists. The
    /// caller reports the exits and frees the id (`DeviceTable.remove`); the device's dwell timers
    /// stay in the heap and are dropped when they come due (`fire` compares ranks).
    public func forget(device d: Int32, _ visit: (_ region: Int32, _ enteredAt: Double) -> Void) {
        let slot = checked(d)
        let visits = states[slot].visits
        for i in 0..<Int(visits.count) {
            let v = visits[i]
            visit(v.region, entryTimes.time(v.code))
            entryTimes.release(v.code)
        }
        states[slot].near.free()
        states[slot].visits.free()
        states[slot] = DeviceState()
    }

    /// Records a reading's time for ordering without a fix (beacon sightings, control records).
    /// Returns `.outOfOrder` if it is older than the device's previous reading.
    public func touch(device d: Int32, t: Double) -> RejectReason? {
        let slot = checked(d)
        if isOutOfOrder(t, after: states[slot].last) { return .outOfOrder }
        states[slot].last = t
        if t > clock { clock = t }
        return nil
    }
}


