import CGEOS
import GeotriggerCore

/// A GEOS geometry owned by exactly this object: `GEOSGeom_destroy_r` runs once, in `deinit`.
///
/// Holds its context strongly, so the context outlives every geometry made with it.
public final class GEOSGeometry {
    let context: GEOSContext
    let handle: OpaquePointer

    /// Takes ownership of `handle`.
    init(context: GEOSContext, handle: OpaquePointer) {
        self.context = context
        self.handle = handle
    }

    deinit {
        GEOSGeom_destroy_r(context.handle, handle)
    }

    /// A point at (lon, lat) (`GEOSGeom_createPointFromXY_r`).
    public convenience init(context: GEOSContext, point: Coordinate) throws {
        guard let g = GEOSGeom_createPointFromXY_r(context.handle, point.longitude, point.latitude) else {
            throw GEOSError(message: context.takeError("cannot create point"))
        }
        self.init(context: context, handle: g)
    }

    /// An axis-aligned rectangle (`GEOSGeom_createRectangle_r`, GEOS ≥ 3.11).
    public convenience init(context: GEOSContext, minX: Double, minY: Double, maxX: Double, maxY: Double) throws {
        guard let g = GEOSGeom_createRectangle_r(context.handle, minX, minY, maxX, maxY) else {
            throw GEOSError(message: context.takeError("cannot create rectangle"))
        }
        self.init(context: context, handle: g)
    }

    /// A Polygon (one entry) or MultiPolygon (several) from rings of `Coordinate`s, x = longitude.
    ///
    /// Ownership: `GEOSGeom_createLinearRing_r` takes the coordinate sequence; `GEOSGeom_createPolygon_r`
    /// takes the shell and the holes (not the C array holding them); `GEOSGeom_createCollection_r` takes
    /// the polygons. On any failure, everything not yet handed over is destroyed here.
    public convenience init(context: GEOSContext, polygons: [[[Coordinate]]]) throws {
        let ctx = context.handle
        var made: [OpaquePointer] = []
        func ring(_ coords: [Coordinate]) throws -> OpaquePointer {
            guard let seq = GEOSCoordSeq_create_r(ctx, UInt32(coords.count), 2) else {
                throw GEOSError(message: context.takeError("cannot create coordinate sequence"))
            }
            for (i, c) in coords.enumerated() {
                // Returns 0 on exception.
                if GEOSCoordSeq_setXY_r(ctx, seq, UInt32(i), c.longitude, c.latitude) == 0 {
                    GEOSCoordSeq_destroy_r(ctx, seq)
                    throw GEOSError(message: context.takeError("cannot set coordinate"))
                }
            }
            guard let r = GEOSGeom_createLinearRing_r(ctx, seq) else {  // takes `seq`, even on failure
                throw GEOSError(message: context.takeError("cannot create ring"))
            }
            return r
        }
        do {
            for rings in polygons {
                guard let first = rings.first else { throw GEOSError(message: "polygon without rings") }
                let shell = try ring(first)
                var holes: [OpaquePointer?] = []
                do {
                    for h in rings.dropFirst() { holes.append(try ring(h)) }
                } catch {
                    GEOSGeom_destroy_r(ctx, shell)
                    for h in holes { GEOSGeom_destroy_r(ctx, h) }
                    throw error
                }
                let poly = GEOSGeom_createPolygon_r(ctx, shell, &holes, UInt32(holes.count))
                guard let poly else { throw GEOSError(message: context.takeError("cannot create polygon")) }
                made.append(poly)
            }
            if made.count == 1 {
                self.init(context: context, handle: made[0])
                return
            }
            var parts: [OpaquePointer?] = made
            let multi = GEOSGeom_createCollection_r(ctx, Int32(GEOS_MULTIPOLYGON.rawValue), &parts, UInt32(parts.count))
            guard let multi else {
                throw GEOSError(message: context.takeError("cannot create multipolygon"))
            }
            made = []
            self.init(context: context, handle: multi)
        } catch {
            for g in made { GEOSGeom_destroy_r(ctx, g) }
            throw error
        }
    }

    /// Nil when valid, else GEOS's reason (`GEOSisValidReason_r`, e.g. "Self-intersection[16.3 48.2]").
    public func invalidityReason() -> String? {
        // GEOSisValid_r returns 1 valid, 0 invalid, 2 exception.
        let valid = GEOSisValid_r(context.handle, handle)
        if valid == 1 { return nil }
        guard let reason = GEOSisValidReason_r(context.handle, handle) else {
            return context.takeError("validity check failed")
        }
        defer { GEOSFree_r(context.handle, reason) }  // the string is ours to free
        return String(cString: reason)
    }

    /// The bounding box (`GEOSGeom_getXMin_r` and friends; each returns 0 on exception).
    public func bounds() -> (minX: Double, minY: Double, maxX: Double, maxY: Double) {
        var minX = 0.0, minY = 0.0, maxX = 0.0, maxY = 0.0
        _ = GEOSGeom_getXMin_r(context.handle, handle, &minX)
        _ = GEOSGeom_getYMin_r(context.handle, handle, &minY)
        _ = GEOSGeom_getXMax_r(context.handle, handle, &maxX)
        _ = GEOSGeom_getYMax_r(context.handle, handle, &maxY)
        return (minX, minY, maxX, maxY)
    }
}

/// A prepared geometry (`GEOSPrepare_r`), destroyed once in `deinit` (`GEOSPreparedGeom_destroy_r`).
///
/// GEOS's prepared geometry points into its base geometry, so this object keeps the base alive.
/// Not thread-safe (it builds caches lazily), like its context.
public final class GEOSPreparedGeometry {
    let base: GEOSGeometry
    let handle: OpaquePointer

    public init(_ base: GEOSGeometry) throws {
        guard let p = GEOSPrepare_r(base.context.handle, base.handle) else {
            throw GEOSError(message: base.context.takeError("cannot prepare geometry"))
        }
        self.base = base
        self.handle = p
    }

    deinit {
        GEOSPreparedGeom_destroy_r(base.context.handle, handle)
    }

    /// Whether this geometry covers `other`: boundary counts as inside (`GEOSPreparedCovers_r`).
    public func covers(_ other: GEOSGeometry) -> Bool {
        // Returns 1 on true, 0 on false, 2 on exception; an exception on a point test of a valid
        // polygon would be a GEOS bug, so it counts as "not covered" rather than trapping.
        GEOSPreparedCovers_r(base.context.handle, handle, other.handle) == 1
    }
}
