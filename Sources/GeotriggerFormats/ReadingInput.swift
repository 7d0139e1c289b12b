import GeotriggerCore
import GeotriggerRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The readings file formats.
public enum ReadingFormat: String, CaseIterable, Sendable {
    case ndjson
    case csv
    case gpx
    /// NMEA 0183 sentences (`.nmea`).
    case nmea
    /// gpsd's JSON reports, as `gpspipe -w` prints them.
    case gpsd

    /// The format a file name's extension names (`.ndjson`, `.jsonl`, `.csv`, `.gpx`, `.nmea`;
    /// any case), or nil. Not `.json`: NDJSON readings and a saved `gpspipe -w` stream are both
    /// JSON lines, and the content tells them apart.
    public init?(pathExtensionOf path: String) {
        guard let ext = Self.pathExtension(path) else { return nil }
        switch ext {
        case "ndjson", "jsonl": self = .ndjson
        case "csv": self = .csv
        case "gpx": self = .gpx
        case "nmea": self = .nmea
        default: return nil
        }
    }

    /// The extension of `path`'s last component, lowercased (nil without one).
    private static func pathExtension(_ path: String) -> String? {
        let (name, dot) = PathName.lastComponent(of: path)
        guard let dot else { return nil }
        return name[name.index(after: dot)...].lowercased()
    }
}

/// Names in a path, for a fleet's thousands of logs (a device is named after its file, a format
/// after its extension).
enum PathName {
    /// `path`'s last component, as `path.split(separator: "/").last` gives it (the path itself
    /// when it has none), and where its last `.` is (nil without one).
    ///
    /// An ASCII path (the usual) is read on its bytes: by Character, a long path cost thousands
    /// of instructions a file. In other text a combining mark may make one character of a "/" or
    /// "." and what follows, so it goes by Character.
    static func lastComponent(of path: String) -> (name: String, dot: String.Index?) {
        let bytes = Array(path.utf8)
        if bytes.allSatisfy({ $0 < 0x80 }) {
            let slash = UInt8(ascii: "/")
            guard let last = bytes.lastIndex(where: { $0 != slash }) else { return (path, nil) }
            let start = bytes[...last].lastIndex(of: slash).map { $0 + 1 } ?? 0
            let name = String(decoding: bytes[start...last], as: UTF8.self)
            return (name, name.utf8.lastIndex(of: UInt8(ascii: ".")))
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return (name, name.lastIndex(of: "."))
    }
}

/// Why a readings input could not be opened. `exitCode` is the status SPEC §2 gives it.
public enum ReadingInputError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file does not exist (exit 66).
    case missing(path: String)
    /// The file exists but cannot be read: permissions, a directory, … (exit 74).
    case unreadable(path: String, reason: String)

    public var exitCode: Int32 {
        switch self {
        case .missing: return 66
        case .unreadable: return 74
        }
    }

    public var description: String {
        switch self {
        case .missing(let path): return "\(path): no such file"
        case .unreadable(let path, let reason): return "\(path): cannot read: \(reason)"
        }
    }
}

/// Opens readings inputs: files by path, or standard input as `-`.
public enum ReadingInput {
    /// Opens `path` (or standard input for `-`) with the decoder for `format`, or for the file's
    /// extension when `format` is nil; where the extension says nothing (`.log`, `.txt`, none,
    /// standard input) the content decides (`formatByContent(of:)`).
    ///
    /// `device` names the device of every GPX or NMEA fix (default: the file name without
    /// extension, `stdin` for standard input); for NDJSON and CSV it is the device of records
    /// that have none. `mapsFile`: a regular file of lines (NDJSON, CSV, NMEA, gpsd; not GPX, read
    /// whole) is mapped into memory rather than read (`LineReader`), for a run of many
    /// inputs.
    public static func open(path: String, format: ReadingFormat? = nil, device: String? = nil,
                            mapsFile: Bool = false) throws -> any ReadingDecoder {
        let fd: Int32
        if path == "-" {
            fd = 0
        } else {
            fd = openReadOnly(path)
            if fd < 0 {
                let e = errno
                if e == ENOENT || e == ENOTDIR { throw ReadingInputError.missing(path: path) }
                throw ReadingInputError.unreadable(path: path, reason: String(cString: strerror(e)))
            }
            var st = stat()
            if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
                close(fd)
                throw ReadingInputError.unreadable(path: path, reason: String(cString: strerror(EISDIR)))
            }
        }
        let owns = path != "-"
        if let format = format ?? ReadingFormat(pathExtensionOf: path) {
            return decoder(fd: fd, ownsDescriptor: owns, sourceName: path, format: format, device: device,
                           mapsFile: mapsFile)
        }
        let reader = LineReader(fd: fd, ownsDescriptor: owns, mapsFile: mapsFile)
        switch Self.formatByContent(of: reader) {
        case .nmea: return NMEADecoder(reader: reader, sourceName: path, device: device)
        case .gpsd: return GPSDDecoder(reader: reader, sourceName: path, device: device)
        default: return NDJSONDecoder(reader: reader, sourceName: path, defaultDevice: device)
        }
    }

    /// `paths` with each directory replaced by the regular files in it (not those whose name
    /// begins with a dot, not its subdirectories), in byte order of their names — the order a
    /// shell's `DIR/*` gives in the C locale, so that ties in time go the same way. A fleet's
    /// logs, one file per device, can be thousands: more than a command line holds, and the
    /// argument parser's time grows with the square of their number. Other paths are kept as
    /// they are (a missing one is reported when it is opened).
    public static func expandingDirectories(_ paths: [String]) throws(ReadingInputError) -> [String] {
        var out: [String] = []
        out.reserveCapacity(paths.count)
        for path in paths {
            var st = stat()
            guard path != "-", stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
                out.append(path)
                continue
            }
            guard let entries = SystemIO.directoryEntries(path) else {
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            let folder = path.hasSuffix("/") ? path : path + "/"
            // A regular file as readdir says, else as stat says (a link is followed).
            let files = entries.filter { !$0.name.hasPrefix(".") }.compactMap { entry -> String? in
                let file = folder + entry.name
                if let regular = entry.regular { return regular ? file : nil }
                var f = stat()
                return stat(file, &f) == 0 && (f.st_mode & S_IFMT) == S_IFREG ? file : nil
            }.map { (path: $0, bytes: Array($0.utf8)) }
                .sorted { a, b in
                    // memcmp, then the shorter first: byte order, without a generic iterator.
                    let n = min(a.bytes.count, b.bytes.count)
                    let c = a.bytes.withUnsafeBytes { x in b.bytes.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, n) } }
                    return c != 0 ? c < 0 : a.bytes.count < b.bytes.count
                }
                .map(\.path)
            if files.isEmpty { throw .unreadable(path: path, reason: "a directory with no files in it") }
            out += files
        }
        return out
    }

    /// The format of what `reader` holds, read ahead without taking a line, by its first line that
    /// is neither blank, a `#` comment nor binary bytes: NMEA 0183 if it is a sentence, gpsd's
    /// reports if it is a JSON object with a `"class"`, NDJSON otherwise (and for an input that
    /// has no such line in its first 64).
    static func formatByContent(of reader: LineReader) -> ReadingFormat {
        for wanted in 1...64 {
            let view = reader.peek(lines: wanted).bytes
            var start = 0, lines = 0
            while start < view.count {
                var end = start
                while end < view.count && view[end] != 0x0A { end += 1 }
                if end == view.count && lines + 1 < wanted { break }
                lines += 1
                let line = view[start..<end]
                start = end + 1
                // A JSON object: NDJSON readings (a byte order mark or spaces may come first).
                var k = 0
                while k < line.count && (line[k] == 0x20 || line[k] == 0x09 || line[k] >= 0x80 && k < 3) { k += 1 }
                if k < line.count && line[k] == UInt8(ascii: "{") {
                    return Self.contains(line, "\"class\"") ? .gpsd : .ndjson
                }
                switch NMEALine.classify(line) {
                case .blank, .comment, .noise: continue
                case .fixSentence, .otherSentence, .badChecksum: return .nmea
                }
            }
            // The input ended (or the buffer is full) before `wanted` lines: nothing told.
            if lines < wanted { return .ndjson }
        }
        return .ndjson
    }

    /// Whether `bytes` holds `text`.
    private static func contains(_ bytes: ByteView, _ text: String) -> Bool {
        let t = Array(text.utf8)
        guard bytes.count >= t.count else { return false }
        return (0...(bytes.count - t.count)).contains { at in t.indices.allSatisfy { bytes[at + $0] == t[$0] } }
    }

    /// A decoder for an already open descriptor.
    public static func decoder(
        fd: Int32, ownsDescriptor: Bool, sourceName: String, format: ReadingFormat, device: String? = nil,
        mapsFile: Bool = false
    ) -> any ReadingDecoder {
        switch format {
        case .ndjson:
            return NDJSONDecoder(fd: fd, ownsDescriptor: ownsDescriptor, sourceName: sourceName, defaultDevice: device,
                                 mapsFile: mapsFile)
        case .csv:
            return CSVDecoder(fd: fd, ownsDescriptor: ownsDescriptor, sourceName: sourceName, defaultDevice: device,
                              mapsFile: mapsFile)
        case .gpx:
            let name = sourceName == "-" ? (device ?? "stdin") : device
            return GPXDecoder(fd: fd, ownsDescriptor: ownsDescriptor, sourceName: sourceName, device: name)
        case .nmea:
            return NMEADecoder(fd: fd, ownsDescriptor: ownsDescriptor, sourceName: sourceName, device: device,
                               mapsFile: mapsFile)
        case .gpsd:
            return GPSDDecoder(fd: fd, ownsDescriptor: ownsDescriptor, sourceName: sourceName, device: device,
                               mapsFile: mapsFile)
        }
    }
}

private func openReadOnly(_ path: String) -> Int32 {
    #if canImport(Glibc)
    return Glibc.open(path, O_RDONLY | O_CLOEXEC)
    #else
    return Darwin.open(path, O_RDONLY | O_CLOEXEC)
    #endif
}
