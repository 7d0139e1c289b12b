import Foundation
import Testing
@testable import GeotriggerFuzzing

/// Every fuzz target's invariant over its committed seeds and every input a campaign kept
/// (`Fuzz/regressions/TARGET/`: each one broke the target once, and was fixed).
@Suite("Fuzz targets: seeds and regressions keep every invariant")
struct FuzzTargetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    static func inputs(_ folder: String, _ target: String) -> [URL] {
        let dir = root.appendingPathComponent(folder).appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted().map { dir.appendingPathComponent($0) }
    }

    @Test("each target's seeds and regressions", arguments: FuzzTargets.all.map(\.name))
    func target(_ name: String) throws {
        let target = try #require(FuzzTargets.named(name))
        let seeds = Self.inputs("seeds", name), regressions = Self.inputs("regressions", name)
        #expect(!seeds.isEmpty, "Fuzz/seeds/\(name) holds no seed")
        for url in seeds + regressions {
            let bytes = try Data(contentsOf: url)
            let problems = bytes.withUnsafeBytes { target.check($0) }
            #expect(problems.isEmpty, "\(url.lastPathComponent): \(problems.joined(separator: "; "))")
        }
    }

    @Test("the names are unique and every folder of seeds or regressions names a target")
    func names() throws {
        let names = FuzzTargets.all.map(\.name)
        #expect(Set(names).count == names.count)
        for folder in ["seeds", "regressions"] {
            let dirs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent(folder).path)
            for d in dirs where !d.hasPrefix(".") && d != "README.md" {
                #expect(names.contains(d), "Fuzz/\(folder)/\(d) names no target")
            }
        }
    }
}
