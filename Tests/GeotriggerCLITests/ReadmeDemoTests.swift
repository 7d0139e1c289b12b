import Foundation
import Testing

/// The README's first command, kept true: its replay (with the map written to a temporary
/// file) prints every event line the README shows, in that order, and starts with them.
@Suite("README demo")
struct ReadmeDemoTests {
    @Test("the first command's events are the README's, first lines first, and it draws the map")
    func firstCommand() throws {
        let readme = try String(contentsOf: CLI.root.appendingPathComponent("README.md"), encoding: .utf8)
        let command = try #require(readme.split(separator: "\n").first {
            $0.hasPrefix("scripts/bootstrap && swift build -c release --static-swift-stdlib --product geotrigger && .build/release/geotrigger ")
        })
        var arguments = command.components(separatedBy: ".build/release/geotrigger ")[1].split(separator: " ").map(String.init)
        let dir = try CLI.temporaryDirectory()
        let map = dir.appendingPathComponent("demo-map.html")
        let k = try #require(arguments.firstIndex(of: "--map"))
        arguments[k + 1] = map.path
        let r = try CLI.run(arguments)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: map.path))
        // The README's sample: its lines without an ellipsis appear verbatim and in order; the
        // first three are the run's first three.
        let sample = readme.components(separatedBy: "```\n{\"t\"")[1].components(separatedBy: "```")[0]
        let shown = ("{\"t\"" + sample).split(separator: "\n").map(String.init).filter { !$0.contains("…") }
        #expect(shown.count >= 4)
        #expect(Array(r.lines.prefix(3)) == Array(shown.prefix(3)))
        var at = 0
        for line in shown {
            guard let found = r.lines[at...].firstIndex(of: line) else {
                Issue.record("the README shows a line the demo does not print (in order): \(line)")
                break
            }
            at = found + 1
        }
        // Every kind the README promises, and no 1901 dates.
        for kind in ["enter", "exit", "dwell", "deliver"] { #expect(r.lines.contains { $0.contains("\"event\":\"\(kind)\"") }) }
        #expect(!r.stdout.contains("1901-"))
    }
}
