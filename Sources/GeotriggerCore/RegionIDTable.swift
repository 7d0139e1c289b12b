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

/// Open addressing over region numbers keyed by their ids: Int32 slots (region number + 1,
/// 0 = empty), 8 bytes per region where a `[String: Int32]` holds about 40; the ids stay in the
/// regions array, which is passed in rather than held, so it can keep growing without a copy.
struct RegionIDSlots {
    private var slots: [Int32]

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = capacity == 0 ? [] : [Int32](repeating: 0, count: size)
    }

    var isEmpty: Bool { slots.isEmpty }

    /// The region named `id` among those inserted, or nil.
    func find(_ id: String, in regions: [Region]) -> Int32? {
        probe(id, regions).region
    }

    /// The slot holding the region named `id`, or the empty slot where it would go.
    private func probe(_ id: String, _ regions: [Region]) -> (slot: Int, region: Int32?) {
        let mask = slots.count - 1
        var i = Self.hash(id) & mask
        while slots[i] != 0 {
            let r = slots[i] - 1
            if regions[Int(r)].id == id { return (i, r) }
            i = (i + 1) & mask
        }
        return (i, nil)
    }

    /// Adds region `r` (its id read from `regions`, or given as `id`); returns the region already
    /// holding that id instead, if any. Grows when half full.
    mutating func insert(_ r: Int32, id: String? = nil, of regions: [Region]) -> Int32? {
        let id = id ?? regions[Int(r)].id
        if slots.isEmpty || (Int(r) + 1) * 2 > slots.count { grow(regions) }
        let (slot, existing) = probe(id, regions)
        if existing == nil { slots[slot] = r + 1 }
        return existing
    }

    private mutating func grow(_ regions: [Region]) {
        let old = slots
        slots = [Int32](repeating: 0, count: max(16, old.count * 2))
        let mask = slots.count - 1
        for s in old where s != 0 {
            var i = Self.hash(regions[Int(s - 1)].id) & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = s
        }
    }

    /// The id's slot hash: `DeviceTable.hash` of its UTF-8 bytes.
    private static func hash(_ id: String) -> Int {
        Int(truncatingIfNeeded: DeviceTable.hash(id.utf8))
    }
}
