import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Builds bench/ (its own package) and runs `geotrigger-bench smoke` on tiny scenarios against the
/// geotrigger built for these tests. Checks the results are complete and sane, never the timings.
@Suite struct BenchSmokeTests {
    static let bench = CLI.root.appendingPathComponent("bench")

    @Test(.timeLimit(.minutes(5)))
    func smokeRunWritesSaneResults() throws {
        guard FileManager.default.fileExists(atPath: Self.bench.appendingPathComponent("Package.swift").path) else {
            print("BenchSmokeTests: skipped, bench/ is absent")
            return
        }
        let build = try run(["/usr/bin/env", "swift", "build", "--package-path", Self.bench.path])
        try #require(build.status == 0, "swift build of bench/ failed:\n\(build.output)")

        let out = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: out) }
        let smoke = try run([Self.bench.appendingPathComponent(".build/debug/geotrigger-bench").path, "smoke",
                             "--geotrigger", CLI.binary.path, "--root", CLI.root.path,
                             "--out", out.path, "--data", out.appendingPathComponent("data").path])
        try #require(smoke.status == 0, "geotrigger-bench smoke failed:\n\(smoke.output)")

        let json = try Data(contentsOf: out.appendingPathComponent("results.json"))
        let results = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let scenarios = try #require(results["scenarios"] as? [[String: Any]])
        #expect(scenarios.compactMap { $0["kind"] as? String } == ["city", "world", "beacons"])
        for s in scenarios {
            let kind = s["kind"] as? String ?? "?"
            #expect((s["fixes"] as? Int ?? 0) > 0, "\(kind)")
            #expect((s["engineFixesPerSecond"] as? Double ?? 0) > 0, "\(kind)")
            #expect(s["allocationsPerReading"] is Double, "\(kind): geotrigger-allocs did not run")
            #expect((s["replays"] as? [[String: Any]])?.count == 4, "\(kind): fast, plain and both exact modes")
            #expect(s["exactEventsIdentical"] as? Bool == true, "\(kind): fast and plain paths differ in exact mode")
            if ProcessInfo.processInfo.activeProcessorCount > 1 {
                #expect(s["jobsEventsIdentical"] as? Bool == true, "\(kind): --jobs output differs from one core's")
            }
            if kind != "beacons" { #expect(s["bruteEventsAgree"] as? Bool == true, "\(kind)") }
            let latency = s["latencyNanoseconds"] as? [String: Double] ?? [:]
            #expect((latency["p50"] ?? 0) > 0 && (latency["p50"] ?? 0) <= (latency["p999"] ?? 0), "\(kind)")
        }
        #expect((results["regionSweep"] as? [Any])?.isEmpty == false)
        #expect((results["deviceSweep"] as? [Any])?.isEmpty == false)

        let markdown = try String(contentsOf: out.appendingPathComponent("RESULTS.md"), encoding: .utf8)
        for heading in ["## Scenarios", "## SPEC §6 targets", "## Sweeps"] { #expect(markdown.contains(heading)) }
        for chart in ["regions.svg", "devices.svg"] {
            let svg = try String(contentsOf: out.appendingPathComponent(chart), encoding: .utf8)
            #expect(svg.hasPrefix("<svg") && svg.contains("<polyline"), "\(chart)")
        }
    }

    /// Runs a command with its output (both streams) to a file, and returns its status and output.
    private func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let log = try CLI.temporaryDirectory().appendingPathComponent("output")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.currentDirectoryURL = CLI.root
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        // The test's time limit cannot stop a process it waits for: a child still running after
        // four minutes is killed (SIGKILL: it may have been started with SIGTERM blocked, as the
        // test runner's threads block it) and reported.
        let deadline = Date().addingTimeInterval(240)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("\(arguments[0]) \(arguments.dropFirst().first ?? "") still running after 4 minutes: killed")
        }
        process.waitUntilExit()
        try handle.close()
        defer { try? FileManager.default.removeItem(at: log.deletingLastPathComponent()) }
        return (process.terminationStatus, String(decoding: try Data(contentsOf: log), as: UTF8.self))
    }
}
