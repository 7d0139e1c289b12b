import ArgumentParser
import BenchSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A finished child process: its status, wall time and peak resident set (from `wait4`).
struct ChildRun {
    var status: Int32
    var seconds: Double
    var peakResidentBytes: Int
    /// The child's CPU time, user + system, all its threads (rusage).
    var cpuSeconds = 0.0
}

/// Runs `arguments[0]` (a path, or a name on PATH) with stdout and stderr to files, and waits for it with `wait4`,
/// whose rusage gives the child's own peak RSS.
func spawn(_ arguments: [String], stdout: String = "/dev/null", stderr: String = "/dev/null",
           environment: [String: String] = [:]) -> ChildRun {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    var env = [String: String]()
    var i = 0
    while let entry = environ[i] {
        let s = String(cString: entry)
        if let eq = s.firstIndex(of: "=") { env[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
        i += 1
    }
    env.merge(environment) { _, new in new }
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid = pid_t()
    let start = now()
    guard posix_spawnp(&pid, arguments[0], &actions, nil, argv, envp) == 0 else {
        return ChildRun(status: 127, seconds: 0, peakResidentBytes: 0)
    }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let seconds = now() - start
    // Exited normally: the low 7 bits are 0 and the exit code is in bits 8–15.
    let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    return ChildRun(status: code, seconds: seconds, peakResidentBytes: Int(usage.ru_maxrss) * 1024, cpuSeconds: cpu)
}

/// `taskset -c 0` when it exists, so a child runs on one core.
let pinToOneCore: [String] = access("/usr/bin/taskset", X_OK) == 0 ? ["/usr/bin/taskset", "-c", "0"] : []

/// A command's standard output, trimmed (`lscpu`, `swift --version`).
func commandOutput(_ arguments: [String]) -> String {
    let path = "/tmp/geotrigger-bench-\(getpid())-out.txt"
    defer { unlink(path) }
    _ = spawn(arguments, stdout: path)
    return (try? readText(path))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
}

/// ROOT's release `geotrigger`, which the commands that run it whole (kafka, extension) need built.
func releaseBinary(root: String) throws -> String {
    let binary = "\(root)/.build/release/geotrigger"
    guard FileManager.default.isExecutableFile(atPath: binary) else {
        throw ValidationError("no geotrigger binary at \(binary): run `swift build -c release` in \(root)")
    }
    return binary
}

/// What a command that runs `geotrigger` whole starts from: ROOT's release binary, the results
/// folder (made if missing), and a fresh work folder under the temporary directory (the caller removes it).
struct WholeProcessRun {
    let root: String
    let binary: String
    let out: String
    let work: String

    init(root: String?, out: String?, name: String) throws {
        let root = root ?? FileManager.default.currentDirectoryPath
        self.root = root
        binary = try releaseBinary(root: root)
        self.out = out ?? "\(root)/bench/results"
        work = NSTemporaryDirectory() + "geotrigger-\(name)-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: self.out, withIntermediateDirectories: true)
    }

    /// `geotrigger scenario city` into `dir`.
    func city(seed: Int, regions: Int, devices: Int, seconds: Int, into dir: String) throws {
        let run = spawn([binary, "scenario", "city", "--seed", String(seed), "--regions", String(regions),
                         "--devices", String(devices), "--seconds", String(seconds), "--out", dir])
        guard run.status == 0 else { throw ValidationError("geotrigger scenario exited \(run.status)") }
    }
}
