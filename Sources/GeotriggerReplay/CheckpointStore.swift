import GeotriggerCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerRuntime
import GeotriggerFormats
import GeotriggerOutput

/// The snapshot files of `replay --checkpoint DIR`.
///
/// A snapshot is written atomically: to `DIR/checkpoint.tmp`, flushed to disk (`fsync`), renamed
/// to `DIR/checkpoint-NNNNNNNNNNNN.gtc` (its sequence number), and the folder flushed so the
/// rename lasts. The one before it is kept until then, and removed after; so a crash at any
/// point leaves at least one complete snapshot (after the first). Each file is
///
///     "GTCHKPT\n"  magic, 8 bytes
///     u32          format version (`SnapshotFormat.version`)
///     u64          body length
///     body         `Replay`'s checkpoint (SnapshotWriter coding)
///     u64          ContentHash of the version, length and body
///
/// A file that is torn, truncated or altered fails its length or hash, and the newest snapshot
/// that passes is taken instead.
package struct CheckpointStore {
    let directory: String
    static let magic = Array("GTCHKPT\n".utf8)
    static let prefix = "checkpoint-"
    static let suffix = ".gtc"

    /// Creates the folder if needed.
    package init(directory: String) throws(IOFailure) {
        self.directory = directory
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            throw IOFailure("cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        var st = stat()
        guard stat(directory, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
            throw IOFailure("\(directory) is not a folder")
        }
    }

    package func path(of sequence: Int) -> String {
        let digits = String(sequence)
        return "\(directory)/\(Self.prefix)\(String(repeating: "0", count: max(0, 12 - digits.count)))\(digits)\(Self.suffix)"
    }

    /// The snapshots in the folder, newest first.
    func sequences() -> [Int] {
        var found: [Int] = []
        for name in SystemIO.directoryNames(directory) ?? [] {
            guard name.hasPrefix(Self.prefix), name.hasSuffix(Self.suffix) else { continue }
            let digits = name.dropFirst(Self.prefix.count).dropLast(Self.suffix.count)
            if let n = Int(digits), n >= 0 { found.append(n) }
        }
        return found.sorted(by: >)
    }

    /// Writes snapshot `sequence` atomically, then removes those older than the one before it.
    package func write(sequence: Int, body: [UInt8]) throws(IOFailure) {
        var header = SnapshotWriter()
        header.u32(SnapshotFormat.version)
        header.u64(UInt64(body.count))
        var h = ContentHash()
        h.update(header.bytes)
        h.update(body)
        var tail = SnapshotWriter()
        tail.u64(h.value)

        // Written in pieces, not copied into one buffer: a snapshot of a million devices is a
        // hundred megabytes.
        let temporary = "\(directory)/checkpoint.tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw IOFailure("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        var failure: String?
        for piece in [Self.magic, header.bytes, body, tail.bytes] where failure == nil {
            failure = piece.withByteView { SystemIO.writeAll(fd, $0).failure }
        }
        if failure == nil && fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        close(fd)
        if let failure { throw IOFailure("cannot write \(temporary): \(failure)") }
        let final = path(of: sequence)
        guard rename(temporary, final) == 0 else {
            throw IOFailure("cannot rename \(temporary) to \(final): \(String(cString: strerror(errno)))")
        }
        syncDirectory()
        // The previous snapshot stays until this one is complete; older ones go.
        for old in sequences().filter({ $0 < sequence }).dropFirst() { unlink(path(of: old)) }
    }

    private func syncDirectory() {
        let fd = open(directory, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// The newest snapshot whose file is whole, with the reasons the newer ones were passed over.
    func newest() -> (sequence: Int, body: [UInt8], skipped: [String])? {
        var skipped: [String] = []
        for sequence in sequences() {
            let p = path(of: sequence)
            switch Self.read(path: p) {
            case .success(let body): return (sequence, body, skipped)
            case .failure(let problem): skipped.append("\(p): \(problem.message)")
            }
        }
        return skipped.isEmpty ? nil : (-1, [], skipped)
    }

    /// A snapshot file's body, checked.
    package static func read(path: String) -> Result<[UInt8], SnapshotError> {
        guard let bytes = try? RegionFile.readFile(path: path) else { return .failure(SnapshotError("cannot be read")) }
        let header = magic.count + 12
        guard bytes.count >= header + 8, Array(bytes[0..<magic.count]) == magic else {
            return .failure(SnapshotError("not a Geotrigger checkpoint, or cut short"))
        }
        var r = SnapshotReader(bytes, offset: magic.count)
        do {
            let v = try r.u32()
            guard v == SnapshotFormat.version else {
                return .failure(SnapshotError("format version \(v); this geotrigger reads version \(SnapshotFormat.version)"))
            }
            let length = try r.u64()
            guard length == UInt64(bytes.count - header - 8) else { return .failure(SnapshotError("cut short or torn")) }
            var h = ContentHash()
            bytes.withByteView { h.update($0[magic.count..<(bytes.count - 8)]) }
            var tail = SnapshotReader(bytes, offset: bytes.count - 8)
            guard try tail.u64() == h.value else { return .failure(SnapshotError("checksum does not match (torn or altered)")) }
        } catch {
            return .failure(error)
        }
        return .success(Array(bytes[header..<(bytes.count - 8)]))
    }
}
