import GeotriggerCore
import GeotriggerScheduling
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerRuntime

/// `--service-extension CMD` (SPEC §5.1): one long-lived child process (`/bin/sh -c CMD`) that
/// rewrites `mutable-content` pushes, as a notification service extension does on iOS.
///
/// Each push is one JSON line on the child's standard input, `{"device":…,"request":…,
/// "content":{…}}`, and the answer one line on its standard output, `{"content":{…}}`. The run
/// never waits longer than `timeout` seconds of wall time for an answer, and never stops because
/// of the child: a child that does not answer in time is killed (as iOS ends an extension whose
/// time expired), one that exits, closes its output or answers nonsense is stopped, and the next
/// push starts a new one. Each of these delivers the original content.
///
/// Replay jobs share the one child, one push at a time (`lock`). Its standard input is one end of
/// a socket pair, not a pipe, so that writing to a child that has died fails with an error
/// (`MSG_NOSIGNAL`) instead of a SIGPIPE that would end the run.
public final class ServiceExtensionProcess: NotificationServiceExtension, @unchecked Sendable {
    public let command: String
    public let timeout: Double
    private var pid: pid_t = -1
    private var input: Int32 = -1
    private var output: Int32 = -1
    private var buffer: [UInt8] = []
    /// What one read takes in, reused.
    private var chunk = [UInt8](repeating: 0, count: 64 << 10)
    private var lock = pthread_mutex_t()
    private let report: (String) -> Void
    private var reported = 0
    /// An answer longer than this is nonsense.
    static let maximumAnswerBytes = 16 << 20

    /// `report` hears of the first few problems (a line for stderr).
    public init(command: String, timeout: Double = 30, report: @escaping (String) -> Void = { _ in }) {
        self.command = command
        self.timeout = timeout
        self.report = report
        pthread_mutex_init(&lock, nil)
    }

    deinit {
        finish()
        pthread_mutex_destroy(&lock)
    }

    /// Ends the child: its input closed (it should exit), then, after a grace second, killed.
    public func finish() {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        guard pid > 0 else { return }
        close(input)
        input = -1
        let deadline = monotonicSeconds() + 1
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if monotonicSeconds() > deadline {
                kill(-pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                break
            }
            usleep(5_000)
        }
        forget()
    }

    /// After the child was reaped: its pipes closed, nothing of it kept.
    private func forget() {
        pid = -1
        if input >= 0 { close(input) }
        close(output)
        input = -1
        output = -1
        buffer.removeAll(keepingCapacity: true)
    }

    public func rewrite(_ content: NotificationContent, request: String, device: String) -> (NotificationContent?, ServiceExtensionOutcome) {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        if pid <= 0, let problem = start() { return fail(problem) }
        var line: [UInt8] = []
        JSONValue.object(["device": .string(device), "request": .string(request), "content": content.json]).write(into: &line)
        line.append(UInt8(ascii: "\n"))
        let deadline = monotonicSeconds() + timeout
        if let problem = send(line) { return fail(problem) }
        switch receiveLine(by: deadline) {
        case .timeout:
            stop("no answer within \(formatSeconds(timeout))")
            return (nil, .timeout)
        case .failed(let problem):
            return fail(problem)
        case .line(let answer):
            guard let json = try? JSONValue.parse(answer) else { return fail("answered a line that is not JSON") }
            guard let c = json["content"] else { return fail("answered without \"content\"") }
            do {
                return (try NotificationContent(json: c), .modified)
            } catch {
                return fail("answered content that cannot be used: \(error)")
            }
        }
    }

    // MARK: The child

    /// Starts the child; nil, or why it cannot be started.
    private func start() -> String? {
        var sockets: [Int32] = [-1, -1]
        var pipeFDs: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &sockets) == 0 else {
            return "cannot make a socket pair: \(String(cString: strerror(errno)))"
        }
        // Close-on-exec, so that a later child does not hold this one's pipe open (the child
        // gets its ends through dup2, which clears the flag on the copies).
        guard pipe(&pipeFDs) == 0, fcntl(pipeFDs[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(pipeFDs[1], F_SETFD, FD_CLOEXEC) == 0 else {
            close(sockets[0])
            close(sockets[1])
            return "cannot make a pipe: \(String(cString: strerror(errno)))"
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, sockets[1], 0)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        // The child starts with default signal handling and nothing blocked, whatever the run set.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGPIPE, SIGTERM, SIGINT, SIGHUP] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        // A process group of its own, so that killing it ends what the shell started too.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
        let (child, rc) = SystemIO.spawn("/bin/sh", arguments: ["/bin/sh", "-c", command], &actions, &attributes)
        close(sockets[1])
        close(pipeFDs[1])
        guard rc == 0 else {
            close(sockets[0])
            close(pipeFDs[0])
            return "cannot start /bin/sh -c \(command): \(String(cString: strerror(rc)))"
        }
        pid = child
        input = sockets[0]
        output = pipeFDs[0]
        buffer.removeAll(keepingCapacity: true)
        return nil
    }

    /// Kills the child now (it hung, failed or answered nonsense): the next push starts another.
    private func stop(_ problem: String) {
        if reported < 5 {
            reported += 1
            report("geotrigger: service extension (\(command)): \(problem); the original content is delivered and the next push starts it again\n")
        }
        guard pid > 0 else { return }
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        forget()
    }

    private func fail(_ problem: String) -> (NotificationContent?, ServiceExtensionOutcome) {
        stop(problem)
        return (nil, .failed)
    }

    private func send(_ bytes: [UInt8]) -> String? {
        guard let failure = bytes.withByteView({ SystemIO.sendAll(input, $0) }) else { return nil }
        return "cannot be written to (\(failure)): it has exited"
    }

    private enum Received {
        case line([UInt8])
        case timeout
        case failed(String)
    }

    private func receiveLine(by deadline: Double) -> Received {
        var scanned = 0
        while true {
            if let nl = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<nl])
                buffer.removeSubrange(...nl)
                return .line(line)
            }
            scanned = buffer.count
            if buffer.count > Self.maximumAnswerBytes { return .failed("answered more than \(Self.maximumAnswerBytes >> 20) MiB without a line end") }
            let left = deadline - monotonicSeconds()
            if left <= 0 { return .timeout }
            var fd = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = poll(&fd, 1, Int32(min(left * 1000, Double(Int32.max)).rounded(.up)))
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed("cannot be read: \(String(cString: strerror(errno)))")
            }
            if ready == 0 { continue }
            let n = SystemIO.read(output, into: &chunk, 0..<chunk.count)
            if n < 0 { return .failed("cannot be read: \(String(cString: strerror(Int32(-n))))") }
            if n == 0 { return .failed("closed its output (exited?) before answering") }
            buffer.append(contentsOf: chunk[..<n])
        }
    }
}
