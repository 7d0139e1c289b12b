import Foundation

/// Runs the built `geotrigger` binary, as a user would.
enum CLI {
    /// The repository root, found from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let fixtures = root.appendingPathComponent("Tests/GeotriggerCLITests/Fixtures")
    static let datasets = root.appendingPathComponent("datasets")
    /// The shared datasets CI has beside the repository (not shipped with the project).
    static let shared = root.deletingLastPathComponent().appendingPathComponent("shared/datasets")

    /// The binary sits beside the test bundle in the build folder.
    static let binary: URL = {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = testBinary.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("geotrigger")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return root.appendingPathComponent(".build/debug/geotrigger")
    }()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    static func run(_ arguments: [String], stdin: Data? = nil) throws -> Result {
        // Files rather than pipes: large outputs cannot deadlock, and stdin is a real file or empty.
        let dir = try temporaryDirectory()
        let inURL = dir.appendingPathComponent("stdin"), outURL = dir.appendingPathComponent("stdout"),
            errURL = dir.appendingPathComponent("stderr")
        FileManager.default.createFile(atPath: inURL.path, contents: stdin ?? Data())
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = root
        process.standardInput = try FileHandle(forReadingFrom: inURL)
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
        process.waitUntilExit()
        defer { try? FileManager.default.removeItem(at: dir) }
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
                      stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// One folder per test process for every test's files, removed when the process exits.
    static let temporaryRoot: URL = {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("geotrigger-cli-tests-\(getpid())-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: CLI.temporaryRoot) }
        return dir
    }()

    /// A fresh temporary directory for a test's files, inside `temporaryRoot`.
    static func temporaryDirectory() throws -> URL {
        let dir = temporaryRoot.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}

/// The fields of an event line that an independent oracle also produces.
struct EventKey: Hashable, CustomStringConvertible {
    var t: String
    var event: String
    var device: String
    var region: String

    init?(line: String) {
        guard let data = line.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let t = object["t"] as? String, let event = object["event"] as? String,
              let device = object["device"] as? String, let region = object["region"] as? String
        else { return nil }
        self.t = t
        self.event = event
        self.device = device
        self.region = region
    }

    var description: String { "\(t) \(event) \(device) \(region)" }
}
