#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore

/// A geodesic circle on the WGS84 ellipsoid with an exit radius for hysteresis.
///
/// A point is *inside* when its geodesic distance to `center` is at most `radius`, and
/// *beyond exit* when that distance exceeds `exitRadius` (= radius + hysteresis).
///
/// ## Cheap rigorous bound
///
/// Map the ellipsoid onto a sphere of radius R by keeping geodetic latitude φ and longitude λ.
/// The ellipsoid's line element is ds² = M(φ)² dφ² + N(φ)² cos²φ dλ², where M is the meridional
/// and N the prime-vertical radius of curvature; the sphere's is R²(dφ² + cos²φ dλ²). On WGS84
/// both M and N lie in [k_min, k_max] with
///
///     k_min = M(0)  = a(1 − e²)         ≈ 6 335 439 m  (meridional, at the equator)
///     k_max = M(90) = N(90) = a²/b      ≈ 6 399 594 m  (polar)
///
/// so every curve has ellipsoidal length between (k_min/R) and (k_max/R) times its spherical
/// length. Taking the shortest curve on either surface gives, for the spherical distance d_s and
/// the ellipsoidal geodesic distance d_e of the same two (φ, λ) pairs,
///
///     (k_min / R)·d_s ≤ d_e ≤ (k_max / R)·d_s.
///
/// With R = 1 (d_s = central angle θ) and the haversine quantity
/// h = sin²(Δφ/2) + cos φ₁ cos φ₂ sin²(Δλ/2) = sin²(θ/2), which is increasing in θ on [0, π]:
///
///  * d_e ≤ r is certain when k_max·θ ≤ r, i.e. h ≤ sin²(r / (2 k_max));
///  * d_e > r is certain when k_min·θ > r, i.e. h > sin²(r / (2 k_min)).
///
/// Both thresholds are precomputed per circle (with a 1e-12 relative safety margin, far above the
/// ~1e-15 relative rounding error of h and the thresholds), so a clear decision costs three
/// trigonometric calls (cos φ₁ is precomputed) and no sqrt/asin. The band between the thresholds
/// is about 1 % of the radius wide (k_max/k_min ≈ 1.0101); only points in it run
/// ``Geodesic/distance(_:_:)``.
///
/// Latitudes must lie in [−90, 90]; a point with an invalid or NaN coordinate is classified
/// `.ambiguous`, its distance is NaN, and it is neither inside nor beyond exit.
public struct GeodesicCircle: Sendable {
    /// Outcome of the cheap bound.
    public enum Decision: Sendable, Equatable {
        /// Certainly within the tested radius (distance ≤ radius).
        case inside
        /// Certainly beyond the tested radius (distance > radius).
        case outside
        /// Too close to the boundary for the bound; needs the exact distance.
        case ambiguous
    }

    public let center: Coordinate
    /// Entry radius in metres.
    public let radius: Double
    /// Exit radius in metres (radius + hysteresis), ≥ `radius`.
    public let exitRadius: Double

    @usableFromInline let centerLat: Double
    @usableFromInline let centerLon: Double
    @usableFromInline let cosCenterLat: Double
    /// h ≤ this ⇒ distance ≤ radius.
    @usableFromInline let hInside: Double
    /// h > this ⇒ distance > radius.
    @usableFromInline let hOutside: Double
    /// h ≤ this ⇒ distance ≤ exitRadius.
    @usableFromInline let hInsideExit: Double
    /// h > this ⇒ distance > exitRadius.
    @usableFromInline let hOutsideExit: Double

    /// Minimum radius of curvature of WGS84, a(1 − e²) (meridional, at the equator), metres.
    public static let minCurvatureRadius: Double = {
        let f = Geodesic.flattening
        return Geodesic.equatorialRadius * (1 - f * (2 - f))
    }()
    /// Maximum radius of curvature of WGS84, a²/b (at the poles), metres.
    public static let maxCurvatureRadius: Double =
        Geodesic.equatorialRadius * Geodesic.equatorialRadius / Geodesic.polarRadius

    /// Relative safety margin applied to the haversine thresholds against rounding.
    static let safety = 1e-12

    /// - Precondition: `0 ≤ radius ≤ exitRadius`, both finite; center latitude in [−90, 90].
    public init(center: Coordinate, radius: Double, exitRadius: Double) {
        precondition(radius >= 0 && exitRadius >= radius && exitRadius.isFinite,
                     "GeodesicCircle needs 0 <= radius <= exitRadius < infinity")
        precondition(abs(center.latitude) <= 90, "GeodesicCircle center latitude must be in [-90, 90]")
        self.center = center
        self.radius = radius
        self.exitRadius = exitRadius
        centerLat = center.latitude
        centerLon = center.longitude
        cosCenterLat = cosDegrees(center.latitude)
        let kMin = GeodesicCircle.minCurvatureRadius, kMax = GeodesicCircle.maxCurvatureRadius
        hInside = GeodesicCircle.insideThreshold(radius / kMax)
        hOutside = GeodesicCircle.outsideThreshold(radius / kMin)
        hInsideExit = GeodesicCircle.insideThreshold(exitRadius / kMax)
        hOutsideExit = GeodesicCircle.outsideThreshold(exitRadius / kMin)
    }

    /// A lower bound, in metres, on how far `p` must move before the decision for this circle can
    /// change: to the exit boundary when `inside`, to the entry boundary otherwise (0 if unsure).
    ///
    /// The geodesic distance lies in [θ·minCurvatureRadius, θ·maxCurvatureRadius] for central angle
    /// θ, and moving `m` metres changes it by at most `m` (triangle inequality).
    public func clearance(_ p: Coordinate, inside: Bool) -> Double {
        let h = haversine(p)
        let theta = 2 * asin(min(1, h.squareRoot()))
        let c = inside ? exitRadius - theta * GeodesicCircle.maxCurvatureRadius
                       : theta * GeodesicCircle.minCurvatureRadius - radius
        return max(0, c * (1 - 1e-9) - 1e-6)
    }

    /// Largest h certainly within central angle `theta` (a little below sin²(θ/2)).
    public static func insideThreshold(_ theta: Double) -> Double {
        if theta >= .pi { return .infinity }  // every point is within θ ≤ π
        let s = sin(theta / 2)
        return s * s * (1 - safety)
    }

    /// Smallest h certainly beyond central angle `theta` (a little above sin²(θ/2)).
    static func outsideThreshold(_ theta: Double) -> Double {
        if theta >= .pi { return .infinity }  // no point is certainly beyond
        let s = sin(theta / 2)
        return s * s * (1 + safety)
    }

    /// The haversine quantity h = sin²(θ/2) between the center and `p` (θ = central angle on the
    /// sphere with the same latitudes and longitudes). Three trig calls, no allocation.
    @inlinable @inline(__always)
    func haversine(_ p: Coordinate) -> Double {
        let dLat = p.latitude - centerLat
        var dLon = p.longitude - centerLon
        // sin²(Δλ/2) has period 360°; reducing keeps sin accurate near ±180°.
        if abs(dLon) > 180 { dLon -= Double(signOf: dLon, magnitudeOf: 360) }
        let sLat = sin(dLat * (Double.pi / 360))
        let sLon = sin(dLon * (Double.pi / 360))
        return sLat * sLat + cosCenterLat * cosDegrees(p.latitude) * (sLon * sLon)
    }

    /// Cheap, rigorous classification against `radius`: `.inside` guarantees distance ≤ radius,
    /// `.outside` guarantees distance > radius, `.ambiguous` means the exact path is needed.
    @inlinable
    public func cheapClassify(_ p: Coordinate) -> Decision {
        guard abs(p.latitude) <= 90 else { return .ambiguous }
        let h = haversine(p)
        if h <= hInside { return .inside }
        if h > hOutside { return .outside }
        return .ambiguous
    }

    /// Cheap, rigorous classification against `exitRadius`: `.inside` guarantees
    /// distance ≤ exitRadius (not beyond exit), `.outside` guarantees distance > exitRadius.
    @inlinable
    public func cheapClassifyExit(_ p: Coordinate) -> Decision {
        guard abs(p.latitude) <= 90 else { return .ambiguous }
        let h = haversine(p)
        if h <= hInsideExit { return .inside }
        if h > hOutsideExit { return .outside }
        return .ambiguous
    }

    /// Whether the geodesic distance from the center to `p` is at most `radius`.
    @inlinable
    public func isInside(_ p: Coordinate) -> Bool {
        switch cheapClassify(p) {
        case .inside: return true
        case .outside: return false
        case .ambiguous: return distance(to: p) <= radius
        }
    }

    /// Whether the geodesic distance from the center to `p` exceeds `exitRadius`.
    @inlinable
    public func isBeyondExit(_ p: Coordinate) -> Bool {
        switch cheapClassifyExit(p) {
        case .inside: return false
        case .outside: return true
        case .ambiguous: return distance(to: p) > exitRadius
        }
    }

    /// The exact WGS84 geodesic distance from the center to `p`, metres.
    @inlinable
    public func distance(to p: Coordinate) -> Double {
        Geodesic.distance(center, p)
    }
}

/// cos(x°) with full relative accuracy near the poles: for |x| > 45 it uses sin(90° − |x|),
/// where 90 − |x| is exact (Sterbenz), so cos φ stays accurate when φ is close to ±90.
@inlinable @inline(__always)
func cosDegrees(_ x: Double) -> Double {
    let ax = abs(x)
    return ax <= 45 ? cos(ax * (Double.pi / 180)) : sin((90 - ax) * (Double.pi / 180))
}
