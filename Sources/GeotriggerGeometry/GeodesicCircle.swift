#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CMath
import GeotriggerCore

/// A fix prepared for many circle tests: its coordinate and its unit vector on the sphere with the
/// same latitude and longitude, (cos φ cos λ, cos φ sin λ, sin φ). Sines and cosines once per
/// fix (`sinCos`); each circle test is then a few multiplications. An invalid coordinate (NaN,
/// |φ| > 90) has a NaN vector, so no test decides it cheaply.
public struct GeoPoint: Sendable {
    public let coordinate: Coordinate
    @usableFromInline let x: Double
    @usableFromInline let y: Double
    @usableFromInline let z: Double
    /// cos φ, computed once here for the callers that also need it.
    public let cosLatitude: Double

    @inlinable
    public init(_ c: Coordinate) {
        coordinate = c
        let phi = c.latitude * (Double.pi / 180), lambda = c.longitude * (Double.pi / 180)
        let (sinPhi, cosPhi) = sinCos(phi)
        cosLatitude = cosPhi
        guard abs(c.latitude) <= 90, c.longitude.isFinite else {
            x = .nan; y = .nan; z = .nan
            return
        }
        let (sinLambda, cosLambda) = sinCos(lambda)
        x = cosPhi * cosLambda
        y = cosPhi * sinLambda
        z = sinPhi
    }
}

/// sin x and cos x for |x| ≤ 3.2 (every latitude and longitude in radians), inlined: a Cody–Waite
/// reduction by the nearest multiple k·π/2 (k in −2…2, π/2 split so k·π/2's head is exact), then
/// fdlibm's kernel polynomials on |r| ≤ π/4 + 1e-15 (`__kernel_sin`, `__kernel_cos`: errors under
/// 2⁻⁵⁸ relative). Results are within 1e-15 of the exact values (a test holds them to glibc's
/// sin and cos over 10⁷ arguments), far inside the unit vector's margins (1e-14 rad on chords,
/// 1e-6 m on clearances): every decision is still one the exact distance makes. Elsewhere (NaN,
/// larger arguments) glibc's sincos.
@inlinable @inline(__always)
func sinCos(_ x: Double) -> (sin: Double, cos: Double) {
    guard abs(x) <= 3.2 else {
        var s = 0.0, c = 0.0
        geotrigger_sincos(x, &s, &c)
        return (s, c)
    }
    // The nearest integer (ties to even) by adding and subtracting 1.5·2⁵²: no libm call. Any
    // integer within ½ of x·2/π would do; |x·2/π| ≤ 2.1 here.
    let shifter = 6_755_399_441_055_744.0
    let k = (x * (2 / Double.pi) + shifter) - shifter
    // π/2 = pio2Head + pio2Tail; the head has 33 significant bits, so k·pio2Head is exact.
    let pio2Head = 1.57079632673412561417e+00, pio2Tail = 6.07710050650619224932e-11
    let r = (x - k * pio2Head) - k * pio2Tail
    let sinR = kernelSin(r), cosR = kernelCos(r)
    switch Int(k) & 3 {
    case 0: return (sinR, cosR)
    case 1: return (cosR, -sinR)
    case 2: return (-sinR, -cosR)
    default: return (-cosR, sinR)
    }
}

/// A geodesic circle on the WGS84 ellipsoid with an exit radius for hysteresis.
///
/// A point is *inside* when its geodesic distance to `center` is at most `radius`, and
/// *beyond exit* when that distance exceeds `exitRadius` (= radius + hysteresis).
///
/// Decisions go through two cheap rigorous tiers before the exact distance (Karney's inverse):
///
/// ## Tier 1: chord on the geodetic sphere
///
/// Map the ellipsoid onto the unit sphere by keeping geodetic latitude φ and longitude λ. The
/// ellipsoid's line element is ds² = M(φ)² dφ² + N(φ)² cos²φ dλ² (M meridional, N prime-vertical
/// radius of curvature), the sphere's dφ² + cos²φ dλ², so the ratio of lengths of any curve lies
/// between the smallest M and the largest N met along it (M ≤ N everywhere; both grow with |φ|).
/// Take the latitude band B = φ₀ ± δ with δ = D / (k_min·s), D = 2·exitRadius + 100 m (s ≤ 1
/// below; k_min = a(1 − e²) is WGS84's smallest radius of curvature). Then, for the central
/// angle θ between the center and a point and the geodesic distance d:
///
///  * if d ≤ D, the geodesic stays within D / k_min of φ₀, inside B, so d ≥ k_lo·θ with
///    k_lo = min over B of M;
///  * if θ ≤ δ, the great circle stays inside B, so d ≤ k_hi·θ with k_hi = max over B of N.
///
/// Hence d ≤ r is certain when k_hi·θ ≤ r and d > r is certain when k_lo·θ > r (for r ≤ D). θ is
/// compared through the chord |u − c| = 2 sin(θ/2) of precomputed unit vectors (`GeoPoint`): no
/// trigonometry per circle. The band left undecided is (k_hi/k_lo − 1) of the radius: 0.67 % at
/// the equator, 0.3 % at 48°, ~0 at the poles.
///
/// ## Tier 2: a sphere fitted to the circle
///
/// Stretch latitudes about the center, ψ = φ₀ + s(φ − φ₀) with s = M(φ₀)/N(φ₀), and keep λ. On the
/// unit sphere in (ψ, λ) the ratio of line elements is a mean of A = M(φ)/s (along meridians) and
/// B = N(φ)·cos φ / cos ψ (along parallels); both equal N(φ₀) at the center. Over the band, A lies
/// between M at the band's smallest and largest |φ| over s, and B between N there times
/// exp(∓|1 − s|·δ·tan(|φ|max + |1 − s|·δ)) (|d ln cos x / dx| = |tan x| and |ψ − φ| ≤ |1 − s|·δ).
/// The same two arguments give ρ_lo·θ' ≤ d ≤ ρ_hi·θ' for the stretched-sphere angle θ', with
/// ρ_hi/ρ_lo − 1 of order 10⁻⁶ for city-sized circles: the undecided band is about a millimetre.
/// Three trigonometric calls; used only inside tier 1's band, within 85° of the equator and for
/// D ≤ 200 km.
///
/// Tier 2's constants are not stored: they are recomputed from the center and radii, by the same
/// arithmetic in the same order (so to the same values), whenever tier 1 leaves a point undecided
/// or an event's distance is reported. That keeps a circle at 104 bytes instead of 168 — a million
/// regions fit the memory budget, and more circles share each cache line on the hot path.
///
/// Thresholds carry a 1e-9 relative and 1e-14 rad (64 nm) absolute safety margin, far above
/// the rounding error of the computed chord or haversine. Latitudes must lie in [−90, 90]; a
/// point with an invalid or NaN coordinate is classified `.ambiguous`, its distance is NaN, and it
/// is neither inside nor beyond exit.
public struct GeodesicCircle: Sendable {
    /// Outcome of the cheap bounds.
    public enum Decision: Sendable, Equatable {
        /// Certainly within the tested radius (distance ≤ radius).
        case inside
        /// Certainly beyond the tested radius (distance > radius).
        case outside
        /// Too close to the boundary for the bounds; needs the exact distance.
        case ambiguous
    }

    /// The center and both radii: all that tier 2 and the exact test need.
    public let core: CircleCore
    @inlinable public var center: Coordinate { core.center }
    /// Entry radius in metres.
    @inlinable public var radius: Double { core.radius }
    /// Exit radius in metres (radius + hysteresis), ≥ `radius`.
    @inlinable public var exitRadius: Double { core.exitRadius }

    // Tier 1: the center's unit vector and squared-chord thresholds.
    @usableFromInline let cx: Double
    @usableFromInline let cy: Double
    @usableFromInline let cz: Double
    /// chord² ≤ this ⇒ distance ≤ radius; chord² > `chordOut` ⇒ distance > radius.
    @usableFromInline let chordIn: Double
    @usableFromInline let chordOut: Double
    @usableFromInline let chordExitIn: Double
    @usableFromInline let chordExitOut: Double
    /// Smallest M and largest N over the band, metres per radian (with rounding margin).
    @usableFromInline let kLo: Double
    @usableFromInline let kHi: Double

    /// Tier 2: the stretched sphere's constants, for circles where it applies. Its haversine
    /// thresholds are sin²(r / ρ)-style bounds made from `rhoLo`/`rhoHi` for the radius tested.
    @usableFromInline struct StretchedSphere {
        @usableFromInline let stretch: Double
        @usableFromInline let cosCenterLat: Double
        @usableFromInline let rhoLo: Double
        @usableFromInline let rhoHi: Double
    }

    /// The latitude band of tier 1 around a center (radians): the stretch s = M/N at the center,
    /// the band's half-width δ and its smallest and largest |φ|.
    static func band(center: Coordinate, exitRadius: Double) -> (s: Double, delta: Double, minAbs: Double, maxAbs: Double) {
        let phi0 = center.latitude * (Double.pi / 180)
        let s = Self.meridional(phi0) / Self.primeVertical(phi0)
        let bandReach = 2 * exitRadius + 100
        let delta = bandReach / (Self.minCurvatureRadius * s) * (1 + 1e-9)
        let maxAbs = min(Double.pi / 2, abs(phi0) + delta)
        let minAbs = abs(phi0) <= delta ? 0 : abs(phi0) - delta
        return (s, delta, minAbs, maxAbs)
    }

    /// Minimum radius of curvature of WGS84, a(1 − e²) (meridional, at the equator), metres.
    public static let minCurvatureRadius: Double = {
        let f = Geodesic.flattening
        return Geodesic.equatorialRadius * (1 - f * (2 - f))
    }()
    /// Maximum radius of curvature of WGS84, a²/b (at the poles), metres.
    public static let maxCurvatureRadius: Double =
        Geodesic.equatorialRadius * Geodesic.equatorialRadius / Geodesic.polarRadius

    static let e2: Double = Geodesic.flattening * (2 - Geodesic.flattening)
    /// Absolute margin on central angles and chords (radians), against rounding.
    @usableFromInline static let angleMargin = 1e-14
    /// Relative margin on thresholds, against rounding.
    static let relativeMargin = 1e-9

    /// Meridional radius of curvature M(φ), φ in radians.
    static func meridional(_ phi: Double) -> Double {
        let w2 = 1 - e2 * sin(phi) * sin(phi)
        return Geodesic.equatorialRadius * (1 - e2) / (w2 * w2.squareRoot())
    }

    /// Prime-vertical radius of curvature N(φ), φ in radians.
    static func primeVertical(_ phi: Double) -> Double {
        Geodesic.equatorialRadius / (1 - e2 * sin(phi) * sin(phi)).squareRoot()
    }

    /// - Precondition: `0 ≤ radius ≤ exitRadius`, both finite; center latitude in [−90, 90].
    public init(center: Coordinate, radius: Double, exitRadius: Double) {
        precondition(radius >= 0 && exitRadius >= radius && exitRadius.isFinite,
                     "GeodesicCircle needs 0 <= radius <= exitRadius < infinity")
        precondition(abs(center.latitude) <= 90, "GeodesicCircle center latitude must be in [-90, 90]")
        core = CircleCore(center: center, radius: radius, exitRadius: exitRadius)
        let unit = GeoPoint(center)
        cx = unit.x; cy = unit.y; cz = unit.z

        let (_, _, minAbs, maxAbs) = Self.band(center: center, exitRadius: exitRadius)
        kLo = Self.meridional(minAbs) * (1 - 1e-12)
        kHi = Self.primeVertical(maxAbs) * (1 + 1e-12)
        chordIn = Self.chordBelow(radius / kHi)
        chordOut = Self.chordAbove(radius / kLo)
        chordExitIn = Self.chordBelow(exitRadius / kHi)
        chordExitOut = Self.chordAbove(exitRadius / kLo)
    }

    /// Largest squared chord certainly within central angle `theta`.
    static func chordBelow(_ theta: Double) -> Double {
        if theta >= .pi { return .infinity }  // every point is within θ ≤ π
        let c = 2 * sin(max(0, theta - angleMargin) / 2) - angleMargin
        return c > 0 ? c * c * (1 - relativeMargin) : -1
    }

    /// Smallest squared chord certainly beyond central angle `theta`.
    static func chordAbove(_ theta: Double) -> Double {
        if theta >= .pi { return .infinity }  // no point is certainly beyond
        let c = 2 * sin(min(.pi, theta + angleMargin) / 2) + angleMargin
        return c * c * (1 + relativeMargin)
    }

    /// Largest haversine sin²(θ/2) certainly within central angle `theta`.
    public static func haversineBelow(_ theta: Double) -> Double {
        if theta >= .pi { return .infinity }
        let s = sin(max(0, theta - angleMargin) / 2)
        return s * s * (1 - relativeMargin)
    }

    /// Smallest haversine certainly beyond central angle `theta`.
    static func haversineAbove(_ theta: Double) -> Double {
        if theta >= .pi { return .infinity }
        let s = sin(min(.pi, theta + angleMargin) / 2)
        return s * s * (1 + relativeMargin)
    }

    /// Squared chord between the center and `q` on the unit sphere (NaN for an invalid point).
    @inlinable @inline(__always)
    func chord2(_ q: GeoPoint) -> Double {
        let dx = q.x - cx, dy = q.y - cy, dz = q.z - cz
        return dx * dx + dy * dy + dz * dz
    }

    /// A lower bound, in metres, on how far `q` must move before the decision for this circle can
    /// change: to the exit boundary when `inside`, to the entry boundary otherwise (0 if unsure).
    /// Moving `m` metres changes the geodesic distance by at most `m` (triangle inequality).
    @inlinable
    public func clearance(_ q: GeoPoint, inside: Bool) -> Double {
        Self.clearance(chord2: chord2(q), inside: inside, radius: radius, exitRadius: exitRadius, kLo: kLo, kHi: kHi)
    }

    /// The clearance from the squared chord to the center. Any radius or `kLo` smaller, or any
    /// `exitRadius` smaller or `kHi` larger than the circle's, still gives a lower bound.
    @inlinable @inline(__always)
    static func clearance(chord2: Double, inside: Bool, radius: Double, exitRadius: Double,
                          kLo: Double, kHi: Double) -> Double {
        let c = chord2.squareRoot()
        guard c.isFinite else { return 0 }
        let c2 = Self.angleMargin
        if inside {
            // θ = 2 asin(c/2) ≤ c (1 + c²/12) for c ≤ 1; the great circle stays in the band while
            // θ ≤ exitRadius / k_min (< δ).
            let up = c + c2
            guard up <= 1 else { return 0 }
            let theta = up * (1 + up * up / 12)
            return max(0, (exitRadius - kHi * theta) * (1 - 1e-9) - 1e-6)
        }
        // θ ≥ c; d ≥ min(D, k_lo θ).
        let theta = max(0, c - c2)
        let d = min(2 * exitRadius + 100, kLo * theta)
        return max(0, (d - radius) * (1 - 1e-9) - 1e-6)
    }

    /// Tier 1 and the clearance in one cache line (see `HotCircle`).
    public var hot: HotCircle {
        HotCircle(x: cx, y: cy, z: cz,
                  chordIn: .below(chordIn), chordOut: .above(chordOut),
                  chordExitIn: .below(chordExitIn), chordExitOut: .above(chordExitOut),
                  kLo: .below(kLo), kHi: .above(kHi), radius: .above(radius), exitRadius: .below(exitRadius))
    }

    /// Cheap, rigorous classification against `radius` (tiers 1 and 2): `.inside` guarantees
    /// distance ≤ radius, `.outside` guarantees distance > radius, `.ambiguous` means the exact
    /// distance is needed.
    @inlinable
    public func cheapClassify(_ q: GeoPoint) -> Decision {
        classify(q, chordIn: chordIn, chordOut: chordOut, exit: false)
    }

    /// Cheap, rigorous classification against `exitRadius`.
    @inlinable
    public func cheapClassifyExit(_ q: GeoPoint) -> Decision {
        classify(q, chordIn: chordExitIn, chordOut: chordExitOut, exit: true)
    }

    /// Tier 1 against the chord thresholds, then tier 2 against the stretched-sphere ones.
    @inlinable @inline(__always)
    func classify(_ q: GeoPoint, chordIn: Double, chordOut: Double, exit: Bool) -> Decision {
        let c2 = chord2(q)
        if c2 <= chordIn { return .inside }
        if c2 > chordOut { return .outside }
        guard c2.isFinite else { return .ambiguous }
        return core.classifyOnStretchedSphere(q.coordinate, exit: exit)
    }

    public func cheapClassify(_ p: Coordinate) -> Decision { cheapClassify(GeoPoint(p)) }
    public func cheapClassifyExit(_ p: Coordinate) -> Decision { cheapClassifyExit(GeoPoint(p)) }

    /// Whether the geodesic distance from the center to `q` is at most `radius`.
    @inlinable
    public func isInside(_ q: GeoPoint) -> Bool {
        switch cheapClassify(q) {
        case .inside: return true
        case .outside: return false
        case .ambiguous: return distance(to: q.coordinate) <= radius
        }
    }

    /// Whether the geodesic distance from the center to `q` exceeds `exitRadius`.
    @inlinable
    public func isBeyondExit(_ q: GeoPoint) -> Bool {
        switch cheapClassifyExit(q) {
        case .inside: return false
        case .outside: return true
        case .ambiguous: return distance(to: q.coordinate) > exitRadius
        }
    }

    public func isInside(_ p: Coordinate) -> Bool { isInside(GeoPoint(p)) }
    public func isBeyondExit(_ p: Coordinate) -> Bool { isBeyondExit(GeoPoint(p)) }

    /// The exact WGS84 geodesic distance from the center to `p`, metres.
    @inlinable
    public func distance(to p: Coordinate) -> Double { core.distance(to: p) }

    /// The geodesic distance from the center to `p` rounded to the centimetre (see `CircleCore`).
    public func distanceInCentimetres(to p: Coordinate) -> Double { core.distanceInCentimetres(to: p) }
}

/// A circle's center and radii, with the tests that need nothing else: tier 2 (its constants
/// recomputed on each use) and Karney's exact distance. The region index keeps these (32 bytes)
/// beside its `HotCircle` table, which stands in for tier 1.
public struct CircleCore: Sendable {
    public let center: Coordinate
    public let radius: Double
    public let exitRadius: Double

    public init(center: Coordinate, radius: Double, exitRadius: Double) {
        self.center = center
        self.radius = radius
        self.exitRadius = exitRadius
    }

    /// Tier 2's constants, recomputed (nil where tier 2 is not used: beyond 85° or D > 200 km).
    @usableFromInline var stretchedSphere: GeodesicCircle.StretchedSphere? {
        let (s, delta, minAbs, maxAbs) = GeodesicCircle.band(center: center, exitRadius: exitRadius)
        guard maxAbs < 85 * Double.pi / 180 && 2 * exitRadius + 100 <= 200_000 else { return nil }
        let (lo, hi) = Self.ratioBounds(stretch: s, minAbs: minAbs, maxAbs: maxAbs, deviation: delta)
        return GeodesicCircle.StretchedSphere(stretch: s, cosCenterLat: cosDegrees(center.latitude), rhoLo: lo, rhoHi: hi)
    }

    /// Tier 2's ρ_lo and ρ_hi over a latitude band: |φ| within [minAbs, maxAbs] and |φ − φ₀| at
    /// most `deviation` (radians) on it.
    static func ratioBounds(stretch s: Double, minAbs: Double, maxAbs: Double, deviation: Double) -> (Double, Double) {
        let slack = abs(1 - s) * deviation
        let e = slack * tan(maxAbs + slack)
        let lo = min(GeodesicCircle.meridional(minAbs) / s, GeodesicCircle.primeVertical(minAbs) * exp(-e)) * (1 - 1e-12)
        let hi = max(GeodesicCircle.meridional(maxAbs) / s, GeodesicCircle.primeVertical(maxAbs) * exp(e)) * (1 + 1e-12)
        return (lo, hi)
    }

    /// ρ_lo and ρ_hi for one point `p` at most `reach` metres from the center (tier 2's bounds
    /// already give d ≤ reach), over the narrower band this pair needs.
    ///
    /// With φₘ the mean of the two latitudes and h = reach / (2·k_min·s): a point at arc length t
    /// along the geodesic is within t / k_min of φ₀ and (d − t) / k_min of φₚ in latitude (the
    /// meridional radius is at least k_min), so within d / (2·k_min) ≤ h of φₘ. On the stretched
    /// sphere the great circle of angle θ' ≤ reach / k_min likewise stays within θ'/2 of the mean
    /// ψ, so φ within θ' / (2s) ≤ h of φₘ. Both curves, which tier 2's two bounds follow, lie in
    /// φₘ ± h, where |φ − φ₀| ≤ |φₚ − φ₀| / 2 + h. That band is about a quarter as wide as
    /// φ₀ ± δ for a point on the boundary, and so is the spread ρ_hi / ρ_lo − 1.
    func ratioBounds(toward p: Coordinate, reach: Double, stretch s: Double) -> (Double, Double) {
        let phi0 = center.latitude * (Double.pi / 180), phiP = p.latitude * (Double.pi / 180)
        let mid = (phi0 + phiP) / 2
        let half = reach / (2 * GeodesicCircle.minCurvatureRadius * s) * (1 + 1e-9) + 1e-15
        let maxAbs = min(Double.pi / 2, abs(mid) + half)
        let minAbs = abs(mid) <= half ? 0 : abs(mid) - half
        return Self.ratioBounds(stretch: s, minAbs: minAbs, maxAbs: maxAbs,
                                deviation: abs(phiP - phi0) / 2 * (1 + 1e-12) + half)
    }

    /// The haversine of the stretched-sphere angle between the center and `p` (tier 2).
    @inlinable
    func stretchedHaversine(_ p: Coordinate, _ sphere: GeodesicCircle.StretchedSphere) -> Double {
        let dPsi = sphere.stretch * (p.latitude - center.latitude)
        var dLon = p.longitude - center.longitude
        if abs(dLon) > 180 { dLon -= Double(signOf: dLon, magnitudeOf: 360) }
        let a = smallSin(dPsi * (Double.pi / 360))
        let b = smallSin(dLon * (Double.pi / 360))
        return a * a + sphere.cosCenterLat * cosDegrees(center.latitude + dPsi) * (b * b)
    }

    /// Tier 2, out of line: its constants are recomputed here unless the caller keeps them
    /// (`sphere`, nil where tier 2 does not apply), for the few points tier 1 leaves.
    @usableFromInline @inline(never)
    func classifyOnStretchedSphere(_ p: Coordinate, exit: Bool) -> GeodesicCircle.Decision {
        classifyOnStretchedSphere(p, exit: exit, sphere: stretchedSphere)
    }

    @usableFromInline
    func classifyOnStretchedSphere(_ p: Coordinate, exit: Bool, sphere: GeodesicCircle.StretchedSphere?) -> GeodesicCircle.Decision {
        guard let sphere else { return .ambiguous }
        let h = stretchedHaversine(p, sphere)
        let r = exit ? exitRadius : radius
        if h <= GeodesicCircle.haversineBelow(r / sphere.rhoHi) { return .inside }
        if h > GeodesicCircle.haversineAbove(r / sphere.rhoLo) { return .outside }
        return .ambiguous
    }

    /// Whether `p` is inside (against `radius`) or, with `exit`, beyond `exitRadius`: tier 2,
    /// then Karney's distance. For points the cheap tiers upstream left open.
    public func decide(_ p: Coordinate, exit: Bool) -> Bool {
        decide(p, exit: exit, sphere: stretchedSphere)
    }

    /// The same with tier 2's constants given (nil where tier 2 does not apply).
    @usableFromInline
    func decide(_ p: Coordinate, exit: Bool, sphere: GeodesicCircle.StretchedSphere?) -> Bool {
        switch classifyOnStretchedSphere(p, exit: exit, sphere: sphere) {
        case .inside: return !exit
        case .outside: return exit
        case .ambiguous: return exit ? distance(to: p) > exitRadius : distance(to: p) <= radius
        }
    }

    /// The exact WGS84 geodesic distance from the center to `p`, metres.
    @inlinable
    public func distance(to p: Coordinate) -> Double {
        Geodesic.distance(center, p)
    }

    /// The geodesic distance from the center to `p` rounded to the centimetre — exactly the
    /// rounding of ``distance(to:)``. Karney's inverse runs only when the tier-2 interval
    /// [ρ_lo·θ', ρ_hi·θ'] straddles a half centimetre (about one call in ten where tier 2 applies)
    /// and so does the one over the point's own band (`ratioBounds(toward:reach:stretch:)`):
    /// about one call in fifty.
    public func distanceInCentimetres(to p: Coordinate) -> Double {
        distanceInCentimetres(to: p, sphere: stretchedSphere)
    }

    /// The same with tier 2's constants given (nil where tier 2 does not apply), for callers that
    /// keep them (`RegionIndex`).
    func distanceInCentimetres(to p: Coordinate, sphere: GeodesicCircle.StretchedSphere?) -> Double {
        if abs(p.latitude) <= 90, let sphere {
            let h = stretchedHaversine(p, sphere)
            let theta = 2 * smallAsin(min(1, h.squareRoot()))
            // The bounds hold while the distance stays within the band's reach D.
            if sphere.rhoHi * theta <= 2 * exitRadius + 100 {
                let (lo, hi) = Self.metres(theta, sphere.rhoLo, sphere.rhoHi)
                if let cm = Self.centimetres(lo, hi) { return cm }
                // The interval straddles a half centimetre: the bounds over this point's own
                // band, about four times tighter, before Karney.
                let (rhoLo, rhoHi) = ratioBounds(toward: p, reach: hi, stretch: sphere.stretch)
                let (lo2, hi2) = Self.metres(theta, max(rhoLo, sphere.rhoLo), min(rhoHi, sphere.rhoHi))
                if let cm = Self.centimetres(lo2, hi2) { return cm }
            }
        }
        return (distance(to: p) * 100).rounded() / 100
    }

    /// The distance interval [ρ_lo·θ', ρ_hi·θ'] in metres, widened against rounding.
    @inline(__always)
    static func metres(_ theta: Double, _ rhoLo: Double, _ rhoHi: Double) -> (Double, Double) {
        ((rhoLo * theta) * (1 - 1e-9) - 1e-7, (rhoHi * theta) * (1 + 1e-9) + 1e-7)
    }

    /// The distance rounded to the centimetre if every distance in [lo, hi] rounds alike.
    @inline(__always)
    static func centimetres(_ lo: Double, _ hi: Double) -> Double? {
        let below = roundedHalfAway(lo * 100), above = roundedHalfAway(hi * 100)
        return below == above ? max(0, above) / 100 : nil
    }
}

/// `x.rounded()` (to nearest, ties away from zero) without a libm call, for |x| < 2⁵²: the
/// truncation t is exact, and so is x − t, so comparing it with ½ decides. NaN and larger
/// values take `rounded()`.
@inlinable @inline(__always)
func roundedHalfAway(_ x: Double) -> Double {
    guard abs(x) < 4_503_599_627_370_496 else { return x.rounded() }
    let t = Double(Int64(x))
    let d = x - t
    if d >= 0.5 { return t + 1 }
    if d <= -0.5 { return t - 1 }
    return t
}

/// sin x, by its Taylor polynomial to x⁹ where |x| < 1/64 (the half-angles of tier 2, a few
/// kilometres over the Earth's radius, are below 1e-3): the next term is under x¹¹/4·10⁷, a
/// relative error below 10⁻²⁵ there, far under a rounding. The coefficients are rounded
/// reciprocals, multiplied rather than divided by (a few ulps in all, against tier 2's margins
/// of 10⁻⁹). Elsewhere the C library's.
@inlinable @inline(__always)
func smallSin(_ x: Double) -> Double {
    guard abs(x) < 1.0 / 64 else { return sin(x) }
    let x2 = x * x
    return x + x * x2 * (-1.0 / 6 + x2 * (1.0 / 120 + x2 * (-1.0 / 5040 + x2 * (1.0 / 362_880))))
}

/// asin y, by its series to y⁹ where 0 ≤ y < 1/64: the next term, 63y¹¹/2816, is a relative
/// error below 10⁻²⁰ there. Elsewhere the C library's.
@inlinable @inline(__always)
func smallAsin(_ y: Double) -> Double {
    guard abs(y) < 1.0 / 64 else { return asin(y) }
    let y2 = y * y
    return y * (1 + y2 * (1.0 / 6 + y2 * (3.0 / 40 + y2 * (5.0 / 112 + y2 * (35.0 / 1152)))))
}

/// fdlibm's `__kernel_sin` polynomial: sin r for |r| ≤ π/4 (under 2⁻⁵⁸ relative error).
@inlinable @inline(__always)
func kernelSin(_ r: Double) -> Double {
    let z = r * r
    return r + r * z * (-1.66666666666666324348e-01 + z * (8.33333333332248946124e-03
        + z * (-1.98412698298579493134e-04 + z * (2.75573137070700676789e-06
        + z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)))))
}

/// fdlibm's `__kernel_cos` polynomial: cos r for |r| ≤ π/4.
@inlinable @inline(__always)
func kernelCos(_ r: Double) -> Double {
    let z = r * r
    return 1 - 0.5 * z + z * z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03
        + z * (2.48015872894767294178e-05 + z * (-2.75573143513906633035e-07
        + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11)))))
}

/// cos(x°) with full relative accuracy near the poles: for |x| > 45 it uses sin(90° − |x|),
/// where 90 − |x| is exact (Sterbenz, for |x| up to 180), so cos φ stays accurate when φ is
/// close to ±90. Up to |x| = 135 both arguments are within π/4, so one kernel polynomial does
/// (about an ulp, as glibc's; `sinCos` would reduce the argument and evaluate both); beyond,
/// `sinCos`.
@inlinable @inline(__always)
func cosDegrees(_ x: Double) -> Double {
    let ax = abs(x)
    if ax <= 45 { return kernelCos(ax * (Double.pi / 180)) }
    if ax <= 135 { return kernelSin((90 - ax) * (Double.pi / 180)) }
    return sinCos((90 - ax) * (Double.pi / 180)).sin
}

/// What the hot path reads of a circle, in 64 bytes: the center's unit vector, tier 1's chord
/// thresholds and the clearance's constants, as Float rounded so that every decision it makes is
/// one the full circle would make (thresholds move towards "ambiguous") and every clearance is
/// smaller. `decide` answers nil where the full circle must decide. A region that is no circle
/// has a NaN vector, so it is never decided here.
public struct HotCircle: Sendable {
    @usableFromInline var x, y, z: Double
    @usableFromInline var chordIn, chordOut, chordExitIn, chordExitOut: Float
    @usableFromInline var kLo, kHi, radius, exitRadius: Float
    /// Set by `RegionIndex` for its own table (they fill what would be padding, so the struct is
    /// 64 bytes and an aligned table holds one per cache line): the region's slow line (≥ 0 for a
    /// circle; -1 a polygon, -2 a beacon without position), and its position in the array the
    /// index was given. A test has this line in cache already, so what follows a decision (an
    /// event's distance, the order it is reported in) costs no miss of its own.
    @usableFromInline var slot: Int32 = -1
    @usableFromInline var given: Int32 = 0

    @usableFromInline
    init(x: Double, y: Double, z: Double, chordIn: Float, chordOut: Float, chordExitIn: Float,
         chordExitOut: Float, kLo: Float, kHi: Float, radius: Float, exitRadius: Float) {
        self.x = x; self.y = y; self.z = z
        self.chordIn = chordIn; self.chordOut = chordOut
        self.chordExitIn = chordExitIn; self.chordExitOut = chordExitOut
        self.kLo = kLo; self.kHi = kHi; self.radius = radius; self.exitRadius = exitRadius
    }

    /// Never decides anything.
    public static let none = HotCircle(x: .nan, y: .nan, z: .nan, chordIn: -1, chordOut: .infinity,
                                       chordExitIn: -1, chordExitOut: .infinity, kLo: 0, kHi: .infinity,
                                       radius: .infinity, exitRadius: 0)

    @inlinable @inline(__always)
    func chord2(_ q: GeoPoint) -> Double {
        let dx = q.x - x, dy = q.y - y, dz = q.z - z
        return dx * dx + dy * dy + dz * dz
    }

    /// Whether `q` is inside (true), outside (false) or too close to tell here (nil).
    @inlinable @inline(__always)
    public func isInside(chord2 c2: Double) -> Bool? {
        if c2 <= Double(chordIn) { return true }
        if c2 > Double(chordOut) { return false }
        return nil
    }

    /// Whether `q` is beyond exit (true), within it (false) or too close to tell here (nil).
    @inlinable @inline(__always)
    public func isBeyondExit(chord2 c2: Double) -> Bool? {
        if c2 > Double(chordExitOut) { return true }
        if c2 <= Double(chordExitIn) { return false }
        return nil
    }

    @inlinable @inline(__always)
    public func clearance(chord2 c2: Double, inside: Bool) -> Double {
        GeodesicCircle.clearance(chord2: c2, inside: inside, radius: Double(radius), exitRadius: Double(exitRadius),
                                 kLo: Double(kLo), kHi: Double(kHi))
    }
}
