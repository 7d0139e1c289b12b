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

    /// The binary sits beside the test bundle in the build folder, unless `GEOTRIGGER_BINARY` names
    /// another (`scripts/sanitize` names the sanitized build's, so no test can run an unsanitized one).
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["GEOTRIGGER_BINARY"], !path.isEmpty {
            precondition(FileManager.default.isExecutableFile(atPath: path), "GEOTRIGGER_BINARY=\(path) is not an executable")
            return URL(fileURLWithPath: path)
        }
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

    /// `environment`: variables set for the child on top of this process's own.
    static func run(_ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:]) throws -> Result {
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
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.currentDirectoryURL = root
        process.standardInput = try FileHandle(forReadingFrom: inURL)
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
        process.waitUntilExit()
        defer { try? FileManager.default.removeItem(at: dir) }
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: try contents(of: outURL), as: UTF8.self),
                      stderr: String(decoding: try contents(of: errURL), as: UTF8.self))
    }

    /// A file's bytes, read with open/read. Not `Data(contentsOf:)` (nor `String(contentsOf:)`,
    /// `FileManager.contents(atPath:)`): swift-foundation 6.3 leaks a 4,096-byte buffer on every
    /// read of an empty file, and the files read here (a child's stdout or stderr) are often
    /// empty; `scripts/sanitize address` would report each one.
    static func contents(of url: URL) throws -> [UInt8] {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: url.path]) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return bytes }
            if n < 0 {
                if errno == EINTR { continue }
                throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: url.path])
            }
            bytes.append(contentsOf: chunk[..<n])
        }
    }

    /// A file's text; nil when it cannot be read or is not UTF-8 (as `String(contentsOf:encoding:)`).
    static func text(of url: URL) -> String? {
        guard let bytes = try? contents(of: url) else { return nil }
        return String(validating: bytes, as: UTF8.self)
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
