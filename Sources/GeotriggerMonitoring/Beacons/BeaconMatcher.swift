import GeotriggerCore
import GeotriggerGeometry

/// Finds the beacon regions a concrete beacon belongs to, in O(1) whatever the number of regions.
///
/// Regions are hashed by their identity pattern: (uuid, major, minor), (uuid, major, *) and
/// (uuid, *, *), as Core Location matches. A sighting costs at most three lookups; results are in
/// region order.
public struct BeaconMatcher: Sendable {
    private var byPattern: [BeaconID: [Int32]] = [:]
    /// Whether any region uses each kind of pattern, so absent kinds cost no lookup.
    private var hasExact = false, hasMajor = false, hasUUID = false
    public private(set) var count = 0

    /// Indexes every beacon region among `regions` (region numbers are positions in the array).
    public init(regions: [Region]) {
        self.init(regions: regions, beaconRegions: RegionSummary(regions).beaconRegions)
    }

    /// Indexes the beacon regions `numbers` (ascending) of `regions`, an index's
    /// `summary.beaconRegions`, without looking at the others.
    public init(regions: [Region], beaconRegions numbers: [Int32]) {
        for i in numbers {
            guard case .beacon(let b) = regions[Int(i)].shape else { continue }
            byPattern[b.identity, default: []].append(i)
            if b.identity.minor >= 0 { hasExact = true } else if b.identity.major >= 0 { hasMajor = true } else { hasUUID = true }
            count += 1
        }
    }

    /// Calls `body` with each region matching the concrete beacon `id`, exact patterns first.
    @inline(__always)
    public func forEachMatch(_ id: BeaconID, _ body: (Int32) -> Void) {
        if hasExact, let r = byPattern[id] { for x in r { body(x) } }
        if hasMajor, let r = byPattern[BeaconID(uuidHigh: id.uuidHigh, uuidLow: id.uuidLow, major: id.major, minor: -1)] {
            for x in r { body(x) }
        }
        if hasUUID, let r = byPattern[BeaconID(uuidHigh: id.uuidHigh, uuidLow: id.uuidLow, major: -1, minor: -1)] {
            for x in r { body(x) }
        }
    }

    /// Whether any region matches the concrete beacon `id` (a sighting of no region's beacon is
    /// counted as unmatched).
    @inline(__always)
    public func matchesAny(_ id: BeaconID) -> Bool {
        var any = false
        forEachMatch(id) { _ in any = true }
        return any
    }

    /// The matching regions, in the order `forEachMatch` gives them.
    public func matches(_ id: BeaconID) -> [Int32] {
        var out: [Int32] = []
        forEachMatch(id) { out.append($0) }
        return out
    }
}
