import GeotriggerCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a map is drawn.
public struct MapOptions: Sendable {
    /// The picture's size in pixels.
    public var width = 1200.0
    public var height = 900.0
    /// The title; by default "Geotrigger replay" and what the map shows.
    public var title: String?
    /// Above this many regions in view, the others are drawn as a density layer (regions that
    /// have events stay shapes, up to this many).
    public var maxRegionShapes = 3000
    /// At most this many region names, the largest and those with events first, none overlapping.
    public var maxLabels = 250

    public init() {}
}

/// Draws `MapData` as SVG (and HTML around it): regions to scale in a `LocalProjection` fitted to
/// the tracks (or to the regions when there are none), one coloured track per device with its
/// direction, events as markers where the device was, names as labels, a scale bar, a north
/// arrow, a legend and a title with the time span.
///
/// What a pixel cannot show is thinned: a track keeps a point only a pixel or more from the last
/// one kept, events of one kind in the same 3-pixel cell become one marker (its count kept for
/// the hover), and beyond `maxRegionShapes` regions in view a density layer stands for them.
public struct MapRenderer {
    let data: MapData
    let options: MapOptions
    let projection: LocalProjection
    /// Per track, the colour and the simplified points: pixel position, time, length so far.
    let tracks: [DrawnTrack]
    let markers: [Marker]
    /// Each region's box in pixels (nil: a beacon without a position), made once for every use.
    let regionBoxes: [Box?]
    /// Events of a device with no fix in the readings: no place to mark them.
    public let unplacedEvents: Int
    let regionPlan: RegionPlan
    /// The first and last time shown (fixes and events), Unix seconds.
    let span: (Double, Double)?

    struct DrawnTrack {
        var colour: String
        var x: [Double] = []
        var y: [Double] = []
        var t: [Double] = []
        /// Path length from the start to each point, pixels.
        var length: [Double] = []
    }

    /// One marker: the first event in its cell, and how many there were.
    struct Marker {
        var event: Int
        var x: Double
        var y: Double
        var count: Int
    }

    struct RegionPlan {
        /// Regions drawn as shapes, in drawing order.
        var shapes: [Int] = []
        /// Density cells (column, row) → regions, when the view holds too many to draw.
        var density: [Int: Int] = [:]
        var densityColumns = 0
        var regionsWithEvents: Set<Int> = []
        var inView = 0
    }

    static let densityCell = 8.0
    static let markerCell = 3.0
    /// Tableau 10, distinct at a glance and readable on white; the hues of the event markers
    /// (green, red, orange, violet) come last.
    static let palette = ["#4e79a7", "#b07aa1", "#76b7b2", "#9c755f", "#ff9da7", "#edc948", "#bab0ac", "#f28e2b",
                          "#59a14f", "#e15759"]
    static let eventColours: [MapData.Event.Kind: String] = [.enter: "#2ca02c", .exit: "#d62728", .dwell: "#ff9f1c",
                                                             .deliver: "#6a3d9a"]
    static let regionColour = "#5b6b8c"
    static let beaconColour = "#17a2b8"

    public init(data: MapData, options: MapOptions = MapOptions()) {
        self.data = data
        self.options = options
        let box = Self.extent(data)
        projection = LocalProjection(south: box.south, west: box.west, north: box.north, east: box.east,
                                     width: options.width, height: options.height, margin: 56)
        var tracks: [DrawnTrack] = []
        var first = Double.infinity, last = -Double.infinity
        for (k, track) in data.tracks.enumerated() {
            tracks.append(Self.simplify(track, projection: projection, colour: Self.colour(k)))
            if let a = track.t.first, let b = track.t.last {
                first = min(first, a)
                last = max(last, b)
            }
        }
        self.tracks = tracks
        for e in data.events {
            first = min(first, e.t)
            last = max(last, e.t)
        }
        span = first <= last ? (first, last) : nil
        let projection = self.projection
        let boxes = data.regions.map { Self.pixelBox($0, projection) }
        var numberOf: [String: Int] = [:]
        for (k, r) in data.regions.enumerated() { numberOf[r.id] = k }
        regionBoxes = boxes
        (markers, unplacedEvents) = Self.placeMarkers(data, projection: projection, boxes: boxes, numberOf: numberOf)
        regionPlan = Self.planRegions(data, boxes: boxes, numberOf: numberOf, options: options)
    }

    static func colour(_ k: Int) -> String {
        if k < palette.count { return palette[k] }
        // Beyond ten devices: hues a golden angle apart.
        let hue = (Double(k) * 137.508).truncatingRemainder(dividingBy: 360)
        return "hsl(\(Int(hue)),60%,45%)"
    }

    // MARK: Fitting

    /// The box to fit: the tracks' fixes, or the regions when there are no fixes; padded, at
    /// least about 40 m across.
    static func extent(_ data: MapData) -> (south: Double, west: Double, north: Double, east: Double) {
        var south = Double.infinity, north = -Double.infinity
        var lonBox = LongitudeRange()
        for track in data.tracks {
            for k in track.t.indices {
                south = min(south, track.latitude[k])
                north = max(north, track.latitude[k])
                lonBox.add(track.longitude[k])
            }
        }
        if south > north {
            for region in data.regions {
                switch region.shape {
                case .circle(let c, let r):
                    let dLat = r / 111_000
                    south = min(south, c.latitude - dLat)
                    north = max(north, c.latitude + dLat)
                    let dLon = dLat / max(0.05, cos(c.latitude * .pi / 180))
                    lonBox.add(c.longitude - dLon)
                    lonBox.add(c.longitude + dLon)
                case .polygons(let polygons):
                    for ring in polygons.flatMap({ $0 }) {
                        for p in ring {
                            south = min(south, p.latitude)
                            north = max(north, p.latitude)
                            lonBox.add(p.longitude)
                        }
                    }
                case .beacon(let b):
                    if let p = b.position {
                        let dLat = b.zone.radius / 111_000
                        south = min(south, p.latitude - dLat)
                        north = max(north, p.latitude + dLat)
                        let dLon = dLat / max(0.05, cos(p.latitude * .pi / 180))
                        lonBox.add(p.longitude - dLon)
                        lonBox.add(p.longitude + dLon)
                    }
                }
            }
        }
        guard south <= north, let (west, east) = lonBox.range else { return (-60, -180, 75, 180) }
        var (w, e) = (west, east)
        // At least about 20 m around: a lobby's beacons are a few metres apart.
        let padLat = max((north - south) * 0.04, 0.0002)
        let padLon = max((e - w) * 0.04, 0.0002 / max(0.05, cos((south + north) / 2 * .pi / 180)))
        w -= padLon
        e += padLon
        return (max(-89.9, south - padLat), LocalProjection.wrap(w), min(89.9, north + padLat), LocalProjection.wrap(e))
    }

    /// The narrower of the two ways to read a set of longitudes: as they are, or across the
    /// antimeridian.
    struct LongitudeRange {
        var min = Double.infinity, max = -Double.infinity
        var min360 = Double.infinity, max360 = -Double.infinity

        mutating func add(_ lon: Double) {
            let l = LocalProjection.wrap(lon)
            min = Swift.min(min, l)
            max = Swift.max(max, l)
            let l360 = l < 0 ? l + 360 : l
            min360 = Swift.min(min360, l360)
            max360 = Swift.max(max360, l360)
        }

        /// West and east (east may be below west across the antimeridian).
        var range: (Double, Double)? {
            guard min <= max else { return nil }
            return max - min <= max360 - min360 ? (min, max) : (min360, max360)
        }
    }

    // MARK: Thinning

    /// The track in pixels, keeping a fix only a pixel or more from the last one kept (and the last).
    static func simplify(_ track: MapData.Track, projection: LocalProjection, colour: String) -> DrawnTrack {
        var out = DrawnTrack(colour: colour)
        var length = 0.0
        let n = track.t.count
        for k in 0..<n {
            let (x, y) = projection.project(latitude: track.latitude[k], longitude: track.longitude[k])
            if let lx = out.x.last, let ly = out.y.last {
                let step = ((x - lx) * (x - lx) + (y - ly) * (y - ly)).squareRoot()
                if step < 1 && k != n - 1 { continue }
                length += step
            }
            out.x.append(x)
            out.y.append(y)
            out.t.append(track.t[k])
            out.length.append(length)
        }
        return out
    }

    /// Each event at its device's position when it happened (the last fix at or before it), or,
    /// for a device with no fix (beacon sightings only), at its region's centre (a positioned
    /// beacon's place); one marker per kind and 3-pixel cell.
    /// `boxes` and `numberOf`: each region's box in pixels, and its number by id.
    static func placeMarkers(_ data: MapData, projection: LocalProjection, boxes: [Box?], numberOf: [String: Int])
        -> (markers: [Marker], unplaced: Int) {
        var trackOf: [String: Int] = [:]
        for (k, t) in data.tracks.enumerated() where trackOf[t.device] == nil { trackOf[t.device] = k }
        var markers: [Marker] = []
        var unplaced = 0
        var cells: [Int: Int] = [:]
        let kinds = MapData.Event.Kind.allCases
        for (i, e) in data.events.enumerated() {
            let x: Double, y: Double
            if let k = trackOf[e.device], let f = data.tracks[k].fixIndex(at: e.t) {
                (x, y) = projection.project(latitude: data.tracks[k].latitude[f], longitude: data.tracks[k].longitude[f])
            } else if let id = e.region, let r = numberOf[id], let b = boxes[r] {
                (x, y) = b.centre
            } else {
                unplaced += 1
                continue
            }
            let cx = Int((x / markerCell).rounded(.down)), cy = Int((y / markerCell).rounded(.down))
            let key = ((cy &* 1_000_003) &+ cx) &* 8 &+ kinds.firstIndex(of: e.kind)!
            if let m = cells[key] {
                markers[m].count += 1
            } else {
                cells[key] = markers.count
                markers.append(Marker(event: i, x: x, y: y, count: 1))
            }
        }
        return (markers, unplaced)
    }

    /// What was drawn, in words: "31 regions (12 drawn), 3 tracks (913 fixes, 640 points drawn),
    /// 94 events (80 markers)".
    public var summary: String {
        let fixes = data.tracks.reduce(0) { $0 + $1.t.count }
        let points = tracks.reduce(0) { $0 + $1.x.count }
        var regions = "\(grouped(data.regions.count)) region\(data.regions.count == 1 ? "" : "s") (\(grouped(regionPlan.shapes.count)) drawn"
        if !regionPlan.density.isEmpty {
            regions += ", \(grouped(regionPlan.inView - regionPlan.shapes.count)) as density"
        }
        func counted(_ n: Int, _ one: String, _ many: String) -> String { "\(grouped(n)) " + (n == 1 ? one : many) }
        return regions + "), " + counted(data.tracks.count, "track", "tracks") + " (" + counted(fixes, "fix", "fixes") + ", "
            + counted(points, "point", "points") + " drawn), " + counted(data.events.count, "event", "events") + " ("
            + counted(markers.count, "marker", "markers") + ")"
    }

    /// Which regions are in view, which are shapes and which go to the density layer.
    static func planRegions(_ data: MapData, boxes: [Box?], numberOf: [String: Int], options: MapOptions) -> RegionPlan {
        var plan = RegionPlan()
        var eventCount: [Int: Int] = [:]
        for e in data.events {
            if let id = e.region, let k = numberOf[id] { eventCount[k, default: 0] += 1 }
        }
        plan.regionsWithEvents = Set(eventCount.keys)
        var inView: [Int] = []
        for k in data.regions.indices {
            guard let b = boxes[k] else { continue }
            if b.maxX < 0 || b.minX > options.width || b.maxY < 0 || b.minY > options.height { continue }
            inView.append(k)
        }
        plan.inView = inView.count
        if inView.count <= options.maxRegionShapes {
            plan.shapes = inView
        } else {
            plan.densityColumns = Int((options.width / densityCell).rounded(.up)) + 1
            // The busiest regions stay shapes (most events first, then file order).
            let busiest = inView.filter { eventCount[$0] != nil }
                .sorted { (eventCount[$0]!, -$0) > (eventCount[$1]!, -$1) }.prefix(options.maxRegionShapes)
            let shaped = Set(busiest)
            plan.shapes = Array(busiest)
            for k in inView where !shaped.contains(k) {
                guard let c = boxes[k]?.centre else { continue }
                let col = Int(c.x / densityCell), row = Int(c.y / densityCell)
                guard col >= 0, row >= 0, Double(col) * densityCell <= options.width,
                      Double(row) * densityCell <= options.height else { continue }
                plan.density[row * plan.densityColumns + col, default: 0] += 1
            }
        }
        // Largest first, so small regions are drawn over large ones and stay visible.
        let sizes = plan.shapes.map { k in boxes[k].map { ($0.maxX - $0.minX) * ($0.maxY - $0.minY) } ?? 0 }
        plan.shapes = zip(plan.shapes, sizes).sorted { $0.1 > $1.1 }.map(\.0)
        return plan
    }

    struct Box {
        var minX, minY, maxX, maxY: Double

        var centre: (x: Double, y: Double) { ((minX + maxX) / 2, (minY + maxY) / 2) }
    }

    static func pixelBox(_ region: Region, _ projection: LocalProjection) -> Box? {
        switch region.shape {
        case .circle(let c, let r):
            let p = projection.project(latitude: c.latitude, longitude: c.longitude)
            let rp = r * projection.scale
            return Box(minX: p.x - rp, minY: p.y - rp, maxX: p.x + rp, maxY: p.y + rp)
        case .beacon(let b):
            guard let c = b.position else { return nil }
            let p = projection.project(latitude: c.latitude, longitude: c.longitude)
            let rp = b.zone.radius * projection.scale
            return Box(minX: p.x - rp, minY: p.y - rp, maxX: p.x + rp, maxY: p.y + rp)
        case .polygons(let polygons):
            var box = Box(minX: .infinity, minY: .infinity, maxX: -.infinity, maxY: -.infinity)
            for ring in polygons.compactMap(\.first) {
                for q in ring {
                    let p = projection.project(latitude: q.latitude, longitude: q.longitude)
                    box = Box(minX: min(box.minX, p.x), minY: min(box.minY, p.y), maxX: max(box.maxX, p.x), maxY: max(box.maxY, p.y))
                }
            }
            return box.minX <= box.maxX ? box : nil
        }
    }

    /// A region's label: its `name` property when it has one, else its id.
    static func label(_ region: Region) -> String {
        if case .object(let o)? = region.properties, case .string(let name)? = o["name"], !name.isEmpty { return name }
        return region.id
    }
}
