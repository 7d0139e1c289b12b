import CBoxes
import CPrefetch
import GeotriggerCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerGeometry

// The fast path's geometry: a device's neighbourhood (the regions around a centre that a fix
// may still change), taken afresh from the index when the device leaves it, retested in place
// while it stays inside, and the bounds that let a fix skip every test.
extension Monitor {
    /// Prefetches the hot entries of the first four regions in `due` (bits of block `b` of
    /// `near`), with no branch on how many there are: where fewer are due, the block's last
    /// entry is asked for again.
    @inline(__always)
    func prefetchRegions(_ near: Neighbourhood, block b: Int, _ due: UInt32) {
        var m = due
        for _ in 0..<4 {
            index.prefetch(near.dueRegion(block: b, m))
            m &= m &- 1
        }
    }

    /// A fix beyond its device's neighbourhood (or its first): the index is asked for the
    /// regions around a new centre, every candidate is tested, and the new neighbourhood keeps
    /// those whose boundary may come within its reach. `step`: the bound on the distance from
    /// the last evaluated fix.
    func refresh(_ slot: Int, _ d: Int32, _ t: Double, _ q: GeoPoint, first: Bool, step: Double) {
        let plan = refreshPlan(slot, t, q, step: step)
        let box = index.candidates(around: plan.centre.point.coordinate, metres: plan.reach)
        refresh(slot, d, t, q, first: first, plan, candidates: box)
    }

    /// The new neighbourhood's reach and centre.
    struct RefreshPlan {
        var reach: Double
        var centre: (point: GeoPoint, phi: Double, lambda: Double, offset: Double)
    }

    /// The reach and centre of a fix's new neighbourhood (`refresh`).
    @inline(__always)
    func refreshPlan(_ slot: Int, _ t: Double, _ q: GeoPoint, step: Double) -> RefreshPlan {
        let base = options.safeDistance ?? 0
        let phi = q.coordinate.latitude * (Double.pi / 180), lambda = q.coordinate.longitude * (Double.pi / 180)
        var speed = 0.0  // metres per second since the neighbourhood was taken, once beyond it
        var heading: (north: Double, east: Double)? = nil  // from the last neighbourhood's centre
        if states[slot].reach > 0 {
            let elapsed = t - timeOrigin - Double(states[slot].centreTakenAt)
            if elapsed > 0 { speed = (states[slot].odometer + step) / elapsed }
            var dLambda = lambda - states[slot].centreLambda
            if abs(dLambda) > Double.pi { dLambda -= Double(signOf: dLambda, magnitudeOf: 2 * Double.pi) }
            heading = (phi - states[slot].centrePhi, dLambda * q.cosLatitude)
        }
        let reach = Self.reach(base: base, speed: speed, limit: states[slot].reachLimit)
        // The new neighbourhood's centre: ahead of the fix along the way it came, so that a
        // device going on the same way crosses more of it before it must ask again.
        return RefreshPlan(reach: reach, centre: Self.centre(ahead: q, heading: heading, reach: reach))
    }

    /// `refresh` with its plan made and the index's answer for it (`candidates(around:)`).
    func refresh(_ slot: Int, _ d: Int32, _ t: Double, _ q: GeoPoint, first: Bool, _ plan: RefreshPlan,
                         candidates: RegionCandidates?) {
        let reach = plan.reach, centre = plan.centre
        guard let box = candidates else {
            // Near a pole or the antimeridian: the plain path.
            states[slot].reach = 0
            states[slot].safeAngle = 0
            evaluate(slot, d, t, q, index.candidates(at: q.coordinate), first: first, safe: nil)
            return
        }
        // The polygon tests are of the fix, not of the query box's centre.
        if centre.offset > 0 { index.setQueryPoint(q.coordinate) }
        newNear.removeAll()
        index.warm(box)
        let safe = evaluate(slot, d, t, q, box, first: first, safe: reach, keepBelow: reach,
                            keepAround: centre.offset > 0 ? centre.point : nil)
        states[slot].near.assign(newNear)
        states[slot].centrePhi = centre.phi
        states[slot].centreLambda = centre.lambda
        states[slot].centreCos = Self.cosineBound(centre.point.cosLatitude)
        states[slot].reach = Float(reach)
        states[slot].reachLimit = max(1, Self.reachClearances * Float(safe))
        states[slot].centreTakenAt = Float(t - timeOrigin)
        states[slot].odometer = 0
        setAnchor(slot, q, safe: min(safe, reach - centre.offset))
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
    func retestNeighbourhood(_ slot: Int, _ d: Int32, _ t: Double, _ q: GeoPoint, odometer: Double, first: Bool) -> Double {
        // A view of the list: nothing below reallocates it.
        let near = states[slot].near
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
                safe = min(safe, retestRegion(slot, d, t, q, entry: i, near, first: first, odometer: odometer, from: &from))
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
    func retestRegion(_ slot: Int, _ d: Int32, _ t: Double, _ q: GeoPoint, entry i: Int, _ near: Neighbourhood,
                              first: Bool, odometer: Double, from: inout Int) -> Double {
        let e = retestEntry(near, i, q, odometer: odometer)
        if e.inside != e.visited { cross(slot, d, t, e.region, q, leaving: e.visited, first: first, from: &from) }
        return e.clearance
    }

    /// Retests entry `i` of `near` at `q` and rewrites it in place: its decision, and the
    /// odometer reading at which it is next due. Inside: within the exit boundary for a visit,
    /// the entry boundary otherwise. `visited` is the decision before.
    @inline(__always)
    func retestEntry(_ near: Neighbourhood, _ i: Int, _ q: GeoPoint, odometer: Double)
        -> (region: Int32, visited: Bool, inside: Bool, clearance: Double)
    {
        let key = near.key(i)
        let r = NearRegion.region(ofKey: key)
        let visited = key & 1 != 0
        let (inside, c) = index.retest(Int(r), q, visited: visited)
        near[i] = NearRegion(key: key & ~1 | (inside ? 1 : 0), clearance: .belowNonNegative(c + odometer))
        return (r, visited, inside, c)
    }

    /// `setAnchor` at the fix `q`.
    @inline(__always)
    func setAnchor(_ slot: Int, _ q: GeoPoint, safe: Double) {
        setAnchor(slot, q.coordinate.latitude * (Double.pi / 180), q.coordinate.longitude * (Double.pi / 180),
                  q.cosLatitude, safe: safe)
    }

    func setAnchor(_ slot: Int, _ phi: Double, _ lambda: Double, _ cosPhi: Double, safe: Double) {
        states[slot].anchorPhi = phi
        states[slot].anchorLambda = lambda
        states[slot].anchorCos = Self.cosineBound(cosPhi)
        states[slot].safeAngle = Self.angleBelow(safe / GeodesicCircle.maxCurvatureRadius)
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

    /// Whether a candidate belongs in the new neighbourhood: its boundary may come within `reach`
    /// of the neighbourhood's centre, which is the fix itself (its clearance `c` there tells) or
    /// `around` (`boundaryMayBeWithin`, for the state `inside` just decided at the fix).
    @inline(__always)
    func keeps(_ r: Int32, _ inside: Bool, _ c: Double, _ reach: Double, _ around: GeoPoint?) -> Bool {
        guard let around else { return c < reach }
        return index.boundaryMayBeWithin(Int(r), reach, of: around, inside: inside)
    }
}
