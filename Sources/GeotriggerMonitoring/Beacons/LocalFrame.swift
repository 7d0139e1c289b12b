// LocalFrame.swift — latitude/longitude ↔ east/north metres about a reference point (WGS84).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore

/// A point in a `LocalFrame`: metres east and north of the frame's origin.
public struct LocalPoint: Hashable, Sendable {
    public var east: Double
    public var north: Double

    public init(east: Double, north: Double) {
        self.east = east
        self.north = north
    }

    /// Euclidean distance in the frame, metres.
    @inlinable
    public func distance(to other: LocalPoint) -> Double {
        let de = east - other.east, dn = north - other.north
        return (de * de + dn * dn).squareRoot()
    }
}

/// The local tangent plane (east, north, metres) of the WGS84 ellipsoid at an origin.
///
/// With M the meridional and N the prime-vertical radius of curvature at the origin latitude φ₀,
/// and δφ, δλ the latitude and longitude offsets in radians:
///
///     east  = (N cos φ₀ − M sin φ₀ · δφ) · δλ
///     north = M · δφ + ½ M′ · δφ² + ½ N cos φ₀ sin φ₀ · δλ²
///
/// The first-order terms are the radii of curvature; the second-order ones are the convergence of
/// the meridians (the parallel's radius N cos φ shrinks by M sin φ per radian north) and the
/// curvature of the parallel and of the meridian (M′ = dM/dφ) as seen from the tangent plane. The
/// neglected terms are third order, (d/a)³·a ≈ 10⁻⁷ m at d = 100 m, so distances in the frame match
/// geodesic distances to well under a millimetre within a few hundred metres of the origin (the
/// first-order map alone is off by about d²·tan φ₀ / 2a, ≈ 1 mm at 100 m and 48°). Not for origins
/// within a few kilometres of a pole, where cos φ₀ vanishes.
///
/// The inverse solves the same equations by fixed-point iteration (the second-order terms are
/// ~10⁻⁵ of the first at 100 m, so three rounds reach rounding error).
public struct LocalFrame: Sendable {
    public let origin: Coordinate

    /// Radius of the origin's parallel, N cos φ₀.
    @usableFromInline let parallelRadius: Double
    /// Meridional radius of curvature M at φ₀.
    @usableFromInline let meridionalRadius: Double
    /// dM/dφ at φ₀.
    @usableFromInline let meridionalRadiusDerivative: Double
    @usableFromInline let sinLatitude: Double

    /// WGS84 semi-major axis a, metres.
    public static let equatorialRadius: Double = 6_378_137
    /// WGS84 first eccentricity squared, e² = f (2 − f) with f = 1/298.257223563.
    public static let eccentricitySquared: Double = {
        let f = 1 / 298.257223563
        return f * (2 - f)
    }()

    @usableFromInline static let degrees = Double.pi / 180

    public init(origin: Coordinate) {
        self.origin = origin
        let phi = origin.latitude * Self.degrees
        let s = sin(phi), c = cos(phi)
        let e2 = Self.eccentricitySquared
        let w2 = 1 - e2 * s * s
        let w = w2.squareRoot()
        let n = Self.equatorialRadius / w
        let m = Self.equatorialRadius * (1 - e2) / (w2 * w)
        sinLatitude = s
        parallelRadius = n * c
        meridionalRadius = m
        // M = a(1 − e²)·w⁻³ with w² = 1 − e² sin² φ: dM/dφ = 3 M e² sin φ cos φ / w².
        meridionalRadiusDerivative = 3 * m * e2 * s * c / w2
    }

    /// The prime-vertical radius of curvature N at the origin, metres.
    public var primeVerticalRadius: Double { parallelRadius / cos(origin.latitude * Self.degrees) }
    /// The meridional radius of curvature M at the origin, metres.
    public var meridianRadius: Double { meridionalRadius }

    /// `c` in the frame.
    @inlinable
    public func point(_ c: Coordinate) -> LocalPoint {
        let dPhi = (c.latitude - origin.latitude) * Self.degrees
        var dLon = c.longitude - origin.longitude
        if dLon > 180 { dLon -= 360 } else if dLon < -180 { dLon += 360 }
        let dLambda = dLon * Self.degrees
        let east = (parallelRadius - meridionalRadius * sinLatitude * dPhi) * dLambda
        let north = meridionalRadius * dPhi + 0.5 * meridionalRadiusDerivative * dPhi * dPhi
            + 0.5 * parallelRadius * sinLatitude * dLambda * dLambda
        return LocalPoint(east: east, north: north)
    }

    /// The coordinate of a point of the frame (longitude in [−180, 180]).
    @inlinable
    public func coordinate(_ p: LocalPoint) -> Coordinate {
        var dPhi = p.north / meridionalRadius
        var dLambda = p.east / parallelRadius
        for _ in 0..<3 {
            dLambda = p.east / (parallelRadius - meridionalRadius * sinLatitude * dPhi)
            dPhi = (p.north - 0.5 * meridionalRadiusDerivative * dPhi * dPhi
                - 0.5 * parallelRadius * sinLatitude * dLambda * dLambda) / meridionalRadius
        }
        var lon = origin.longitude + dLambda / Self.degrees
        if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
        return Coordinate(latitude: origin.latitude + dPhi / Self.degrees, longitude: lon)
    }

    @inlinable
    public func coordinate(east: Double, north: Double) -> Coordinate {
        coordinate(LocalPoint(east: east, north: north))
    }
}
