import Foundation
import GeotriggerCore
import Testing

@testable import GeotriggerGeometry

// All expected values come from the fixtures written by tools/oracle/make_geodesic_reference.py
// (GeographicLib's Python package, an implementation independent of the Swift port).

enum Fixture {
    /// Rows of a fixture CSV (comments starting with '#' and the column header skipped).
    static func rows(_ name: String) throws -> [[Substring]] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "csv", subdirectory: "Fixtures"))
        let text = try String(contentsOf: url, encoding: .utf8)
        var lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        lines.removeFirst()  // header
        return lines.map { $0.split(separator: ",", omittingEmptySubsequences: false) }
    }

    static func double(_ s: Substring) throws -> Double {
        try #require(Double(String(s)), "bad number \(s)")
    }
}

struct GeodesicCase: Sendable {
    var a: Coordinate, b: Coordinate, s12: Double, category: String

    static let all: [GeodesicCase] = {
        (try? Fixture.rows("geodesic_reference").map { f in
            GeodesicCase(
                a: Coordinate(latitude: try Fixture.double(f[0]), longitude: try Fixture.double(f[1])),
                b: Coordinate(latitude: try Fixture.double(f[2]), longitude: try Fixture.double(f[3])),
                s12: try Fixture.double(f[4]), category: String(f[5]))
        }) ?? []
    }()
}

struct CircleCase: Sendable {
    var center: Coordinate, radius: Double, exitRadius: Double, point: Coordinate, s12: Double

    static let all: [CircleCase] = {
        (try? Fixture.rows("circle_reference").map { f in
            CircleCase(
                center: Coordinate(latitude: try Fixture.double(f[0]), longitude: try Fixture.double(f[1])),
                radius: try Fixture.double(f[2]), exitRadius: try Fixture.double(f[3]),
                point: Coordinate(latitude: try Fixture.double(f[4]), longitude: try Fixture.double(f[5])),
                s12: try Fixture.double(f[6]))
        }) ?? []
    }()
}

/// Karney's algorithm is accurate to ~15 nm; the port should match GeographicLib to rounding.
/// This is far tighter than the spec's 1e-6 relative + 1 mm.
func distanceTolerance(_ s12: Double) -> Double { 1e-13 * s12 + 1e-8 }

@Suite("Geodesic.distance against GeographicLib")
struct GeodesicDistanceTests {
    @Test func fixtureIsLoaded() {
        #expect(GeodesicCase.all.count > 2500)
    }

    @Test(arguments: ["random", "short", "antipodal", "polar", "antimeridian", "equatorial", "meridional", "coincident"])
    func agreesWithReference(category: String) {
        let cases = GeodesicCase.all.filter { $0.category == category }
        #expect(cases.count >= 50)
        var worst = 0.0
        for c in cases {
            let d = Geodesic.distance(c.a, c.b)
            let err = abs(d - c.s12)
            worst = max(worst, err)
            #expect(err <= distanceTolerance(c.s12),
                    "\(category): \(c.a) -> \(c.b): got \(d), reference \(c.s12)")
            // symmetric
            let back = Geodesic.distance(c.b, c.a)
            #expect(abs(back - c.s12) <= distanceTolerance(c.s12))
        }
        print("Geodesic.distance \(category): \(cases.count) cases, max |error| = \(worst) m")
    }

    @Test func coincidentAndAntimeridianSpellings() {
        // The same point spelled with lon 180 and -180, and the pole with different longitudes.
        #expect(Geodesic.distance(Coordinate(latitude: 12.5, longitude: 180),
                                  Coordinate(latitude: 12.5, longitude: -180)) == 0)
        #expect(Geodesic.distance(Coordinate(latitude: 90, longitude: 10),
                                  Coordinate(latitude: 90, longitude: -135)) == 0)
        #expect(Geodesic.distance(Coordinate(latitude: 95, longitude: 0),
                                  Coordinate(latitude: 0, longitude: 0)).isNaN)
    }
}

@Suite("GeodesicCircle decisions against GeographicLib")
struct GeodesicCircleTests {
    @Test func decisionsMatchReference() {
        let cases = CircleCase.all
        #expect(cases.count > 2000)
        var checked = 0, exempt = 0
        for c in cases {
            let circle = GeodesicCircle(center: c.center, radius: c.radius, exitRadius: c.exitRadius)
            if abs(c.s12 - c.radius) >= 0.01 {
                checked += 1
                #expect(circle.isInside(c.point) == (c.s12 <= c.radius),
                        "isInside center \(c.center) r \(c.radius) point \(c.point) ref \(c.s12)")
            } else {
                exempt += 1
            }
            if abs(c.s12 - c.exitRadius) >= 0.01 {
                #expect(circle.isBeyondExit(c.point) == (c.s12 > c.exitRadius),
                        "isBeyondExit center \(c.center) exit \(c.exitRadius) point \(c.point) ref \(c.s12)")
            }
            #expect(abs(circle.distance(to: c.point) - c.s12) <= distanceTolerance(c.s12))
        }
        print("GeodesicCircle: \(checked) decisions checked, \(exempt) within 1 cm of the boundary exempt")
        #expect(checked > 1500)
    }

    /// The distance an event reports (centimetres, the chord bound before Karney) is exactly the rounding
    /// of Karney's distance, and GeographicLib's except where its distance is within a micron of
    /// a half centimetre.
    @Test func centimetreDistancesMatchReference() {
        var checked = 0
        for c in CircleCase.all {
            let circle = GeodesicCircle(center: c.center, radius: c.radius, exitRadius: c.exitRadius)
            let reported = circle.distanceInCentimetres(to: c.point)
            #expect(reported == (circle.distance(to: c.point) * 100).rounded() / 100,
                    "\(reported) vs Karney \(circle.distance(to: c.point)) at \(c.center) → \(c.point)")
            let cents = c.s12 * 100
            if abs(cents - cents.rounded(.down) - 0.5) > 1e-4 {
                checked += 1
                #expect(reported == cents.rounded() / 100, "\(reported) vs GeographicLib \(c.s12)")
            }
        }
        #expect(checked > 2000)
    }

    /// The cheap bound is rigorous: whenever it decides, the reference agrees (no 1 cm exemption).
    /// And it is tight: it leaves open only points within the chord bound's band of the boundary,
    /// r³K²(π/2 − 1)/4 plus twice the chord's error allowance (0.44 µm at 500 m, 3.6 m at 100 km).
    @Test func cheapBoundNeverDecidesWrongly() {
        var inside = 0, outside = 0, ambiguous = 0
        func band(_ r: Double) -> Double { r * r * r * GeodesicCircle.arcCubic * 1.01 + 3 * GeodesicCircle.chordError }
        for c in CircleCase.all {
            let circle = GeodesicCircle(center: c.center, radius: c.radius, exitRadius: c.exitRadius)
            switch circle.cheapClassify(c.point) {
            case .inside:
                inside += 1
                #expect(c.s12 <= c.radius, "cheap inside but ref \(c.s12) > r \(c.radius) at \(c.center)")
            case .outside:
                outside += 1
                #expect(c.s12 > c.radius, "cheap outside but ref \(c.s12) <= r \(c.radius) at \(c.center)")
            case .ambiguous:
                ambiguous += 1
                #expect(abs(c.s12 - c.radius) <= band(c.radius),
                        "open at \(c.s12 - c.radius) m from r \(c.radius), beyond the band \(band(c.radius))")
            }
            switch circle.cheapClassifyExit(c.point) {
            case .inside: #expect(c.s12 <= c.exitRadius)
            case .outside: #expect(c.s12 > c.exitRadius)
            case .ambiguous: #expect(abs(c.s12 - c.exitRadius) <= band(c.exitRadius))
            }
        }
        print("cheapClassify: inside \(inside), outside \(outside), ambiguous \(ambiguous)")
        // The fixture exercises both the cheap and the exact path (its large circles, and points
        // placed within a millimetre of the boundary).
        #expect(inside > 100 && outside > 100 && ambiguous > 0)
    }

    /// The hot path's Float copy (`HotCircle`) never decides against the reference, and no
    /// clearance exceeds the true distance to the boundary that matters: to the exit circle from
    /// inside, to the entry circle from outside (the fast path skips tests on it).
    @Test func hotCircleAndClearanceAreRigorous() {
        var decided = 0, clear = 0
        for c in CircleCase.all {
            let circle = GeodesicCircle(center: c.center, radius: c.radius, exitRadius: c.exitRadius)
            let q = GeoPoint(c.point)
            let hot = circle.hot
            let c2 = hot.chord2(q)
            if let inside = hot.isInside(chord2: c2) {
                decided += 1
                #expect(inside == (c.s12 <= c.radius), "hot decides \(inside) at \(c.s12) m, r \(c.radius)")
            }
            if let beyond = hot.isBeyondExit(chord2: c2) {
                #expect(beyond == (c.s12 > c.exitRadius), "hot exit \(beyond) at \(c.s12) m, exit \(c.exitRadius)")
            }
            for inside in [true, false] where inside == (c.s12 <= c.exitRadius) || !inside && c.s12 > c.radius {
                let room = inside ? c.exitRadius - c.s12 : c.s12 - c.radius
                let full = circle.clearance(q, inside: inside)
                let fast = hot.clearance(chord2: c2, inside: inside)
                #expect(full <= room + 1e-9, "clearance \(full) > \(room) (inside \(inside))")
                #expect(fast <= full, "hot clearance \(fast) > full \(full)")
                if full > 0 { clear += 1 }
            }
        }
        print("HotCircle: \(decided) decided; \(clear) positive clearances checked")
        #expect(MemoryLayout<HotCircle>.stride == 64, "one cache line per region")
        #expect(decided > 1000 && clear > 1000)
    }

    /// A neighbourhood centred ahead of a fix drops a region only when the ball of the reach
    /// around the centre certainly holds none of its boundary that matters
    /// (`boundaryMayBeWithin`): checked against GeographicLib's distances with balls of every
    /// size, the fixture's points taken as centres, both states. It must also drop regions
    /// (it would be useless if it kept everything).
    @Test func boundaryMayBeWithinIsRigorous() {
        var dropped = 0, kept = 0
        for c in CircleCase.all {
            let circle = GeodesicCircle(center: c.center, radius: c.radius, exitRadius: c.exitRadius)
            let hot = circle.hot
            let c2 = hot.chord2(GeoPoint(c.point))
            for metres in [0.001, 0.5, 10, 70, 1000, 20_000] {
                for inside in [true, false] {
                    // The state must be one the centre could be in for a fix within the ball.
                    if hot.boundaryMayBeWithin(metres, chord2: c2, inside: inside) {
                        kept += 1
                        continue
                    }
                    dropped += 1
                    if inside {
                        #expect(c.s12 + metres <= c.exitRadius, "ball of \(metres) m at \(c.s12) m reaches the exit circle \(c.exitRadius)")
                    } else {
                        #expect(c.s12 - metres > c.radius, "ball of \(metres) m at \(c.s12) m reaches the circle \(c.radius)")
                    }
                }
            }
        }
        #expect(dropped > 1000 && kept > 1000)
    }

    /// Points in the curvature band (1 % of the radius) are ambiguous, points well clear are not.
    @Test(arguments: [0.0, 45.0, 89.0, -89.9999])
    func ambiguousBandIsNarrow(latitude: Double) {
        let r = 10_000.0
        let circle = GeodesicCircle(center: Coordinate(latitude: latitude, longitude: 179.99), radius: r, exitRadius: r)
        // Along the meridian: 1° of latitude is > 110 km, so 0.05° (>5.5 km) is clearly inside.
        let nearCenter = Coordinate(latitude: latitude + (latitude > 0 ? -0.05 : 0.05), longitude: 179.99)
        #expect(circle.cheapClassify(nearCenter) == .inside)
        let far = Coordinate(latitude: latitude + (latitude > 0 ? -0.2 : 0.2), longitude: 179.99)
        #expect(circle.cheapClassify(far) == .outside)
    }

    @Test func invalidPointsAreNeitherInsideNorBeyond() {
        let circle = GeodesicCircle(center: Coordinate(latitude: 10, longitude: 10), radius: 100, exitRadius: 150)
        for p in [Coordinate(latitude: .nan, longitude: 10), Coordinate(latitude: 91, longitude: 10)] {
            #expect(circle.cheapClassify(p) == .ambiguous)
            #expect(!circle.isInside(p))
            #expect(!circle.isBeyondExit(p))
        }
    }
}

@Suite("GeodesicCircle envelopes")
struct EnvelopeTests {
    struct Sample { var center: Coordinate; var exitRadius: Double; var points: [Coordinate] }

    static let samples: [Sample] = {
        guard let rows = try? Fixture.rows("envelope_reference") else { return [] }
        var out: [Sample] = []
        for f in rows {
            guard let clat = Double(String(f[0])), let clon = Double(String(f[1])), let exit = Double(String(f[2])),
                  let plat = Double(String(f[3])), let plon = Double(String(f[4])) else { continue }
            let c = Coordinate(latitude: clat, longitude: clon)
            let p = Coordinate(latitude: plat, longitude: plon)
            if let last = out.last, last.center == c, last.exitRadius == exit {
                out[out.count - 1].points.append(p)
            } else {
                out.append(Sample(center: c, exitRadius: exit, points: [p]))
            }
        }
        return out
    }()

    static func contains(_ boxes: [Envelope], _ p: Coordinate) -> Bool {
        boxes.contains { $0.contains(p) }
    }

    @Test func pointsAtExitRadiusAreCovered() {
        let samples = Self.samples
        #expect(samples.count > 100)
        var points = 0
        for s in samples {
            let boxes = GeodesicCircle(center: s.center, radius: s.exitRadius, exitRadius: s.exitRadius).envelopes()
            #expect(!boxes.isEmpty && boxes.count <= 2)
            for b in boxes {
                #expect(b.minLon <= b.maxLon && b.minLat <= b.maxLat)
                #expect(b.minLon >= -180 && b.maxLon <= 180 && b.minLat >= -90 && b.maxLat <= 90)
            }
            #expect(Self.contains(boxes, s.center))
            for p in s.points {
                points += 1
                #expect(Self.contains(boxes, p), "center \(s.center) exit \(s.exitRadius): \(p) not in \(boxes)")
            }
        }
        print("envelopes: \(samples.count) circles, \(points) boundary points covered")
    }

    /// Tightness: away from the poles the boxes exceed the true extent (from the reference
    /// extreme points) by little more than the curvature ratio (~1 % of the radius).
    @Test func boxesAreTightAwayFromPoles() {
        var checked = 0
        for s in Self.samples {
            let boxes = GeodesicCircle(center: s.center, radius: s.exitRadius, exitRadius: s.exitRadius).envelopes()
            guard boxes.count == 1, let box = boxes.first, abs(s.center.latitude) < 70, s.exitRadius < 500_000
            else { continue }
            checked += 1
            let lat0 = s.center.latitude, lon0 = s.center.longitude
            let latExtent = s.points.map { abs($0.latitude - lat0) }.max()!
            let lonExtent = s.points.map { abs(($0.longitude - lon0).remainder(dividingBy: 360)) }.max()!
            #expect(box.maxLat - lat0 <= 1.025 * latExtent + 1e-9)
            #expect(lat0 - box.minLat <= 1.025 * latExtent + 1e-9)
            #expect(box.maxLon - lon0 <= 1.03 * lonExtent + 1e-9)
            #expect(lon0 - box.minLon <= 1.03 * lonExtent + 1e-9)
        }
        #expect(checked > 30)
    }

    @Test(arguments: [90.0, -90.0, 89.9995, -89.9995])
    func capContainingPoleTakesAllLongitudes(latitude: Double) {
        let circle = GeodesicCircle(center: Coordinate(latitude: latitude, longitude: 30), radius: 80, exitRadius: 100)
        let boxes = circle.envelopes()
        #expect(boxes.count == 1)
        let pole = latitude > 0 ? 90.0 : -90.0
        for lon in [-180.0, -90, 0, 30, 179.5, 180] {
            #expect(Self.contains(boxes, Coordinate(latitude: pole, longitude: lon)))
        }
    }

    /// A point with longitude exactly ±180 is covered whichever spelling it uses.
    @Test(arguments: [180.0, -180.0, 179.9999, -179.9999, 179.0])
    func antimeridianSpellings(longitude: Double) {
        let lat = 37.0
        let circle = GeodesicCircle(center: Coordinate(latitude: lat, longitude: longitude), radius: 5_000, exitRadius: 100_000)
        let boxes = circle.envelopes()
        let crosses = Geodesic.distance(circle.center, Coordinate(latitude: lat, longitude: 180)) <= circle.exitRadius
        if crosses {
            #expect(boxes.count == 2)
            #expect(Self.contains(boxes, Coordinate(latitude: lat, longitude: 180)))
            #expect(Self.contains(boxes, Coordinate(latitude: lat, longitude: -180)))
        }
        #expect(Self.contains(boxes, Coordinate(latitude: lat, longitude: longitude)))
    }

    @Test func hugeCircleIsTheWorld() {
        let circle = GeodesicCircle(center: Coordinate(latitude: 0, longitude: 0), radius: 1e7, exitRadius: 2.1e7)
        #expect(circle.envelopes() == [.world])
    }
}

/// The fix's position takes its sines and cosines from an inlined reduction and polynomial, not
/// libm: they must stay within 1e-15 of libm's (correctly rounded to within an ulp) everywhere a
/// latitude or longitude can put them, so that the chord's error allowance (1 µm, against
/// 6.4e-9 m that 1e-15 can move a coordinate) still covers them.
@Suite struct SinCosTests {
    @Test func matchesTheCLibraryOverEveryLatitudeAndLongitude() {
        var rng = SplitMix64(seed: 31)
        var worst = 0.0
        var arguments: [Double] = [0, -0.0, .pi / 4, -.pi / 4, .pi / 2, -.pi / 2, 3 * .pi / 4, .pi, -.pi, 3.2, -3.2,
                                   1e-300, 5e-324, 16.618337 * .pi / 180, 180 * (Double.pi / 180), -180 * (Double.pi / 180)]
        // Around each switch between multiples of π/2, where the reduction changes k.
        for k in -3...3 {
            let edge = (Double(k) + 0.5) * (Double.pi / 2)
            var x = edge
            for _ in 0..<2000 { x = x.nextDown; arguments.append(x) }
            x = edge
            for _ in 0..<2000 { x = x.nextUp; arguments.append(x) }
        }
        for _ in 0..<2_000_000 { arguments.append((Double(rng.next() >> 11) / Double(1 << 53) * 2 - 1) * 3.2) }
        for x in arguments where abs(x) <= 3.2 {
            let (s, c) = sinCos(x)
            worst = max(worst, abs(s - sin(x)), abs(c - cos(x)))
        }
        #expect(worst <= 1e-15, "largest difference \(worst)")
        // Beyond the reduction's range, and NaN, the C library answers.
        #expect(sinCos(10).sin == sin(10) && sinCos(10).cos == cos(10))
        #expect(sinCos(.nan).sin.isNaN)
    }

    /// cos φ in degrees (one inlined kernel up to 135°, `sinCos` beyond), which the envelopes
    /// use, stays within a few ulps of the C library, relatively (the envelopes' margins are 10⁻¹²).
    @Test func cosDegreesMatchesTheCLibrary() {
        var rng = SplitMix64(seed: 32)
        var worstCos = 0.0
        for k in 0..<1_000_000 {
            let u = Double(rng.next() >> 11) / Double(1 << 53) * 2 - 1
            // Latitudes, and beyond them (other branches of cosDegrees) up to ±180°.
            let degrees = k % 2 == 0 ? u * 90 : u * 180
            let exact = abs(degrees) <= 45 ? cos(abs(degrees) * (Double.pi / 180)) : sin((90 - abs(degrees)) * (Double.pi / 180))
            worstCos = max(worstCos, abs(cosDegrees(degrees) - exact) / exact)
        }
        #expect(worstCos <= 4e-16, "cosDegrees' largest relative difference \(worstCos)")
        #expect(cosDegrees(90) == 0 && cosDegrees(0) == 1)
    }

    /// An event's centimetres are rounded ties-away without libm: it must agree with `rounded()`.
    @Test func roundingAgreesWithRounded() {
        var rng = SplitMix64(seed: 32)
        var values: [Double] = [0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994,
                                4_503_599_627_370_495.5, 4_503_599_627_370_496, -4_503_599_627_370_497, 1e300, .infinity, -.infinity]
        for _ in 0..<1_000_000 {
            let magnitude = Double(rng.below(2_000_000_000)) / 100 + Double(rng.below(4)) * 0.25
            values.append(rng.below(2) == 0 ? magnitude : -magnitude)
            values.append(Double(rng.next() >> 11) / Double(1 << 53) * 1e6)
        }
        for x in values { #expect(roundedHalfAway(x) == x.rounded(), "\(x)") }
        #expect(roundedHalfAway(.nan).isNaN)
    }
}

/// The chord bound itself, c − ε ≤ s ≤ (2/K) asin((c + ε)K/2), on Karney's distance for pairs
/// anywhere (across the equator and the antimeridian, at the poles, due north or due east) from
/// a millimetre to 120 km apart, and the centimetres an event reports from it. Its soundness is
/// the argument on `GeodesicCircle` (Schur's comparison theorem), which this only samples; a
/// curvature 1 % below WGS84's largest, or an error allowance of 1e-9 m instead of 1e-6 m, fails
/// at once.
@Suite struct ChordBoundTests {
    @Test func chordBoundsHoldKarneysDistance() {
        var rng = SplitMix64(seed: 85)
        var checked = 0, settled = 0, short = 0, shortSettled = 0
        var closestBelow = Double.infinity, closestAbove = Double.infinity
        let k = WGS84.maxCurvature, e = GeodesicCircle.chordError
        for n in 0..<200_000 {
            let latitude: Double
            switch n % 10 {
            case 0: latitude = rng.uniform(-0.05, 0.05)
            case 1: latitude = (n % 20 == 1 ? 1 : -1) * rng.uniform(89.9, 90)
            default: latitude = rng.uniform(-90, 90)
            }
            let longitude = n % 7 == 0 ? (n % 14 == 0 ? 179.9999 : -180) : rng.uniform(-180, 180)
            let a = Coordinate(latitude: latitude, longitude: longitude)
            let metres = pow(10, rng.uniform(-3, 5.08))
            let azimuth = n % 5 == 0 ? Double(n % 4) * .pi / 2 : rng.uniform(0, 2 * .pi)
            var lat = latitude + metres * cos(azimuth) / 111_000
            var lon = longitude + metres * sin(azimuth) / (111_000 * max(0.01, cos(latitude * .pi / 180)))
            if lat > 90 { lat = 180 - lat; lon += 180 }
            if lat < -90 { lat = -180 - lat; lon += 180 }
            lon = lon.remainder(dividingBy: 360)
            let b = Coordinate(latitude: lat, longitude: lon)
            let s = Geodesic.distance(a, b)
            let pa = GeoPoint(a), pb = GeoPoint(b)
            let c = pa.chord2(pb.x, pb.y, pb.z).squareRoot()
            let upper = 2 / k * asin((c + e) * k / 2)
            checked += 1
            #expect(c - e <= s && s <= upper, "\(a) → \(b): \(s) m not in [\(c - e), \(upper)]")
            closestBelow = min(closestBelow, s - (c - e))
            closestAbove = min(closestAbove, upper - s)
            #expect(s <= GeodesicCircle.arcAbove(c + e) || c > 1e7)
            if c <= 5000 { short += 1 }
            if let cm = GeodesicCircle.centimetres(chord2: c * c) {
                settled += 1
                if c <= 5000 { shortSettled += 1 }
                #expect(cm == (s * 100).rounded() / 100, "\(a) → \(b): \(cm) against Karney's \(s)")
            }
            if !(c - e <= s && s <= upper) { break }
        }
        #expect(checked == 200_000)
        // Up to 5 km, all but the few within a few micrometres of a half centimetre (the bounds
        // are c³K²/24 apart: 0.13 mm at 5 km, 13 cm at 50 km, and no answer beyond 100 km).
        #expect(Double(shortSettled) > 0.999 * Double(short) && short > 100_000)
        print("chord bound: \(checked) pairs, \(settled) settled to the cm (\(shortSettled) of \(short) up to 5 km); closest \(closestBelow) m above c − ε, \(closestAbove) m below the arc bound")
    }

    /// The WGS84 literals the inlined hot path uses are Geodesic's constants.
    @Test func literalsAreWGS84() {
        let f = Geodesic.flattening
        #expect(abs(WGS84.e2 - f * (2 - f)) <= 1e-18)
        #expect(abs(WGS84.oneMinusE2 - (1 - f * (2 - f))) <= 1e-16)
        #expect(WGS84.a == Geodesic.equatorialRadius)
        let b = Geodesic.polarRadius
        #expect(WGS84.maxCurvature >= Geodesic.equatorialRadius / (b * b))
        #expect(WGS84.maxCurvature <= Geodesic.equatorialRadius / (b * b) * (1 + 1e-14))
        // The cube's coefficient bounds (asin x − x)/x³ at x = 1 (its largest), scaled.
        #expect(GeodesicCircle.arcCubic >= (Double.pi / 2 - 1) / 4 * WGS84.maxCurvature * WGS84.maxCurvature)
    }
}
