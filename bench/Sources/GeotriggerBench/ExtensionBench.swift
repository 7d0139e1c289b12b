import ArgumentParser
import BenchSupport
import Foundation

/// SPEC §5.1: what `--service-extension` costs per `mutable-content` push, whole process. The
/// same pushes are replayed without an extension and with one whose child answers at once
/// (a Python loop that writes a fixed line for each line read: next to nothing of its own), so the difference is Geotrigger's
/// round trip: writing the line, waiting for the child to be scheduled, reading and checking the
/// answer, delivering the rewritten content.
struct ExtensionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extension",
        abstract: "SPEC §5.1: the service extension's overhead per mutable push (whole process).",
        discussion: "Builds nothing: run `swift build -c release` in the root first. Writes extension.md and extension.json to --out.")

    @Option(help: "Mutable pushes to replay (over 1,000 devices).")
    var pushes = 20_000
    @Option(help: "Best of N runs of each.")
    var `repeat` = 3
    @Option(help: "Repository root (default: the current directory).")
    var root: String?
    @Option(help: "Results folder (default: ROOT/bench/results).")
    var out: String?

    struct Results: Codable {
        var pushes: Int
        var secondsWithout: Double
        var secondsWith: Double
        var microsecondsPerPush: Double
        var machine: String
        var date: String
    }

    func run() throws {
        let setup = try WholeProcessRun(root: root, out: out, name: "extension")
        let (binary, out, work) = (setup.binary, setup.out, setup.work)
        defer { try? FileManager.default.removeItem(atPath: work) }
        var lines = ""
        for k in 0..<pushes {
            lines += #"{"t":\#(1_700_000_000 + k),"device":"d\#(k % 1000)","op":"push","id":"m\#(k)","payload":{"aps":{"alert":{"title":"Encrypted","body":"\#(k)"},"mutable-content":1},"cipher":"x\#(k)"}}"# + "\n"
        }
        try lines.write(toFile: "\(work)/pushes.ndjson", atomically: true, encoding: .utf8)
        try "id,lat,lon,radius\nhome,46.05,14.5,100\n".write(toFile: "\(work)/regions.csv", atomically: true, encoding: .utf8)
        let base = [binary, "replay", "--regions", "\(work)/regions.csv", "-q", "\(work)/pushes.ndjson"]
        // A line in, a line out, flushed. (Not awk: mawk reads its input in blocks and waits for
        // more; not `sed -u`, which reads a byte per system call.)
        try """
            import sys
            for line in sys.stdin:
                sys.stdout.write('{"content":{"title":"Decrypted","body":"plain"}}\\n')
                sys.stdout.flush()
            """.write(toFile: "\(work)/extension.py", atomically: true, encoding: .utf8)
        let child = "python3 \(work)/extension.py"
        func best(_ arguments: [String]) throws -> Double {
            var best = Double.infinity
            for _ in 0..<max(1, `repeat`) {
                let run = spawn(arguments, stdout: "\(work)/events.ndjson", stderr: "\(work)/stderr.txt")
                guard run.status == 0 else { throw ValidationError("geotrigger exited \(run.status): \((try? readText("\(work)/stderr.txt")) ?? "")") }
                best = min(best, run.seconds)
            }
            return best
        }
        let without = try best(base)
        let with = try best(base + ["--service-extension", child])
        let events = try readText("\(work)/events.ndjson")
        let modified = events.components(separatedBy: #""extension":"modified""#).count - 1
        guard modified == pushes else { throw ValidationError("\(modified) of \(pushes) pushes were rewritten") }
        let results = Results(pushes: pushes, secondsWithout: without, secondsWith: with,
                              microsecondsPerPush: (with - without) / Double(pushes) * 1e6,
                              machine: commandOutput(["nproc"]) + " cores, " + commandOutput(["uname", "-m"]),
                              date: ISO8601DateFormatter().string(from: Date()))
        let command = "geotrigger-bench extension --pushes \(pushes) --repeat \(`repeat`)"
        let markdown = """
            # The service extension's overhead

            `\(command)` on \(results.date) (\(results.machine)): \(pushes) pushes with \
            `"mutable-content":1` over 1,000 devices, replayed whole process (best of \(`repeat`)) without \
            `--service-extension` and with a Python child that answers each line at once.

            | | seconds |
            |---|---|
            | without an extension | \(String(format: "%.3f", without)) |
            | with the Python child | \(String(format: "%.3f", with)) |
            | **per mutable push** | **\(String(format: "%.1f", results.microsecondsPerPush)) µs** |

            The figure is a round trip between two processes (a line written, the child woken, its \
            line read and checked, two context switches on this VM) plus the child's own loop; a \
            real extension adds its work on top. Pushes without `mutable-content` cost nothing extra.

            """
        try markdown.write(toFile: "\(out)/extension.md", atomically: true, encoding: .utf8)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: URL(fileURLWithPath: "\(out)/extension.json"))
        print(markdown)
    }
}
