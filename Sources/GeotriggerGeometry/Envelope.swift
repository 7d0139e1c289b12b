#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore

/// A closed longitude/latitude box in degrees, `minLon ≤ maxLon` within [−180, 180] and
/// `minLat ≤ maxLat` within [−90, 90]. Boxes never wrap: a region crossing the antimeridian is
/// described by two boxes.
public struct Envelope: Equatable, Sendable {
    public var minLon: Double
    public var minLat: Double
    public var maxLon: Double
    public var maxLat: Double

    public init(minLon: Double, minLat: Double, maxLon: Double, maxLat: Double) {
        self.minLon = minLon
        self.minLat = minLat
        self.maxLon = maxLon
        self.maxLat = maxLat
    }

    /// The whole globe.
    public static let world = Envelope(minLon: -180, minLat: -90, maxLon: 180, maxLat: 90)

    /// Whether `c` lies in the closed box (no longitude wrapping: pass longitudes in [−180, 180]).
    @inlinable
    public func contains(_ c: Coordinate) -> Bool {
        c.longitude >= minLon && c.longitude <= maxLon && c.latitude >= minLat && c.latitude <= maxLat
    }
}

extension GeodesicCircle {
    /// One or two lon/lat boxes whose union is guaranteed to contain every point at geodesic
    /// distance ≤ `exitRadius` from the center (query points with longitudes in [−180, 180]).
    ///
    /// By the curvature bound documented on ``GeodesicCircle``, such a point is within central
    /// angle θ = exitRadius / k_min of the center on the sphere with the same latitudes and
    /// longitudes (θ is inflated by a relative 1e-12, and the degree bounds by a further
    /// relative 1e-12 plus 1e-11° ≈ 1 µm, to absorb rounding). The spherical cap of radius θ
    /// around (φ₀, λ₀):
    ///
    ///  * spans latitudes [φ₀ − θ, φ₀ + θ];
    ///  * contains a pole iff φ₀ + θ ≥ 90° or φ₀ − θ ≤ −90°; then the box takes every longitude,
    ///    [−180, 180], and extends to that pole;
    ///  * otherwise spans longitudes λ₀ ± Δλ with sin Δλ = sin θ / cos φ₀ (the tangent meridians).
    ///    The argument of asin is itself rounded upwards, and if it reaches 1 the box takes every
    ///    longitude.
    ///
    /// A longitude range that reaches or passes ±180° is split into one box ending at 180 and
    /// one starting at −180. Because the split also happens when the range merely *touches*
    /// ±180° (possibly leaving a zero-width box at the other end), a point whose longitude is
    /// exactly 180 or −180 is contained whichever of the two spellings it uses.
    public func envelopes() -> [Envelope] {
        var all: [Envelope] = []
        forEachEnvelope { all.append($0) }
        return all
    }

    /// Calls `body` with each of ``envelopes()``, without making an array (index build).
    @inline(__always)
    func forEachEnvelope(_ body: (Envelope) -> Void) { core.forEachEnvelope(body) }
}

extension CircleCore {
    /// `GeodesicCircle.envelopes()`, one at a time: they need only the center and the exit
    /// radius, so an index build can find them before it makes the rest of the circle.
    @inline(__always)
    func forEachEnvelope(_ body: (Envelope) -> Void) {
        let relative = 1 + 1e-12
        let absoluteDegrees = 1e-11
        let theta = exitRadius / GeodesicCircle.minCurvatureRadius * relative  // radians
        let thetaDeg = theta * (180 / Double.pi) * relative + absoluteDegrees
        guard thetaDeg < 180 else { return body(.world) }  // also catches NaN

        let lat0 = center.latitude
        let south = lat0 - thetaDeg
        let north = lat0 + thetaDeg
        if north >= 90 || south <= -90 {
            // The cap contains a pole: all longitudes, up to the pole(s).
            return body(Envelope(minLon: -180, minLat: max(-90, south), maxLon: 180, maxLat: min(90, north)))
        }
        // No pole, so θ < 90° − |φ₀| < 90° and sin θ < cos φ₀.
        let x = sin(theta) / cosDegrees(lat0) * relative
        guard x < 1 else {
            return body(Envelope(minLon: -180, minLat: south, maxLon: 180, maxLat: north))
        }
        let dLonDeg = asin(x) * (180 / Double.pi) * relative + absoluteDegrees

        // [−180, 180]; a longitude already there is its own remainder (x / 360 rounds to 0),
        // and libm's remainder is a call per region at the index build.
        let lon0 = abs(center.longitude) <= 180 ? center.longitude : center.longitude.remainder(dividingBy: 360)
        guard lon0.isFinite else { return body(.world) }
        let lo = lon0 - dLonDeg
        let hi = lon0 + dLonDeg
        if lo <= -180 {
            body(Envelope(minLon: lo + 360, minLat: south, maxLon: 180, maxLat: north))
            return body(Envelope(minLon: -180, minLat: south, maxLon: hi, maxLat: north))
        }
        if hi >= 180 {
            body(Envelope(minLon: lo, minLat: south, maxLon: 180, maxLat: north))
            return body(Envelope(minLon: -180, minLat: south, maxLon: hi - 360, maxLat: north))
        }
        body(Envelope(minLon: lo, minLat: south, maxLon: hi, maxLat: north))
    }
}
