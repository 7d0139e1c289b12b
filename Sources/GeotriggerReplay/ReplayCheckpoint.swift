import GeotriggerCore
import GeotriggerFormats
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerRuntime
import GeotriggerEngine
import GeotriggerOutput

/// What a checkpoint says about the run it belongs to, checked before a resume: the regions and
/// requests files by content, the options that decide the output, and each input by name and by
/// the content of the part already read.
package struct RunIdentity: Equatable {
    var regionsHash: UInt64
    var requestsHash: UInt64
    /// (option, value), in a fixed order.
    var options: [(String, String)]
    package var inputs: [String]

    package static func == (a: RunIdentity, b: RunIdentity) -> Bool {
        a.regionsHash == b.regionsHash && a.requestsHash == b.requestsHash && a.inputs == b.inputs
            && a.options.map(\.0) == b.options.map(\.0) && a.options.map(\.1) == b.options.map(\.1)
    }

    package init(configuration c: ReplayConfiguration, inputs: [String]) throws {
        try self.init(engine: c.engine, inputs: inputs, format: c.format, device: c.device, output: c.outputPath,
                      rejects: c.rejectsPath, state: c.statePath, jobs: c.jobs)
    }

    /// `consume`'s: the replay's own options as a replay without them has them.
    package init(engine c: EngineConfiguration, inputs: [String], format: ReadingFormat? = nil, device: String? = nil,
                 output: String? = nil, rejects: String? = nil, state: String? = nil, jobs: Int = 1) throws {
        regionsHash = try Self.hash(file: c.regionsPath)
        requestsHash = try c.requestsPath.map { try Self.hash(file: $0) } ?? 0
        self.inputs = inputs
        // What decides events, deliveries, rejects, the state file and the snapshot's shape. Not
        // here: --safe-distance and --index (work, not results), progress and reporting.
        let m = c.monitor, b = c.beacons
        options = [
            ("--format", format.map(\.rawValue) ?? "by extension"),
            ("--device", device ?? "none"),
            ("--hysteresis", "\(c.hysteresis)"),
            ("--max-accuracy", "\(m.maxAccuracy)"),
            ("--dwell", m.dwell.map { "\($0)" } ?? "off"),
            ("--initial", m.initial.rawValue),
            ("--expire", m.expire.map { "\($0)" } ?? "off"),
            ("--beacon-exit", "\(b.exitAfter)"),
            ("--beacon-min-visit", "\(b.minimumVisit)"),
            ("beacon model", "\(b.sigmaBound) \(b.fusedExitMargin) \(b.fusionWindow) \(b.fusionMaxRange) \(b.positionTimeConstant) \(b.fusedConfirmations)"),
            ("--until", c.until.map { "\($0)" } ?? "none"),
            ("--strict", "\(c.strict)"),
            ("--output", output ?? "standard output"),
            ("--rejects", rejects ?? "none"),
            ("--state-out", state ?? "none"),
            ("--echo-properties", "\(c.echoProperties)"),
            ("--jobs", "\(jobs)"),
        ]
    }

    package init(from r: inout SnapshotReader) throws(SnapshotError) {
        try r.expect("identity")
        regionsHash = try r.u64()
        requestsHash = try r.u64()
        options = try r.list { r throws(SnapshotError) in (try r.string(), try r.string()) }
        inputs = try r.list { r throws(SnapshotError) in try r.string() }
    }

    package func write(to w: inout SnapshotWriter) {
        w.tag("identity")
        w.u64(regionsHash)
        w.u64(requestsHash)
        w.list(options) { w, o in
            w.string(o.0)
            w.string(o.1)
        }
        w.list(inputs) { w, s in w.string(s) }
    }

    /// What differs from `other` (the checkpoint's), in words; nil if nothing does.
    package func difference(from other: RunIdentity) -> String? {
        if regionsHash != other.regionsHash { return "the regions file has changed" }
        if requestsHash != other.requestsHash { return "the requests file has changed (or was added or removed)" }
        if inputs != other.inputs {
            return "the inputs differ: checkpoint \(other.inputs.joined(separator: " ")), now \(inputs.joined(separator: " "))"
        }
        for (mine, theirs) in zip(options, other.options) where mine != theirs {
            return "\(mine.0) was \(theirs.1), now \(mine.1)"
        }
        if options.count != other.options.count { return "the options differ" }
        return nil
    }

    static func hash(file path: String) throws -> UInt64 {
        do {
            return ContentHash.of(try RegionFile.readFile(path: path))
        } catch {
            throw ReplayError.io("\(path): \(error)")
        }
    }
}

/// One input's place at a checkpoint, and the hash of its bytes up to there (regular files only:
/// a stream cannot be read again to check it).
struct CheckpointedInput {
    var position: InputPosition
    var hash: ContentHash
    var hashed: Bool
}

/// Takes the checkpoints of one run: when they are due, what they hold, and the prefix hashes of
/// the inputs, continued from one checkpoint to the next (each input's new bytes read once more
/// with `pread`, from the page cache as a rule).
package final class Checkpointer {
    let store: CheckpointStore
    let every: Int
    let identity: RunIdentity
    let paths: [String]
    private(set) var sequence = 0
    /// Records read when the next checkpoint is due.
    private(set) var nextAt: Int
    var inputs: [CheckpointedInput]

    package init(directory: String, every: Int, identity: RunIdentity, paths: [String]) throws {
        do {
            store = try CheckpointStore(directory: directory)
        } catch {
            throw ReplayError.io(error.description)
        }
        self.every = max(1, every)
        self.identity = identity
        self.paths = paths
        nextAt = self.every
        inputs = paths.map { CheckpointedInput(position: .start, hash: ContentHash(), hashed: $0 != "-") }
    }

    /// What a resumed run starts from.
    package struct Resumed {
        var records: Int
        var inputs: [CheckpointedInput]
        var outputLength: Int
        var rejectsLength: Int
        var reported: Int
        var tally: ReplayStatistics
        var eventCounts: [Int]
        var deliveryCounts: [Int]
        /// Where the engine's own state begins in `body`.
        package var body: [UInt8]
        package var engineOffset: Int
    }

    /// The newest whole checkpoint of this run, nil if there is none; throws `ReplayError.checkpoint`
    /// when it belongs to another run. `note` hears about snapshots passed over.
    package func resumable(note: (String) -> Void) throws -> Resumed? {
        guard let newest = store.newest() else { return nil }
        for s in newest.skipped { note("geotrigger: checkpoint \(s); taking the one before it\n") }
        guard newest.sequence >= 0 else {
            throw ReplayError.checkpoint("\(store.directory): no checkpoint in it can be read")
        }
        var r = SnapshotReader(newest.body)
        do {
            let theirs = try RunIdentity(from: &r)
            if let difference = identity.difference(from: theirs) {
                throw ReplayError.checkpoint("cannot resume from \(store.directory): \(difference); "
                                             + "use another --checkpoint folder, or remove this one to start again")
            }
            try r.expect("progress")
            let records = try r.natural()
            let inputs = try r.list { r throws(SnapshotError) in
                CheckpointedInput(position: InputPosition(offset: try r.natural(), line: try r.natural()),
                                  hash: ContentHash(state: try r.u64(), tail: try r.u64(), length: try r.u64()),
                                  hashed: try r.bool())
            }
            let outputLength = try r.natural(), rejectsLength = try r.natural(), reported = try r.natural()
            var tally = ReplayStatistics()
            tally.fixes = try Self.count(&r)
            tally.ignoredForAccuracy = try Self.count(&r)
            tally.sightings = try Self.count(&r)
            tally.sightingsUnmatched = try Self.count(&r)
            tally.controls = try Self.count(&r)
            let rejected = try r.list { r throws(SnapshotError) in try Self.count(&r) }
            // A snapshot from before reasons were added counts fewer (the new ones at the end).
            guard rejected.count <= tally.rejected.count else { throw SnapshotError("rejection reasons differ") }
            tally.rejected = rejected + [Int](repeating: 0, count: tally.rejected.count - rejected.count)
            // The record count a checkpoint writes is the sum of its counts; a run resumed from it
            // counts on from there (the sum below 2^62 too, so it can).
            var sum = 0
            for n in [tally.fixes, tally.sightings, tally.controls] + rejected {
                sum += n
                guard sum < 1 << 62 else { throw SnapshotError("counts that add up to more than 2^62 records") }
            }
            guard records == sum else { throw SnapshotError("the record count \(records) is not the sum of the counts") }
            let events = try r.list { r throws(SnapshotError) in try Self.count(&r) }
            let deliveries = try r.list { r throws(SnapshotError) in try Self.count(&r) }
            guard inputs.count == paths.count else { throw SnapshotError("inputs differ") }
            sequence = newest.sequence
            nextAt = records.addingReportingOverflow(every).overflow ? .max : records + every
            self.inputs = inputs
            return Resumed(records: records, inputs: inputs, outputLength: outputLength,
                           rejectsLength: rejectsLength, reported: reported, tally: tally, eventCounts: events,
                           deliveryCounts: deliveries, body: newest.body, engineOffset: r.offset)
        } catch let error as SnapshotError {
            throw ReplayError.checkpoint("\(store.path(of: newest.sequence)): \(error.message)")
        }
    }

    /// A count of a checkpoint's summary: below 2^62, which no run reaches, so a resumed run can
    /// add to it (and sum the counts) without overflowing.
    private static func count(_ r: inout SnapshotReader) throws(SnapshotError) -> Int {
        let n = try r.natural()
        guard n < 1 << 62 else { throw SnapshotError("a count of \(n) records or events") }
        return n
    }

    /// Checks that each input's bytes up to its checkpointed place are the ones read before.
    func verifyInputs() throws {
        for (k, input) in inputs.enumerated() where input.hashed {
            var h = ContentHash()
            try Self.extend(&h, path: paths[k], to: input.position.offset)
            if h != input.hash {
                throw ReplayError.checkpoint("cannot resume: \(paths[k]) no longer begins with the \(input.position.offset) bytes read before the checkpoint")
            }
        }
    }

    /// Flushes the events and rejects files to disk before a snapshot records their lengths
    /// (a file shorter than that after a power loss could not be resumed); timed with the snapshot.
    func synchronize(_ output: RecordBuffer, _ rejects: RecordBuffer?) throws {
        let began = monotonicSeconds()
        defer { seconds += monotonicSeconds() - began }
        do {
            try output.synchronize()
            try rejects?.synchronize()
        } catch let error as IOFailure {
            throw ReplayError.io(error.description)
        }
    }

    /// Writes checkpoint `sequence + 1`. `positions`: each input's place now.
    func write(records: Int, positions: [InputPosition], outputLength: Int, rejectsLength: Int, reported: Int,
               statistics s: ReplayStatistics, eventCounts: [Int], deliveryCounts: [Int],
               engines: (inout SnapshotWriter) -> Void) throws {
        let began = monotonicSeconds()
        defer { seconds += monotonicSeconds() - began }
        for k in inputs.indices {
            if inputs[k].hashed { try Self.extend(&inputs[k].hash, path: paths[k], to: positions[k].offset) }
            inputs[k].position = positions[k]
        }
        var w = SnapshotWriter(reservingCapacity: 1 << 16)
        identity.write(to: &w)
        w.tag("progress")
        w.varint(UInt64(records))
        w.list(inputs) { w, input in
            w.varint(UInt64(input.position.offset))
            w.varint(UInt64(input.position.line))
            w.u64(input.hash.state)
            w.u64(input.hash.tail)
            w.u64(input.hash.length)
            w.bool(input.hashed)
        }
        w.varint(UInt64(outputLength))
        w.varint(UInt64(rejectsLength))
        w.varint(UInt64(reported))
        for n in [s.fixes, s.ignoredForAccuracy, s.sightings, s.sightingsUnmatched, s.controls] { w.varint(UInt64(n)) }
        w.list(s.rejected) { w, n in w.varint(UInt64(n)) }
        w.list(eventCounts) { w, n in w.varint(UInt64(n)) }
        w.list(deliveryCounts) { w, n in w.varint(UInt64(n)) }
        engines(&w)
        do {
            try store.write(sequence: sequence + 1, body: w.bytes)
        } catch {
            throw ReplayError.io(error.description)
        }
        sequence += 1
        nextAt = records + every
        written += 1
        lastBytes = w.bytes.count
    }

    /// Snapshots written by this process, the last one's body size, and the time they took
    /// (from the output files' flush to disk to the rename).
    private(set) var written = 0
    private(set) var lastBytes = 0
    private(set) var seconds = 0.0

    /// Feeds `hash` the bytes of `path` from where it stopped up to `offset`.
    static func extend(_ hash: inout ContentHash, path: String, to offset: Int) throws {
        let from = Int(hash.length)
        guard offset > from else { return }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReplayError.io("\(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard SystemIO.readRange(fd, from: from, to: offset, { hash.update($0) }) else {
            throw ReplayError.checkpoint("cannot resume: \(path) is shorter than the \(offset) bytes read before the checkpoint")
        }
    }
}
