import GeotriggerCore
@testable import GeotriggerGeometry
import Testing
import Foundation

@Suite("Region index")
struct RegionIndexTests {
    @Test("GEOS is loaded on first use; a library that is missing or not GEOS is named with the reason")
    func loadingGEOS() throws {
        // A context of its own loads GEOS when first used: a polygon is then tested as ever
        // (both points are in its box; GEOS tells them apart).
        let triangle = Region(id: "tri", shape: .polygons([[[
            Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0, longitude: 1),
            Coordinate(latitude: 1, longitude: 0), Coordinate(latitude: 0, longitude: 0),
        ]]]))
        let index = try RegionIndex(regions: [triangle])
        for (p, inside) in [(Coordinate(latitude: 0.2, longitude: 0.2), true), (Coordinate(latitude: 0.8, longitude: 0.8), false)] {
            #expect(Array(index.candidates(at: p)) == [0])
            #expect(index.isInside(0, p) == inside)
        }
        #expect(GEOSContext.problem(loading: "libgeos_c.so.1") == nil)
        let missing = try #require(GEOSContext.problem(loading: "libgeotrigger-no-such-library.so.1"))
        #expect(missing.hasPrefix("GEOS could not be loaded ("))
        #expect(missing.contains("libgeotrigger-no-such-library.so.1"))
        // A real library without GEOS's functions: the first one looked for is named.
        #expect(GEOSContext.problem(loading: "libz.so.1")
                == "libz.so.1 has no GEOSContext_setErrorMessageHandler_r: not a GEOS this build can use")
    }

    /// Random circles (some polar, some across the antimeridian) and random polygons; random points
    /// near them. The tree's candidates must hold every region whose envelope contains the point
    /// (brute force) and nothing farther than a Float's rounding from it (exactly that set for the
    /// GEOS tree), and must include every region the point is inside of (exact test).
    @Test("Index candidates hold a brute-force scan (packed R-tree and GEOS STRtree)",
          arguments: zip([UInt64(1), 2, 3], [SpatialIndexKind.packed, .packed, .geos]))
    func candidatesMatchBruteForce(seed: UInt64, tree: SpatialIndexKind) throws {
        var rng = SplitMix64(seed: seed)  // deterministic, so failures reproduce
        var regions: [Region] = []
        var centres: [Coordinate] = []
        for i in 0..<3000 {
            let lat: Double
            switch i % 10 {
            case 0: lat = Double.random(in: 88...90, using: &rng)     // polar caps
            case 1: lat = Double.random(in: -90 ... -88, using: &rng)
            default: lat = Double.random(in: -80...80, using: &rng)
            }
            let lon = i % 7 == 0 ? (Bool.random(using: &rng) ? 179.99 : -179.99) : Double.random(in: -180...180, using: &rng)
            let c = Coordinate(latitude: lat, longitude: lon)
            centres.append(c)
            if i % 50 == 49 && abs(lat) < 80 && abs(lon) < 179 {
                let d = Double.random(in: 0.001...0.5, using: &rng)
                let ring = [(-d, -d), (d, -d * 0.5), (d, d), (-d * 0.3, d), (-d, -d)].map {
                    Coordinate(latitude: lat + $0.1, longitude: lon + $0.0)
                }
                regions.append(Region(id: "p\(i)", shape: .polygons([[ring]])))
            } else {
                let r = exp(Double.random(in: log(5.0)...log(100_000.0), using: &rng))
                regions.append(Region(id: "c\(i)", shape: .circle(center: c, radius: r)))
            }
        }
        let index = try RegionIndex(regions: regions, hysteresis: .automatic, tree: tree)
        let boxes: [[Envelope]] = index.shapes.enumerated().map { i, shape in
            switch shape {
            case .none: return []
            case .circle(let c): return c.envelopes()
            case .polygon:
                guard case .polygons(let p) = regions[i].shape else { return [] }
                let pts = p.flatMap { $0.flatMap { $0 } }
                return [Envelope(minLon: pts.map(\.longitude).min()!, minLat: pts.map(\.latitude).min()!,
                                 maxLon: pts.map(\.longitude).max()!, maxLat: pts.map(\.latitude).max()!)]
            }
        }
        var checked = 0, inside = 0
        for k in 0..<2000 {
            // Half the points near a region centre (so many are inside), half anywhere.
            var p: Coordinate
            if k % 2 == 0 {
                let c = centres[Int.random(in: 0..<centres.count, using: &rng)]
                p = Coordinate(latitude: max(-90, min(90, c.latitude + Double.random(in: -0.02...0.02, using: &rng))),
                               longitude: c.longitude + Double.random(in: -0.05...0.05, using: &rng))
                if p.longitude > 180 { p.longitude -= 360 }
                if p.longitude < -180 { p.longitude += 360 }
            } else {
                p = Coordinate(latitude: Double.random(in: -90...90, using: &rng), longitude: Double.random(in: -180...180, using: &rng))
            }
            let got = Array(index.candidates(at: p)).map(Int.init)
            func holds(_ slack: Double) -> (Int) -> Bool {
                { i in
                    boxes[i].contains { b in
                        p.latitude >= b.minLat - slack && p.latitude <= b.maxLat + slack &&
                            (p.longitude >= b.minLon - slack && p.longitude <= b.maxLon + slack ||
                             abs(p.longitude) == 180 && -p.longitude >= b.minLon - slack && -p.longitude <= b.maxLon + slack)
                    }
                }
            }
            let brute = boxes.indices.filter(holds(0))
            // Every envelope holding the point is a candidate (GEOS's set); the packed tree keeps
            // Float boxes rounded outwards, so it may add envelopes that miss the point by less
            // than a Float's rounding (under 2e-5 degrees), and no others.
            #expect(Set(brute).isSubset(of: Set(got)), "point \(p)")
            #expect(got.allSatisfy(holds(tree == .geos ? 0 : 2e-5)), "point \(p): a candidate too far away")
            // No region outside the candidates may contain the point (cheap rigorous bound first,
            // exact geodesic distance where the bound cannot tell).
            var next = 0
            let point = GeoPoint(p)
            for i in regions.indices {
                if next < got.count && got[next] == i {
                    next += 1
                    if index.isInsideExactlyForTesting(i, p) { inside += 1 }
                    continue
                }
                guard let c = index.circle(i), c.cheapClassify(point) != .outside else { continue }
                #expect(c.distance(to: p) > c.radius, "region \(regions[i].id) contains \(p) but is no candidate")
            }
            checked += 1
        }
        #expect(checked == 2000)
        #expect(inside > 300, "the test should exercise many inside points, got \(inside)")
    }

    /// The monitor's one-chord test gives what the separate calls give, including the points
    /// on a boundary that the chord bound leaves to the exact distance, and polygons.
    @Test("test(_:_:visited:) answers as isInside / isBeyondExit and clearance do")
    func combinedTest() throws {
        var rng = SplitMix64(seed: 41)
        var regions: [Region] = []
        for i in 0..<40 {
            let c = Coordinate(latitude: 48 + Double(rng.below(1000)) / 10_000, longitude: 16 + Double(rng.below(1000)) / 10_000)
            regions.append(Region(id: "c\(i)", shape: .circle(center: c, radius: 20 + Double(rng.below(400)))))
        }
        let square = [Coordinate(latitude: 48.02, longitude: 16.02), Coordinate(latitude: 48.02, longitude: 16.06),
                      Coordinate(latitude: 48.06, longitude: 16.06), Coordinate(latitude: 48.06, longitude: 16.02),
                      Coordinate(latitude: 48.02, longitude: 16.02)]
        regions.append(Region(id: "square", shape: .polygons([[square]])))
        let index = try RegionIndex(regions: regions, hysteresis: .metres(10), tree: .packed)
        var ambiguous = 0
        for _ in 0..<20_000 {
            let r = rng.below(index.count)
            // Points around the region's boundary: its centre (or a corner) moved by up to the radius + 20 m.
            let base: Coordinate
            if case .circle(let circle) = index.shape(r) {
                let c = circle.center, radius = circle.radius
                let bearing = Double(rng.below(360_000)) / 1000 * .pi / 180
                func along(_ metres: Double) -> Coordinate {
                    let d = metres / 111_000
                    return Coordinate(latitude: c.latitude + d * cos(bearing), longitude: c.longitude + d * sin(bearing) / cos(c.latitude * .pi / 180))
                }
                if rng.below(10) == 0 {
                    // On the entry or the exit boundary to within a nanometre (bisection on
                    // Karney's distance): the chord bound leaves these to the exact test.
                    let target = rng.below(2) == 0 ? radius : radius + 10
                    var lo = target * 0.9, hi = target * 1.1
                    for _ in 0..<60 {
                        let mid = (lo + hi) / 2
                        if circle.distance(to: along(mid)) <= target { lo = mid } else { hi = mid }
                    }
                    base = along(lo)
                } else {
                    base = along(radius + Double(rng.below(40_000)) / 1000 - 10)
                }
            } else {
                base = Coordinate(latitude: 48.02 + Double(rng.below(40_000)) / 1e6, longitude: 16.02 + Double(rng.below(40_000)) / 1e6)
            }
            let q = GeoPoint(base)
            index.setQueryPoint(base)
            for visited in [false, true] {
                let expectedInside = visited ? !index.isBeyondExit(r, q) : index.isInside(r, q)
                let got = index.test(r, q, visited: visited)
                #expect(got.inside == expectedInside && got.clearance == index.clearance(r, q, inside: expectedInside))
            }
            if case .circle = index.shape(r), index.hot[r].isInside(chord2: index.hot[r].chord2(q)) == nil { ambiguous += 1 }
        }
        #expect(ambiguous > 0, "some points are close enough to a boundary for the exact distance")
    }

    @Test("a point on the antimeridian finds circles on both sides", arguments: SpatialIndexKind.allCases)
    func antimeridianPoint(tree: SpatialIndexKind) throws {
        let east = Region(id: "east", shape: .circle(center: Coordinate(latitude: -17, longitude: 179.999), radius: 1000))
        let west = Region(id: "west", shape: .circle(center: Coordinate(latitude: -17, longitude: -179.999), radius: 1000))
        let index = try RegionIndex(regions: [east, west], hysteresis: .metres(0), tree: tree)
        for lon in [180.0, -180.0] {
            let p = Coordinate(latitude: -17, longitude: lon)
            #expect(Array(index.candidates(at: p)) == [0, 1])
            #expect(index.isInside(0, p) && index.isInside(1, p))
        }
    }

    @Test("a circle around the pole is found from any longitude", arguments: SpatialIndexKind.allCases)
    func polarCircle(tree: SpatialIndexKind) throws {
        let pole = Region(id: "pole", shape: .circle(center: Coordinate(latitude: 90, longitude: 0), radius: 5000))
        let index = try RegionIndex(regions: [pole], hysteresis: .metres(0), tree: tree)
        for lon in stride(from: -180.0, through: 180, by: 15) {
            let p = Coordinate(latitude: 89.97, longitude: lon)   // ≈ 3.3 km from the pole
            #expect(Array(index.candidates(at: p)) == [0])
            #expect(index.isInside(0, p))
        }
    }

    /// A large index of circles only is built by two threads (`SplitWork`) and reordered along
    /// the curve with the regions and their lines moved on two threads; one region that is not a
    /// circle sends the same circles through the one-thread build. Both must put every circle in
    /// the same place with the same geometry, and answer every point alike.
    @Test("a large index of circles built by two threads equals the one-thread build")
    func twoThreadBuildEqualsOneThread() throws {
        var rng = SplitMix64(seed: 27)
        let count = 2 * SplitWork.minimumCount + 1  // halves of unequal size
        var centres: [Coordinate] = []
        let circles = (0..<count).map { i in
            // A city's worth of circles, and some anywhere (poles and antimeridian included).
            let c = i % 10 == 0
                ? Coordinate(latitude: Double.random(in: -90...90, using: &rng), longitude: Double.random(in: -180...180, using: &rng))
                : Coordinate(latitude: Double.random(in: 48.1...48.3, using: &rng), longitude: Double.random(in: 16.2...16.6, using: &rng))
            centres.append(c)
            return Region(id: "c\(i)", shape: .circle(center: c, radius: Double.random(in: 20...2000, using: &rng)))
        }
        let square = [(0.0, 0.0), (0.001, 0.0), (0.001, 0.001), (0.0, 0.001), (0.0, 0.0)].map {
            Coordinate(latitude: -40 + $0.1, longitude: -100 + $0.0)
        }
        let two = try RegionIndex(regions: circles, order: .spatial)
        let one = try RegionIndex(regions: circles + [Region(id: "square", shape: .polygons([[square]]))], order: .spatial)
        #expect(two.count == count && one.count == count + 1)
        var oneNumber: [String: Int] = [:], twoNumber: [String: Int] = [:]
        for (k, r) in one.regions.enumerated() { oneNumber[r.id] = k }
        for (k, r) in two.regions.enumerated() { twoNumber[r.id] = k }
        // Every circle where its id says it came from, with the same geometry as the other build's.
        for k in 0..<count {
            let id = two.regions[k].id
            let given = Int(two.givenPositions?[k] ?? Int32(k))
            #expect(id == "c\(given)")
            // The lines the monitor reads: the hot line, and the slow line it points to.
            let a = two.hot[k], b = one.hot[oneNumber[id]!]
            #expect(a.x == b.x && a.y == b.y && a.z == b.z && a.radius == b.radius && a.exitRadius == b.exitRadius)
            #expect(a.chordIn == b.chordIn && a.chordOut == b.chordOut && a.chordExitIn == b.chordExitIn
                    && a.chordExitOut == b.chordExitOut)
            let core = two.slow[Int(a.slot)], otherCore = one.slow[Int(b.slot)]
            #expect(core.center == centres[given] && core.center == otherCore.center
                    && core.radius == otherCore.radius && core.exitRadius == otherCore.exitRadius)
            #expect(Int(a.given) == given)
        }
        // The same candidates and decisions for points in and around the circles.
        for k in 0..<2000 {
            let c = centres[Int.random(in: 0..<count, using: &rng)]
            let p = Coordinate(latitude: max(-90, min(90, c.latitude + Double.random(in: -0.01...0.01, using: &rng))),
                               longitude: max(-180, min(180, c.longitude + Double.random(in: -0.01...0.01, using: &rng))))
            let a = Set(two.candidates(at: p).map { two.regions[Int($0)].id })
            let b = Set(one.candidates(at: p).map { one.regions[Int($0)].id }).subtracting(["square"])
            #expect(a == b, "point \(k) at \(p)")
            for id in a {
                #expect(two.isInsideExactlyForTesting(twoNumber[id]!, p) == one.isInsideExactlyForTesting(oneNumber[id]!, p))
            }
        }
    }

    /// `replay --jobs`: the jobs' indexes read one index's circle tables and tree, each on its own
    /// thread with its own GEOS context (polygons prepared again there) and query scratch.
    @Test("indexes sharing one index's tables answer as it does on other threads, and a live change stays in its own index")
    func sharedIndexes() throws {
        var rng = SplitMix64(seed: 41)
        var regions: [Region] = []
        for i in 0..<3000 {
            let c = Coordinate(latitude: Double.random(in: 48.1...48.3, using: &rng), longitude: Double.random(in: 16.2...16.6, using: &rng))
            if i % 100 == 0 {
                let d = Double.random(in: 0.001...0.01, using: &rng)
                let ring = [(-d, -d), (d, -d * 0.5), (d, d), (-d * 0.3, d), (-d, -d)].map {
                    Coordinate(latitude: c.latitude + $0.1, longitude: c.longitude + $0.0)
                }
                regions.append(Region(id: "p\(i)", shape: .polygons([[ring]])))
            } else {
                regions.append(Region(id: "c\(i)", shape: .circle(center: c, radius: Double.random(in: 20...800, using: &rng))))
            }
        }
        let points = (0..<4000).map { _ in
            Coordinate(latitude: Double.random(in: 48.1...48.3, using: &rng), longitude: Double.random(in: 16.2...16.6, using: &rng))
        }
        /// Per point: the candidates and, for each, whether the point is inside.
        @Sendable func answers(_ index: RegionIndex) -> [[Int32]] {
            points.map { p in
                let found = Array(index.candidates(at: p))
                return found + found.map { index.isInside(Int($0), GeoPoint(p)) ? 1 : 0 }
            }
        }
        let original = try RegionIndex(regions: regions, order: .spatial)
        let expected = answers(original)
        #expect(expected.contains { !$0.isEmpty })
        let shared = try #require(original.sharedWithThreads())
        /// What the threads use and write: the original for thread 0 alone, a slot each.
        final class Run: @unchecked Sendable {
            let original: RegionIndex
            var mismatches = [Int](repeating: -1, count: 3)
            init(_ original: RegionIndex) { self.original = original }
        }
        let run = Run(original)
        DispatchQueue.concurrentPerform(iterations: 3) { k in
            // Thread k's own index over the shared tables (k = 0 asks the original itself).
            let index = k == 0 ? run.original : try! RegionIndex(sharing: shared)
            run.mismatches[k] = zip(answers(index), expected).filter { $0 != $1 }.count
        }
        #expect(run.mismatches == [0, 0, 0])

        // A region added and one removed in a sharing index: the others do not see either.
        let changed = try RegionIndex(sharing: shared)
        let target = try #require(points.indices.first { expected[$0].count >= 2 && expected[$0][expected[$0].count / 2] == 1 })
        let inside = expected[target][0..<(expected[target].count / 2)].enumerated().first { expected[target][expected[target].count / 2 + $0.offset] == 1 }!.element
        changed.remove(inside)
        let added = try changed.append(Region(id: "new", shape: .circle(center: points[target], radius: 50)))
        #expect(changed.candidates(at: points[target]).contains(added))
        #expect(!changed.candidates(at: points[target]).contains(inside))
        #expect(!changed.isInside(Int(inside), GeoPoint(points[target])))
        func mismatches(_ index: RegionIndex) -> Int { zip(answers(index), expected).filter { $0 != $1 }.count }
        #expect(mismatches(original) == 0)
        #expect(mismatches(try RegionIndex(sharing: shared)) == 0)
        // A GEOS tree is made and queried in one context: nothing to share.
        #expect(try RegionIndex(regions: Array(regions.prefix(100)), tree: .geos).sharedWithThreads() == nil)
    }
}

extension RegionIndex {
    /// The exact decision without relying on the tree (the query point is set for polygons).
    func isInsideExactlyForTesting(_ r: Int, _ p: Coordinate) -> Bool {
        switch shape(r) {
        case .none: return false
        case .circle(let c): return c.distance(to: p) <= c.radius
        case .polygon:
            _ = candidates(at: p)
            return isInside(r, p)
        }
    }
}
