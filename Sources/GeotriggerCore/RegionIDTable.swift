/// Region id → region number, built on the first lookup.
///
/// Only location triggers ask for regions by id, and most runs have none: building on demand keeps
/// a million-region load from paying for a table it never reads. Open addressing over Int32 slots
/// (region number + 1, 0 = empty) holds 8 bytes per region where a `[String: Int32]` holds about
/// 40; the ids themselves stay in `regions`. The first of repeated ids wins.
public final class RegionIDTable {
    public let regions: [Region]
    private var slots: [Int32] = []

    public init(regions: [Region]) {
        self.regions = regions
    }

    /// The number of the region named `id`, or nil.
    public func region(_ id: String) -> Int32? {
        if slots.isEmpty { build() }
        let mask = slots.count - 1
        var i = Self.hash(id) & mask
        while slots[i] != 0 {
            let r = slots[i] - 1
            if regions[Int(r)].id == id { return r }
            i = (i + 1) & mask
        }
        return nil
    }

    private func build() {
        var size = 16
        while size < regions.count * 2 { size <<= 1 }
        var slots = [Int32](repeating: 0, count: size)
        let mask = size - 1
        for (r, region) in regions.enumerated() {
            var i = Self.hash(region.id) & mask
            var repeated = false
            while slots[i] != 0 {
                if regions[Int(slots[i] - 1)].id == region.id { repeated = true; break }
                i = (i + 1) & mask
            }
            if !repeated { slots[i] = Int32(r + 1) }
        }
        self.slots = slots
    }

    /// FNV-1a over the UTF-8 bytes, high half folded in.
    private static func hash(_ id: String) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in id.utf8 {
            h ^= UInt64(b)
            h &*= 0x0000_0100_0000_01b3
        }
        return Int(truncatingIfNeeded: h ^ (h >> 29))
    }
}
