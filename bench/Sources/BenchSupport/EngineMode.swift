import Geotrigger

/// The engine settings the benchmark compares, each with the `geotrigger replay` flags that select it.
public enum EngineMode: String, CaseIterable, Codable, Sendable {
    /// Defaults: automatic hysteresis, accuracy limit 200 m, fast path (`--safe-distance 100`: reaches of 70 m to 1 km).
    case fast
    /// The plain GEOS-tree path: every fix queries a GEOS STRtree (`--safe-distance 0 --index geos`).
    case plain
    /// Exact mode on the fast path: events are exactly the geodesic boundary crossings.
    case exactFast
    /// Exact mode on the plain path; its events must be byte-identical to `exactFast`'s.
    case exactPlain

    public var replayFlags: [String] {
        switch self {
        case .fast: return []
        case .plain: return ["--safe-distance", "0", "--index", "geos"]
        case .exactFast: return ["--hysteresis", "0", "--max-accuracy", "0"]
        case .exactPlain: return ["--hysteresis", "0", "--max-accuracy", "0", "--safe-distance", "0", "--index", "geos"]
        }
    }

    public var hysteresis: Hysteresis { self == .exactFast || self == .exactPlain ? .metres(0) : .automatic }

    public var options: MonitorOptions {
        let exact = self == .exactFast || self == .exactPlain
        let plain = self == .plain || self == .exactPlain
        return MonitorOptions(maxAccuracy: exact ? 0 : 200, safeDistance: plain ? nil : 100)
    }

    /// The plain modes use the GEOS STRtree; the fast ones the default packed tree.
    public var tree: SpatialIndexKind { self == .plain || self == .exactPlain ? .geos : .packed }

    /// An engine over `regions` with this mode's settings, its index in the spatial order
    /// `geotrigger replay` uses.
    public func engine(regions: [Region]) throws -> Engine {
        try Engine(index: RegionIndex(regions: regions, hysteresis: hysteresis, tree: tree, order: .spatial), options: options)
    }
}
