import CGEOS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore
import GeotriggerRuntime

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

/// Which tree holds the regions' envelopes. Both give exactly the same candidates.
public enum SpatialIndexKind: String, Sendable, CaseIterable {
    /// A flat R-tree in Swift, sorted along a Hilbert curve (`PackedRTree`): 36 bytes per
    /// envelope, built in place, queried without any GEOS call. The default.
    case packed
    /// A GEOS STRtree (`GEOSSTRtree_*`), as SPEC §1 describes: a rectangle geometry per insert
    /// and per box query, about twice the memory per region.
    case geos
}

/// The order an index keeps its regions in: region numbers are positions in `RegionIndex.regions`.
public enum RegionOrder: Sendable {
    /// As given.
    case given
    /// Along a Hilbert curve through the envelopes' centres, the order the packed tree keeps its
    /// leaves in: regions near each other on the ground are near each other in memory, so the
    /// tests around a device read neighbouring cache lines and pages. `givenPositions` keeps
    /// the given order, which events at one fix are still reported in. A set with beacon regions
    /// keeps the given order (beacon events are ordered by region number).
    case spatial
    /// Already in another order than the one they were given in (another index's `regions`,
    /// for an index of the same set on another thread): `givenPositions[r]` is where region `r`
    /// was given. Kept as they are.
    case reordered(givenPositions: [Int32])
}

/// Every region with a geometry, its envelopes in a packed R-tree (or a GEOS STRtree), and the
/// exact tests behind it.
///
/// Circles are decided geodesically on WGS84 (`GeodesicCircle`); polygons with GEOS prepared
/// geometry (`GEOSPreparedCovers_r`, boundary inside). Region numbers are positions in `regions`,
/// which is also the order events at one fix are reported in.
///
/// Not thread-safe: it owns a GEOS context and reuses one query point and answer. Make one index
/// per thread: `sharedWithThreads()` and `init(sharing:)` make the others read this one's circle
/// tables and tree rather than build their own.
public final class RegionIndex {
    public enum Shape {
        case circle(GeodesicCircle)
        case polygon(GEOSPreparedGeometry)
        /// A beacon region without a position: only sightings can put a device in it.
        case none
    }

    /// Every region, by number: those of `init`, then those added live (`append`), removed ones
    /// included (`isRemoved`).
    @exclusivity(unchecked) public private(set) var regions: [Region]
    /// Per region, its position in the array given to `init`, when `regions` is in another order
    /// (`RegionOrder.spatial`, `.reordered`); nil when it is in the given order. 4 bytes a region.
    /// A region added live takes its own number as its given position (after every other).
    @exclusivity(unchecked) public private(set) var givenPositions: [Int32]?
    /// The circle tables the hot path reads (`CircleTables`): they grow when regions are added
    /// live, and a read through this `let` takes no exclusivity check (a class's `var` read from
    /// another module's inlined code would, at every test). Owned here.
    @usableFromInline let tables: CircleTables
    @inlinable var hot: TableRows<HotCircle> { @inline(__always) get { tables.hot } }
    @usableFromInline var slow: TableRows<CircleCore> { @inline(__always) get { tables.slow } }
    /// The prepared polygons, by region.
    @exclusivity(unchecked) var polygons: [Int32: GEOSPreparedGeometry]
    /// What the regions of `init` hold (those added live are circles or polygons, never beacon
    /// regions, and may not notify of both kinds: `Monitor.regionAdded` looks at each).
    public let summary: RegionSummary
    /// The margin circles added live get (as those of `init`).
    let hysteresis: Hysteresis
    /// Live changes (SPEC §7): the trees stay as built; regions added since are kept in
    /// `overlay` (their envelopes, ascending by region, scanned by every query), and removed
    /// ones are dropped from the trees' answers. Nothing of this is read until the first change.
    @exclusivity(unchecked) public private(set) var hasLiveChanges = false
    @exclusivity(unchecked) private var overlay: [(minX: Double, minY: Double, maxX: Double, maxY: Double, region: Int32)] = []
    @exclusivity(unchecked) private var removed: [Bool] = []
    /// Regions added live (`append`).
    @exclusivity(unchecked) public private(set) var addedCount = 0
    /// The amended answer of a query once regions have changed; owned here.
    @exclusivity(unchecked) private var amended = PodList<Int32>()
    /// Whether any region is a polygon (its tests go through GEOS and the one query point).
    public var hasPolygons: Bool { !polygons.isEmpty }
    let context: GEOSContext
    /// The packed tree, only read once built (other threads' indexes may share it), and this
    /// index's own query scratch.
    let tree: PackedRTree?
    private let scratch = PackedRTree.Scratch()
    let geosTree: STRtree?
    /// The point of the current fix, reused by the polygon tests of that fix; owned here. Made
    /// only when a polygon is tested (`queryPointStale`), so circle-only sets never call GEOS for it.
    private var queryPoint: OpaquePointer?
    private var queryCoordinate = Coordinate(latitude: 0, longitude: 0)
    private var queryPointStale = true

    /// Builds the index. Throws `RegionFileError` (file left empty for the caller to fill) when a
    /// polygon is invalid, with GEOS's reason; regions are checked in the given order either way.
    /// With `order: .spatial`, `regions` (and so every region number) follows the tree's curve
    /// and `givenPositions` maps back.
    public init(regions: consuming [Region], hysteresis: Hysteresis = .automatic, tree kind: SpatialIndexKind = .packed,
                order: RegionOrder = .given, context: GEOSContext = GEOSContext()) throws {
        self.context = context
        self.hysteresis = hysteresis
        var slots: [Int32] = []
        slots.reserveCapacity(regions.count)
        // One slot and one hot entry per region, filled in region order, and a slow line per
        // circle (room for every region: the pages past the last circle are never touched).
        let tables = CircleTables(capacity: regions.count)
        var circles = 0
        // Freed here if building throws (an invalid polygon, a GEOS failure); `deinit` frees them
        // once the index is complete.
        var complete = false
        defer {
            if !complete { tables.free() }
        }
        func add(_ circle: GeodesicCircle?) {
            tables.initializeHot(slots.count, to: circle?.hot ?? .none)
            if let circle {
                slots.append(Int32(circles))
                tables.initializeSlow(circles, to: circle.core)
                circles += 1
            }
        }
        var preparedPolygons: [Int32: GEOSPreparedGeometry] = [:]
        var rects: PackedRTree.Builder
        let summary = RegionSummary(regions)
        let spatial: Bool = if case .spatial = order { true } else { false }
        // Many circles are built on two threads (`SplitWork`): their envelopes, then their hot
        // and slow lines. Going into curve order, the lines are made once the regions are in it
        // (below), rather than made in the given order and then moved, two walks of random
        // cycles through 64-byte lines.
        let circlesInHalves = SplitWork.worthwhile(regions.count) && summary.allCircles
        let linesAfterOrder = circlesInHalves && spatial
        if circlesInHalves {
            rects = Self.circleEnvelopesOnTwoThreads(regions, hysteresis: hysteresis)
            slots = Array(0..<Int32(regions.count))
            circles = regions.count
            if !linesAfterOrder { Self.circleLinesOnTwoThreads(regions, hysteresis: hysteresis, tables: tables) }
        } else {
            rects = PackedRTree.Builder(capacity: regions.count)
            for (i, region) in regions.enumerated() {
                switch region.shape {
                case .circle(let center, let radius):
                    let circle = Self.circle(center: center, radius: radius, hysteresis: hysteresis)
                    rects.append(circle, item: i)
                    add(circle)
                case .beacon(let beacon):
                    guard let position = beacon.position else {
                        add(nil)
                        slots.append(-2)
                        continue
                    }
                    // A positioned beacon's zone is also a circle, so fixes (GPS or indoor) trigger it.
                    let r = beacon.zone.radius
                    let circle = GeodesicCircle(center: position, radius: r, exitRadius: r + hysteresis.beaconMargin(forRadius: r))
                    rects.append(circle, item: i)
                    add(circle)
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
                    rects.append(minX: b.minX, minY: b.minY, maxX: b.maxX, maxY: b.maxY, item: Int32(i))
                    add(nil)
                    slots.append(-1)
                    let prepared = try GEOSPreparedGeometry(geometry)
                    preparedPolygons[Int32(i)] = prepared
                }
            }
        }
        tables.setCounts(regions: regions.count, circles: circles)
        var regions = consume regions
        var givenPositions: [Int32]? = nil
        if case .reordered(let positions) = order {
            precondition(positions.count == regions.count, "one given position per region")
            givenPositions = positions
        }
        if spatial, regions.count > 1, summary.beaconRegions.isEmpty {
            // Renumber along the curve: the regions and tables move, the boxes take their new
            // numbers, and the tree then sorts its leaves into item order.
            let given = rects.hilbertOrder(itemCount: regions.count)
            if given.indices.contains(where: { given[$0] != Int32($0) }) {
                var number = [Int32](repeating: 0, count: given.count)
                for (new, old) in given.enumerated() { number[Int(old)] = Int32(new) }
                rects.renumber(number)
                // Circles' slow lines in the new order too: the k-th circle along the curve
                // takes slow line k.
                var newSlots = [Int32](repeating: 0, count: given.count)
                var nextSlow: Int32 = 0
                for (new, old) in given.enumerated() {
                    let slot = slots[Int(old)]
                    if slot >= 0 {
                        newSlots[new] = nextSlow
                        nextSlow += 1
                    } else {
                        newSlots[new] = slot
                    }
                }
                // Everything moves in place, following each cycle of the permutation
                // (`PrefetchingPermutation`): no second copy of the tables (64 bytes a region
                // each), nor of an array the caller handed over. The regions on one thread, their
                // lines on another when there are enough (`SplitWork`).
                var movedRegions: [Bool] = [], movedLines: [Bool] = []
                let oldSlots = slots
                func moveLines() {
                    PrefetchingPermutation.permute(tables.hot, source: given, moved: &movedLines)
                    // Slow line k is the one of the k-th circle along the curve.
                    var slowSource: [Int32] = []
                    slowSource.reserveCapacity(circles)
                    for old in given where oldSlots[Int(old)] >= 0 { slowSource.append(oldSlots[Int(old)]) }
                    PrefetchingPermutation.permute(tables.slow, source: slowSource, moved: &movedLines)
                }
                regions.withRows { rows in
                    func moveRegions() { PrefetchingPermutation.permute(rows, source: given, moved: &movedRegions) }
                    if linesAfterOrder {
                        // No lines yet: they are made below, in the new order.
                        moveRegions()
                    } else if SplitWork.worthwhile(given.count) {
                        SplitWork.run(moveRegions, alongside: moveLines)
                    } else {
                        moveRegions()
                        moveLines()
                    }
                }
                slots = newSlots
                var renumbered: [Int32: GEOSPreparedGeometry] = [:]
                for (old, g) in preparedPolygons { renumbered[number[Int(old)]] = g }
                preparedPolygons = renumbered
                givenPositions = given
            }
        }
        if linesAfterOrder { Self.circleLinesOnTwoThreads(regions, hysteresis: hysteresis, tables: tables) }
        // Each region's slow line (≥ 0), or −1 for a polygon, −2 for no geometry, and its given
        // position, kept in its hot line only.
        let hot = tables.hot
        for k in slots.indices {
            hot[k].slot = slots[k]
            hot[k].given = givenPositions?[k] ?? Int32(k)
        }
        self.regions = regions
        self.givenPositions = givenPositions
        self.summary = summary
        self.tables = tables
        self.polygons = preparedPolygons
        switch kind {
        case .packed:
            tree = rects.build()
            geosTree = nil
        case .geos:
            tree = nil
            let boxes = rects.boxes, items = rects.items
            geosTree = try STRtree(context: context, rectangles: items.indices.lazy.map { k in
                (boxes[4 * k], boxes[4 * k + 1], boxes[4 * k + 2], boxes[4 * k + 3], Int(items[k]))
            })
        }
        complete = true
    }

    /// What indexes on other threads share with this one (`init(sharing:)`): its regions, circle
    /// tables and packed tree, read by all and written by none (an index whose regions change
    /// live copies the tables first). Nil with a GEOS tree (made and queried in one context).
    /// Call before any live change, on the thread that uses this index, before the others start.
    public func sharedWithThreads() -> SharedRegionIndex? {
        guard let tree, !hasLiveChanges else { return nil }
        return SharedRegionIndex(tables: tables.share(), tree: tree, regions: regions, givenPositions: givenPositions,
                                 hysteresis: hysteresis, summary: summary)
    }

    /// An index over the regions of `shared` for this thread: their circle tables and tree as
    /// they are, its own GEOS context with the polygons prepared again in it (a prepared
    /// geometry is not thread-safe), its own query scratch.
    public init(sharing shared: SharedRegionIndex, context: GEOSContext = GEOSContext()) throws {
        let tables = CircleTables(sharing: shared.tables)
        var complete = false
        defer {
            if !complete { tables.free() }
        }
        var prepared: [Int32: GEOSPreparedGeometry] = [:]
        let hot = tables.hot
        for r in 0..<tables.count where hot[r].slot == -1 {
            guard case .polygons(let polygons) = shared.regions[r].shape else { continue }
            prepared[Int32(r)] = try GEOSPreparedGeometry(GEOSGeometry(context: context, polygons: polygons))
        }
        self.context = context
        self.hysteresis = shared.hysteresis
        self.summary = shared.summary
        self.regions = shared.regions
        self.givenPositions = shared.givenPositions
        self.tables = tables
        self.polygons = prepared
        tree = shared.tree
        geosTree = nil
        complete = true
    }

    /// A circular region's center and radii: exit radius = radius + the hysteresis margin for it.
    @inline(__always)
    private static func core(center: Coordinate, radius: Double, hysteresis: Hysteresis) -> CircleCore {
        CircleCore(center: center, radius: radius, exitRadius: radius + hysteresis.margin(forRadius: radius))
    }

    /// A circular region's geometry (`core`).
    @inline(__always)
    private static func circle(center: Coordinate, radius: Double, hysteresis: Hysteresis) -> GeodesicCircle {
        let core = core(center: center, radius: radius, hysteresis: hysteresis)
        return GeodesicCircle(center: core.center, radius: core.radius, exitRadius: core.exitRadius)
    }

    /// The envelopes of every region, all circles, a half per thread (`SplitWork`), the first
    /// half's then the second's: the builder one thread would make.
    private static func circleEnvelopesOnTwoThreads(_ regions: [Region], hysteresis: Hysteresis) -> PackedRTree.Builder {
        let n = regions.count, half = n / 2
        var first = PackedRTree.Builder(capacity: n), second = PackedRTree.Builder(capacity: n - half)
        func fill(_ range: Range<Int>, _ boxes: inout PackedRTree.Builder) {
            for i in range {
                guard case .circle(let center, let radius) = regions[i].shape else { continue }
                boxes.append(Self.core(center: center, radius: radius, hysteresis: hysteresis), item: i)
            }
        }
        SplitWork.run({ fill(0..<half, &first) }, alongside: { fill(half..<n, &second) })
        first.append(contentsOf: second)
        return first
    }

    /// Region i's hot and slow lines at i, every region a circle, a half per thread.
    private static func circleLinesOnTwoThreads(_ regions: [Region], hysteresis: Hysteresis, tables: CircleTables) {
        let n = regions.count, half = n / 2
        func fill(_ range: Range<Int>) {
            for i in range {
                guard case .circle(let center, let radius) = regions[i].shape else { continue }
                let circle = Self.circle(center: center, radius: radius, hysteresis: hysteresis)
                tables.initializeHot(i, to: circle.hot)
                tables.initializeSlow(i, to: circle.core)
            }
        }
        SplitWork.run({ fill(0..<half) }, alongside: { fill(half..<n) })
    }

    deinit {
        tables.free()
        amended.free()
        if let queryPoint { GEOSGeom_destroy_r(context.handle, queryPoint) }
    }

    /// Regions by number, removed ones included.
    @inlinable public var count: Int { tables.count }

    // MARK: Live changes

    /// Adds `region` (a circle or a polygon; not a beacon region) as the next region number, which
    /// the trees do not hold: it joins the overlay every query also scans. Throws, changing
    /// nothing, when a polygon is invalid (GEOS's reason, as `init` gives it).
    public func append(_ region: Region) throws(RegionFileError) -> Int32 {
        let r = Int32(count)
        var boxes = PackedRTree.Builder(capacity: 2)
        var entry = HotCircle.none
        var core: CircleCore?
        var prepared: GEOSPreparedGeometry?
        switch region.shape {
        case .circle(let center, let radius):
            let circle = Self.circle(center: center, radius: radius, hysteresis: hysteresis)
            boxes.append(circle, item: Int(r))
            entry = circle.hot
            core = circle.core
        case .beacon:
            throw RegionFileError(file: "", id: region.id, reason: "a beacon region cannot be added live")
        case .polygons(let polygons):
            let geometry: GEOSGeometry
            do {
                geometry = try GEOSGeometry(context: context, polygons: polygons)
            } catch {
                throw RegionFileError(file: "", id: region.id, reason: "invalid polygon: \(error)")
            }
            if let why = geometry.invalidityReason() {
                throw RegionFileError(file: "", id: region.id, reason: "invalid polygon: \(why)")
            }
            let b = geometry.bounds()
            boxes.append(minX: b.minX, minY: b.minY, maxX: b.maxX, maxY: b.maxY, item: r)
            do { prepared = try GEOSPreparedGeometry(geometry) } catch {
                throw RegionFileError(file: "", id: region.id, reason: "invalid polygon: \(error)")
            }
        }
        entry.given = r
        tables.append(entry, core: core)
        regions.append(region)
        givenPositions?.append(r)
        if let prepared { polygons[r] = prepared }
        if !removed.isEmpty { removed.append(false) }
        for k in boxes.items.indices {
            overlay.append((boxes.boxes[4 * k], boxes.boxes[4 * k + 1], boxes.boxes[4 * k + 2], boxes.boxes[4 * k + 3], r))
        }
        addedCount += 1
        hasLiveChanges = true
        return r
    }

    /// Removes region `r`: no query returns it again. Its number is not reused.
    public func remove(_ r: Int32) {
        precondition(r >= 0 && Int(r) < count)
        if removed.isEmpty { removed = [Bool](repeating: false, count: count) }
        removed[Int(r)] = true
        overlay.removeAll { $0.region == r }
        polygons[r] = nil
        // Never inside again, decided without a test of its own (clearance 0, as a polygon's):
        // a device's neighbourhood taken before the removal may still retest it until it is
        // taken again, and finds it outside.
        var entry = HotCircle.none
        entry.slot = -2
        entry.given = hot[Int(r)].given
        tables.detach()
        hot[Int(r)] = entry
        hasLiveChanges = true
    }

    /// The envelopes of a region added live (two where it crosses the antimeridian), degrees.
    public func envelopes(ofAdded r: Int32) -> [(minX: Double, minY: Double, maxX: Double, maxY: Double)] {
        overlay.filter { $0.region == r }.map { ($0.minX, $0.minY, $0.maxX, $0.maxY) }
    }

    /// Whether region `r` was removed live.
    public func isRemoved(_ r: Int32) -> Bool { !removed.isEmpty && removed[Int(r)] }

    /// A query's answer once regions changed: the trees' regions that were not removed, then the
    /// overlay's whose envelope meets the box (or the second box, for a point on the antimeridian);
    /// ascending, as the overlay's numbers follow every tree region's.
    private func amend(_ found: RegionCandidates, minX: Double, minY: Double, maxX: Double, maxY: Double,
                       orAtLongitude other: Double? = nil) -> RegionCandidates {
        amended.removeAll()
        if removed.isEmpty {
            amended.append(contentsOf: found.buffer)
        } else {
            for r in found where !removed[Int(r)] { amended.append(r) }
        }
        for e in overlay where e.minY <= maxY && e.maxY >= minY
            && (e.minX <= maxX && e.maxX >= minX || other.map { e.minX <= $0 && e.maxX >= $0 } ?? false) {
            if amended.count > 0 && amended[Int(amended.count) - 1] == e.region { continue }
            amended.append(e.region)
        }
        return RegionCandidates(amended)
    }

    /// Regions whose envelope contains `p`, ascending and without duplicates (the packed tree may
    /// add a few whose envelope misses `p` by less than a Float's rounding; they test as outside).
    ///
    /// Every region that `p` is inside of, or not yet beyond the exit margin of, is among them.
    /// The buffer is reused by the next call. Also sets the point the polygon tests use.
    package func candidates(at p: Coordinate) -> RegionCandidates {
        setQueryPoint(p)
        var found = query(minX: p.longitude, minY: p.latitude, maxX: p.longitude, maxY: p.latitude)
        // Envelopes split at the antimeridian end at +180 or start at -180: a point on that line
        // may be written either way, so ask for both.
        if p.longitude == 180 || p.longitude == -180 {
            found = query(minX: -p.longitude, minY: p.latitude, maxX: -p.longitude, maxY: p.latitude, appending: true)
        }
        let answer = found.sortedUnique()
        if !hasLiveChanges { return answer }
        return amend(answer, minX: p.longitude, minY: p.latitude, maxX: p.longitude, maxY: p.latitude,
                     orAtLongitude: p.longitude == 180 || p.longitude == -180 ? -p.longitude : nil)
    }

    /// Regions whose envelope meets a box reaching at least `metres` from `p` in every direction,
    /// ascending; nil where such a box would touch the antimeridian or come near a pole (use
    /// `candidates(at:)` there). Also sets the point the polygon tests use.
    ///
    /// Any region not returned cannot contain a point within `metres` of `p`, so a device that
    /// stays that close needs no new query.
    package func candidates(around p: Coordinate, metres: Double) -> RegionCandidates? {
        // Degrees that certainly cover `metres`: at least 110,000 m per degree of latitude, and
        // 111,000·cos(latitude) per degree of longitude at the box's most poleward latitude.
        let dLat = metres / 110_000
        let poleward = abs(p.latitude) + dLat
        guard poleward < 89 else { return nil }
        let dLon = metres / (111_000 * cos(poleward * .pi / 180))
        guard p.longitude - dLon > -180, p.longitude + dLon < 180 else { return nil }
        setQueryPoint(p)
        let answer = query(minX: p.longitude - dLon, minY: p.latitude - dLat,
                           maxX: p.longitude + dLon, maxY: p.latitude + dLat).sortedUnique()
        if !hasLiveChanges { return answer }
        return amend(answer, minX: p.longitude - dLon, minY: p.latitude - dLat, maxX: p.longitude + dLon,
                     maxY: p.latitude + dLat)
    }

    /// Items whose envelope meets the box, from whichever tree the index was built with.
    private func query(minX: Double, minY: Double, maxX: Double, maxY: Double,
                       appending: Bool = false) -> FoundRegions {
        if let tree {
            return FoundRegions(tree.query(minX: minX, minY: minY, maxX: maxX, maxY: maxY, appending: appending,
                                           scratch: scratch))
        }
        // GEOS 3.11 makes a point of a degenerate rectangle; either way its envelope is the box.
        guard let box = GEOSGeom_createRectangle_r(context.handle, minX, minY, maxX, maxY) else {
            preconditionFailure("GEOS could not make a query rectangle: \(context.takeError("createRectangle"))")
        }
        defer { GEOSGeom_destroy_r(context.handle, box) }
        return FoundRegions(geosTree!.query(handle: box, appending: appending))
    }

    /// The shape of region `r` (assembled on demand; the index keeps circles and polygons apart).
    public func shape(_ r: Int) -> Shape {
        let slot = hot[r].slot
        if slot >= 0, let circle = circle(r) { return .circle(circle) }
        if slot == -1, let g = polygons[Int32(r)] { return .polygon(g) }
        return .none
    }

    /// Every region's shape, in region order. Builds a new array on each call: use `shape(_:)`
    /// for one region.
    public var shapes: [Shape] { (0..<count).map(shape) }

    /// The circle of region `r`, if it is one (made from its center and radii: the chord thresholds
    /// are computed anew, so this is for inspection, not the hot path).
    public func circle(_ r: Int) -> GeodesicCircle? {
        let slot = hot[r].slot
        guard slot >= 0 else { return nil }
        let core = slow[Int(slot)]
        return GeodesicCircle(center: core.center, radius: core.radius, exitRadius: core.exitRadius)
    }

    /// How far `q` must move before region `r`'s decision can change (metres, a lower bound; 0 for
    /// polygons, whose boundary distance is not computed).
    @inlinable @inline(__always)
    public func clearance(_ r: Int, _ q: GeoPoint, inside: Bool) -> Double {
        precondition(r >= 0 && r < count)
        let h = hot[r]
        return h.clearance(chord2: h.chord2(q), inside: inside)
    }

    /// Whether the boundary of region `r` that matters in the state `inside` may come within
    /// `metres` of `q` (`HotCircle.boundaryMayBeWithin`; always true for a polygon).
    @inlinable @inline(__always)
    public func boundaryMayBeWithin(_ r: Int, _ metres: Double, of q: GeoPoint, inside: Bool) -> Bool {
        precondition(r >= 0 && r < count)
        let h = hot[r]
        return h.boundaryMayBeWithin(metres, chord2: h.chord2(q), inside: inside)
    }

    /// `test(_:_:visited:)` for a region number the caller took from this index itself (a
    /// neighbourhood's): no bounds check, and the clearance of either outcome computed without
    /// a branch on it. The same answers.
    @inlinable @inline(__always)
    public func retest(_ r: Int, _ q: GeoPoint, visited: Bool) -> (inside: Bool, clearance: Double) {
        let h = hot[r]
        let c2 = h.chord2(q)
        let inBelow = Double(visited ? h.chordExitIn : h.chordIn)
        let outAbove = Double(visited ? h.chordExitOut : h.chordOut)
        let inside: Bool
        if c2 <= inBelow {
            inside = true
        } else if c2 > outAbove {
            inside = false
        } else {
            inside = visited ? !isBeyondExit(r, q) : isInside(r, q)
        }
        return (inside, h.clearance(chord2: c2, inside: inside))
    }

    /// Whether `q` is inside region `r` now, and its clearance (`clearance`): for a region the
    /// device is `visited` in, inside means within the exit boundary (`!isBeyondExit`), else
    /// within the entry boundary (`isInside`). The same answers as those calls, from one read of
    /// the hot line and one chord.
    @inlinable @inline(__always)
    public func test(_ r: Int, _ q: GeoPoint, visited: Bool) -> (inside: Bool, clearance: Double) {
        precondition(r >= 0 && r < count)
        return retest(r, q, visited: visited)
    }

    /// Whether `q` (the point of the last `candidates` call) is inside region `r`: geodesic
    /// distance ≤ radius for a circle, covered (boundary included) for a polygon.
    @inlinable @inline(__always)
    public func isInside(_ r: Int, _ q: GeoPoint) -> Bool {
        precondition(r >= 0 && r < count)
        let h = hot[r]
        if let decided = h.isInside(chord2: h.chord2(q)) { return decided }
        let slot = h.slot
        if slot >= 0 { return decide(Int(slot), q.coordinate, exit: false) }
        return slot == -1 && coversQueryPoint(Int32(r))
    }

    /// Whether `q` (the point of the last `candidates` call) is beyond region `r`'s exit
    /// boundary: distance > radius + hysteresis for a circle, not covered for a polygon.
    @inlinable @inline(__always)
    public func isBeyondExit(_ r: Int, _ q: GeoPoint) -> Bool {
        precondition(r >= 0 && r < count)
        let h = hot[r]
        if let decided = h.isBeyondExit(chord2: h.chord2(q)) { return decided }
        let slot = h.slot
        if slot >= 0 { return decide(Int(slot), q.coordinate, exit: true) }
        return slot == -2 || !coversQueryPoint(Int32(r))
    }

    public func isInside(_ r: Int, _ p: Coordinate) -> Bool { isInside(r, GeoPoint(p)) }
    public func isBeyondExit(_ r: Int, _ p: Coordinate) -> Bool { isBeyondExit(r, GeoPoint(p)) }

    /// Exact geodesic distance from a circle's centre, or nil for a polygon.
    public func distanceFromCenter(_ r: Int, _ p: Coordinate) -> Double? {
        let slot = hot[r].slot
        return slot >= 0 ? slow[Int(slot)].distance(to: p) : nil
    }

    /// The distance events report: geodesic distance from a circle's centre rounded to the
    /// centimetre (exactly as the exact distance rounds), or NaN for a polygon. From the hot line,
    /// which the decision before an event has just read: the chord bound settles all but about
    /// one in 5,000, which take Karney's distance.
    @inlinable @inline(__always)
    public func reportedDistance(_ r: Int, _ q: GeoPoint) -> Double {
        precondition(r >= 0 && r < count)
        let h = hot[r]
        guard h.slot >= 0 else { return .nan }
        return GeodesicCircle.centimetres(chord2: h.chord2(q)) ?? karneyCentimetres(Int(h.slot), q.coordinate)
    }

    public func reportedDistance(_ r: Int, _ p: Coordinate) -> Double { reportedDistance(r, GeoPoint(p)) }

    @usableFromInline @inline(never)
    func karneyCentimetres(_ slot: Int, _ p: Coordinate) -> Double { slow[slot].karneyCentimetres(to: p) }

    /// A circle's decision where the chord bound left it open (within micrometres of the
    /// boundary): Karney's distance.
    @usableFromInline @inline(never)
    func decide(_ slot: Int, _ p: Coordinate, exit: Bool) -> Bool {
        slow[slot].decide(p, exit: exit)
    }

    @usableFromInline
    func coversQueryPoint(_ r: Int32) -> Bool {
        guard let g = polygons[r] else { return false }
        return coversQueryPoint(g)
    }

    private func coversQueryPoint(_ g: GEOSPreparedGeometry) -> Bool {
        // GEOSPreparedCovers_r returns 1 on true, 0 on false, 2 on exception.
        GEOSPreparedCovers_r(context.handle, g.handle, currentQueryPoint()) == 1
    }

    /// Prefetches the hot entries of `regions` (regions of this index, as its queries return
    /// them), so the cache misses of a batch of tests overlap instead of coming one test at a
    /// time.
    @inlinable @inline(__always)
    package func warm(_ regions: RegionCandidates) {
        let hot = self.hot
        for r in regions { hot.prefetchEntry(Int(r)) }
    }

    /// Prefetches the hot entry of region `r` (a hint: any `r` is safe).
    @inlinable @inline(__always)
    package func prefetch(_ r: Int32) {
        if r >= 0 && Int(r) < count { hot.prefetchEntry(Int(r)) }
    }

    /// Prefetches what reporting an event of region `r` reads: the region (its id, for the
    /// output). Call it as soon as the event is known, so the miss overlaps the work before the
    /// report. (The distance comes from the hot line, which the test has just read.)
    package func prefetchForEvent(_ r: Int32) {
        guard r >= 0 && Int(r) < count else { return }
        regions.prefetchElement(Int(r))
    }

    /// Where region `r` was in the array given to `init` (`givenPositions[r]`, or `r` itself when
    /// the index kept that order), read from its hot line: after a test, no miss.
    @inlinable @inline(__always)
    public func givenPosition(_ r: Int32) -> Int32 {
        precondition(r >= 0 && Int(r) < count)
        return hot[Int(r)].given
    }

    /// Sets the point the polygon tests use (done by the `candidates` calls).
    package func setQueryPoint(_ p: Coordinate) {
        queryCoordinate = p
        queryPointStale = true
    }

    /// The GEOS point of the current fix, made on first use.
    private func currentQueryPoint() -> OpaquePointer? {
        if queryPointStale {
            // GEOS 3.11 points cache their envelope, so a point cannot be moved in place.
            if let queryPoint { GEOSGeom_destroy_r(context.handle, queryPoint) }
            queryPoint = GEOSGeom_createPointFromXY_r(context.handle, queryCoordinate.longitude, queryCoordinate.latitude)
            queryPointStale = false
        }
        return queryPoint
    }
}

/// Another thread's share of an index (`RegionIndex.sharedWithThreads`): the regions, the circle
/// tables' lines and the packed tree, which nothing writes while they are shared.
public struct SharedRegionIndex: @unchecked Sendable {
    let tables: CircleTables.Header
    let tree: PackedRTree
    let regions: [Region]
    let givenPositions: [Int32]?
    let hysteresis: Hysteresis
    let summary: RegionSummary
}
