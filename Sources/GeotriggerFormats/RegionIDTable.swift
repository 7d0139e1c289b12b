import GeotriggerRuntime
import GeotriggerCore

/// Region id → region number, built on the first lookup.
///
/// Only location triggers ask for regions by id, and most runs have none: building on demand keeps
/// a million-region load from paying for a table it never reads. The first of repeated ids wins.
public final class RegionIDTable {
    public let regions: [Region]
    private var slots = RegionIDSlots(capacity: 0)

    public init(regions: [Region]) {
        self.regions = regions
    }

    /// The number of the region named `id`, or nil.
    public func region(_ id: String) -> Int32? {
        if slots.isEmpty {
            slots = RegionIDSlots(capacity: regions.count)
            for r in regions.indices { _ = slots.insert(Int32(r), of: regions) }
        }
        return slots.find(id, in: regions)
    }
}

/// Open addressing over region numbers keyed by their ids: 16 bytes per region where a
/// `[String: Int32]` holds about 40; the ids stay in the regions array, which is passed in rather
/// than held, so it can keep growing without a copy.
///
/// Each slot keeps the high half of its id's hash beside the region number, so a probe reads a
/// region's id (a cache miss anywhere in the regions array) only when that half matches: in a
/// file of unique ids, almost never.
struct RegionIDSlots {
    /// Hash's high half << 32 | region number + 1; 0 = empty.
    private var slots: [UInt64]

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = capacity == 0 ? [] : [UInt64](repeating: 0, count: size)
    }

    var isEmpty: Bool { slots.isEmpty }

    /// The region named `id` among those inserted, or nil.
    func find(_ id: String, in regions: [Region]) -> Int32? {
        // No slots before the first region (a run that starts from no regions).
        guard !slots.isEmpty else { return nil }
        return probe(id, Self.hash(id), regions).region
    }

    /// The slot holding the region named `id`, or the empty slot where it would go.
    @inline(__always)
    private func probe(_ id: String, _ hash: UInt64, _ regions: [Region]) -> (slot: Int, region: Int32?) {
        let mask = slots.count - 1
        let high = hash & 0xFFFF_FFFF_0000_0000
        var i = Int(truncatingIfNeeded: hash) & mask
        while slots[i] != 0 {
            let s = slots[i]
            if s & 0xFFFF_FFFF_0000_0000 == high {
                let r = Int32(truncatingIfNeeded: s & 0xFFFF_FFFF) - 1
                if regions[Int(r)].id == id { return (i, r) }
            }
            i = (i + 1) & mask
        }
        return (i, nil)
    }

    /// Adds region `r` (its id read from `regions`, or given as `id`); returns the region already
    /// holding that id instead, if any. Grows when half full.
    mutating func insert(_ r: Int32, id: String? = nil, of regions: [Region]) -> Int32? {
        let id = id ?? regions[Int(r)].id
        if slots.isEmpty || (Int(r) + 1) * 2 > slots.count { grow(regions) }
        let hash = Self.hash(id)
        let (slot, existing) = probe(id, hash, regions)
        if existing == nil { slots[slot] = hash & 0xFFFF_FFFF_0000_0000 | UInt64(r + 1) }
        return existing
    }

    /// Adds every region of `regions` in order, as `insert` one by one would, into an empty
    /// table; returns the first region whose id is taken and the region holding it, if any.
    /// The slot of the id a few regions ahead is asked for (prefetched) before each insert: the
    /// slots are spread over a table larger than the cache.
    mutating func insertAll(_ regions: [Region]) -> (region: Int32, first: Int32)? {
        precondition(regions.count * 2 <= slots.count, "room for every region")
        let hashes = regions.map { Self.hash($0.id) }
        let mask = slots.count - 1
        let ahead = 16
        for r in regions.indices {
            if r + ahead < regions.count {
                Prefetch.element(of: slots, at: Int(truncatingIfNeeded: hashes[r + ahead]) & mask)
            }
            let (slot, existing) = probe(regions[r].id, hashes[r], regions)
            if let existing { return (Int32(r), existing) }
            slots[slot] = hashes[r] & 0xFFFF_FFFF_0000_0000 | UInt64(r + 1)
        }
        return nil
    }

    private mutating func grow(_ regions: [Region]) {
        let old = slots
        slots = [UInt64](repeating: 0, count: max(16, old.count * 2))
        let mask = slots.count - 1
        for s in old where s != 0 {
            var i = Int(truncatingIfNeeded: Self.hash(regions[Int(s & 0xFFFF_FFFF) - 1].id)) & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = s
        }
    }

    /// The id's hash: `DeviceTable.hash` of its UTF-8 bytes.
    private static func hash(_ id: String) -> UInt64 {
        DeviceTable.hash(id.utf8)
    }
}
