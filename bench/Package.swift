// swift-tools-version:6.1
import PackageDescription

// The benchmark is its own package (as swift-nio's Benchmarks/ is), so the main build never pulls
// in its dependencies. It builds the engine from `..` and times the main package's release binary.
let package = Package(
    name: "GeotriggerBench",
    dependencies: [
        // Named, because a path dependency is otherwise known by its folder name (a clone, a worktree).
        .package(name: "Geotrigger", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.0"),
    ],
    targets: [
        // Scenario files, preloaded readings and the engine loop both executables time or count.
        .target(
            name: "BenchSupport",
            dependencies: [
                .product(name: "Geotrigger", package: "Geotrigger"),
                .product(name: "GeotriggerScenarios", package: "Geotrigger"),
            ]
        ),
        .executableTarget(
            name: "geotrigger-bench",
            dependencies: [
                "BenchSupport",
                // `geotrigger-bench kafka` produces the readings itself (Kafka's producer).
                .product(name: "GeotriggerConsume", package: "Geotrigger"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Sources/GeotriggerBench"
        ),
        // Counts mallocs per reading. Separate, because the interposer replaces malloc for the
        // whole process (LD_PRELOAD) and would slow every timed loop down.
        .executableTarget(
            name: "geotrigger-allocs",
            dependencies: [
                "BenchSupport",
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ],
            path: "Sources/GeotriggerAllocs"
        ),
    ]
)
