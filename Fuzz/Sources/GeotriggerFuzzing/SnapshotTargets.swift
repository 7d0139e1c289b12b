import Geotrigger
import GeotriggerConsume
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerRuntime

/// State read back: checkpoint files, the Kafka state topic's snapshots and commit metadata.
enum SnapshotTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget(
            name: "checkpoint-file",
            about: "A `replay --checkpoint` file (first byte: bit 0 clear, the rest is the file's bytes; set, the rest "
                + "is a body, wrapped by CheckpointStore.write; bit 1: the world restored into, the Cerknica run or the "
                + "beacon lobby): read as a resume reads it (CheckpointStore, Checkpointer.resumable, "
                + "Engine.restoreSnapshot), anything refused with ReplayError.checkpoint or a SnapshotError; a restored "
                + "engine re-encodes, the re-encoding restores and re-encodes to the same bytes, and both engines, run "
                + "a day on, stay the same",
            check: { checkpointFile($0) }),
        FuzzTarget(
            name: "kafka-state-snapshot",
            about: "A partition snapshot of `geotrigger consume` (first byte: bit 0, the world): "
                + "PartitionEngine.restore refuses it with a ConsumeError or restores it; its header's region-changes "
                + "flag tells the truth; the restored partition re-encodes to bytes that restore and re-encode the same, "
                + "and both partitions, run a day on, produce the same events and state",
            check: { kafkaSnapshot($0) }),
        FuzzTarget(
            name: "commit-metadata",
            about: "The state topic's reference in a commit's metadata (SnapshotReference): a parsed reference is one "
                + "the state topic's reader can act on (chunks at distinct offsets, no negative count), and written "
                + "back (metadata) it parses to the same reference and the same line",
            check: { commitMetadata($0) }),
    ]

    // MARK: Checkpoint files

    static let checkpointFolder = ScratchFolder(name: "checkpoint")

    static func checkpointFile(_ bytes: UnsafeRawBufferPointer) -> [String] {
        guard let mode = bytes.first else { return [] }
        let rest = Array(bytes.dropFirst())
        let world = mode & 2 == 0 ? World.cerknica : World.lobby
        var findings = Findings()
        checkpointFolder.withFolder { folder in
            let store: CheckpointStore
            do { store = try CheckpointStore(directory: folder) } catch {
                findings.add("cannot make the checkpoint folder \(folder): \(error)")
                return
            }
            let path = store.path(of: 1)
            if mode & 1 == 0 {
                writeFile(path, rest)
            } else {
                do { try store.write(sequence: 1, body: rest) } catch {
                    findings.add("CheckpointStore.write failed: \(error)")
                    return
                }
                // The writer's file reads back as the body it was given.
                switch CheckpointStore.read(path: path) {
                case .success(let body): findings.expect(body == rest, "a written checkpoint read back another body")
                case .failure(let e): findings.add("a checkpoint CheckpointStore.write made is refused: \(e.message)")
                }
            }
            // As a resume reads it; the run's identity is the checkpoint's own (the fresh engine
            // below is built from the world's regions and requests whatever it names).
            guard case .success(let body) = CheckpointStore.read(path: path) else { return }
            var r = SnapshotReader(body)
            guard let identity = try? RunIdentity(from: &r) else { return }
            let resumed: Checkpointer.Resumed
            do {
                let checkpointer = try Checkpointer(directory: folder, every: 3, identity: identity, paths: identity.inputs)
                guard let found = try checkpointer.resumable(note: { _ in }) else {
                    findings.add("Checkpointer.resumable found no checkpoint where CheckpointStore.read reads one")
                    return
                }
                resumed = found
            } catch ReplayError.checkpoint {
                return
            } catch {
                findings.add("Checkpointer.resumable refused with \(error), not ReplayError.checkpoint")
                return
            }
            let engine = world.engine()
            var er = SnapshotReader(resumed.body, offset: resumed.engineOffset)
            do { try engine.restoreSnapshot(from: &er) } catch { return }
            fixedPoint(engine, world: world, &findings)
        }
        return findings.problems
    }

    /// The engine's snapshot restores into a fresh engine and re-encodes to the same bytes; both,
    /// run a day on, stay the same.
    static func fixedPoint(_ engine: Engine, world: World, _ findings: inout Findings) {
        var w1 = SnapshotWriter()
        engine.writeSnapshot(to: &w1)
        let again = world.engine()
        var r1 = SnapshotReader(w1.bytes)
        do { try again.restoreSnapshot(from: &r1) } catch {
            findings.add("the engine's own snapshot (\(w1.bytes.count) bytes) is refused: \(error.message)")
            return
        }
        findings.expect(r1.isAtEnd, "the engine's own snapshot restores with bytes left at \(r1.offset) of \(w1.bytes.count)")
        var w2 = SnapshotWriter()
        again.writeSnapshot(to: &w2)
        guard expectSame(w1.bytes, "the restored engine's snapshot", w2.bytes, "that snapshot restored and written again",
                         &findings)
        else { return }
        // Run on: timers due within a day fire in both, and they stay alike.
        guard let until = runOnTime(engine) else { return }
        var log1: [String] = [], log2: [String] = []
        watch(engine) { log1.append($0) }
        watch(again) { log2.append($0) }
        engine.advance(to: until)
        again.advance(to: until)
        findings.expect(log1 == log2, "a day on, the restored engine did \(log1.prefix(3)), its re-encoding \(log2.prefix(3))")
        var w3 = SnapshotWriter(), w4 = SnapshotWriter()
        engine.writeSnapshot(to: &w3)
        again.writeSnapshot(to: &w4)
        expectSame(w3.bytes, "the restored engine a day on", w4.bytes, "its re-encoding a day on", &findings)
    }

    /// A day after the clock or the earliest timer, whichever is earlier; nil when that is not a
    /// time (years 0001–9999). A device's records may lag the stream's clock, and a timer one of
    /// its control records armed is then due before the clock, as far before as the lag (a
    /// restored timer due in 1970 in a run at 2010 is such a state): run on to the clock, a
    /// repeating trigger would fire once per interval since. In a day each fires 1,440 times at most.
    static func runOnTime(_ engine: Engine) -> Double? {
        let dues = [engine.monitor.nextTimerDue, engine.beacons.nextTimerDue, engine.scheduler.nextTimerDue]
        let from = min(engine.clock, dues.compactMap { $0 }.min() ?? .infinity)
        return InputLimits.timeIsWritable(from) ? from + 86_400 : nil
    }

    static func watch(_ engine: Engine, _ log: @escaping (String) -> Void) {
        engine.onEvent = { e in log("\(e.kind) t=\(e.t) d=\(e.device) r=\(e.region)") }
        engine.onDeliver = { d in log("deliver \(d.id) t=\(d.t) d=\(d.device)") }
        engine.onResponse = { r in log("response \(r.id) t=\(r.t) d=\(r.device)") }
    }

    @discardableResult
    static func expectSame(_ a: [UInt8], _ aName: String, _ b: [UInt8], _ bName: String, _ findings: inout Findings) -> Bool {
        guard a != b else { return true }
        let at = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        findings.add("\(aName) (\(a.count) bytes) and \(bName) (\(b.count) bytes) differ at byte \(at): "
                     + "`\(quoted(a[at...].prefix(24)))` / `\(quoted(b[at...].prefix(24)))`")
        return false
    }

    // MARK: The Kafka state topic

    static func kafkaSnapshot(_ bytes: UnsafeRawBufferPointer) -> [String] {
        guard let mode = bytes.first else { return [] }
        let snapshot = Array(bytes.dropFirst())
        let world = mode & 1 == 0 ? World.cerknica : World.lobby
        var findings = Findings()
        // Restored as `Consume.take` restores a partition, on an index of its own (a restore
        // applies the snapshot's region changes to it).
        let p = world.partition()
        do { try p.restore(snapshot, identity: world.identity, topic: World.topic) } catch { return [] }
        let flag = PartitionEngine.hasRegionChanges(snapshot: snapshot)
        findings.expect(flag == p.hasRegionChanges,
                        "the header says region changes \(flag.map(String.init) ?? "unreadable"), the engine restored "
                            + "\(p.engine.regionChangeCount); Consume would restore it on the shared index")
        let s1 = p.snapshot(identity: world.identity, topic: World.topic)
        let q = world.partition()
        do { try q.restore(s1, identity: world.identity, topic: World.topic) } catch {
            findings.add("the partition's own snapshot (\(s1.count) bytes) is refused: \(error)")
            return findings.problems
        }
        findings.expect(q.nextOffset == p.nextOffset, "next offset \(p.nextOffset) restored as \(q.nextOffset)")
        let s2 = q.snapshot(identity: world.identity, topic: World.topic)
        guard expectSame(s1, "the restored partition's snapshot", s2, "that snapshot restored and written again",
                         &findings)
        else { return findings.problems }
        // Run on a day (`--until`): the same events, the same state.
        guard let until = runOnTime(p.engine) else { return findings.problems }
        p.advance(to: until)
        q.advance(to: until)
        let e1 = events(of: p), e2 = events(of: q)
        expectSame(e1, "the restored partition's events a day on", e2, "its re-encoding's", &findings)
        expectSame(p.snapshot(identity: world.identity, topic: World.topic), "the restored partition a day on",
                   q.snapshot(identity: world.identity, topic: World.topic), "its re-encoding a day on", &findings)
        return findings.problems
    }

    /// The events a partition made since the last call, as produced: key, tab, value, newline.
    static func events(of p: PartitionEngine) -> [UInt8] {
        let sink = KeyedLines()
        _ = try? p.takeEvents(into: sink)
        return sink.bytes
    }

    /// Keyed records as lines: key, tab, value, newline.
    final class KeyedLines: RecordSink {
        var bytes: [UInt8] = []
        var blockSize: Int { 0 }
        var length: Int { bytes.count }
        func write(_ records: ByteView) throws { bytes.append(contentsOf: records) }
        func write(record: ByteView, key: ByteView?) throws {
            bytes.append(contentsOf: key ?? .empty)
            bytes.append(9)
            bytes.append(contentsOf: record)
            bytes.append(10)
        }
    }

    // MARK: Commit metadata

    static func commitMetadata(_ bytes: UnsafeRawBufferPointer) -> [String] {
        // As librdkafka hands it over: a C string.
        let text = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        guard let ref = SnapshotReference(metadata: text) else { return [] }
        var findings = Findings()
        // What `StateTopic.write` writes, and `read` can act on: chunks as many as the bytes take,
        // each at an offset of its own from first to last; nothing negative.
        let chunkBytes = StateTopic.chunkBytes
        let chunks = max(1, ref.bytes / chunkBytes + (ref.bytes % chunkBytes == 0 ? 0 : 1))
        findings.expect(ref.bytes >= 0 && ref.chunks == chunks && ref.first >= 0 && ref.first <= ref.last
                            && Int64(ref.chunks) - 1 <= ref.last - ref.first && ref.partition >= 0,
                        "a reference the state topic cannot have written: \(ref)")
        let line = ref.metadata
        guard let again = SnapshotReference(metadata: line) else {
            findings.add("`\(quoted(line.utf8))`, written from `\(quoted(text.utf8))`, does not parse")
            return findings.problems
        }
        findings.expect(again == ref, "`\(quoted(line.utf8))` parses to \(again), not \(ref)")
        findings.expect(again.metadata == line, "`\(quoted(line.utf8))` is written again as `\(quoted(again.metadata.utf8))`")
        return findings.problems
    }
}

/// A fixed run that snapshots are restored into: its regions and requests, options, and the
/// identity `geotrigger consume` gives its snapshots (topic `readings`).
///
/// `cerknica` is the run `scripts/fuzz` checkpoints for seeds (datasets/regions/slovenia-croatia.geojson,
/// examples/demo/requests.json, `--dwell 600`); `lobby` the beacon regions of datasets/beacons with
/// their requests, `--dwell 600 --expire 600`.
final class World: @unchecked Sendable {
    let name: String
    let regions: [Region]
    let requests: [NotificationRequest]
    let configuration: EngineConfiguration
    let identity: RunIdentity
    let ids: IDSlots
    static let topic = "readings"

    static let cerknica = World(name: "cerknica", regions: "datasets/regions/slovenia-croatia.geojson",
                                requests: "examples/demo/requests.json", dwell: 600, expire: nil)
    static let lobby = World(name: "lobby", regions: "datasets/beacons/lobby.geojson",
                             requests: "datasets/beacons/requests.json", dwell: 600, expire: 600)

    /// The package's root: three folders above this file's, or else the current folder.
    static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)
        let root = parts.joined(separator: "/")
        return access(root + "/datasets", R_OK) == 0 ? root : "."
    }()

    init(name: String, regions: String, requests: String, dwell: Double?, expire: Double?) {
        self.name = name
        var c = EngineConfiguration(regionsPath: Self.root + "/" + regions)
        c.requestsPath = Self.root + "/" + requests
        c.monitor.dwell = dwell
        c.monitor.expire = expire
        configuration = c
        do {
            self.regions = try Replay.loadRegions(path: c.regionsPath)
            let index = try RegionIndex(regions: self.regions, hysteresis: c.hysteresis, tree: c.tree, order: .spatial)
            self.requests = try Replay.loadRequests(path: c.requestsPath!, index: index)
            identity = try RunIdentity(engine: c, inputs: ["kafka:" + Self.topic])
            ids = IDSlots(regions: index.regions)
        } catch {
            fatalError("the fuzz world \(name) cannot be built from \(Self.root): \(error)")
        }
    }

    /// A region index of its own (region records change it).
    func index() -> RegionIndex {
        do {
            return try RegionIndex(regions: regions, hysteresis: configuration.hysteresis, tree: configuration.tree,
                                   order: .spatial)
        } catch {
            fatalError("the fuzz world \(name): \(error)")
        }
    }

    /// A new engine, as `replay` builds it.
    func engine() -> Engine {
        do {
            return try Engine(index: index(), options: configuration.monitor, beaconOptions: configuration.beacons,
                              requests: requests)
        } catch {
            fatalError("the fuzz world \(name): \(error)")
        }
    }

    /// A new partition engine, as `consume` builds it (partition 0).
    func partition() -> PartitionEngine {
        do {
            return try PartitionEngine(partition: 0, index: index(), ids: ids, requests: requests, configuration: configuration)
        } catch {
            fatalError("the fuzz world \(name): \(error)")
        }
    }
}

/// A folder of one process for files a target writes, made for each input and removed after it,
/// in `/dev/shm` where it exists.
final class ScratchFolder: @unchecked Sendable {
    private let path: String
    private var lock = pthread_mutex_t()

    init(name: String) {
        let dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        path = "\(dir)/geotrigger-fuzz-\(name)-\(getpid())"
        pthread_mutex_init(&lock, nil)
    }

    func withFolder<R>(_ body: (String) -> R) -> R {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        empty(removing: true)
        mkdir(path, 0o700)
        defer { empty(removing: true) }
        return body(path)
    }

    private func empty(removing: Bool) {
        if let dir = opendir(path) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                if name != "." && name != ".." { unlink("\(path)/\(name)") }
            }
            closedir(dir)
        }
        if removing { rmdir(path) }
    }
}

/// Writes `bytes` to `path`, replacing it.
func writeFile(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    precondition(fd >= 0, "cannot write \(path)")
    defer { close(fd) }
    bytes.withUnsafeBytes { raw in
        var done = 0
        while done < raw.count {
            let n = write(fd, raw.baseAddress! + done, raw.count - done)
            precondition(n > 0, "cannot write \(path)")
            done += n
        }
    }
}
