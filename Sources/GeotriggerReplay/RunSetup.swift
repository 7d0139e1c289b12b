import GeotriggerCore
import GeotriggerGeometry
import GeotriggerScheduling
import GeotriggerEngine
import GeotriggerOutput

/// What `replay` and `consume` set up before their first reading, in one place: the
/// configuration's own limits checked, the regions read and indexed, the ids as events write
/// them, and the requests checked against the regions. A bad file stops the run here, with the
/// exit status SPEC §2 gives it (`ReplayError`).
package struct RunSetup {
    /// The regions as the file gives them, when asked for (`consume` builds an index of them per
    /// partition whose regions change); empty otherwise, so a replay holds them once, in `index`.
    package let regions: [Region]
    package let index: RegionIndex
    /// Region ids as events write them, made with the index: a part of loading the regions.
    package let ids: IDSlots
    package let requests: [NotificationRequest]
    /// Seconds spent checking, reading the regions and building the index (not the requests).
    package let loadSeconds: Double

    /// `device`: `replay --device`, checked with the configuration's limits.
    package init(_ config: EngineConfiguration, device: String? = nil, keepingRegions: Bool = false) throws {
        let start = monotonicSeconds()
        try Replay.checkLimits(config, device: device)
        let regions = try Replay.loadRegions(path: config.regionsPath)
        self.regions = keepingRegions ? regions : []
        let index: RegionIndex
        do {
            // The file's array handed over, not copied (the index orders its regions in place).
            index = try RegionIndex(regions: consume regions, hysteresis: config.hysteresis, tree: config.tree,
                                    order: .spatial)
        } catch var error as RegionFileError {
            if error.file.isEmpty { error.file = config.regionsPath }
            throw ReplayError.badRegions(error)
        }
        self.index = index
        ids = IDSlots(regions: index.regions)
        loadSeconds = monotonicSeconds() - start
        requests = try config.requestsPath.map { try Replay.loadRequests(path: $0, index: index) } ?? []
    }
}
