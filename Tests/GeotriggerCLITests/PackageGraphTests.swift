import Foundation
import Testing

/// The package's shape as a library user meets it, read from SwiftPM's own description of it
/// (`swift package describe --type json`), not from Package.swift's text.
@Suite("Package graph")
struct PackageGraphTests {
    /// Targets by name, each with the targets it depends on directly.
    static func targets() throws -> [String: [String]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A scratch folder of its own: the running `swift test` holds the build folder's lock, and
        // describing the package needs neither a build nor its dependencies' sources.
        process.arguments = ["swift", "package", "--scratch-path", dir.appendingPathComponent("scratch").path,
                             "describe", "--type", "json"]
        process.currentDirectoryURL = CLI.root
        let out = dir.appendingPathComponent("describe.json")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            Issue.record("`swift package describe` exited \(process.terminationStatus): is `swift` on PATH?")
            return [:]
        }
        let json = try JSONSerialization.jsonObject(with: Data(try CLI.contents(of: out))) as? [String: Any]
        var graph: [String: [String]] = [:]
        for target in json?["targets"] as? [[String: Any]] ?? [] {
            guard let name = target["name"] as? String else { continue }
            graph[name] = target["target_dependencies"] as? [String] ?? []
        }
        return graph
    }

    static func closure(of name: String, in graph: [String: [String]]) -> Set<String> {
        var seen: Set<String> = [], stack = [name]
        while let n = stack.popLast() {
            for d in graph[n] ?? [] where seen.insert(d).inserted { stack.append(d) }
        }
        return seen
    }

    @Test("`import Geotrigger` links no Kafka: librdkafka is the consume module's and the CLI's alone")
    func libraryLinksNoKafka() throws {
        let graph = try Self.targets()
        try #require(graph["Geotrigger"] != nil, "no target Geotrigger in the package description")
        let library = Self.closure(of: "Geotrigger", in: graph)
        #expect(!library.contains("GeotriggerKafka"))
        #expect(!library.contains("CRdKafka"))
        // The consume module is where Kafka is, and the command line reaches it through it.
        #expect(Self.closure(of: "GeotriggerConsume", in: graph).contains("CRdKafka"))
        #expect(Self.closure(of: "GeotriggerCLI", in: graph).contains("GeotriggerConsume"))
        // Nothing the library depends on may be the consume module either.
        #expect(!library.contains("GeotriggerConsume"))
    }

    /// What glibc's loader says it loaded for `geotrigger` with `arguments` (LD_DEBUG=libs, on
    /// standard error), after checking the run succeeded.
    static func loaderLog(_ arguments: [String]) throws -> String {
        let run = try CLI.run(arguments, environment: ["LD_DEBUG": "libs"])
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        #expect(run.stderr.contains("find library="), "no loader log: LD_DEBUG not honoured?")
        return run.stderr
    }

    @Test("a replay loads only the libraries it uses: circles neither librdkafka nor GEOS, polygons GEOS")
    func replayLoadsOnlyWhatItUses() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let regions = dir.appendingPathComponent("circles.csv"), fixes = dir.appendingPathComponent("fixes.ndjson")
        try "id,lat,lon,radius\nlake,45.75,14.37,500\n".write(to: regions, atomically: true, encoding: .utf8)
        try #"{"t":1700000000,"device":"d","lat":45.75,"lon":14.37}"#.write(to: fixes, atomically: true, encoding: .utf8)
        let circles = try Self.loaderLog(["replay", "--regions", regions.path, fixes.path, "-o", "/dev/null"])
        #expect(!circles.contains("librdkafka"))
        #expect(!circles.contains("libssl") && !circles.contains("libsasl2"))
        #expect(!circles.contains("libgeos"))
        // Polygons are GEOS's to test: it is loaded, Kafka still is not.
        let polygons = try Self.loaderLog([
            "replay", "--regions", CLI.fixtures.appendingPathComponent("polar-north.regions.geojson").path,
            CLI.fixtures.appendingPathComponent("polar-north.ndjson").path, "-o", "/dev/null",
        ])
        #expect(polygons.contains("libgeos_c"))
        #expect(!polygons.contains("librdkafka"))
    }

    @Test("the layers depend one way: parsing knows no GEOS, scheduling no geometry, the engine no output")
    func layersDependOneWay() throws {
        let graph = try Self.targets()
        try #require(graph["GeotriggerEngine"] != nil, "no target GeotriggerEngine in the package description")
        func reaches(_ a: String, _ b: String) -> Bool { Self.closure(of: a, in: graph).contains(b) }
        // Values, JSON and times stand alone.
        #expect(Self.closure(of: "GeotriggerCore", in: graph).isEmpty)
        // The formats read outside bytes without GEOS or any engine part.
        for module in ["GeotriggerFormats", "GeotriggerRuntime", "GeotriggerScheduling", "GeotriggerMap"] {
            #expect(!reaches(module, "CGEOS"), "\(module) reaches GEOS")
            #expect(!reaches(module, "GeotriggerGeometry"), "\(module) reaches the geometry")
        }
        #expect(!reaches("GeotriggerScheduling", "GeotriggerMonitoring"))
        // Source -> engine -> output -> replay: no module reaches one downstream of it.
        #expect(!reaches("GeotriggerEngine", "GeotriggerOutput"))
        #expect(!reaches("GeotriggerEngine", "GeotriggerReplay"))
        #expect(!reaches("GeotriggerOutput", "GeotriggerReplay"))
        #expect(!reaches("GeotriggerFormats", "GeotriggerEngine"))
        #expect(reaches("Geotrigger", "GeotriggerReplay") && reaches("GeotriggerReplay", "GeotriggerOutput")
                && reaches("GeotriggerOutput", "GeotriggerEngine"))
    }
}
