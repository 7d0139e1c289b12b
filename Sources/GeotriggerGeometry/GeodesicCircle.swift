#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CMath
import GeotriggerCore

/// A fix prepared for many circle tests: its coordinate and its position on the WGS84 ellipsoid
/// in Earth-centred, Earth-fixed coordinates (metres), (N cos φ cos λ, N cos φ sin λ,
/// N (1 − e²) sin φ) with N = a / √(1 − e² sin² φ). Sines and cosines once per fix (`sinCos`),
/// one square root and one division; each circle test is then a squared chord, a few
/// multiplications. An invalid coordinate (NaN, |φ| > 90) has NaN coordinates, so no test
/// decides it cheaply.
///
/// The position is within 3·10⁻⁸ m of the exact one for the given latitude and longitude (sines
/// and cosines within 10⁻¹⁵ of libm's, a few roundings of numbers below 6.4·10⁶ m); the chord
/// bounds of ``GeodesicCircle`` allow 10⁻⁶ m (`GeodesicCircle.chordError`).
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
        let n = WGS84.a / (1 - WGS84.e2 * (sinPhi * sinPhi)).squareRoot()
        let nCos = n * cosPhi
        x = nCos * cosLambda
        y = nCos * sinLambda
        z = n * WGS84.oneMinusE2 * sinPhi
    }

    /// The squared chord (m²) between this point and `(x, y, z)` (another point's coordinates).
    @inlinable @inline(__always)
    func chord2(_ cx: Double, _ cy: Double, _ cz: Double) -> Double {
        let dx = x - cx, dy = y - cy, dz = z - cz
        return dx * dx + dy * dy + dz * dz
    }
}

/// WGS84's constants as literals (a test checks them against `Geodesic`'s), so the inlined hot
/// path reads no lazily initialised global.
@usableFromInline enum WGS84 {
    /// Equatorial radius a, metres.
    @inlinable static var a: Double { 6_378_137 }
    /// First eccentricity squared, e² = f (2 − f).
    @inlinable static var e2: Double { 0.0066943799901413170 }
    /// 1 − e².
    @inlinable static var oneMinusE2: Double { 0.99330562000985868 }
    /// The ellipsoid's largest curvature, a / b² (m⁻¹), rounded up: every normal section, hence
    /// every geodesic, bends at most this much.
    @inlinable static var maxCurvature: Double { 1.5784225029068480e-7 }
}

/// sin x and cos x for |x| ≤ 3.2 (every latitude and longitude in radians), inlined: a Cody–Waite
/// reduction by the nearest multiple k·π/2 (k in −2…2, π/2 split so k·π/2's head is exact), then
/// fdlibm's kernel polynomials on |r| ≤ π/4 + 1e-15 (`__kernel_sin`, `__kernel_cos`: errors under
/// 2⁻⁵⁸ relative). Results are within 1e-15 of the exact values (a test holds them to glibc's
/// sin and cos over 10⁷ arguments): they move a fix's coordinates by at most 6.4·10⁻⁹ m, far
/// inside the chord's error allowance of 10⁻⁶ m (`GeodesicCircle.chordError`), so every decision
/// is still one the exact distance makes. Elsewhere (NaN, larger arguments) glibc's sincos.
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
/// ## The chord bound
///
/// Decisions are made from the straight-line chord c between the center and the point, both on
/// the ellipsoid (`GeoPoint`'s Earth-centred coordinates), before any geodesic is computed. For
/// the geodesic distance s:
///
///  * s ≥ c: a straight line is the shortest path of all;
///  * s ≤ (2/K) asin(cK/2), with K = a/b² the ellipsoid's largest curvature: a geodesic's
///    curvature as a space curve is its normal curvature (its geodesic curvature is 0), at most
///    K, and by Schur's comparison theorem a curve of length s whose curvature never exceeds K
///    (with Ks ≤ π) has a chord at least that of a circular arc of radius 1/K and the same
///    length, (2/K) sin(Ks/2).
///
/// So d ≤ r is certain when (2/K) asin(cK/2) ≤ r, and d > r when c > r. The two bounds differ by
/// about c³K²/24: 0.13 µm at 500 m, 0.13 mm at 5 km, 1 m at 100 km. Allowing 1 µm for the
/// rounding of the coordinates (`chordError`, more than ten times what it can be), a city
/// circle leaves points undecided only within a few micrometres of its boundary (a Float copy,
/// `HotCircle`, a few tens of micrometres); only there is Karney's inverse computed.
///
/// The same bounds give the clearances of the fast path (how far a point must move before a
/// decision can change, by the triangle inequality) and an event's distance to the centimetre:
/// the interval [c, (2/K) asin(cK/2)] widened by `chordError` rounds to one centimetre value but
/// for about one distance in 5,000, which Karney settles. The chord works the same everywhere:
/// across the antimeridian, at the poles, on the equator.
///
/// Latitudes must lie in [−90, 90]; a point with an invalid or NaN coordinate is classified
/// `.ambiguous`, its distance is NaN, and it is neither inside nor beyond exit.
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

    /// The center and both radii: all that the exact test needs.
    public let core: CircleCore
    @inlinable public var center: Coordinate { core.center }
    /// Entry radius in metres.
    @inlinable public var radius: Double { core.radius }
    /// Exit radius in metres (radius + hysteresis), ≥ `radius`.
    @inlinable public var exitRadius: Double { core.exitRadius }

    /// The center's Earth-centred coordinates (metres), as `GeoPoint` computes them.
    @usableFromInline let cx: Double
    @usableFromInline let cy: Double
    @usableFromInline let cz: Double
    /// chord² ≤ `chordIn` ⇒ distance ≤ radius; chord² > `chordOut` ⇒ distance > radius (m²).
    @usableFromInline let chordIn: Double
    @usableFromInline let chordOut: Double
    @usableFromInline let chordExitIn: Double
    @usableFromInline let chordExitOut: Double

    /// Minimum radius of curvature of WGS84, a(1 − e²) = b²/a (meridional, at the equator), metres.
    public static let minCurvatureRadius: Double = {
        let f = Geodesic.flattening
        return Geodesic.equatorialRadius * (1 - f * (2 - f))
    }()
    /// Maximum radius of curvature of WGS84, a²/b (at the poles), metres.
    public static let maxCurvatureRadius: Double =
        Geodesic.equatorialRadius * Geodesic.equatorialRadius / Geodesic.polarRadius

    /// How far a computed chord may be from the exact chord between the exact points (metres):
    /// the coordinates are within 3·10⁻⁸ m each (`GeoPoint`), the chord's own roundings add
    /// less than 3·10⁻⁹ m below 10,000 km; this allows more than ten times their sum.
    @inlinable static var chordError: Double { 1e-6 }

    /// An upper bound on (2/K) asin(uK/2) − u over u³, for 0 ≤ uK/2 ≤ 1: (π/2 − 1) K²/4, since
    /// (asin x − x)/x³ grows from 1/6 at 0 to π/2 − 1 at 1 (its series has positive terms).
    /// Rounded up. Used by clearances, where a loose cube costs nothing (0.44 µm at 500 m).
    @inlinable static var arcCubic: Double { 3.5552300331737e-15 }

    /// The geodesic distance's upper bound from a chord `u` (metres, uK/2 ≤ 1): u + u³·arcCubic.
    @inlinable @inline(__always)
    static func arcAbove(_ u: Double) -> Double { u + u * u * u * arcCubic }

    /// - Precondition: `0 ≤ radius ≤ exitRadius`, both finite; center latitude in [−90, 90].
    public init(center: Coordinate, radius: Double, exitRadius: Double) {
        precondition(radius >= 0 && exitRadius >= radius && exitRadius.isFinite,
                     "GeodesicCircle needs 0 <= radius <= exitRadius < infinity")
        precondition(abs(center.latitude) <= 90, "GeodesicCircle center latitude must be in [-90, 90]")
        core = CircleCore(center: center, radius: radius, exitRadius: exitRadius)
        let point = GeoPoint(center)
        cx = point.x; cy = point.y; cz = point.z
        chordIn = Self.squaredChordWithin(radius)
        chordOut = Self.squaredChordBeyond(radius)
        // Without hysteresis the exit radius is the radius: its sine is not taken twice.
        chordExitIn = exitRadius == radius ? chordIn : Self.squaredChordWithin(exitRadius)
        chordExitOut = Self.squaredChordBeyond(exitRadius)
    }

    /// The largest squared chord (m²) that certainly means a geodesic distance ≤ `r`: a chord c
    /// with (2/K) asin((c + chordError)K/2) ≤ r, i.e. c ≤ (2/K) sin(rK/2) − chordError (for r
    /// up to 10,000 km, so that Ks ≤ π holds: a larger r is capped there, which only leaves more
    /// points to the exact test). -1 when no chord is small enough.
    static func squaredChordWithin(_ r: Double) -> Double {
        let k = WGS84.maxCurvature
        let c = 2 / k * sin(min(r, 1e7) * k / 2) * (1 - 1e-12) - chordError
        return c > 0 ? c * c * (1 - 1e-12) : -1
    }

    /// The smallest squared chord (m²) beyond which the geodesic distance is certainly > `r`:
    /// (r + chordError)², rounded up.
    static func squaredChordBeyond(_ r: Double) -> Double {
        let c = r + chordError
        return c * c * (1 + 1e-12)
    }

    /// Squared chord (m²) between the center and `q` (NaN for an invalid point).
    @inlinable @inline(__always)
    func chord2(_ q: GeoPoint) -> Double { q.chord2(cx, cy, cz) }

    /// A lower bound, in metres, on how far `q` must move before the decision for this circle can
    /// change: to the exit boundary when `inside`, to the entry boundary otherwise (0 if unsure).
    /// Moving `m` metres changes the geodesic distance by at most `m` (triangle inequality).
    @inlinable
    public func clearance(_ q: GeoPoint, inside: Bool) -> Double {
        Self.clearance(chord2: chord2(q), inside: inside, radius: radius, exitRadius: exitRadius)
    }

    /// The clearance from the squared chord to the center. Any radius larger, or any
    /// `exitRadius` smaller, than the circle's still gives a lower bound. Both outcomes are
    /// computed and one is chosen, without a branch on `inside` (which a retest cannot predict).
    @inlinable @inline(__always)
    static func clearance(chord2: Double, inside: Bool, radius: Double, exitRadius: Double) -> Double {
        let c = chord2.squareRoot()
        // d ≤ arcAbove(c + ε) now, so d stays ≤ exitRadius while the device moves less than
        // the difference; d ≥ c − ε now, so d stays > radius while it moves less than that one.
        let toExit = exitRadius - arcAbove(c + chordError) - chordError
        let toEntry = c - radius - 2 * chordError
        let room = inside ? toExit : toEntry
        // Also NaN (an invalid point, no circle). Beyond 10,000 km the cubic bound no longer
        // holds (uK/2 may pass 1).
        return c <= 1e7 && room > 0 ? room : 0
    }

    /// The geodesic distance rounded to the centimetre from the squared chord (m²), when the
    /// chord's bounds settle it; nil when they straddle a half centimetre (about one distance
    /// in 5,000 on city circles) or the chord exceeds 100 km, where Karney's must be rounded.
    ///
    /// The bounds are [c − ε, (2/K) asin(uK/2) + ...] with u = c + ε; for uK/2 ≤ 0.01 (u below
    /// 126 km) asin x ≤ x + x³/6 + 0.0751·x⁵ (the series' further terms are below 10⁻⁴ of the
    /// fifth-order one there), so the upper bound is u + u³K²/24 + 0.0751·u⁵K⁴/16. Karney's
    /// distance (within 15 nm of the exact one) lies in the interval, and rounding is monotone,
    /// so when both ends round alike its rounding is theirs.
    @inlinable @inline(__always)
    public static func centimetres(chord2: Double) -> Double? {
        let c = chord2.squareRoot()
        guard c <= 100_000 else { return nil }  // also NaN
        let u = c + chordError, u2 = u * u
        // K²/24 and 0.0751·K⁴/16, rounded up.
        let hi = u + u * u2 * (1.03809066570114e-15 + u2 * 2.92e-30)
        let below = roundedHalfAway((c - chordError) * 100), above = roundedHalfAway(hi * 100)
        return below == above ? max(0, above) / 100 : nil
    }

    /// The chord thresholds and the clearance's radii in one cache line (see `HotCircle`).
    public var hot: HotCircle {
        HotCircle(x: cx, y: cy, z: cz,
                  chordIn: .below(chordIn), chordOut: .above(chordOut),
                  chordExitIn: .below(chordExitIn), chordExitOut: .above(chordExitOut),
                  radius: .above(radius), exitRadius: .below(exitRadius))
    }

    /// Cheap, rigorous classification against `radius` (the chord bound): `.inside` guarantees
    /// distance ≤ radius, `.outside` guarantees distance > radius, `.ambiguous` means the exact
    /// distance is needed.
    @inlinable
    public func cheapClassify(_ q: GeoPoint) -> Decision {
        classify(chord2(q), chordIn: chordIn, chordOut: chordOut)
    }

    /// Cheap, rigorous classification against `exitRadius`.
    @inlinable
    public func cheapClassifyExit(_ q: GeoPoint) -> Decision {
        classify(chord2(q), chordIn: chordExitIn, chordOut: chordExitOut)
    }

    @inlinable @inline(__always)
    func classify(_ c2: Double, chordIn: Double, chordOut: Double) -> Decision {
        if c2 <= chordIn { return .inside }
        if c2 > chordOut { return .outside }
        return .ambiguous
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

    /// The geodesic distance from the center to `q` rounded to the centimetre: exactly the
    /// rounding of ``distance(to:)``, from the chord bound where it settles it.
    public func distanceInCentimetres(to q: GeoPoint) -> Double {
        Self.centimetres(chord2: chord2(q)) ?? core.karneyCentimetres(to: q.coordinate)
    }

    public func distanceInCentimetres(to p: Coordinate) -> Double { distanceInCentimetres(to: GeoPoint(p)) }
}

/// A circle's center and radii, with the tests that need nothing else: Karney's exact distance.
/// The region index keeps these (32 bytes) beside its `HotCircle` table, which holds the chord
/// bound, for the points that bound leaves open.
public struct CircleCore: Sendable {
    public let center: Coordinate
    public let radius: Double
    public let exitRadius: Double

    public init(center: Coordinate, radius: Double, exitRadius: Double) {
        self.center = center
        self.radius = radius
        self.exitRadius = exitRadius
    }

    /// Whether `p` is inside (against `radius`) or, with `exit`, beyond `exitRadius`, by
    /// Karney's distance: for points the chord bound upstream left open.
    public func decide(_ p: Coordinate, exit: Bool) -> Bool {
        exit ? distance(to: p) > exitRadius : distance(to: p) <= radius
    }

    /// The exact WGS84 geodesic distance from the center to `p`, metres.
    @inlinable
    public func distance(to p: Coordinate) -> Double {
        Geodesic.distance(center, p)
    }

    /// Karney's distance rounded to the centimetre (what the chord bound could not settle).
    public func karneyCentimetres(to p: Coordinate) -> Double {
        (distance(to: p) * 100).rounded() / 100
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

/// What the hot path reads of a circle, in 64 bytes: the center's Earth-centred coordinates and
/// the chord thresholds and radii as Floats, rounded so that every decision it makes is one the
/// full circle would make (thresholds move towards "ambiguous") and every clearance is smaller.
/// `decide` answers nil where the full circle must decide. A region that is no circle has NaN
/// coordinates, so it is never decided here.
public struct HotCircle: Sendable {
    @usableFromInline var x, y, z: Double
    /// Squared chords, m² (`GeodesicCircle`'s, rounded towards "ambiguous").
    @usableFromInline var chordIn, chordOut, chordExitIn, chordExitOut: Float
    /// The entry radius rounded up and the exit radius rounded down: clearances stay lower bounds.
    @usableFromInline var radius, exitRadius: Float
    /// Set by `RegionIndex` for its own table (they fill what would be padding, so the struct is
    /// 64 bytes and an aligned table holds one per cache line): the region's slow line (≥ 0 for a
    /// circle; -1 a polygon, -2 a beacon without position), and its position in the array the
    /// index was given. A test has this line in cache already, so what follows a decision (an
    /// event's distance, the order it is reported in) costs no miss of its own.
    @usableFromInline var slot: Int32 = -1
    @usableFromInline var given: Int32 = 0
    /// Padding to a cache line.
    @usableFromInline var spare: UInt64 = 0

    @usableFromInline
    init(x: Double, y: Double, z: Double, chordIn: Float, chordOut: Float, chordExitIn: Float,
         chordExitOut: Float, radius: Float, exitRadius: Float) {
        self.x = x; self.y = y; self.z = z
        self.chordIn = chordIn; self.chordOut = chordOut
        self.chordExitIn = chordExitIn; self.chordExitOut = chordExitOut
        self.radius = radius; self.exitRadius = exitRadius
    }

    /// Never decides anything.
    public static let none = HotCircle(x: .nan, y: .nan, z: .nan, chordIn: -1, chordOut: .infinity,
                                       chordExitIn: -1, chordExitOut: .infinity, radius: .infinity, exitRadius: 0)

    @inlinable @inline(__always)
    func chord2(_ q: GeoPoint) -> Double { q.chord2(x, y, z) }

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
        GeodesicCircle.clearance(chord2: c2, inside: inside, radius: Double(radius), exitRadius: Double(exitRadius))
    }

    /// Whether the boundary that matters for a point in the state `inside` (the exit circle when
    /// inside, the entry circle otherwise) may come within `metres` of the point whose squared
    /// chord to the centre is `c2`: false only when the ball of that radius around the point
    /// certainly lies wholly inside the exit circle, or wholly outside the entry circle. No
    /// square root: the chord is compared squared. NaN (an invalid point, or a region that is no
    /// circle) answers true.
    @inlinable @inline(__always)
    public func boundaryMayBeWithin(_ metres: Double, chord2 c2: Double, inside: Bool) -> Bool {
        let e = GeodesicCircle.chordError
        if inside {
            // Wholly inside when arcAbove(c + ε) + metres ≤ exitRadius, which c ≤ this assures.
            let exit = Double(exitRadius)
            let limit = exit - metres - 2 * e - exit * exit * exit * GeodesicCircle.arcCubic
            return limit <= 0 || !(c2 < limit * limit)
        }
        // Wholly outside when c − ε > radius + metres.
        let limit = Double(radius) + metres + 2 * e
        return !(c2 > limit * limit)
    }
}
