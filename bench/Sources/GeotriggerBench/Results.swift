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

    /// A Python peer (bench/peer) on the first `fixes` readings, and `geotrigger replay` in exact
    /// mode on the very same file, pinned to the same core, in the same run.
    struct Peer: Codable {
        /// "described" (issue 5's pipeline, described_peer.py) or "tuned" (peer.py).
        var name: String
        /// Its pipeline in a few words.
        var pipeline: String
        /// The readings file both sides replayed (a prefix of the scenario's, as CSV or NDJSON).
        var readings: String
        var fixes: Int
        /// As the peer prints it: its replay (readings in → events out), without interpreter
        /// start-up and without loading the circles and building its tree (`loadSeconds`).
        var fixesPerSecond: Double
        var seconds: Double
        var loadSeconds: Double?
        /// The peer process's wall time, start-up and loading included, and its peak RSS.
        var wallSeconds: Double
        var peakResidentBytes: Int
        var events: Int?
        /// The numerator: `geotrigger replay --hysteresis 0 --max-accuracy 0` on `readings`, one
        /// core, events to a file; wall time of the process (start-up, loading, index build included).
        var geotriggerFixesPerSecond: Double
        var geotriggerSeconds: Double
        var geotriggerEvents: Int
        /// geotriggerFixesPerSecond ÷ fixesPerSecond: geotrigger's start-up counted, the peer's not.
        var speedup: Double
        /// The same span the peer reports, readings in → events out: geotrigger's own elapsed time
        /// less its region loading and index build (both from its summary), and the ratio on that
        /// like-for-like basis (the one the SPEC target is judged on).
        var geotriggerLoadSeconds: Double?
        var geotriggerReplayFixesPerSecond: Double?
        var likeForLikeSpeedup: Double?
        /// bench/peer/check_peer.py on the two event files: true when they agree; nil when not checked.
        var eventsAgree: Bool?
        var note: String

        /// Whole process on both sides (issue 27): the peer's wall time ÷ geotrigger's, each from
        /// start to exit, interpreter or binary start-up, reading the regions and the readings,
        /// the index and writing the events included.
        var wholeProcessSpeedup: Double { wallSeconds / geotriggerSeconds }
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
        /// Issue 5's Python peer (the one SPEC §6's "≥ 40×" is judged against), and the tuned one;
        /// each nil with a note when not run.
        var describedPeer: Peer?
        var describedPeerNote: String?
        var tunedPeer: Peer?
        var tunedPeerNote: String?
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
