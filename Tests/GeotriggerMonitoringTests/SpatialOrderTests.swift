import GeotriggerCore
@testable import GeotriggerGeometry
@testable import GeotriggerMonitoring
import Testing
import Foundation

/// `RegionOrder.spatial` renumbers the regions along the packed tree's Hilbert curve (what
/// `geotrigger replay` does). Nothing a user sees may change: the same regions decide the same
/// way, and a monitor reports the same events, in the same order, as over the given order.
@Suite struct SpatialOrderTests {
    static let center = Coordinate(latitude: 48.2, longitude: 16.37)

    /// `n` circles of 50–400 m within about 2 km of the centre, so they overlap heavily, and two
    /// polygons among them.
    static func regions(_ n: Int, seed: UInt64) -> [Region] {
        var random = SplitMix64(seed: seed)
        var regions = (0..<n).map { i in
            Region(id: "c\(i)", shape: .circle(
                center: Coordinate(latitude: center.latitude + random.uniform(-0.018, 0.018),
                                   longitude: center.longitude + random.uniform(-0.027, 0.027)),
                radius: random.uniform(50, 400)))
        }
        func square(_ lat: Double, _ lon: Double, _ d: Double) -> [[[Coordinate]]] {
            [[[Coordinate(latitude: lat - d, longitude: lon - d), Coordinate(latitude: lat - d, longitude: lon + d),
               Coordinate(latitude: lat + d, longitude: lon + d), Coordinate(latitude: lat + d, longitude: lon - d),
               Coordinate(latitude: lat - d, longitude: lon - d)]]]
        }
        regions.insert(Region(id: "p0", shape: .polygons(square(48.205, 16.36, 0.004))), at: n / 3)
        regions.insert(Region(id: "p1", shape: .polygons(square(48.195, 16.38, 0.002))), at: 2 * n / 3)
        return regions
    }

    /// 300 regions with polygons among them; 20,000 circles, a set the build makes on two
    /// threads, finding the curve order from the envelopes before the circles' lines.
    @Test(arguments: [300, 20_000])
    func spatialOrderIsAPermutationThatDecidesAlike(count: Int) throws {
        let circlesOnly = SplitWork.worthwhile(count)
        let given = Self.regions(count, seed: 7).filter { r in
            if case .circle = r.shape { true } else { !circlesOnly }
        }
        let plain = try RegionIndex(regions: given, hysteresis: .automatic)
        let spatial = try RegionIndex(regions: given, hysteresis: .automatic, order: .spatial)
        #expect(plain.givenPositions == nil)
        let positions = try #require(spatial.givenPositions)
        #expect(positions.sorted() == (0..<Int32(given.count)).map { $0 })
        #expect(positions != (0..<Int32(given.count)).map { $0 }, "a random set is not already in curve order")
        for r in spatial.regions.indices {
            #expect(spatial.regions[r].id == given[Int(positions[r])].id)
        }

        var random = SplitMix64(seed: 11)
        for _ in 0..<(circlesOnly ? 100 : 2000) {
            let p = Coordinate(latitude: Self.center.latitude + random.uniform(-0.025, 0.025),
                               longitude: Self.center.longitude + random.uniform(-0.035, 0.035))
            let q = GeoPoint(p)
            let a = Array(plain.candidates(at: p))
            let b = Array(spatial.candidates(at: p))
            #expect(b == b.sorted(), "candidates ascending")
            #expect(Set(a.map { given[Int($0)].id }) == Set(b.map { spatial.regions[Int($0)].id }))
            for r in b {
                let g = Int(positions[Int(r)])
                #expect(spatial.isInside(Int(r), q) == plain.isInside(g, q))
                #expect(spatial.isBeyondExit(Int(r), q) == plain.isBeyondExit(g, q))
                #expect(spatial.reportedDistance(Int(r), p).bitPattern == plain.reportedDistance(g, p).bitPattern)
            }
        }

        // Another thread's index of the same set keeps that order as it is.
        let copy = try RegionIndex(regions: spatial.regions, hysteresis: .automatic,
                                   order: .reordered(givenPositions: positions))
        #expect(copy.givenPositions == positions)
        #expect(copy.regions.map(\.id) == spatial.regions.map(\.id))
    }

    @Test func circlesAcrossTheAntimeridianKeepTheirCandidates() throws {
        var random = SplitMix64(seed: 3)
        let given = (0..<200).map { i in
            Region(id: "a\(i)", shape: .circle(
                center: Coordinate(latitude: random.uniform(-10, 10), longitude: random.uniform(179.5, 180.5).wrappedLongitude),
                radius: random.uniform(1000, 40_000)))
        }
        let plain = try RegionIndex(regions: given, hysteresis: .automatic)
        let spatial = try RegionIndex(regions: given, hysteresis: .automatic, order: .spatial)
        let positions = try #require(spatial.givenPositions)
        for _ in 0..<2000 {
            let p = Coordinate(latitude: random.uniform(-10.5, 10.5), longitude: random.uniform(179, 181).wrappedLongitude)
            let a = plain.candidates(at: p).map { given[Int($0)].id }
            let b = Array(spatial.candidates(at: p))
            #expect(b == b.sorted() && Set(b).count == b.count, "ascending, each region once")
            #expect(Set(a) == Set(b.map { spatial.regions[Int($0)].id }))
            for r in b {
                #expect(spatial.isInside(Int(r), GeoPoint(p)) == plain.isInside(Int(positions[Int(r)]), GeoPoint(p)))
            }
        }
    }

    @Test func setsWithBeaconRegionsKeepTheGivenOrder() throws {
        var given = Self.regions(20, seed: 5)
        let beacon = BeaconRegion(identity: BeaconID(), measuredPower: -65, pathLossExponent: 3)
        given.append(Region(id: "b", shape: .beacon(beacon)))
        let spatial = try RegionIndex(regions: given, hysteresis: .automatic, order: .spatial)
        #expect(spatial.givenPositions == nil)
        #expect(spatial.regions.map(\.id) == given.map(\.id))
    }

    @Test("the index's summary: circles only, which regions are beacon regions, whether all notify")
    func summary() throws {
        // Enough circles for the build's two threads (`SplitWork`).
        var given = Self.regions(20_000, seed: 7).filter { if case .circle = $0.shape { true } else { false } }
        let plain = try RegionIndex(regions: given, hysteresis: .automatic, order: .spatial)
        #expect(plain.summary.allCircles && plain.summary.notifiesAll && plain.summary.beaconRegions.isEmpty)
        #expect(BeaconMatcher(regions: plain.regions, beaconRegions: plain.summary.beaconRegions).count == 0)
        given[123].notifyOnExit = false
        let quiet = try RegionIndex(regions: given, hysteresis: .automatic, order: .spatial)
        #expect(quiet.summary.allCircles && !quiet.summary.notifiesAll)
        // Beacon regions (the set then keeps its order) and a polygon, among the circles.
        let beacon = BeaconRegion(identity: BeaconID(), measuredPower: -65, pathLossExponent: 3)
        var mixed = Array(given.prefix(10))
        mixed.insert(Region(id: "b1", shape: .beacon(beacon)), at: 3)
        mixed.append(Region(id: "b2", shape: .beacon(beacon)))
        mixed.insert(Region(id: "p", shape: .polygons([[[
            Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0, longitude: 1),
            Coordinate(latitude: 1, longitude: 0), Coordinate(latitude: 0, longitude: 0),
        ]]])), at: 5)
        let index = try RegionIndex(regions: mixed, hysteresis: .automatic, order: .spatial)
        #expect(!index.summary.allCircles && index.summary.notifiesAll)
        #expect(index.summary.beaconRegions == [3, 12])
        // What the jobs' indexes share is the same summary.
        let shared = try RegionIndex(sharing: try #require(index.sharedWithThreads()))
        #expect(shared.summary.beaconRegions == [3, 12])
        #expect(BeaconMatcher(regions: index.regions, beaconRegions: index.summary.beaconRegions).count
                == BeaconMatcher(regions: index.regions).count)
    }

    final class Log: RegionEventSink {
        var lines: [String] = []
        let regions: [Region]
        init(regions: [Region]) { self.regions = regions }
        func handle(_ e: RegionEvent) {
            lines.append("\(e.kind.name) t=\(e.t) d=\(e.device) \(regions[Int(e.region)].id) \(e.distance) \(e.enteredAt)")
        }
    }

    /// Devices wander through many overlapping regions, one fix a second, so a fix often enters
    /// or leaves several regions at once and several dwell timers of a device fall due together:
    /// the events, their order and the devices' visits must not depend on the index's order.
    @Test(arguments: [
        MonitorOptions(maxAccuracy: 0, dwell: 5, initial: .enter, safeDistance: 100),
        MonitorOptions(maxAccuracy: 0, dwell: 5, initial: .none, safeDistance: nil),
        MonitorOptions(maxAccuracy: 200, dwell: nil, initial: .enter, safeDistance: 60),
    ])
    func eventsDoNotDependOnTheOrder(options: MonitorOptions) throws {
        let given = Self.regions(400, seed: 42)
        func run(_ order: RegionOrder) throws -> (events: [String], visits: [[String]]) {
            let index = try RegionIndex(regions: given, hysteresis: .automatic, order: order)
            let monitor = Monitor(index: index, options: options)
            let log = Log(regions: index.regions)
            monitor.sink = log
            var random = SplitMix64(seed: 99)
            let devices = (0..<6).map { monitor.device("d\($0)") }
            var positions = devices.map { _ in Self.center }
            var headings = devices.map { _ in random.uniform(0, 2 * .pi) }
            for second in 0..<600 {
                let t = 1_700_000_000 + Double(second)
                monitor.fireTimers(before: t)
                for (k, d) in devices.enumerated() {
                    headings[k] += random.uniform(-0.3, 0.3)
                    let step = k % 2 == 0 ? 1.4 : 12.0
                    var p = positions[k]
                    p.latitude += step * cos(headings[k]) / 111_000
                    p.longitude += step * sin(headings[k]) / 74_000
                    if abs(p.latitude - Self.center.latitude) > 0.02 || abs(p.longitude - Self.center.longitude) > 0.03 {
                        headings[k] += .pi
                    }
                    positions[k] = p
                    _ = monitor.fix(device: d, t: t, at: p, accuracy: random.uniform(3, 250))
                }
                monitor.advance(to: t)
            }
            let visits = devices.map { d in monitor.visits(of: d).map { index.regions[Int($0.region)].id } }
            return (log.lines, visits)
        }
        let a = try run(.given), b = try run(.spatial)
        #expect(a.events.count > 300, "the walk crosses many boundaries")
        // Fixes (or timer instants) with several events of one device: where order could differ.
        let groups = Dictionary(grouping: a.events) { line in
            line.split(separator: " ").filter { $0.hasPrefix("t=") || $0.hasPrefix("d=") }.joined(separator: " ")
        }
        #expect(groups.values.filter { $0.count > 1 }.count > 20)
        #expect(a.events == b.events)
        #expect(a.visits == b.visits)
    }
}

private extension Double {
    /// A longitude brought into [-180, 180).
    var wrappedLongitude: Double { self >= 180 ? self - 360 : self }
}
