import CBoxes
import CPrefetch
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
    /// Neighbourhood radius (metres) of the fast path. A device asks the index for the regions
    /// near it once, keeps those whose boundary lies within the neighbourhood's reach, and tests
    /// only them until it has moved that far; in between, its fixes skip every test until it has
    /// moved as far as its clearance to the nearest boundary. Each neighbourhood's reach adapts
    /// to the device's speed and the clearances around it, between 0.7 and 10 times this
    /// (`Monitor.reach(base:speed:limit:)`). nil is the plain path: every fix queries the index
    /// and tests every region there. The events are the same either way.
    public var safeDistance: Double? = 100

    public init(maxAccuracy: Double = 200, dwell: Double? = nil, initial: InitialPolicy = .enter,
                safeDistance: Double? = 100) {
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
    /// Receives every event. Held strongly: a weak reference costs an atomic load and release
    /// per event, and moves the sink's reference count to a side table where every retain takes
    /// the slow path. A sink that holds the monitor must not hold it strongly (the engine's relay
    /// holds the engine unretained).
    public var sink: (any RegionEventSink)? {
        get { sinkReference.value }
        set { sinkReference.value = newValue }
    }
    /// `sink`, called without reference counting on the per-event path.
    private let sinkReference = HeldReference<any RegionEventSink>()
    /// The largest reading time seen (Unix seconds), or -∞ before the first.
    @exclusivity(unchecked) public private(set) var clock: Double = -.infinity
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
        var hoodPhi = 0.0, hoodLambda = 0.0
        var hoodCos: Float = 0
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
        var hoodT: Float = 0
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

    /// Per device, by id: a buffer owned here rather than an array, so that reading or editing one
    /// field of a device's state never copies the whole state.
    @exclusivity(unchecked) private var states: UnsafeMutablePointer<DeviceState>
    @exclusivity(unchecked) private var stateCount = 0
    @exclusivity(unchecked) private var stateCapacity = 0
    @exclusivity(unchecked) @usableFromInline var timers = TimerQueue<Timer>()
    /// The first fix's time: `DeviceState.hoodT` counts from it.
    @exclusivity(unchecked) private var timeOrigin = Double.nan
    /// Every visit's entry time, coded in 4 bytes (`VisitList.Entry.code`).
    @exclusivity(unchecked) private var entryTimes = EntryTimes()
    /// Reused between fixes so building a device's new visit list does not allocate.
    @exclusivity(unchecked) private var scratch = VisitList()
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
    private let givenPositions: [Int32]?
    /// Whether events are held until the fix is done (the index reordered its regions).
    private let holdsEvents: Bool
    @exclusivity(unchecked) private var held = PodList<HeldEvent>()
    /// Reused to collect a device's new neighbourhood, in region order.
    @exclusivity(unchecked) private var hood = PodList<NearRegion>()
    /// A table the event consumer reads per region (its start and entry size), prefetched for a
    /// region as soon as an event of it is decided; nil: the index's region itself is prefetched.
    public var eventTable: (base: UnsafeRawPointer, stride: Int)? {
        get { eventTableBase.map { ($0, eventTableStride) } }
        set {
            eventTableBase = newValue?.base
            eventTableStride = newValue?.stride ?? 0
        }
    }
    @exclusivity(unchecked) private var eventTableBase: UnsafeRawPointer?
    @exclusivity(unchecked) private var eventTableStride = 0

    /// Starts loading what reporting an event of region `r` reads (`eventTable`).
    @inline(__always)
    private func prefetchForEvent(_ r: Int32) {
        if let base = eventTableBase {
            geotrigger_prefetch(base + Int(r) &* eventTableStride)
        } else {
            index.prefetchForEvent(r)
        }
    }

    /// Per region, a bit per event kind its `notifyOnEntry` / `notifyOnExit` turn off. As with
    /// Core Location's flags, the state is still tracked; only the event is not reported.
    private let silenced: [UInt8]
    /// Whether any region silences an event kind (most sets do not, and then no lookup is made).
    private let anySilenced: Bool

    public init(index: RegionIndex, options: MonitorOptions = MonitorOptions(), devices: DeviceTable = DeviceTable()) {
        precondition(index.regions.count <= VisitList.maxRegions, "more than 2^30 regions")
        self.index = index
        self.options = options
        self.devices = devices
        states = Self.allocateStates(0)
        silenced = index.regions.map { region in
            (region.notifyOnEntry ? 0 : 1 << RegionEvent.Kind.enter.rawValue) |
                (region.notifyOnExit ? 0 : 1 << RegionEvent.Kind.exit.rawValue)
        }
        anySilenced = silenced.contains { $0 != 0 }
        givenPositions = index.givenPositions
        holdsEvents = index.givenPositions != nil
    }

    deinit {
        for i in 0..<stateCount {
            states[i].near.free()
            states[i].visits.free()
        }
        states.deinitialize(count: stateCount)
        UnsafeMutableRawPointer(states).deallocate()
        scratch.free()
        entryTimes.free()
        hood.free()
        held.free()
        batch.free()
    }

    private static func allocateStates(_ capacity: Int) -> UnsafeMutablePointer<DeviceState> {
        UnsafeMutableRawPointer.allocate(byteCount: max(1, capacity) * MemoryLayout<DeviceState>.stride, alignment: 64)
            .bindMemory(to: DeviceState.self, capacity: capacity)
    }

    /// The slot of a device id handed in from outside (ids come from `device(_:)`).
    @inline(__always)
    private func checked(_ d: Int32) -> Int {
        precondition(d >= 0 && Int(d) < stateCount, "unknown device id \(d)")
        return Int(d)
    }

    private func appendState() {
        if stateCount == stateCapacity {
            let capacity = max(64, stateCapacity + stateCapacity / 2)
            let grown = Self.allocateStates(capacity)
            grown.moveInitialize(from: states, count: stateCount)
            UnsafeMutableRawPointer(states).deallocate()
            states = grown
            stateCapacity = capacity
        }
        (states + stateCount).initialize(to: DeviceState())
        stateCount += 1
    }

    /// The device's state slot, adding one for a new device.
    @inline(__always)
    public func device(_ name: UnsafeRawBufferPointer) -> Int32 {
        let (id, isNew) = devices.intern(name)
        if isNew { appendState() }
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
    private func prefetch(after d: Int32) {
        let n1 = devices.successor(of: d)
        guard n1 >= 0 && Int(n1) < stateCount else { return }
        let n2 = devices.successor(of: n1)
        guard n2 >= 0 && Int(n2) < stateCount else { return }
        prefetchLists(Int(n2))
        let n3 = devices.successor(of: n2)
        guard n3 >= 0 && Int(n3) < stateCount else { return }
        // A state spans two or three lines.
        let later = UnsafeRawPointer(states + Int(n3))
        geotrigger_prefetch_write(later)
        geotrigger_prefetch_write(later + 64)
        geotrigger_prefetch_write(later + (MemoryLayout<DeviceState>.stride - 1))
        devices.prefetchName(n3)
    }

    /// Prefetches the hot entries of the first four regions in `due` (bits of block `b` of
    /// `near`), with no branch on how many there are: where fewer are due, the block's last
    /// entry is asked for again.
    @inline(__always)
    private func prefetchRegions(_ near: Neighbourhood, block b: Int, _ due: UInt32) {
        var m = due
        for _ in 0..<4 {
            index.prefetch(near.dueRegion(block: b, m))
            m &= m &- 1
        }
    }

    /// Prefetches the device's neighbourhood (its first block) and the first keys of its visit
    /// list, with no branch on their lengths: a retest scans the first and binary-searches the
    /// second.
    @inline(__always)
    private func prefetchLists(_ di: Int) {
        states[di].near.prefetch()
        states[di].visits.prefetchKeys()
    }

    public func device(_ name: String) -> Int32 {
        var name = name
        return name.withUTF8 { device(UnsafeRawBufferPointer($0)) }
    }

    /// Applies one GPS fix. Timers due before `t` should have been fired first (`fireTimers(before:)`).
    public func fix(device d: Int32, t: Double, at p: Coordinate, accuracy: Double = .nan) -> Outcome {
        let outcome = apply(device: d, t: t, at: p, accuracy: accuracy)
        if held.count > 0 { reportHeld(d, t) }
        return outcome
    }

    @inline(__always)
    private func apply(device d: Int32, t: Double, at p: Coordinate, accuracy: Double) -> Outcome {
        let di = checked(d)
        if t < states[di].last { return .rejected(.outOfOrder) }
        var step = 0.0
        switch begin(di, t, p, accuracy: accuracy, step: &step) {
        case .ignored:
            return .ignoredForAccuracy
        case .skipped:
            return .applied
        case .plain(let first):
            let q = GeoPoint(p)
            evaluate(di, d, t, q, index.candidates(at: q.coordinate), first: first, safe: nil)
        case .retest(let moved):
            let q = GeoPoint(p)
            let safe = retestNeighbourhood(di, d, t, q, odometer: states[di].odometer, first: false)
            setAnchor(di, q, safe: min(safe, Double(states[di].reach) - moved))
        case .refresh(let first):
            refresh(di, d, t, GeoPoint(p), first: first, step: step)
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
    private func begin(_ di: Int, _ t: Double, _ p: Coordinate, accuracy: Double, step: inout Double) -> Start {
        states[di].last = t
        if t > clock { clock = t }
        if options.maxAccuracy > 0 && accuracy > options.maxAccuracy { return .ignored }

        let first = states[di].anchorCos < 0
        if first { states[di].anchorCos = 0 }
        if first && timeOrigin.isNaN { timeOrigin = t }
        let phi = p.latitude * (Double.pi / 180), lambda = p.longitude * (Double.pi / 180)
        // From the last evaluated fix: whether this one may skip, else the odometer's step.
        let fromAnchor = Self.angleBound(phi, lambda, states[di].anchorPhi, states[di].anchorLambda,
                                         Double(states[di].anchorCos))
        if states[di].safeAngle > 0 && fromAnchor < Double(states[di].safeAngle) { return .skipped }
        step = GeodesicCircle.maxCurvatureRadius * fromAnchor
        guard options.safeDistance != nil else { return .plain(first: first) }
        // Within the neighbourhood: only its regions whose clearance the move may have used up
        // can change. Beyond it: ask the index again.
        if states[di].reach > 0 {
            let moved = GeodesicCircle.maxCurvatureRadius
                * Self.angleBound(phi, lambda, states[di].hoodPhi, states[di].hoodLambda, Double(states[di].hoodCos))
            if moved < Double(states[di].reach) {
                states[di].odometer += step
                return .retest(moved: moved)
            }
        }
        return .refresh(first: first)
    }

    /// A fix beyond its device's neighbourhood (or its first): the index is asked for the
    /// regions around a new centre, every candidate is tested, and the new neighbourhood keeps
    /// those whose boundary may come within its reach. `step`: the bound on the distance from
    /// the last evaluated fix.
    private func refresh(_ di: Int, _ d: Int32, _ t: Double, _ q: GeoPoint, first: Bool, step: Double) {
        let plan = refreshPlan(di, t, q, step: step)
        let box = index.candidates(around: plan.centre.point.coordinate, metres: plan.reach)
        refresh(di, d, t, q, first: first, plan, candidates: box)
    }

    /// The new neighbourhood's reach and centre.
    struct RefreshPlan {
        var reach: Double
        var centre: (point: GeoPoint, phi: Double, lambda: Double, offset: Double)
    }

    /// The reach and centre of a fix's new neighbourhood (`refresh`).
    @inline(__always)
    private func refreshPlan(_ di: Int, _ t: Double, _ q: GeoPoint, step: Double) -> RefreshPlan {
        let base = options.safeDistance ?? 0
        let phi = q.coordinate.latitude * (Double.pi / 180), lambda = q.coordinate.longitude * (Double.pi / 180)
        var speed = 0.0  // metres per second since the neighbourhood was taken, once beyond it
        var heading: (north: Double, east: Double)? = nil  // from the last neighbourhood's centre
        if states[di].reach > 0 {
            let elapsed = t - timeOrigin - Double(states[di].hoodT)
            if elapsed > 0 { speed = (states[di].odometer + step) / elapsed }
            var dLambda = lambda - states[di].hoodLambda
            if abs(dLambda) > Double.pi { dLambda -= Double(signOf: dLambda, magnitudeOf: 2 * Double.pi) }
            heading = (phi - states[di].hoodPhi, dLambda * q.cosLatitude)
        }
        let reach = Self.reach(base: base, speed: speed, limit: states[di].reachLimit)
        // The new neighbourhood's centre: ahead of the fix along the way it came, so that a
        // device going on the same way crosses more of it before it must ask again.
        return RefreshPlan(reach: reach, centre: Self.centre(ahead: q, heading: heading, reach: reach))
    }

    /// `refresh` with its plan made and the index's answer for it (`candidates(around:)`).
    private func refresh(_ di: Int, _ d: Int32, _ t: Double, _ q: GeoPoint, first: Bool, _ plan: RefreshPlan,
                         candidates: UnsafeBufferPointer<Int32>?) {
        let reach = plan.reach, centre = plan.centre
        guard let box = candidates else {
            // Near a pole or the antimeridian: the plain path.
            states[di].reach = 0
            states[di].safeAngle = 0
            evaluate(di, d, t, q, index.candidates(at: q.coordinate), first: first, safe: nil)
            return
        }
        // The polygon tests are of the fix, not of the query box's centre.
        if centre.offset > 0 { index.setQueryPoint(q.coordinate) }
        hood.removeAll()
        index.warm(box)
        let safe = evaluate(di, d, t, q, box, first: first, safe: reach, keepBelow: reach,
                            keepAround: centre.offset > 0 ? centre.point : nil)
        states[di].near.assign(UnsafeBufferPointer(hood.buffer))
        states[di].hoodPhi = centre.phi
        states[di].hoodLambda = centre.lambda
        states[di].hoodCos = Self.cosineBound(centre.point.cosLatitude)
        states[di].reach = Float(reach)
        states[di].reachLimit = max(1, Self.reachClearances * Float(safe))
        states[di].hoodT = Float(t - timeOrigin)
        states[di].odometer = 0
        setAnchor(di, q, safe: min(safe, reach - centre.offset))
    }

    // MARK: Batches

    /// Fixes taken in batches of distinct devices (`batchAppend`, `applyBatch`), each stage over
    /// the whole batch before the next, and each stage asking for the lines the next one reads:
    /// the devices' states as they join, their neighbourhoods when the skip tests are done, the
    /// regions due when the positions are, the visit lists and events' lines of the crossings.
    /// One fix at a time, a fix's chain of dependent loads (its state, its neighbourhood, its
    /// regions' lines, its visits) is longer than the processor can look ahead and each load
    /// waits in turn; over a batch of 32 they are asked for together, and come in while other
    /// work is done. Decisions and events are the same as one fix at a time: the devices are
    /// distinct, so no stage reads what another fix of the batch writes, and everything that
    /// reaches the sink happens in the last stage, in the fixes' order.
    struct FixBatch {
        static let capacity = 32
        var count = 0
        /// Bit d mod 256 set for each device d in the batch: a device whose bit is clear is not in
        /// it (feeds number devices in turn, so the 32 of a batch rarely share a bit); a set bit
        /// means the devices are compared.
        let seen: UnsafeMutablePointer<UInt64> = {
            let words = UnsafeMutablePointer<UInt64>.allocate(capacity: 4)
            words.initialize(repeating: 0, count: 4)
            return words
        }()
        let devices = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
        let times = UnsafeMutablePointer<Double>.allocate(capacity: capacity)
        let coordinates = UnsafeMutablePointer<Coordinate>.allocate(capacity: capacity)
        let accuracies = UnsafeMutablePointer<Double>.allocate(capacity: capacity)
        /// Per fix, what the first stage made of it (`Stage`).
        let stages = UnsafeMutablePointer<Stage>.allocate(capacity: capacity)
        /// Per fix: its position (retests and refreshes), its step from the last evaluated fix,
        /// for a retest its distance bound from the neighbourhood's centre, then its safe
        /// distance (the smallest clearance among its regions not due, less the odometer).
        let points = UnsafeMutablePointer<GeoPoint>.allocate(capacity: capacity)
        let steps = UnsafeMutablePointer<Double>.allocate(capacity: capacity)
        let moved = UnsafeMutablePointer<Double>.allocate(capacity: capacity)
        let safe = UnsafeMutablePointer<Double>.allocate(capacity: capacity)
        /// The retests' due entries, fix by fix: the fix in the high half, the entry of its
        /// device's neighbourhood in the low.
        var due = PodList<UInt64>()
        /// The crossings the retests found, fix by fix (fix k's from `crossingBounds[k]` up to
        /// `crossingBounds[k + 1]`), each an entry of the device's neighbourhood shifted left by
        /// one, the low bit set when the device leaves.
        var crossings = PodList<Int32>()
        let crossingBounds = UnsafeMutablePointer<Int32>.allocate(capacity: capacity + 1)
        /// The fixes each later stage works on, in batch order, listed without a branch as the
        /// stage before decides them (a loop over all fixes that skipped the others branched on
        /// each fix's stage, which no predictor can learn): those needing a position, the
        /// retests, the refreshes, and those with events or refreshes in the last stage.
        let positioned = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        let retests = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        let refreshes = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        let finals = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        /// Per refresh: its plan, and where its candidates lie in `candidates` (start -1: the
        /// index gave none, near a pole or the antimeridian).
        let plans = UnsafeMutablePointer<RefreshPlan>.allocate(capacity: capacity)
        let candidateStarts = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
        let candidateCounts = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
        var candidates = PodList<Int32>()

        enum Stage: UInt8 {
            /// Ignored for its accuracy, or within its device's safe distance: nothing more to do.
            case done
            /// Within the neighbourhood: retest what is due.
            case retest
            /// Beyond the neighbourhood, the device's first fix, or the plain path.
            case refresh
            case firstRefresh
            case plain
            case firstPlain
        }

        mutating func free() {
            devices.deallocate(); seen.deallocate(); times.deallocate(); coordinates.deallocate(); accuracies.deallocate()
            stages.deallocate(); points.deallocate(); steps.deallocate(); moved.deallocate(); safe.deallocate()
            crossingBounds.deallocate()
            positioned.deallocate(); retests.deallocate(); refreshes.deallocate(); finals.deallocate()
            plans.deallocate(); candidateStarts.deallocate(); candidateCounts.deallocate()
            due.free()
            crossings.free()
            candidates.free()
        }
    }

    @exclusivity(unchecked) private var batch = FixBatch()

    /// Whether fixes may go through `batchAppend` and `applyBatch`: with dwell timers (which
    /// fire between readings) or polygons (tested at the index's one query point) they may not.
    /// An engine adds its own conditions (`Engine.batchesFixes`).
    public var batchesFixes: Bool { options.dwell == nil && !index.hasPolygons }

    /// Fixes waiting in the batch.
    public var batchCount: Int { batch.count }

    /// Adds a fix to the batch, or returns false when it cannot join it: the batch is full, it
    /// holds the device already, or the fix is older than its device's last reading (then
    /// apply the batch, and this fix with `fix`, which rejects it); whether the batch holds the
    /// device is found from its filter (`FixBatch.seen`), and only when that cannot tell, by
    /// comparing its devices, four at a time. Nothing is decided here; the device's state is
    /// asked for.
    @inline(__always)
    public func batchAppend(device d: Int32, t: Double, at p: Coordinate, accuracy: Double) -> Bool {
        let di = checked(d)
        let k = batch.count
        let bit = UInt64(1) << UInt64(d & 63), word = Int(d >> 6) & 3
        guard k < FixBatch.capacity, t >= states[di].last,
              batch.seen[word] & bit == 0 || geotrigger_contains_i32(batch.devices, Int32(k), d) == 0 else {
            return false
        }
        batch.seen[word] |= bit
        batch.devices[k] = d
        batch.times[k] = t
        batch.coordinates[k] = p
        batch.accuracies[k] = accuracy
        batch.count = k + 1
        // The state's second line (the first was just read); the lists come in stage 1.
        geotrigger_prefetch_write(UnsafeRawPointer(states + di) + 64)
        return true
    }

    /// Applies the batch: every fix as `fix` would, its events in the same order. Returns how
    /// many were ignored for their accuracy (none is rejected: `batchAppend` keeps those out).
    public func applyBatch() -> Int {
        let n = batch.count
        guard n > 0 else { return 0 }
        batch.count = 0
        batch.seen.update(repeating: 0, count: 4)
        var ignored = 0
        var positioned = 0, retests = 0, refreshes = 0
        // Stage 1: clocks, accuracy, skip tests; retests add their step to the odometer, and
        // their neighbourhoods are asked for.
        for k in 0..<n {
            let di = Int(batch.devices[k])
            switch begin(di, batch.times[k], batch.coordinates[k], accuracy: batch.accuracies[k], step: &batch.steps[k]) {
            case .ignored:
                batch.stages[k] = .done
                ignored += 1
            case .skipped:
                batch.stages[k] = .done
            case .plain(let first):
                batch.stages[k] = first ? .firstPlain : .plain
            case .retest(let moved):
                batch.moved[k] = moved
                batch.stages[k] = .retest
                states[di].near.prefetch()
            case .refresh(let first):
                batch.stages[k] = first ? .firstRefresh : .refresh
            }
            let stage = batch.stages[k]
            batch.positioned[positioned] = UInt8(k)
            positioned &+= stage != .done ? 1 : 0
            batch.retests[retests] = UInt8(k)
            retests &+= stage == .retest ? 1 : 0
            batch.refreshes[refreshes] = UInt8(k)
            refreshes &+= stage == .refresh || stage == .firstRefresh ? 1 : 0
        }
        // Stage 2: the positions of the fixes that need one.
        for j in 0..<positioned {
            let k = Int(batch.positioned[j])
            batch.points[k] = GeoPoint(batch.coordinates[k])
        }
        // Stage 3: the retests' due entries, their regions' lines asked for; then the tests,
        // each entry rewritten and each change of decision kept for the last stage.
        batch.due.removeAll()
        for j in 0..<retests {
            let k = Int(batch.retests[j])
            let di = Int(batch.devices[k])
            let near = states[di].near
            let odometer = states[di].odometer
            // For a Float c, c ≤ odometer exactly when c ≤ the largest Float not above it.
            let limit = Float.belowNonNegative(odometer)
            // The smallest clearance not due: those regions keep their decision until then.
            var rest = Float.infinity
            for b in 0..<near.blocks {
                let entries = UInt64(k) << 32 | UInt64(16 * b)
                batch.due.appendBits(near.due(block: b, limit: limit, rest: &rest)) { entries | UInt64($0) }
            }
            batch.safe[k] = Double(rest) - odometer
        }
        // The due regions' lines, asked for in one loop over the batch's entries.
        for e in 0..<Int(batch.due.count) {
            let entry = batch.due[e]
            let near = states[Int(batch.devices[Int(entry >> 32)])].near
            index.prefetch(NearRegion.region(ofKey: near.keys[Int(entry & 0xFFFF_FFFF)]))
        }
        batch.crossings.removeAll()
        // Each fix's crossings counted, then summed into ends: no branch on how many fixes lie
        // between one due entry and the next.
        batch.crossingBounds.update(repeating: 0, count: n + 1)
        for e in 0..<Int(batch.due.count) {
            let entry = batch.due[e]
            let k = Int(entry >> 32), i = Int(entry & 0xFFFF_FFFF)
            let di = Int(batch.devices[k])
            let e = retestEntry(states[di].near, i, batch.points[k], odometer: states[di].odometer)
            batch.safe[k] = min(batch.safe[k], e.clearance)
            if e.inside != e.visited {
                batch.crossings.append(Int32(i) << 1 | (e.visited ? 1 : 0))
                batch.crossingBounds[k + 1] += 1
                states[di].visits.prefetchAll()
                prefetchForEvent(e.region)
            }
        }
        for k in 0..<n { batch.crossingBounds[k + 1] += batch.crossingBounds[k] }
        for j in 0..<retests {
            let k = Int(batch.retests[j])
            let di = Int(batch.devices[k])
            setAnchor(di, batch.points[k], safe: min(batch.safe[k], Double(states[di].reach) - batch.moved[k]))
        }
        // The refreshes' queries, their candidates' lines asked for.
        batch.candidates.removeAll()
        for j in 0..<refreshes {
            let k = Int(batch.refreshes[j])
            let di = Int(batch.devices[k]), q = batch.points[k]
            let plan = refreshPlan(di, batch.times[k], q, step: batch.steps[k])
            batch.plans[k] = plan
            guard let box = index.candidates(around: plan.centre.point.coordinate, metres: plan.reach) else {
                batch.candidateStarts[k] = -1
                continue
            }
            batch.candidateStarts[k] = batch.candidates.count
            batch.candidateCounts[k] = Int32(box.count)
            batch.candidates.append(contentsOf: box)
            index.warm(box)
        }
        // Stage 4, in the fixes' order: crossings' events, refreshes.
        var finals = 0
        for k in 0..<n {
            let stage = batch.stages[k].rawValue
            let crossed = batch.crossingBounds[k + 1] != batch.crossingBounds[k]
            batch.finals[finals] = UInt8(k)
            finals &+= (stage >= FixBatch.Stage.refresh.rawValue ? 1 : 0) | (crossed ? 1 : 0)
        }
        for j in 0..<finals {
            let k = Int(batch.finals[j])
            let start = batch.crossingBounds[k], end = batch.crossingBounds[k + 1]
            let stage = batch.stages[k]
            let d = batch.devices[k], di = Int(d), t = batch.times[k], q = batch.points[k]
            switch stage {
            case .retest:
                let near = states[di].near
                var from = 0
                for c in start..<end {
                    let crossing = batch.crossings[Int(c)]
                    let r = NearRegion.region(ofKey: near.keys[Int(crossing >> 1)])
                    cross(di, d, t, r, q, leaving: crossing & 1 != 0, first: false, from: &from)
                }
            case .plain, .firstPlain:
                evaluate(di, d, t, q, index.candidates(at: q.coordinate), first: stage == .firstPlain, safe: nil)
            case .refresh, .firstRefresh:
                let from = batch.candidateStarts[k]
                let box = from < 0 ? nil : UnsafeBufferPointer(start: batch.candidates.base.map { $0 + Int(from) },
                                                               count: Int(batch.candidateCounts[k]))
                refresh(di, d, t, q, first: stage == .firstRefresh, batch.plans[k], candidates: box)
            case .done:
                break
            }
            if held.count > 0 { reportHeld(d, t) }
        }
        return ignored
    }

    /// How far ahead of the fix a neighbourhood is centred, as a fraction of its reach. Every
    /// region whose boundary comes within the reach of the centre is kept, so the ball around
    /// the centre holds no other boundary and the fix lies inside it; a device that goes on the
    /// way it came then crosses 1.8 reaches of it rather than one. On the city scenario's
    /// walkers and drivers (headings wandering by up to 0.3 rad a second) a simulation gives
    /// 32 % (walkers) and 54 % (drivers) more fixes per neighbourhood than a centre at the fix.
    static let lookAhead = 0.8

    /// The centre of a new neighbourhood of `reach` metres for the fix `q`: `lookAhead` reaches
    /// ahead along `heading` (north and east, any scale), or the fix itself without one. `offset`
    /// is an upper bound on the geodesic distance from the fix to the centre (0 for the fix
    /// itself); a centre that would be farther than 0.9 reaches by that bound, or near a pole or
    /// the antimeridian, is not taken.
    @inline(__always)
    static func centre(ahead q: GeoPoint, heading: (north: Double, east: Double)?, reach: Double)
        -> (point: GeoPoint, phi: Double, lambda: Double, offset: Double)
    {
        let phi = q.coordinate.latitude * (Double.pi / 180), lambda = q.coordinate.longitude * (Double.pi / 180)
        let here = (point: q, phi: phi, lambda: lambda, offset: 0.0)
        guard let heading else { return here }
        let norm = (heading.north * heading.north + heading.east * heading.east).squareRoot()
        guard norm > 0, norm.isFinite, q.cosLatitude > 0.02 else { return here }
        // Radians along the sphere of the Earth's mean radius: only roughly `lookAhead`, which
        // the bound below then measures.
        let angle = lookAhead * reach / 6_371_000
        let cPhi = phi + angle * heading.north / norm
        let cLambda = lambda + angle * heading.east / (norm * q.cosLatitude)
        let latitude = cPhi * (180 / Double.pi), longitude = cLambda * (180 / Double.pi)
        guard abs(latitude) < 89, abs(longitude) < 179.9 else { return here }
        let point = GeoPoint(Coordinate(latitude: latitude, longitude: longitude))
        let offset = GeodesicCircle.maxCurvatureRadius * angleBound(cPhi, cLambda, phi, lambda, cosineBoundDouble(q.cosLatitude))
        guard offset <= 0.9 * reach else { return here }
        return (point, cPhi, cLambda, offset)
    }

    /// `cosineBound` as a Double (a bound on cos φ, rounded up as stored).
    @inline(__always)
    static func cosineBoundDouble(_ c: Double) -> Double { Double(cosineBound(c)) }

    /// The reach (metres) of a device's next neighbourhood. It bounds how far the device may
    /// travel before the index is asked again, and how far a fix may skip its tests (never
    /// beyond the neighbourhood's edge). Where regions are large and sparse (world: circles of
    /// 1–5 km, vehicles at 20–30 m/s) a fixed 100 m sent a device back to the index every four
    /// fixes; where they are small and crowded (city: 46 candidates within 100 m) a longer reach
    /// only lengthens the lists it retests. So the reach is the distance the device covered in
    /// `reachSeconds` at its speed since the last neighbourhood, at most `reachClearances` times
    /// the smallest clearance found there (`limit`, 0 = none yet), kept within 0.7 to 10 times
    /// `base` (`safeDistance`), and rounded to a Float (as it is stored). It decides only how
    /// much work is done: decisions, and so events, are the same for any reach.
    @inline(__always)
    static func reach(base: Double, speed: Double, limit: Float) -> Double {
        let wanted = limit > 0 ? min(reachSeconds * speed, Double(limit)) : reachSeconds * speed
        return Double(Float(min(max(wanted, 0.7 * base), 10 * base)))
    }

    static let reachSeconds = 40.0
    static let reachClearances: Float = 4

    /// Retests, in place and in region order, the neighbourhood regions due at `odometer` (whose
    /// clearance the device may have travelled since they were last tested); returns the safe
    /// distance from `q` for the regions of the list. A region is retested once the device may
    /// have travelled its clearance since it was last tested, not each time the device is that
    /// far from where the neighbourhood was taken.
    private func retestNeighbourhood(_ di: Int, _ d: Int32, _ t: Double, _ q: GeoPoint, odometer: Double, first: Bool) -> Double {
        // A view of the list: nothing below reallocates it.
        let near = states[di].near
        // For a Float c, c ≤ odometer exactly when c ≤ the largest Float not above it.
        let limit = Float.belowNonNegative(odometer)
        // The smallest clearance not due: those regions keep their decision until then.
        var rest = Float.infinity
        var safe = Double.infinity
        var from = 0
        var pointSet = false
        for b in 0..<near.blocks {
            var due = near.due(block: b, limit: limit, rest: &rest)
            guard due != 0 else { continue }
            if !pointSet {
                index.setQueryPoint(q.coordinate)
                pointSet = true
            }
            prefetchRegions(near, block: b, due)
            while due != 0 {
                let i = 16 * b + due.trailingZeroBitCount
                due &= due - 1
                safe = min(safe, retestRegion(di, d, t, q, entry: i, near, first: first, odometer: odometer, from: &from))
            }
        }
        return min(safe, Double(rest) - odometer)
    }

    /// Tests the neighbourhood's entry `i` against the device's visits; returns its clearance.
    /// Whether the region is visited comes from its key; only an enter or exit looks it up in the
    /// visit list (a binary search from `from`, the last change: entries are retested in region
    /// order, and visits of other regions cannot have changed) to edit the list in place. The
    /// entry is rewritten: the odometer reading at which it is due next, and whether inside.
    @inline(__always)
    private func retestRegion(_ di: Int, _ d: Int32, _ t: Double, _ q: GeoPoint, entry i: Int, _ near: Neighbourhood,
                              first: Bool, odometer: Double, from: inout Int) -> Double {
        let e = retestEntry(near, i, q, odometer: odometer)
        if e.inside != e.visited { cross(di, d, t, e.region, q, leaving: e.visited, first: first, from: &from) }
        return e.clearance
    }

    /// Retests entry `i` of `near` at `q` and rewrites it in place: its decision, and the
    /// odometer reading at which it is next due. Inside: within the exit boundary for a visit,
    /// the entry boundary otherwise. `visited` is the decision before.
    @inline(__always)
    private func retestEntry(_ near: Neighbourhood, _ i: Int, _ q: GeoPoint, odometer: Double)
        -> (region: Int32, visited: Bool, inside: Bool, clearance: Double)
    {
        let key = near.keys[i]
        let r = NearRegion.region(ofKey: key)
        let visited = key & 1 != 0
        let (inside, c) = index.retest(Int(r), q, visited: visited)
        near.keys[i] = key & ~1 | (inside ? 1 : 0)
        near.clearances[i] = .belowNonNegative(c + odometer)
        return (r, visited, inside, c)
    }

    /// An enter or exit found by a retest: the visit list edited in place (see `retestRegion`),
    /// the event reported. Out of line: about one retest in five crosses on city, and inlined, this
    /// made the compiler outline the whole retest instead.
    @inline(never)
    private func cross(_ di: Int, _ d: Int32, _ t: Double, _ r: Int32, _ p: GeoPoint, leaving: Bool, first: Bool,
                       from: inout Int) {
        prefetchForEvent(r)
        // The first visit at or after r.
        let lo = states[di].visits.lowerBound(r, from: from)
        if leaving {
            let visit = states[di].visits[lo]
            states[di].visits.remove(at: lo)
            from = lo
            leave(d, t, visit, p)
        } else {
            enter(d, t, r, first: first, p) { states[di].visits.insert($0, at: lo) }
            from = lo + 1
        }
    }

    /// Starts a visit of `r`: the visit handed to `store`, then (unless it is a silent first visit)
    /// its dwell timer and the enter event.
    @inline(__always)
    private func enter(_ d: Int32, _ t: Double, _ r: Int32, first: Bool, _ p: GeoPoint,
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
    private func reportEnter(_ d: Int32, _ t: Double, _ r: Int32, distance: Double) {
        if let dwell = options.dwell {
            timers.schedule(at: t + dwell, rank: devices.rank(d), Timer(device: d, region: r))
        }
        emit(RegionEvent(kind: .enter, t: t, device: d, region: r, distance: distance))
    }

    /// Reports the end of `visit` (the caller has taken it off the device's list) and gives back
    /// its entry time's code.
    @inline(__always)
    private func leave(_ d: Int32, _ t: Double, _ visit: VisitList.Entry, _ p: GeoPoint) {
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
    private func reportHeld(_ d: Int32, _ t: Double) {
        if held.count > 1 { held.buffer.insertionSort { $0.order < $1.order } }
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

    /// `setAnchor` at the fix `q`.
    @inline(__always)
    private func setAnchor(_ di: Int, _ q: GeoPoint, safe: Double) {
        setAnchor(di, q.coordinate.latitude * (Double.pi / 180), q.coordinate.longitude * (Double.pi / 180),
                  q.cosLatitude, safe: safe)
    }

    private func setAnchor(_ di: Int, _ phi: Double, _ lambda: Double, _ cosPhi: Double, safe: Double) {
        states[di].anchorPhi = phi
        states[di].anchorLambda = lambda
        states[di].anchorCos = Self.cosineBound(cosPhi)
        states[di].safeAngle = Self.angleBelow(safe / GeodesicCircle.maxCurvatureRadius)
    }

    /// A Float not below `c` (a cosine, 0 ≤ c ≤ 1), without `Float.above`'s branches: the
    /// conversion rounds by at most 2⁻²⁴, less than the 2⁻²³ added.
    @inline(__always)
    static func cosineBound(_ c: Double) -> Float { Float(c + 0x1p-23) }

    /// A Float not above the angle `a` (radians), 0 for none: shrunk by 2⁻²² before rounding,
    /// more than the conversion's relative error of 2⁻²⁴; an angle too small for that (below
    /// 10⁻³⁰ rad, far below any difference between coordinates) counts as none.
    @inline(__always)
    static func angleBelow(_ a: Double) -> Float { a > 1e-30 ? Float(a * (1 - 0x1p-22)) : 0 }

    /// An upper bound on the central angle (on the sphere with the same latitudes and longitudes)
    /// between (φ, λ) and an anchor, without trigonometry: the path that interpolates latitude and
    /// longitude linearly has length ∫√(Δφ² + cos²φ Δλ²) ≤ √(Δφ² + (cos φₐ + |Δφ|)² Δλ²), since
    /// |cos φ − cos φₐ| ≤ |φ − φₐ|. The geodesic is at most `maxCurvatureRadius` times that.
    @inline(__always)
    static func angleBound(_ phi: Double, _ lambda: Double, _ aPhi: Double, _ aLambda: Double, _ aCos: Double) -> Double {
        let dPhi = abs(phi - aPhi)
        var dLambda = abs(lambda - aLambda)
        if dLambda > Double.pi { dLambda = 2 * Double.pi - dLambda }
        let c = aCos + dPhi
        return (dPhi * dPhi + c * c * dLambda * dLambda).squareRoot() * (1 + 1e-12)
    }

    /// Tests `candidates` (ascending, every region whose envelope holds the fix) against the
    /// device's visits, deciding enters and exits in region order. A visit whose region is no
    /// candidate is beyond its envelope, hence beyond exit.
    ///
    /// - safe: nil on the plain path; otherwise an upper bound for the returned safe distance, the
    ///   smallest clearance of any candidate tested.
    /// - keepBelow: candidates whose clearance is below it are added to `hood`.
    @discardableResult
    private func evaluate(_ di: Int, _ d: Int32, _ t: Double, _ q: GeoPoint, _ candidates: UnsafeBufferPointer<Int32>,
                          first: Bool, safe limit: Double?, keepBelow: Double = 0, keepAround: GeoPoint? = nil) -> Double {
        var safe = limit ?? 0
        let tracking = limit != nil
        var changed = false
        scratch.removeAll()
        let visits = states[di].visits
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
                        hood.append(NearRegion(region: r, inside: inside, clearance: c))
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
                        hood.append(NearRegion(region: visit.region, inside: stays, clearance: c))
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
        if changed { states[di].visits.assign(scratch) }
        if !tracking {
            states[di].safeAngle = 0
        }
        return safe
    }

    /// Whether a candidate belongs in the new neighbourhood: its boundary may come within `reach`
    /// of the neighbourhood's centre, which is the fix itself (its clearance `c` there tells) or
    /// `around` (`boundaryMayBeWithin`, for the state `inside` just decided at the fix).
    @inline(__always)
    private func keeps(_ r: Int32, _ inside: Bool, _ c: Double, _ reach: Double, _ around: GeoPoint?) -> Bool {
        guard let around else { return c < reach }
        return index.boundaryMayBeWithin(Int(r), reach, of: around, inside: inside)
    }

    /// Due time of the earliest pending timer, if any (cancelled timers may be included).
    public var nextTimerDue: Double? { timers.nextDue }

    /// Due time of the earliest pending timer, +∞ if none: one load, inlined into the engine's
    /// check for every reading.
    @inlinable public var earliestTimerDue: Double { timers.earliestDue }

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
        // Timers are cancelled lazily: the visit must still be the one that armed it. A visit
        // that ended and began again at the same instant is armed twice for the same time; the
        // first of its two timers reports it, the second finds it dwelled.
        let visits = states[di].visits
        guard let k = visits.index(of: timer.region), !visits[k].dwelled else { return }
        let enteredAt = entryTimes.time(visits[k].code)
        guard enteredAt + (options.dwell ?? .nan) == due else { return }
        visits.setDwelled(k)
        emit(RegionEvent(kind: .dwell, t: due, device: timer.device, region: timer.region, enteredAt: enteredAt))
    }

    @inline(__always)
    private func emit(_ e: RegionEvent) {
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

    /// Records a reading's time for ordering without a fix (beacon sightings, control records).
    /// Returns `.outOfOrder` if it is older than the device's previous reading.
    public func touch(device d: Int32, t: Double) -> RejectReason? {
        let di = checked(d)
        if t < states[di].last { return .outOfOrder }
        states[di].last = t
        if t > clock { clock = t }
        return nil
    }
}


