import CGEOS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore

/// How far beyond a circle's radius a device must go before it is considered to have left.
public enum Hysteresis: Equatable, Sendable {
    /// max(20 m, 10 % of the radius), per region.
    case automatic
    /// The same margin for every region; `0` is the exact boundary.
    case metres(Double)

    /// The margin for a circle of radius `r`.
    public func margin(forRadius r: Double) -> Double {
        switch self {
        case .automatic: return max(20, 0.1 * r)
        case .metres(let m): return m
        }
    }

    /// The margin for a beacon zone of radius `r` (metres indoors, where 20 m would swallow the
    /// zone): 15 % of the radius by default, about the spread of RSSI-derived distances at 1–3 m.
    public func beaconMargin(forRadius r: Double) -> Double {
        switch self {
        case .automatic: return 0.15 * r
        case .metres(let m): return m
        }
    }
}

/// Every region with a geometry, its envelope in a GEOS STRtree, and the exact tests behind it.
///
/// Circles are decided geodesically on WGS84 (`GeodesicCircle`); polygons with GEOS prepared
/// geometry (`GEOSPreparedCovers_r`, boundary inside). Region numbers are positions in `regions`,
/// which is also the order events at one fix are reported in.
///
/// Not thread-safe: it owns a GEOS context and reuses one query point. Make one index per thread.
public final class RegionIndex {
    public enum Shape {
        case circle(GeodesicCircle)
        case polygon(GEOSPreparedGeometry)
        /// A beacon region without a position: only sightings can put a device in it.
        case none
    }

    public let regions: [Region]
    public let shapes: [Shape]
    let context: GEOSContext
    let tree: STRtree
    /// The point of the current fix, reused by the polygon tests of that fix; owned here.
    private var queryPoint: OpaquePointer?

    /// Builds the index. Throws `RegionFileError` (file left empty for the caller to fill) when a
    /// polygon is invalid, with GEOS's reason.
    public init(regions: [Region], hysteresis: Hysteresis = .automatic, context: GEOSContext = GEOSContext()) throws {
        self.context = context
        var shapes: [Shape] = []
        shapes.reserveCapacity(regions.count)
        var rects: [(minX: Double, minY: Double, maxX: Double, maxY: Double, item: Int)] = []
        rects.reserveCapacity(regions.count)
        for (i, region) in regions.enumerated() {
            switch region.shape {
            case .circle(let center, let radius):
                let circle = GeodesicCircle(
                    center: center, radius: radius, exitRadius: radius + hysteresis.margin(forRadius: radius))
                shapes.append(.circle(circle))
                for e in circle.envelopes() {
                    rects.append((e.minLon, e.minLat, e.maxLon, e.maxLat, i))
                }
            case .beacon(let beacon):
                guard let position = beacon.position else {
                    shapes.append(.none)
                    continue
                }
                // A positioned beacon's zone is also a circle, so fixes (GPS or indoor) trigger it.
                let r = beacon.zone.radius
                let circle = GeodesicCircle(center: position, radius: r, exitRadius: r + hysteresis.beaconMargin(forRadius: r))
                shapes.append(.circle(circle))
                for e in circle.envelopes() {
                    rects.append((e.minLon, e.minLat, e.maxLon, e.maxLat, i))
                }
            case .polygons(let polygons):
                let geometry: GEOSGeometry
                do {
                    geometry = try GEOSGeometry(context: context, polygons: polygons)
                } catch {
                    throw RegionFileError(file: "", featureIndex: region.featureIndex, id: region.id,
                                          reason: "invalid polygon: \(error)")
                }
                if let why = geometry.invalidityReason() {
                    throw RegionFileError(file: "", featureIndex: region.featureIndex, id: region.id,
                                          reason: "invalid polygon: \(why)")
                }
                let b = geometry.bounds()
                rects.append((b.minX, b.minY, b.maxX, b.maxY, i))
                shapes.append(.polygon(try GEOSPreparedGeometry(geometry)))
            }
        }
        self.regions = regions
        self.shapes = shapes
        self.tree = try STRtree(context: context, rectangles: rects)
    }

    deinit {
        if let queryPoint { GEOSGeom_destroy_r(context.handle, queryPoint) }
    }

    public var count: Int { regions.count }

    /// Regions whose envelope contains `p`, ascending and without duplicates.
    ///
    /// Every region that `p` is inside of, or not yet beyond the exit margin of, is among them.
    /// The buffer is reused by the next call. Also sets the point the polygon tests use.
    public func candidates(at p: Coordinate) -> UnsafeBufferPointer<Int32> {
        setQueryPoint(longitude: p.longitude, latitude: p.latitude)
        var found = tree.query(handle: queryPoint!, appending: false)
        // Envelopes split at the antimeridian end at +180 or start at -180: a point on that line
        // may be written either way, so ask for both.
        if p.longitude == 180 || p.longitude == -180 {
            setQueryPoint(longitude: -p.longitude, latitude: p.latitude)
            found = tree.query(handle: queryPoint!, appending: true)
            setQueryPoint(longitude: p.longitude, latitude: p.latitude)
        }
        return Self.sortedUnique(found)
    }

    /// Regions whose envelope meets a box reaching at least `metres` from `p` in every direction,
    /// ascending; nil where such a box would touch the antimeridian or come near a pole (use
    /// `candidates(at:)` there). Also sets the point the polygon tests use.
    ///
    /// Any region not returned cannot contain a point within `metres` of `p`, so a device that
    /// stays that close needs no new query.
    public func candidates(around p: Coordinate, metres: Double) -> UnsafeBufferPointer<Int32>? {
        // Degrees that certainly cover `metres`: at least 110,000 m per degree of latitude, and
        // 111,000·cos(latitude) per degree of longitude at the box's most poleward latitude.
        let dLat = metres / 110_000
        let poleward = abs(p.latitude) + dLat
        guard poleward < 89 else { return nil }
        let dLon = metres / (111_000 * cos(poleward * .pi / 180))
        guard p.longitude - dLon > -180, p.longitude + dLon < 180 else { return nil }
        setQueryPoint(longitude: p.longitude, latitude: p.latitude)
        guard let box = GEOSGeom_createRectangle_r(context.handle, p.longitude - dLon, p.latitude - dLat,
                                                    p.longitude + dLon, p.latitude + dLat) else { return nil }
        defer { GEOSGeom_destroy_r(context.handle, box) }
        return Self.sortedUnique(tree.query(handle: box, appending: false))
    }

    /// Sorts query results in place and drops repeats (a region split at the antimeridian has two
    /// envelopes). Region order is event order.
    private static func sortedUnique(_ found: UnsafeMutableBufferPointer<Int32>) -> UnsafeBufferPointer<Int32> {
        found.insertionSort()
        var unique = 0
        for k in 0..<found.count where unique == 0 || found[unique - 1] != found[k] {
            found[unique] = found[k]
            unique += 1
        }
        return UnsafeBufferPointer(start: found.baseAddress, count: unique)
    }

    /// How far `p` must move before region `r`'s decision can change (metres, a lower bound; 0 for
    /// polygons, whose boundary distance is not computed).
    @inline(__always)
    public func clearance(_ r: Int, _ p: Coordinate, inside: Bool) -> Double {
        if case .circle(let c) = shapes[r] { return c.clearance(p, inside: inside) }
        return 0
    }

    /// Whether `p` (the point of the last `candidates(at:)` call) is inside region `r`: geodesic
    /// distance ≤ radius for a circle, covered (boundary included) for a polygon.
    @inline(__always)
    public func isInside(_ r: Int, _ p: Coordinate) -> Bool {
        switch shapes[r] {
        case .circle(let c): return c.isInside(p)
        case .polygon(let g): return coversQueryPoint(g)
        case .none: return false
        }
    }

    /// Whether `p` (the point of the last `candidates(at:)` call) is beyond region `r`'s exit
    /// boundary: distance > radius + hysteresis for a circle, not covered for a polygon.
    @inline(__always)
    public func isBeyondExit(_ r: Int, _ p: Coordinate) -> Bool {
        switch shapes[r] {
        case .circle(let c): return c.isBeyondExit(p)
        case .polygon(let g): return !coversQueryPoint(g)
        case .none: return true
        }
    }

    /// Geodesic distance from a circle's centre, or nil for a polygon.
    public func distanceFromCenter(_ r: Int, _ p: Coordinate) -> Double? {
        if case .circle(let c) = shapes[r] { return c.distance(to: p) }
        return nil
    }

    private func coversQueryPoint(_ g: GEOSPreparedGeometry) -> Bool {
        // GEOSPreparedCovers_r returns 1 on true, 0 on false, 2 on exception.
        GEOSPreparedCovers_r(context.handle, g.handle, queryPoint) == 1
    }

    private func setQueryPoint(longitude: Double, latitude: Double) {
        // GEOS 3.11 points cache their envelope, so a point cannot be moved in place.
        if let queryPoint { GEOSGeom_destroy_r(context.handle, queryPoint) }
        queryPoint = GEOSGeom_createPointFromXY_r(context.handle, longitude, latitude)
    }
}
