import GeotriggerCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerRuntime
import GeotriggerGeometry
import GeotriggerFormats

public struct BeaconOptions: Sendable {
    /// A visit ends this many seconds after the last qualifying sighting (stamped then).
    public var exitAfter: Double = 30
    /// Per-beacon decisions use the smoothed RSSI ± this many standard deviations (see `sighting`).
    public var sigmaBound: Double = 1
    /// Fused positions: leave a zone only beyond its radius + this many metres.
    public var fusedExitMargin: Double = 0.5
    /// Sightings of positioned beacons at most this old are fused into a position: about four
    /// samples a beacon at 2 Hz, while a walker moves at most 2.6 m.
    public var fusionWindow: Double = 2
    /// Ranges beyond this are not fused: weak signals are censored by receiver sensitivity and
    /// mostly non-line-of-sight indoors, so beyond 10 m an RSSI says little.
    public var fusionMaxRange: Double = 10
    /// Time constant of the fused position's smoothing: walking positions correlate over 1–1.5 s
    /// (1.5 chosen by leaving one walk out, docs/beacons.md).
    public var positionTimeConstant: Double = 1.5
    /// A fused zone decision flips only after this many consecutive fused updates agree.
    public var fusedConfirmations: Int = 2
    /// A minimum visit (seconds) for zones decided per beacon: a zone is entered only once its
    /// enter rule has held at every sighting for this long without a break. A walker at about
    /// 1.3 m/s covers 2 m in 1.5 s: a shorter "visit" of a 3 m zone is a graze or a fade. Chosen
    /// among 0.5–2 s by leaving one walk out (docs/beacons.md). Exits are not delayed. 0: enter
    /// at once. (Zones decided by the fused position wait for their beacon's own estimate
    /// instead, `fuse(device:at:)`.)
    public var minimumVisit: Double = 1.5
    /// Emit `dwell` once per visit after this many seconds inside (the engine passes `--dwell`).
    public var dwell: Double? = nil

    public init(exitAfter: Double = 30, sigmaBound: Double = 1, fusedExitMargin: Double = 0.5, fusionWindow: Double = 2) {
        self.exitAfter = exitAfter
        self.sigmaBound = sigmaBound
        self.fusedExitMargin = fusedExitMargin
        self.fusionWindow = fusionWindow
    }
}

/// Beacon-region state per (device, region): sightings smoothed per (device, beacon), distances
/// from the log-distance model, zones with hysteresis, exits by distance or by silence.
///
/// A device is in a beacon region when a matching beacon is estimated within the zone (for `any`:
/// seen at all), or, for a region with a position, when its latest fix is inside the zone circle
/// (the geographic monitor decides that and reports it through `fixTransition`). Where a device
/// hears three or more positioned beacons within `fusionWindow`, their distances are fused into a
/// position (weighted least squares) and positioned zones are decided from it: one position from
/// many noisy beacons beats any single RSSI.
public final class BeaconMonitor: TimerOwner {
    public let regions: [Region]
    public let matcher: BeaconMatcher
    public let options: BeaconOptions
    /// Receives every event; held strongly, as `Monitor.sink` is (a sink that holds this monitor
    /// must not hold it strongly).
    public var sink: (any RegionEventSink)?

    public enum Outcome: Equatable, Sendable {
        case applied
        /// No beacon region matches the sighting's beacon.
        case unmatched
    }

    /// Per (device, concrete beacon): the smoothed signal.
    struct Track {
        var filter = RSSIFilter()
        var lastSeen = -Double.infinity
        var smoothed = Double.nan
        var tx = Double.nan
        var beacon: Int32
        /// Where this track's recent samples are kept for the fusion window's gated mean: a slot
        /// of `windows`, or none. Only a beacon of a positioned region can be an anchor of the
        /// fused position, so only its tracks keep samples (`Self.idle` while they hold no slot);
        /// the others never do (`Self.never`).
        var window: Int32
        /// Bit k set: qualifies for the k-th region `matcher` gives for this beacon.
        var qualifies: UInt64 = 0

        /// Samples are not kept for this track: its beacon matches no positioned region.
        static let never: Int32 = -2
        /// Samples are kept for this track, but none is in a slot now.
        static let idle: Int32 = -1
    }

    /// Per (device, beacon region): 64 bytes (the beacon that caused it as a slot of
    /// `beaconIDs`, counters as Int32 and the flags together; as first written, 104).
    struct Zone {
        var enteredAt = Double.nan
        var lastQualifying = -Double.infinity
        var causeDistance = Double.nan
        /// Beacons currently estimated within the zone. (For a zone the fused position decides,
        /// by the 1σ rule alone, without the minimum visit: its enters wait for one of them.)
        var qualifying: Int32 = 0
        /// Since when the zone's beacons have wanted it without a break, while none qualifies yet
        /// (`minimumVisit`); NaN when none is waiting.
        var pendingSince = Double.nan
        /// The track that wanted the zone last during that wait (−1: none).
        var pendingTrack: Int32 = -1
        /// Consecutive fused updates that disagree with `fusedIn`.
        var fusedDisagreements: Int32 = 0
        /// The beacon that last qualified or was heard (a slot of `beaconIDs`), or −1.
        var cause: Int32 = -1
        var inside = false
        /// Decided by the fused position (positioned regions, ≥ 3 anchors).
        var fusedIn = false
        /// The device's latest fix is inside the zone circle.
        var fixIn = false
        var timerArmed = false
        var dwelled = false
    }

    /// The beacon that caused zone `z`'s state, if any.
    private func cause(ofZone z: Int) -> BeaconID? {
        zones[z].cause < 0 ? nil : beaconIDs[Int(zones[z].cause)]
    }

    /// A silence check of a zone, or its visit's dwell time (the visit named by its start).
    @usableFromInline struct SilenceTimer {
        var device: Int32
        var zone: Int32
        var dwellFor: Double = .nan
    }

    // The state below is not private: the checkpoint (`BeaconMonitor+Snapshot.swift`) writes
    // and restores it.
    var beaconIDs: [BeaconID] = []
    /// The recent samples of the tracks that keep them (`Track.window`). A track's slot is given
    /// back once it has not been heard for `fusionWindow` at one of its device's fusions: its
    /// samples can then never count again, since a device's readings come in time order. So the
    /// slots in use follow the beacons heard in the last moments, not every beacon ever heard
    /// (a slot is 528 bytes).
    var windows: [SampleWindow] = []
    /// Slots of `windows` given back, reused before the array grows.
    var freeWindows: [Int32] = []
    var beaconSlots: [BeaconID: Int32] = [:]
    /// The regions each beacon slot matches, in `matcher`'s order: slot b's are
    /// `matchRegions[matchEnds[b − 1] ..< matchEnds[b]]`. Found once per beacon, so a sighting
    /// hashes its beacon id once (`beaconSlots`) instead of once per wildcard level and use, and
    /// a silence check reads the lists instead of hashing every silent beacon of the device.
    var matchRegions: [Int32] = []
    var matchEnds: [Int32] = []
    var tracks: [Track] = []
    var trackSlots: [UInt64: Int32] = [:]
    /// Per device, its track slots (few: the beacons it hears).
    var deviceTracks: [[Int32]] = []
    /// Per device, its zone slots of positioned regions (decided by the fused position).
    var devicePositionedZones: [[Int32]] = []
    /// Per device, the smoothed fused position in `frame` and when it was last updated.
    var fusedPositions: [(point: LocalPoint, t: Double)?] = []
    /// One local frame for every positioned beacon (around the first one): beacons that can be
    /// heard together are metres apart, where the tangent plane is exact to well under a millimetre.
    private let frame: LocalFrame?
    /// Each positioned region's place in `frame`, by region; sparse, since most regions are
    /// geographic and a per-region array would cost every one of them.
    let localPositions: [Int32: LocalPoint]
    var zones: [Zone] = []
    var zoneSlots: [UInt64: Int32] = [:]
    var zoneKeys: [(device: Int32, region: Int32)] = []
    /// Zone slots by device, for `visits(of:)` and `forget`: so listing every device's visits
    /// (`--state-out`) reads each zone once instead of every zone for every device (0.43 s of a
    /// 1.6 s beacons replay with 1,000 devices, and growing with their square). Kept as zones are
    /// made (rare next to sightings), since `forget` frees zone slots for reuse.
    var deviceZones: [[Int32]] = []
    /// Track and zone slots given back by `forget`, reused before the arrays grow. A free track
    /// keeps no window and a free zone's key is (−1, −1).
    var freeTracks: [Int32] = []
    var freeZones: [Int32] = []
    @exclusivity(unchecked) @usableFromInline var timers = TimerQueue<SilenceTimer>()
    /// Ranks devices for timers due at the same time (`DeviceTable.rank`); the engine shares its
    /// table. Without one a device ranks by its id.
    public var devices: DeviceTable?
    private let positionedCount: Int

    public convenience init(regions: [Region], options: BeaconOptions = BeaconOptions()) {
        self.init(regions: regions, beaconRegions: RegionSummary(regions).beaconRegions, options: options)
    }

    /// A monitor of the beacon regions `numbers` (ascending) of `regions`: an index's
    /// `summary.beaconRegions`, so the others are not looked at.
    public init(regions: [Region], beaconRegions numbers: [Int32], options: BeaconOptions = BeaconOptions()) {
        self.regions = regions
        self.options = options
        matcher = BeaconMatcher(regions: regions, beaconRegions: numbers)
        var positions: [(region: Int32, position: Coordinate)] = []
        for r in numbers {
            if case .beacon(let b) = regions[Int(r)].shape, let p = b.position { positions.append((r, p)) }
        }
        positionedCount = positions.count
        let frame = positions.first.map { LocalFrame(origin: $0.position) }
        self.frame = frame
        localPositions = Dictionary(uniqueKeysWithValues: positions.compactMap { r, p in frame.map { (r, $0.point(p)) } })
    }

    /// Whether positioned regions follow the fused position (fusion needs three beacons).
    var fuses: Bool { positionedCount >= 3 }

    public var isEmpty: Bool { matcher.count == 0 }

    public func isBeaconRegion(_ r: Int32) -> Bool {
        // Without beacon regions (the common GPS case) no region lookup at all.
        guard matcher.count > 0, Int(r) < regions.count else { return false }  // added live: never a beacon region
        if case .beacon = regions[Int(r)].shape { return true }
        return false
    }

    private func spec(_ r: Int32) -> BeaconRegion {
        guard case .beacon(let b) = regions[Int(r)].shape else { preconditionFailure("region \(r) is no beacon region") }
        return b
    }

    // MARK: Sightings

    /// Applies one sighting. Timers due before `t` should have been fired first, and a device's
    /// readings must come in time order (`Engine` rejects one older than the device's previous
    /// reading): a sample leaves the fusion window for good once it is older than it.
    public func sighting(device d: Int32, t: Double, beacon id: BeaconID, rssi: Double, tx: Double) -> Outcome {
        guard let b = beaconSlot(id) else { return .unmatched }
        let ti = track(device: d, beacon: b)
        let smoothed = tracks[ti].filter.update(rssi: rssi, at: t)
        let heardBefore = tracks[ti].lastSeen
        tracks[ti].lastSeen = t
        tracks[ti].smoothed = smoothed
        tracks[ti].tx = tx

        if tracks[ti].window != Track.never {
            if tracks[ti].window == Track.idle { tracks[ti].window = takeWindow() }
            _ = windows[Int(tracks[ti].window)].append(rssi: rssi, at: t)
        }

        var heardPositioned = false
        for (k, r) in matches(ofBeacon: b).enumerated() {
            let region = spec(r)
            let z = Int(zone(device: d, region: r))
            let fused = fuses && region.position != nil
            if fused {
                // Positioned zones follow the fused position (below); hearing a matching beacon
                // keeps a fused visit from ending by silence.
                heardPositioned = true
                zones[z].lastQualifying = t
                zones[z].cause = tracks[ti].beacon
            }
            let distance = DistanceModel.distance(rssi: smoothed, tx: tx, region: region)
            let bit = UInt64(1) << UInt64(min(k, 63))
            if fused && tracks[ti].qualifies & bit != 0 && heardBefore + options.exitAfter < t {
                // Silent for `exitAfter` while it only gated the fused zone: no timer withdrew it.
                tracks[ti].qualifies &= ~bit
                zones[z].qualifying -= 1
            }
            let was = tracks[ti].qualifies & bit != 0
            var now: Bool
            if let limit = region.zone.limit {
                // Decide on the estimate's 1σ bounds instead of a fixed margin: enter when even its
                // weak end (RSSI − σ, the farther distance) is inside, leave when even its strong
                // end (RSSI + σ) is outside. The dead band follows the filter's actual uncertainty.
                let sigma = options.sigmaBound * tracks[ti].filter.sigma
                if was {
                    now = DistanceModel.distance(rssi: smoothed + sigma, tx: tx, region: region) <= limit
                } else {
                    now = DistanceModel.distance(rssi: smoothed - sigma, tx: tx, region: region) < limit
                    if !fused { now = heldLongEnough(now, zone: z, track: Int32(ti), at: t) }
                }
            } else {
                now = true  // `any` / `far`: seen at all
            }
            if now != was {
                tracks[ti].qualifies ^= bit
                zones[z].qualifying += now ? 1 : -1
            }
            // A fused zone's beacons qualify only to let the fused position enter it (`fuse`).
            if fused { continue }
            if now {
                zones[z].lastQualifying = t
                zones[z].cause = tracks[ti].beacon
                zones[z].causeDistance = distance
            } else if was && zones[z].qualifying > 0 {
                expireSilent(device: d, zone: Int32(z), region: r, at: t)
            }
            update(zone: Int32(z), device: d, region: r, at: t, stamp: t, reason: .distance)
        }
        if heardPositioned { fuse(device: d, at: t) }
        return .applied
    }

    /// Takes a geographic event if its region is a beacon region: for a positioned beacon region
    /// the region monitor's enter and exit are only the fix half of the state, which this monitor
    /// combines with sightings before anything is reported (its dwell is this monitor's own).
    /// Returns false for any other region: the event is reported as it is.
    @inline(__always)
    public func takesFixEvent(_ e: RegionEvent) -> Bool {
        guard isBeaconRegion(e.region) else { return false }
        if e.kind != .dwell {
            fixTransition(device: e.device, region: e.region, inside: e.kind == .enter, at: e.t, distance: e.distance)
        }
        return true
    }

    /// A positioned beacon region's fix-based state changed (from the geographic monitor).
    public func fixTransition(device d: Int32, region r: Int32, inside: Bool, at t: Double, distance: Double) {
        let z = zone(device: d, region: r)
        zones[Int(z)].fixIn = inside
        if inside && !zones[Int(z)].inside { zones[Int(z)].causeDistance = distance }
        update(zone: z, device: d, region: r, at: t, stamp: t, reason: .distance)
    }

    // MARK: Clock

    public var nextTimerDue: Double? { timers.nextDue }

    /// Due time of the earliest pending timer, +∞ if none: one load, inlined into the engine's
    /// check for every reading.
    @inlinable public var earliestTimerDue: Double { timers.earliestDue }

    public func fireTimers(before t: Double) {
        while let (due, rank, timer) = timers.popDue(before: t) { fire(timer, due: due, rank: rank) }
    }

    public func advance(to t: Double) {
        while let (due, rank, timer) = timers.popDue(through: t) { fire(timer, due: due, rank: rank) }
    }

    @discardableResult
    public func fireNextTimer() -> Bool {
        guard let (due, rank, timer) = timers.popNext() else { return false }
        fire(timer, due: due, rank: rank)
        return true
    }

    private func fire(_ timer: SilenceTimer, due: Double, rank: UInt64) {
        // Armed for a device since forgotten (`forget`): its zone slot may be another's now.
        guard rank == self.rank(timer.device) else { return }
        let z = Int(timer.zone)
        if !timer.dwellFor.isNaN {
            // A dwell: only for the visit that armed it, once.
            guard zones[z].inside, zones[z].enteredAt == timer.dwellFor, !zones[z].dwelled else { return }
            zones[z].dwelled = true
            sink?.handle(RegionEvent(kind: .dwell, t: due, device: timer.device, region: zoneKeys[z].region, distance: .nan,
                                     enteredAt: zones[z].enteredAt, beacon: cause(ofZone: z),
                                     proximity: nil, reason: nil))
            return
        }
        zones[z].timerArmed = false
        guard zones[z].fusedIn || (zones[z].qualifying > 0 && !decidedByFusion(zoneKeys[z].region)) else { return }
        let expires = zones[z].lastQualifying + options.exitAfter
        if expires > due {
            arm(zone: timer.zone, device: timer.device, at: expires)  // a newer sighting came in
            return
        }
        // Silence: nothing qualifying since lastQualifying; every beacon of this zone drops out.
        let r = zoneKeys[z].region
        dropQualification(device: timer.device, zone: timer.zone, region: r, silentAt: .infinity)
        zones[z].qualifying = 0
        zones[z].fusedIn = false
        update(zone: timer.zone, device: timer.device, region: r, at: due, stamp: due, reason: .silence)
    }

    // MARK: State

    /// Emits enter/exit when the combined state (a qualifying beacon, or a fix inside) changes.
    private func update(zone z: Int32, device d: Int32, region r: Int32, at t: Double, stamp: Double,
                        reason: RegionEvent.ExitReason) {
        let zi = Int(z)
        let byBeacons = zones[zi].fusedIn || (zones[zi].qualifying > 0 && !decidedByFusion(r))
        let inNow = byBeacons || zones[zi].fixIn
        if inNow && byBeacons && !zones[zi].timerArmed {
            arm(zone: z, device: d, at: zones[zi].lastQualifying + options.exitAfter)
        }
        guard inNow != zones[zi].inside else { return }
        zones[zi].inside = inNow
        let beacon = cause(ofZone: zi)
        let hasBeacon = beacon != nil
        let distance = zones[zi].causeDistance
        if inNow {
            zones[zi].enteredAt = stamp
            zones[zi].dwelled = false
            if let dwell = options.dwell {
                timers.schedule(at: stamp + dwell, rank: rank(d), SilenceTimer(device: d, zone: z, dwellFor: stamp))
            }
            sink?.handle(RegionEvent(kind: .enter, t: stamp, device: d, region: r, distance: distance, enteredAt: .nan,
                                     beacon: beacon, proximity: hasBeacon ? Proximity.classify(distance: distance) : nil,
                                     reason: nil))
        } else {
            sink?.handle(RegionEvent(kind: .exit, t: stamp, device: d, region: r, distance: .nan,
                                     enteredAt: zones[zi].enteredAt, beacon: beacon, proximity: nil, reason: reason))
        }
    }

    /// Whether region `r`'s zones follow the fused position (a positioned region, ≥ 3 of them).
    private func decidedByFusion(_ r: Int32) -> Bool {
        fuses && spec(r).position != nil
    }

    /// Whether the zone's enter rule, holding (`wanted`) at this sighting of track `ti`, has held
    /// for `minimumVisit` (`Zone.pendingSince`). Any of the zone's beacons wanting it starts or
    /// continues the wait; only the one that wanted it last breaks it (in a wildcard region,
    /// another beacon heard far away says nothing of the one near, and a beacon no longer heard
    /// cannot hold the wait up).
    private func heldLongEnough(_ wanted: Bool, zone z: Int, track ti: Int32, at t: Double) -> Bool {
        guard options.minimumVisit > 0 else { return wanted }
        guard wanted else {
            if zones[z].pendingTrack == ti {
                zones[z].pendingTrack = -1
                zones[z].pendingSince = .nan
            }
            return false
        }
        if zones[z].pendingTrack < 0 { zones[z].pendingSince = t }
        zones[z].pendingTrack = ti
        guard t - zones[z].pendingSince >= options.minimumVisit else { return false }
        zones[z].pendingTrack = -1
        zones[z].pendingSince = .nan
        return true
    }

    /// A beacon left the zone while others still count: drop those silent for `exitAfter`.
    private func expireSilent(device d: Int32, zone z: Int32, region r: Int32, at t: Double) {
        dropQualification(device: d, zone: z, region: r, silentAt: t)
    }

    /// Withdraws region `r`'s qualification from the device's beacons that have been silent for
    /// `exitAfter` at time `t` (all of them for t = +∞), keeping the zone's qualifying count.
    private func dropQualification(device d: Int32, zone z: Int32, region r: Int32, silentAt t: Double) {
        // A track that qualifies nowhere has nothing to withdraw.
        for ti in deviceTracks[Int(d)] where tracks[Int(ti)].qualifies != 0 && tracks[Int(ti)].lastSeen + options.exitAfter <= t {
            for (k, match) in matches(ofBeacon: tracks[Int(ti)].beacon).enumerated() {
                let bit = UInt64(1) << UInt64(min(k, 63))
                if match == r && tracks[Int(ti)].qualifies & bit != 0 {
                    tracks[Int(ti)].qualifies &= ~bit
                    zones[Int(z)].qualifying -= 1
                }
            }
        }
    }

    private func rank(_ d: Int32) -> UInt64 { devices?.rank(d) ?? UInt64(UInt32(bitPattern: d)) }

    private func arm(zone z: Int32, device d: Int32, at due: Double) {
        zones[Int(z)].timerArmed = true
        timers.schedule(at: due, rank: rank(d), SilenceTimer(device: d, zone: z))
    }

    /// Fuses the device's recent sightings of positioned beacons into a position and decides
    /// every positioned zone of the device from it.
    ///
    /// Each beacon heard within `fusionWindow` gives a range from the gated mean of its samples
    /// there (ranges beyond `fusionMaxRange` are dropped), weighted by the number of samples
    /// received (reception rate is itself evidence of range: packet loss grows with distance).
    /// With three or more, the position minimising Σ nᵢ (ln‖x − bᵢ‖ − ln dᵢ)² — the
    /// maximum-likelihood position under log-normal shadowing — is smoothed with
    /// `positionTimeConstant`. A zone is entered when the smoothed
    /// position is within its radius and one of the region's beacons is within it by its own
    /// estimate, and left beyond radius + `fusedExitMargin`, each only after
    /// `fusedConfirmations` consecutive updates agree.
    private func fuse(device d: Int32, at t: Double) {
        guard frame != nil else { return }
        var anchors = FusionAnchors()
        let since = t - options.fusionWindow
        for ti in deviceTracks[Int(d)] {
            let w = Int(tracks[Int(ti)].window)
            // No slot: no sample kept (not a positioned beacon, or none heard since the last give-back).
            guard w >= 0 else { continue }
            // Every sample at or before `since` is out of the window now and at every later fusion.
            if tracks[Int(ti)].lastSeen <= since {
                giveBack(track: Int(ti))
                continue
            }
            guard let (mean, _) = windows[w].gatedMean(since: since) else { continue }
            var anchor: FusionAnchor?
            for r in matches(ofBeacon: tracks[Int(ti)].beacon) {
                guard anchor == nil, let p = localPositions[r] else { continue }
                let range = DistanceModel.distance(rssi: mean, tx: tracks[Int(ti)].tx, region: spec(r))
                if range <= options.fusionMaxRange {
                    anchor = FusionAnchor(p, distance: range, weight: Double(windows[w].countSince(since)))
                }
            }
            if let anchor { _ = anchors.append(anchor) }
        }
        guard anchors.count >= 3 else { return }
        let fix = PositionFusion.solveLogRange(anchors)
        guard fix.confidence != .none, fix.x.isFinite, fix.y.isFinite else { return }
        while fusedPositions.count <= Int(d) { fusedPositions.append(nil) }
        var point = fix.point
        if let previous = fusedPositions[Int(d)] {
            let a = 1 - exp(-max(0, t - previous.t) / options.positionTimeConstant)
            point = LocalPoint(east: previous.point.east + a * (point.east - previous.point.east),
                               north: previous.point.north + a * (point.north - previous.point.north))
        }
        fusedPositions[Int(d)] = (point, t)
        for z in devicePositionedZones[Int(d)] {
            let r = zoneKeys[Int(z)].region
            guard let b = localPositions[r], let limit = spec(r).zone.limit else { continue }
            let distance = ((point.east - b.east) * (point.east - b.east) + (point.north - b.north) * (point.north - b.north)).squareRoot()
            // Entering needs two estimates to agree: the fused position within the radius, and
            // one of the region's beacons within it by its own signal (the 1σ rule). A position
            // pulled into the zone by other beacons' fades no longer enters it alone.
            let wanted = zones[Int(z)].fusedIn
                ? distance <= limit + options.fusedExitMargin
                : distance < limit && zones[Int(z)].qualifying > 0
            if wanted == zones[Int(z)].fusedIn {
                zones[Int(z)].fusedDisagreements = 0
                continue
            }
            zones[Int(z)].fusedDisagreements += 1
            guard Int(zones[Int(z)].fusedDisagreements) >= options.fusedConfirmations else { continue }
            zones[Int(z)].fusedDisagreements = 0
            zones[Int(z)].fusedIn = wanted
            zones[Int(z)].causeDistance = distance
            update(zone: z, device: d, region: r, at: t, stamp: t, reason: .distance)
        }
    }

    /// The slot of beacon `id`, taken (with its matching regions) at its first sighting; nil if
    /// it matches no region, and then no slot is kept for it.
    func beaconSlot(_ id: BeaconID) -> Int32? {
        if let known = beaconSlots[id] { return known }
        let regions = matcher.matches(id)
        guard !regions.isEmpty else { return nil }
        let b = Int32(beaconIDs.count)
        beaconIDs.append(id)
        beaconSlots[id] = b
        matchRegions.append(contentsOf: regions)
        matchEnds.append(Int32(matchRegions.count))
        return b
    }

    /// The regions beacon slot `b` matches, in `matcher`'s order.
    private func matches(ofBeacon b: Int32) -> ArraySlice<Int32> {
        let start = b == 0 ? 0 : Int(matchEnds[Int(b) - 1])
        return matchRegions[start..<Int(matchEnds[Int(b)])]
    }

    private func track(device d: Int32, beacon b: Int32) -> Int {
        let key = UInt64(UInt32(bitPattern: d)) << 32 | UInt64(UInt32(bitPattern: b))
        if let slot = trackSlots[key] { return Int(slot) }
        // Samples are kept only where fusion can use them: a beacon of a positioned region.
        var positioned = false
        if fuses { positioned = matches(ofBeacon: b).contains { localPositions[$0] != nil } }
        let track = Track(beacon: b, window: positioned ? Track.idle : Track.never)
        let slot: Int32
        if let free = freeTracks.popLast() {
            slot = free
            tracks[Int(slot)] = track
        } else {
            slot = Int32(tracks.count)
            tracks.append(track)
        }
        trackSlots[key] = slot
        while deviceTracks.count <= Int(d) { deviceTracks.append([]) }
        deviceTracks[Int(d)].append(slot)
        return Int(slot)
    }

    /// A slot of `windows`, empty: a given-back one, or a new one.
    private func takeWindow() -> Int32 {
        if let slot = freeWindows.popLast() { return slot }
        windows.append(SampleWindow())
        return Int32(windows.count - 1)
    }

    /// Empties track `ti`'s slot and gives it back.
    private func giveBack(track ti: Int) {
        let w = tracks[ti].window
        windows[Int(w)].removeAll()
        freeWindows.append(w)
        tracks[ti].window = Track.idle
    }

    private func zone(device d: Int32, region r: Int32) -> Int32 {
        let key = UInt64(UInt32(bitPattern: d)) << 32 | UInt64(UInt32(bitPattern: r))
        if let slot = zoneSlots[key] { return slot }
        let slot: Int32
        if let free = freeZones.popLast() {
            slot = free
            zones[Int(slot)] = Zone()
            zoneKeys[Int(slot)] = (d, r)
        } else {
            slot = Int32(zones.count)
            zones.append(Zone())
            zoneKeys.append((d, r))
        }
        zoneSlots[key] = slot
        while deviceZones.count <= Int(d) { deviceZones.append([]) }
        deviceZones[Int(d)].append(slot)
        if fuses && localPositions[r] != nil {
            while devicePositionedZones.count <= Int(d) { devicePositionedZones.append([]) }
            devicePositionedZones[Int(d)].append(slot)
        }
        return slot
    }

    // MARK: Inspection

    /// Tracks (device, beacon) and the sample windows made for them: a window is made only while
    /// none that was given back is free, so `windows` is the most that were in use at once.
    var storageCounts: (tracks: Int, windows: Int) { (tracks.count, windows.count) }

    /// The beacon regions a device is in, with when it entered and the beacon that put it there.
    public func visits(of d: Int32) -> [(region: Int32, enteredAt: Double, beacon: BeaconID?)] {
        guard Int(d) < deviceZones.count else { return [] }
        return deviceZones[Int(d)].lazy.map(Int.init).filter { self.zones[$0].inside }
            .map { (self.zoneKeys[$0].region, self.zones[$0].enteredAt, self.cause(ofZone: $0)) }
            .sorted { $0.region < $1.region }
    }

    // MARK: Expiry

    /// Forgets a device (`--expire`): hands each beacon region it is in (region, entry time, the
    /// beacon that put it there) to `visit`, in region-id order, and frees its tracks (their
    /// sample windows given back), zones and fused position for reuse. Nothing is reported here:
    /// the engine reports the exits. Its timers stay in the heap and are dropped when they come
    /// due: the caller changes the device's rank (`DeviceTable.remove`), which `fire` checks.
    public func forget(device d: Int32, _ visit: (_ region: Int32, _ enteredAt: Double, _ beacon: BeaconID?) -> Void) {
        for (region, enteredAt, beacon) in visits(of: d) { visit(region, enteredAt, beacon) }
        let i = Int(d)
        if i < deviceTracks.count {
            for ti in deviceTracks[i] {
                let key = UInt64(UInt32(bitPattern: d)) << 32 | UInt64(UInt32(bitPattern: tracks[Int(ti)].beacon))
                trackSlots[key] = nil
                if tracks[Int(ti)].window >= 0 { giveBack(track: Int(ti)) }
                tracks[Int(ti)] = Track(beacon: tracks[Int(ti)].beacon, window: Track.never)
                freeTracks.append(ti)
            }
            deviceTracks[i] = []
        }
        if i < deviceZones.count {
            for z in deviceZones[i] {
                let key = UInt64(UInt32(bitPattern: d)) << 32 | UInt64(UInt32(bitPattern: zoneKeys[Int(z)].region))
                zoneSlots[key] = nil
                zones[Int(z)] = Zone()
                zoneKeys[Int(z)] = (-1, -1)
                freeZones.append(z)
            }
            deviceZones[i] = []
        }
        if i < devicePositionedZones.count { devicePositionedZones[i] = [] }
        if i < fusedPositions.count { fusedPositions[i] = nil }
    }
}
