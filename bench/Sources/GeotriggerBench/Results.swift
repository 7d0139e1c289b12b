/// Everything one `geotrigger-bench all` run measured; written as results.json and rendered as RESULTS.md.
struct Results: Codable {
    struct Machine: Codable {
        var cpu: String
        var cores: Int
        var pinned: Bool
        var swift: String
        var date: String
    }

    struct Settings: Codable {
        var seed: UInt64
        var scale: Double
        var repeats: Int
        var sweepFixes: Int
        var bruteLimit: Int
        var peerLimit: Int
    }

    /// One `geotrigger replay` process, best of the repeats.
    struct Replay: Codable {
        var mode: EngineModeName
        var fixes: Int
        var seconds: Double
        var fixesPerSecond: Double
        var peakResidentBytes: Int
        var events: Int
    }

    struct Latency: Codable {
        var p50: Double
        var p99: Double
        var p999: Double
        var max: Double
    }

    /// A slower baseline, run on the first `fixes` readings when it cannot do them all.
    struct Baseline: Codable {
        var fixes: Int
        var fixesPerSecond: Double
        /// This scenario's fast figure (same kind of measurement) divided by the baseline's.
        var speedup: Double
        var note: String
    }

    struct Scenario: Codable {
        var kind: String
        var regions: Int
        var devices: Int
        var fixes: Int
        var indexBuildSeconds: Double
        var replays: [Replay]
        var engineFixesPerSecond: Double
        var enginePlainFixesPerSecond: Double
        var latencyNanoseconds: Latency
        var bytesPerRegion: Double
        var bytesPerActiveDevice: Double
        var allocationsPerReading: Double?
        var brute: Baseline?
        var peer: Baseline?
        var peerNote: String?
        /// Exact mode: fast-path events byte-identical to the plain path's (`geotrigger replay` output).
        var exactEventsIdentical: Bool
        var exactEvents: Int
        /// The brute-force scan produced as many enter and exit events as the engine in exact mode.
        var bruteEventsAgree: Bool?
        /// `geotrigger replay --jobs N` (defaults, N = the machine's cores, not pinned), and whether
        /// its events are byte-identical to the one-core run's. nil on a one-core machine.
        var jobs: Int?
        var jobsReplay: Replay?
        var jobsEventsIdentical: Bool?

        func replay(_ mode: EngineModeName) -> Replay? { replays.first { $0.mode == mode } }
    }

    /// One point of a sweep: the city workload over `size` regions or devices.
    struct SweepPoint: Codable {
        var size: Int
        var fixes: Int
        var fixesPerSecond: Double
        var plainFixesPerSecond: Double
        var indexBuildSeconds: Double?
        var bytesPerItem: Double
    }

    var machine: Machine
    var settings: Settings
    var scenarios: [Scenario] = []
    var regionSweep: [SweepPoint] = []
    var deviceSweep: [SweepPoint] = []
}

typealias EngineModeName = String
