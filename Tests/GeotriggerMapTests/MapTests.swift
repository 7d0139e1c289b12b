import GeotriggerCore
import GeotriggerGeometry
@testable import GeotriggerMap
import Foundation
import Testing

/// The map's geometry and thinning, against independent truth where there is one (Karney's
/// geodesic distance for the drawn circles, hand-computed distances for the projection).
@Suite("Map drawing")
struct MapTests {
    @Test("a drawn circle's boundary is at the region's geodesic radius (Karney), within 0.1 %",
          arguments: [(0.0, 10.0), (46.05, 14.5), (70.0, -20.0), (-60.0, 179.999), (89.0, 0.0)])
    func circleBoundary(latitude: Double, longitude: Double) {
        for radius in [50.0, 5_000, 100_000, 500_000] {
            let boundary = LocalProjection.circleBoundary(latitude: latitude, longitude: longitude, radius: radius, count: 24)
            #expect(boundary.count == 24)
            for p in boundary {
                let d = Geodesic.distance(Coordinate(latitude: latitude, longitude: longitude),
                                          Coordinate(latitude: p.latitude, longitude: p.longitude))
                #expect(abs(d - radius) <= radius * 0.001, "r \(radius) at (\(latitude), \(longitude)): \(d)")
            }
        }
    }

    @Test("the projection is true to scale at its centre, north up, and keeps data across the antimeridian together")
    func projection() {
        let p = LocalProjection(south: 46, west: 14, north: 46.1, east: 14.2, width: 1000, height: 800, margin: 50)
        // One degree of latitude at 46.05° N is 111,141.5 m (WGS84 meridian arc, from GeographicLib).
        let a = p.project(latitude: 46.05, longitude: 14.1), b = p.project(latitude: 46.06, longitude: 14.1)
        #expect(abs((a.y - b.y) / p.scale - 1_111.415) < 1.5)
        #expect(b.y < a.y)
        // East–west: 0.01° of longitude at 46.05° N is 772.8 m on the parallel.
        let c = p.project(latitude: 46.05, longitude: 14.11)
        #expect(abs((c.x - a.x) / p.scale - 772.8) < 1.5)
        // The box fits: the limiting side (0.2° of longitude, 15.5 km, against 0.1° of latitude,
        // 11.1 km, in 900 × 700 px) spans the width less the margins.
        let west = p.project(latitude: 46.05, longitude: 14), east = p.project(latitude: 46.05, longitude: 14.2)
        #expect(abs((east.x - west.x) - 900) < 0.5)

        let across = LocalProjection(south: -17, west: 179.9, north: -16.9, east: -179.9, width: 800, height: 800, margin: 0)
        let left = across.project(latitude: -16.95, longitude: 179.95), right = across.project(latitude: -16.95, longitude: -179.95)
        #expect(right.x > left.x && right.x - left.x < 400, "\(left) \(right)")
        #expect(abs(across.longitude0) > 179.99)
    }

    static func track(_ device: String, points: [(Double, Double, Double)]) -> MapData.Track {
        var t = MapData.Track(device: device)
        for (time, lat, lon) in points {
            t.t.append(time)
            t.latitude.append(lat)
            t.longitude.append(lon)
        }
        return t
    }

    @Test("tracks keep a point a pixel or more from the last one kept, and always their last")
    func trackThinning() {
        // 10,000 fixes a centimetre apart, then one 2 km east.
        var points = (0..<10_000).map { k in (Double(k), 46.0, 14.0 + Double(k) * 1.3e-7) }
        points.append((10_000, 46.0, 14.026))
        let data = MapData(regions: [], tracks: [Self.track("d", points: points)])
        let r = MapRenderer(data: data)
        let drawn = r.tracks[0]
        // The first 100 m at a pixel apart, then the jump: about 100 m × scale points.
        let expected = 100 * r.projection.scale
        #expect(Double(drawn.x.count) <= expected + 3 && Double(drawn.x.count) >= expected / 2, "\(drawn.x.count) points kept")
        #expect(drawn.t.last == 10_000)
        for j in 1..<drawn.x.count - 1 {
            let step = ((drawn.x[j] - drawn.x[j - 1]) * (drawn.x[j] - drawn.x[j - 1])
                        + (drawn.y[j] - drawn.y[j - 1]) * (drawn.y[j] - drawn.y[j - 1])).squareRoot()
            #expect(step >= 1)
        }
    }

    @Test("events are marked where their device was (the last fix at or before), one marker per kind and cell, counted")
    func markers() {
        let t = Self.track("d", points: [(0, 46.0, 14.0), (100, 46.0, 14.1), (200, 46.1, 14.1)])
        var events: [MapData.Event] = []
        for k in 0..<500 { events.append(MapData.Event(kind: .enter, device: "d", region: "r", t: 150 + Double(k) / 10, time: "x")) }
        events.append(MapData.Event(kind: .exit, device: "d", region: "r", t: 150, time: "x"))
        events.append(MapData.Event(kind: .dwell, device: "d", region: "r", t: 50, time: "x"))
        events.append(MapData.Event(kind: .deliver, device: "nobody", t: 50, time: "x"))
        let r = MapRenderer(data: MapData(regions: [], tracks: [t], events: events))
        #expect(r.unplacedEvents == 1)
        #expect(r.markers.count == 3)
        let enter = r.markers.first { r.data.events[$0.event].kind == .enter }!
        #expect(enter.count == 500)
        // At t = 150 the device was at its second fix; at 50 at its first.
        let second = r.projection.project(latitude: 46.0, longitude: 14.1), first = r.projection.project(latitude: 46.0, longitude: 14.0)
        #expect(enter.x == second.x && enter.y == second.y)
        let dwell = r.markers.first { r.data.events[$0.event].kind == .dwell }!
        #expect(dwell.x == first.x && dwell.y == first.y)
    }

    @Test("an event of a device with no fix (beacon sightings only) is marked at its region's centre")
    func markersAtRegions() {
        let c = Coordinate(latitude: 46.05, longitude: 14.5)
        let regions = [Region(id: "cafe", shape: .circle(center: c, radius: 10))]
        let events = [MapData.Event(kind: .enter, device: "phone", region: "cafe", t: 1, time: "x"),
                      MapData.Event(kind: .exit, device: "phone", region: "nowhere", t: 2, time: "x")]
        let r = MapRenderer(data: MapData(regions: regions, events: events))
        #expect(r.markers.count == 1 && r.unplacedEvents == 1)
        let centre = r.projection.project(latitude: 46.05, longitude: 14.5)
        #expect(abs(r.markers[0].x - centre.x) < 1e-6 && abs(r.markers[0].y - centre.y) < 1e-6)
    }

    @Test("the events file: marked kinds kept, other kinds and non-events counted, nothing lost silently")
    func eventsFile() {
        var data = MapData(regions: [])
        let text = """
            {"t":"2010-08-05T14:23:59.000Z","event":"enter","device":"d","region":"lake","distance":12.5}
            {"t":"2010-08-05T14:30:00.000Z","event":"deliver","device":"d","request":"hi","trigger":"location","region":"lake","content":{"title":"Hello"}}
            {"t":"2010-08-05T14:31:00.000Z","event":"response","device":"d","request":"hi","action":"default"}
            {"event":"exit","device":"d"}
            [1,2]

            {"t":"2010-08-05T14:40:00.000Z","event":"exit","device":"d","region":"lake","enteredAt":"2010-08-05T14:23:59.000Z"}
            """
        data.readEvents(bytes: Array(text.utf8), fileName: "e.ndjson")
        #expect(data.events.map(\.kind) == [.enter, .deliver, .exit])
        #expect(data.events[0].distance == 12.5 && data.events[0].t == 1_281_018_239)
        #expect(data.events[1].request == "hi" && data.events[1].title == "Hello")
        #expect(data.problems.otherEvents == 1)
        #expect(data.problems.badEventLines == 2)
        #expect(data.problems.eventExamples.first == "e.ndjson:4: not an event line (an object with \"t\", \"event\" and \"device\")")
    }

    @Test("beyond maxRegionShapes the regions in view become a density layer; regions with events stay shapes")
    func density() {
        var regions: [Region] = []
        for k in 0..<5_000 {
            let c = Coordinate(latitude: 46 + Double(k % 100) * 0.001, longitude: 14 + Double(k / 100) * 0.002)
            regions.append(Region(id: "r\(k)", shape: .circle(center: c, radius: 30)))
        }
        let t = Self.track("d", points: [(0, 46.0, 14.0), (10, 46.1, 14.1)])
        var options = MapOptions()
        options.maxRegionShapes = 1_000
        let events = [MapData.Event(kind: .enter, device: "d", region: "r7", t: 5, time: "x")]
        let r = MapRenderer(data: MapData(regions: regions, tracks: [t], events: events), options: options)
        #expect(r.regionPlan.inView == 5_000)
        #expect(r.regionPlan.shapes == [7])
        #expect(r.regionPlan.density.values.reduce(0, +) == 4_999)
        let svg = r.svg()
        #expect(svg.contains(#"<g id="density""#))
        #expect(r.summary.contains("5,000 regions (1 drawn, 4,999 as density)"))
        // Under the limit every region in view is a shape.
        options.maxRegionShapes = 10_000
        let all = MapRenderer(data: MapData(regions: regions, tracks: [t]), options: options)
        #expect(all.regionPlan.shapes.count == 5_000 && all.regionPlan.density.isEmpty)
    }

    @Test("labels never overlap and come from the name property, else the id; markup is escaped")
    func labels() {
        var regions: [Region] = []
        for k in 0..<400 {
            let c = Coordinate(latitude: 46 + Double(k % 20) * 0.0005, longitude: 14 + Double(k / 20) * 0.0008)
            let name: JSONValue? = k == 0 ? .object(["name": .string("Café <&> \"Lake\"")]) : nil
            regions.append(Region(id: "region-\(k)", shape: .circle(center: c, radius: 20), properties: name))
        }
        let r = MapRenderer(data: MapData(regions: regions))
        let svg = r.svg()
        #expect(svg.contains("Café &lt;&amp;&gt; &quot;Lake&quot;") || svg.contains("region-1<"))
        #expect(!svg.contains("<&>"))
        // Parse the label boxes back: no two overlap.
        let labelGroup = svg.components(separatedBy: #"<g id="labels""#)[1].components(separatedBy: "</g>")[0]
        var boxes: [(Double, Double, Double, Double)] = []
        for part in labelGroup.components(separatedBy: "<text ").dropFirst() {
            func attribute(_ name: String) -> Double {
                Double(part.components(separatedBy: "\(name)=\"")[1].components(separatedBy: "\"")[0])!
            }
            let text = part.components(separatedBy: ">")[1].components(separatedBy: "<")[0]
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
            let w = Double(text.count) * 6.3 + 4
            boxes.append((attribute("x") - w / 2, attribute("y") - 11, attribute("x") + w / 2, attribute("y") + 3))
        }
        #expect(boxes.count > 5 && boxes.count < 400)
        for i in boxes.indices {
            for j in boxes.indices where j > i {
                let (a, b) = (boxes[i], boxes[j])
                #expect(!(a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3), "labels \(i) and \(j) overlap")
            }
        }
    }

    @Test("positioned beacon zones are drawn to scale, dashed; a beacon without a position is not drawn")
    func beaconZones() {
        let lobby = Coordinate(latitude: 46.05, longitude: 14.5)
        let placed = BeaconRegion(identity: BeaconID(uuidHigh: 1, uuidLow: 2, major: 3, minor: 4), zone: .near, position: lobby)
        let unplaced = BeaconRegion(identity: BeaconID(uuidHigh: 1, uuidLow: 2, major: 3, minor: 5), zone: .near)
        let regions = [Region(id: "desk", shape: .beacon(placed)), Region(id: "door", shape: .beacon(unplaced))]
        let t = Self.track("d", points: [(0, 46.04995, 14.49995), (10, 46.05005, 14.50005)])
        let r = MapRenderer(data: MapData(regions: regions, tracks: [t]))
        let svg = r.svg()
        #expect(svg.contains(#"class="beacon" data-id="desk""#))
        #expect(!svg.contains(#"data-id="door""#))
        // The zone's drawn radius is its own (3 m for near) at the map's scale.
        let box = MapRenderer.pixelBox(regions[0], r.projection)!
        #expect(abs((box.maxX - box.minX) / 2 / r.projection.scale - placed.zone.radius) < 1e-6)
    }

    @Test("the scale bar is a round length of about 150 px, true at the centre")
    func scaleBar() {
        let t = Self.track("d", points: [(0, 46.0, 14.0), (10, 46.05, 14.08)])
        let r = MapRenderer(data: MapData(regions: [], tracks: [t]))
        let svg = r.svg()
        let group = svg.components(separatedBy: #"<g id="scale""#)[1].components(separatedBy: "</g>")[0]
        let label = group.components(separatedBy: "text-anchor=\"middle\">")[1].components(separatedBy: "<")[0]
        let metres: Double = label.hasSuffix(" km") ? Double(label.dropLast(3))! * 1000 : Double(label.dropLast(2))!
        #expect([1.0, 2, 5].contains { m in (1...6).contains { metres == m * pow10($0) } }, "\(label)")
        let px = metres * r.projection.scale
        #expect(px > 60 && px <= 150, "\(px) px")
    }

    func pow10(_ n: Int) -> Double { (0..<n).reduce(1.0) { a, _ in a * 10 } }
}
