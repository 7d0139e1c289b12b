import CGEOS
import GeotriggerCore
import GeotriggerRuntime

/// A GEOS STRtree of rectangles, each carrying a non-negative integer item.
///
/// GEOS 3.11 has no `GEOSSTRtree_build_r`: the tree builds itself on the first query, and inserting
/// after that silently breaks it. So this wrapper takes every rectangle at once, in `init`, and
/// runs one query right away to build it. The tree copies envelopes and owns no items; items are
/// the integers themselves, stored in the item pointer (offset by one so 0 is never NULL).
public final class STRtree {
    let context: GEOSContext
    let handle: OpaquePointer
    private let results: ResultBuffer

    /// Builds a tree over `rectangles` (x = longitude, y = latitude), item = the tuple's `item`.
    public init(
        context: GEOSContext,
        rectangles: some Sequence<(minX: Double, minY: Double, maxX: Double, maxY: Double, item: Int)>,
        nodeCapacity: Int = 10
    ) throws {
        guard let tree = GEOSSTRtree_create_r(context.handle, nodeCapacity) else {
            throw GEOSError(message: context.takeError("cannot create STRtree"))
        }
        self.context = context
        self.handle = tree
        self.results = ResultBuffer()
        for r in rectangles {
            precondition(r.item >= 0, "STRtree items are non-negative")
            // The tree copies the envelope; the rectangle geometry is freed right after.
            let rect = try GEOSGeometry(context: context, minX: r.minX, minY: r.minY, maxX: r.maxX, maxY: r.maxY)
            GEOSSTRtree_insert_r(context.handle, tree, rect.handle, UnsafeMutableRawPointer(bitPattern: r.item + 1))
        }
        // Build now, so no query pays for it and no later insert can slip in unnoticed.
        _ = try query(minX: 0, minY: 0, maxX: 0, maxY: 0)
        results.removeAll()
    }

    deinit {
        GEOSSTRtree_destroy_r(context.handle, handle)
    }

    /// Items whose rectangle intersects the geometry's envelope, in tree order (`GEOSSTRtree_query_r`).
    ///
    /// The returned buffer is reused by the next query.
    package func query(_ geometry: GEOSGeometry) -> UnsafeBufferPointer<Int32> {
        UnsafeBufferPointer(query(handle: geometry.handle, appending: false))
    }

    /// Queries with a raw geometry handle owned by the caller; with `appending`, results are added
    /// to those of the previous query instead of replacing them. The buffer is reused.
    func query(handle geometry: OpaquePointer, appending: Bool) -> UnsafeMutableBufferPointer<Int32> {
        if !appending { results.removeAll() }
        GEOSSTRtree_query_r(
            context.handle, handle, geometry,
            { item, userdata in
                let buffer = Unmanaged<ResultBuffer>.fromOpaque(userdata!).takeUnretainedValue()
                buffer.append(Int32(Int(bitPattern: item) - 1))
            },
            Unmanaged.passUnretained(results).toOpaque()
        )
        return results.contents
    }

    /// Items whose rectangle intersects the given rectangle.
    package func query(minX: Double, minY: Double, maxX: Double, maxY: Double) throws -> UnsafeBufferPointer<Int32> {
        let rect = try GEOSGeometry(context: context, minX: minX, minY: minY, maxX: maxX, maxY: maxY)
        return query(rect)
    }
}

/// The items a query found, reused by every query of a tree: a class, so the GEOS query
/// callback can reach it through its user-data pointer; the storage is Core's `PodList`.
final class ResultBuffer {
    @exclusivity(unchecked) private var items = PodList<Int32>()

    init() { items.reserve(64) }

    deinit { items.free() }

    @inline(__always) func append(_ v: Int32) { items.append(v) }

    /// Appends `values[k]` for each bit k of the 16-bit `mask` (`PodList.appendBits`; all 16 of
    /// `values` are read).
    @inline(__always) func appendBits(_ mask: UInt32, of values: UnsafePointer<Int32>) {
        items.appendBits(mask) { values[$0] }
    }

    /// Empties the buffer (keeping its storage).
    @inline(__always) func removeAll() { items.removeAll() }

    var contents: UnsafeMutableBufferPointer<Int32> { items.buffer }
}
