// swift-tools-version:6.0
import Foundation
import PackageDescription

// Data flows one way: readings -> engine -> monitoring (asks the geometry index) -> events -> scheduling
// -> output. GeotriggerFormats and GeotriggerCore know nothing of GEOS; only GeotriggerGeometry imports CGEOS.
let package = Package(
    name: "Geotrigger",
    products: [
        .library(name: "Geotrigger", targets: ["Geotrigger"]),
        // `geotrigger consume` as a library (bench/ measures it): the one product that links librdkafka.
        .library(name: "GeotriggerConsume", targets: ["GeotriggerConsume"]),
        // For bench/ (its own package, so the main build never pulls in benchmark dependencies).
        .library(name: "GeotriggerScenarios", targets: ["GeotriggerScenarios"]),
        .executable(name: "geotrigger", targets: ["GeotriggerCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        // A shared library opened on first use rather than linked (dlopen): the forwarding
        // functions CRdKafka and CGEOS define with their library's prototypes (CLazyLibrary.h).
        .target(name: "CLazyLibrary", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // The GEOS C API (libgeos-dev's headers), reentrant half only; GEOS is opened when first
        // used, by polygons or `--tree geos`: a replay of circles does not load it (CGEOS.h).
        // The C of both library modules is built with DWARF 4 debug information, which valgrind
        // reads (callgrind, scripts/leakcheck); clang's default, DWARF 5, stops Debian's
        // valgrind 3.19 at the whole binary.
        .target(name: "CGEOS", dependencies: ["CLazyLibrary"], cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        // librdkafka's C API (librdkafka-dev's headers), opened at the first Kafka client: a
        // process that never touches Kafka does not load it (CRdKafka.h).
        .target(name: "CRdKafka", dependencies: ["CLazyLibrary"], cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        // A cache prefetch hint for the hot path (Swift has no intrinsic for it).
        .target(name: "CPrefetch"),
        // glibc's sincos, which Swift's Glibc module does not export (a fix's unit vector).
        .target(name: "CMath"),
        // Sixteen comparisons at once (SSE compare and movemask): box tests for the packed R-tree,
        // due clearances for a device's neighbourhood.
        .target(name: "CBoxes"),
        // Sixteen bytes at a time (SSE compare and movemask): an NMEA line's last `$`, its commas
        // and its checksum.
        .target(name: "CLineScan"),
        // SIGINT/SIGTERM noted in a sig_atomic_t, for a checkpoint before stopping.
        .target(name: "CSignals"),
        // glibc's mallopt (Swift's Glibc module does not export it): a replay keeps the memory it frees.
        .target(name: "CMalloc"),
        // Values shared by every layer: coordinates, regions, beacons, JSON values and their text,
        // RFC 3339 times, the input limits.
        .target(name: "GeotriggerCore"),
        // Package-internal runtime support, no product of its own: the device table, the timer
        // queue, snapshot coding, content hashes, and the small unsafe containers they use.
        .target(
            name: "GeotriggerRuntime",
            dependencies: ["CMalloc", "CPrefetch", "GeotriggerCore", .product(name: "HeapModule", package: "swift-collections")]
        ),
        // The formats read from outside: readings (NDJSON, CSV, GPX; byte-level, no Foundation on
        // the hot path) and region files (GeoJSON, CSV). No GEOS.
        .target(name: "GeotriggerFormats", dependencies: ["CLineScan", "CPrefetch", "CSignals", "GeotriggerCore", "GeotriggerRuntime"]),
        // GEOS binding, geodesy on WGS84 and the region index. The only module that touches the C API.
        .target(
            name: "GeotriggerGeometry",
            dependencies: ["CBoxes", "CGEOS", "CMath", "CPrefetch", "GeotriggerCore", "GeotriggerRuntime"]
        ),
        // Per-(device, region) state machines, timers and events.
        .target(
            name: "GeotriggerMonitoring",
            dependencies: [
                "CBoxes", "CPrefetch", "GeotriggerCore", "GeotriggerRuntime", "GeotriggerFormats", "GeotriggerGeometry",
            ]
        ),
        // Notification requests, triggers, per-device centers and their clock. Knows nothing of geometry:
        // regions are opaque keys handed in by the caller.
        .target(name: "GeotriggerScheduling", dependencies: ["GeotriggerCore", "GeotriggerRuntime"]),
        // The engine: one stream clock over the monitors and the scheduler, and the one dispatch
        // of a reading to it (`ReadingApplier`).
        .target(
            name: "GeotriggerEngine",
            dependencies: [
                "GeotriggerCore", "GeotriggerRuntime", "GeotriggerFormats", "GeotriggerGeometry", "GeotriggerMonitoring",
                "GeotriggerScheduling",
            ]
        ),
        // Events as SPEC §4's NDJSON, formatted into a buffer in front of a `RecordSink` (a file,
        // standard output, a callback); rejected records; `--state-out`.
        .target(
            name: "GeotriggerOutput",
            dependencies: [
                "GeotriggerCore", "GeotriggerRuntime", "GeotriggerFormats", "GeotriggerMonitoring", "GeotriggerScheduling",
                "GeotriggerEngine",
            ]
        ),
        // `geotrigger replay`: the driver, `--jobs`, `--checkpoint`, the summary.
        .target(
            name: "GeotriggerReplay",
            dependencies: [
                "CSignals", "GeotriggerCore", "GeotriggerRuntime", "GeotriggerFormats", "GeotriggerGeometry",
                "GeotriggerMonitoring", "GeotriggerScheduling", "GeotriggerEngine", "GeotriggerOutput",
            ]
        ),
        // The library users import: every layer above, re-exported (Exports.swift). No Kafka.
        .target(
            name: "Geotrigger",
            dependencies: [
                "GeotriggerCore", "GeotriggerFormats", "GeotriggerGeometry", "GeotriggerMonitoring",
                "GeotriggerScheduling", "GeotriggerEngine", "GeotriggerOutput", "GeotriggerReplay",
            ]
        ),
        // librdkafka's handles, each owned by one Swift object (SPEC §8, `geotrigger consume`).
        .target(name: "GeotriggerKafka", dependencies: ["CRdKafka"]),
        // `geotrigger consume` (SPEC §8): a Kafka consumer group's partitions, each an engine, with
        // their snapshots on a state topic. With the CLI, the only module that depends on Kafka.
        .target(name: "GeotriggerConsume", dependencies: ["Geotrigger", "GeotriggerKafka"]),
        // SPEC §9: a replay drawn as SVG or HTML (regions, tracks, events) from the files a replay
        // reads and writes. No GEOS, no engine: the sink's side of the flow.
        .target(name: "GeotriggerMap", dependencies: ["GeotriggerCore", "GeotriggerFormats"]),
        // SPEC §6's benchmark scenarios (city, world, beacons), generated from a seed.
        .target(name: "GeotriggerScenarios", dependencies: ["Geotrigger"]),
        .executableTarget(
            name: "GeotriggerCLI",
            dependencies: [
                "Geotrigger", "GeotriggerConsume", "GeotriggerMap", "GeotriggerScenarios",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The invariant each decoder of outside bytes keeps on any input (`scripts/fuzz --list`):
        // run by the fuzzer (`geotrigger-fuzz`) and, over the seed corpora and every input a
        // campaign found, by GeotriggerFuzzingTests.
        .target(
            name: "GeotriggerFuzzing",
            dependencies: ["Geotrigger", "GeotriggerConsume", "GeotriggerCore", "GeotriggerRuntime", "GeotriggerFormats", "GeotriggerScheduling"],
            path: "Fuzz/Sources/GeotriggerFuzzing"
        ),
        .testTarget(name: "GeotriggerFuzzingTests", dependencies: ["GeotriggerFuzzing"], path: "Fuzz/Tests"),
        .testTarget(name: "GeotriggerCoreTests", dependencies: ["GeotriggerCore"]),
        .testTarget(name: "GeotriggerRuntimeTests", dependencies: ["GeotriggerRuntime"]),
        .testTarget(name: "GeotriggerFormatsTests", dependencies: ["GeotriggerFormats"], resources: [.copy("Fixtures")]),
        .testTarget(name: "GeotriggerGeometryTests", dependencies: ["GeotriggerGeometry"], resources: [.copy("Fixtures")]),
        .testTarget(name: "GeotriggerMonitoringTests", dependencies: ["GeotriggerMonitoring"]),
        .testTarget(name: "GeotriggerSchedulingTests", dependencies: ["GeotriggerScheduling"]),
        .testTarget(name: "GeotriggerKafkaTests", dependencies: ["GeotriggerKafka"]),
        .testTarget(name: "GeotriggerMapTests", dependencies: ["GeotriggerMap", "GeotriggerGeometry"]),
        .testTarget(name: "GeotriggerCLITests", dependencies: ["Geotrigger", "GeotriggerConsume", "GeotriggerScenarios"], resources: [.copy("Fixtures")]),
    ]
)

// libFuzzer's driver, built only by `scripts/fuzz` (GEOTRIGGER_FUZZ=1, with `--sanitize fuzzer`):
// libFuzzer supplies `main`, so the target cannot link in an ordinary build.
if ProcessInfo.processInfo.environment["GEOTRIGGER_FUZZ"] != nil {
    package.products.append(.executable(name: "geotrigger-fuzz", targets: ["GeotriggerFuzz"]))
    package.targets.append(
        .executableTarget(name: "GeotriggerFuzz", dependencies: ["GeotriggerFuzzing"], path: "Fuzz/Sources/GeotriggerFuzz")
    )
}
