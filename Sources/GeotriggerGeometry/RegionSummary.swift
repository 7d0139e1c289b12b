import GeotriggerCore

/// What an index's regions hold, found in one pass as the index is built: whether all are
/// circles, which are beacon regions, whether every one notifies on entry and on exit.
///
/// Why it is here: every engine made over an index (one per `--jobs` job, and the reading
/// thread's beacon matcher) used to walk all regions again to learn this, each walk a cache line
/// per region; an index shared by the jobs now carries the answer to them.
public struct RegionSummary: Sendable {
    /// Every region is a circle.
    public private(set) var allCircles = true
    /// The beacon regions' numbers, ascending (an index with beacon regions keeps their order).
    public private(set) var beaconRegions: [Int32] = []
    /// Every region notifies on entry and on exit (none has `notifyOnEntry` or `notifyOnExit` off).
    public private(set) var notifiesAll = true

    /// The summary of `regions`, numbered as they stand.
    public init(_ regions: borrowing [Region]) {
        for r in regions.indices {
            let region = regions[r]
            switch region.shape {
            case .circle: break
            case .beacon: beaconRegions.append(Int32(r)); allCircles = false
            case .polygons: allCircles = false
            }
            notifiesAll = notifiesAll && region.notifyOnEntry && region.notifyOnExit
        }
    }
}
