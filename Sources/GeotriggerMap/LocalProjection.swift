#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A local map projection fitted to the data: equirectangular about the centre of the data's
/// extent, with the WGS84 ellipsoid's radii of curvature there, so that a metre is the same
/// number of pixels east–west and north–south at the centre (north up). Longitudes are taken
/// relative to the centre, so data across the antimeridian stays in one piece.
///
/// Over a city or a region of a few hundred kilometres the scale stays within a fraction of a
/// percent of the centre's (the scale bar is true at the centre latitude); it is not meant for
/// continents.
public struct LocalProjection: Sendable {
    /// WGS84.
    static let a = 6_378_137.0
    static let f = 1 / 298.257223563
    static let e2 = f * (2 - f)

    public let latitude0: Double
    public let longitude0: Double
    /// Metres per degree of latitude and of longitude at the centre.
    let metresPerDegreeLatitude: Double
    let metresPerDegreeLongitude: Double
    /// Pixels per metre.
    public let scale: Double
    let offsetX: Double
    let offsetY: Double

    /// Fits the box (south, west, north, east in degrees; `east` may be below `west` across the
    /// antimeridian) into `width` × `height` pixels less `margin` on each side.
    public init(south: Double, west: Double, north: Double, east: Double, width: Double, height: Double, margin: Double) {
        let span = Self.wrap(east - west)
        let eastUnwrapped = west + (span < 0 ? span + 360 : span)
        latitude0 = (south + north) / 2
        longitude0 = Self.wrap((west + eastUnwrapped) / 2)
        let phi = latitude0 * .pi / 180
        metresPerDegreeLatitude = Self.meridionalRadius(phi) * .pi / 180
        metresPerDegreeLongitude = Self.primeVerticalRadius(phi) * cos(phi) * .pi / 180
        let widthMetres = max(1, (eastUnwrapped - west) * metresPerDegreeLongitude)
        let heightMetres = max(1, (north - south) * metresPerDegreeLatitude)
        scale = min((width - 2 * margin) / widthMetres, (height - 2 * margin) / heightMetres)
        offsetX = width / 2
        offsetY = height / 2
    }

    /// Degrees to [-180, 180).
    static func wrap(_ d: Double) -> Double {
        var x = fmod(d + 180, 360)
        if x < 0 { x += 360 }
        return x - 180
    }

    /// Pixel position (x right, y down) of a point.
    @inline(__always)
    public func project(latitude: Double, longitude: Double) -> (x: Double, y: Double) {
        let east = Self.wrap(longitude - longitude0) * metresPerDegreeLongitude
        let north = (latitude - latitude0) * metresPerDegreeLatitude
        return (offsetX + east * scale, offsetY - north * scale)
    }

    /// The geodesic circle of `radius` metres about a centre, as `count` points on its boundary,
    /// each at that distance along an azimuth: a great-circle step on the sphere whose radius is
    /// the ellipsoid's radius of curvature in that azimuth at the centre (Euler's formula). That
    /// keeps the drawn boundary within 0.1 % of the radius up to 500 km at any latitude, which
    /// `MapTests` checks against Karney's geodesic distance.
    public static func circleBoundary(latitude: Double, longitude: Double, radius: Double, count: Int)
        -> [(latitude: Double, longitude: Double)]
    {
        let phi1 = latitude * .pi / 180
        let m = meridionalRadius(phi1), n = primeVerticalRadius(phi1)
        let sinPhi1 = sin(phi1), cosPhi1 = cos(phi1)
        return (0..<count).map { k in
            let azimuth = Double(k) / Double(count) * 2 * .pi
            let ca = cos(azimuth), sa = sin(azimuth)
            let r = 1 / (ca * ca / m + sa * sa / n)
            let delta = radius / r
            let sinPhi2 = sinPhi1 * cos(delta) + cosPhi1 * sin(delta) * ca
            let phi2 = asin(max(-1, min(1, sinPhi2)))
            let lambda = atan2(sa * sin(delta) * cosPhi1, cos(delta) - sinPhi1 * sinPhi2)
            return (phi2 * 180 / .pi, wrap(longitude + lambda * 180 / .pi))
        }
    }

    static func meridionalRadius(_ phi: Double) -> Double {
        let w = sqrt(1 - e2 * sin(phi) * sin(phi))
        return a * (1 - e2) / (w * w * w)
    }

    static func primeVerticalRadius(_ phi: Double) -> Double {
        a / sqrt(1 - e2 * sin(phi) * sin(phi))
    }
}
