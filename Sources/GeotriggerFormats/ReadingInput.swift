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

    /// The format a file name's extension names (`.ndjson`, `.jsonl`, `.json`, `.csv`, `.gpx`;
    /// any case), or nil.
    public init?(pathExtensionOf path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "ndjson", "jsonl", "json": self = .ndjson
        case "csv": self = .csv
        case "gpx": self = .gpx
        default: return nil
        }
    }
}

/// Why a readings input could not be opened. `exitCode` is the status SPEC §2 gives it.
public enum ReadingInputError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file does not exist (exit 66).
    case missing(path: String)
    /// The file exists but cannot be read: permissions, a directory, … (exit 74).
    case unreadable(path: String, reason: String)
    /// No `format` was given and the extension names none (a usage error, exit 64).
    case unknownFormat(path: String)

    public var exitCode: Int32 {
        switch self {
        case .missing: return 66
        case .unreadable: return 74
        case .unknownFormat: return 64
        }
    }

    public var description: String {
        switch self {
        case .missing(let path): return "\(path): no such file"
        case .unreadable(let path, let reason): return "\(path): cannot read: \(reason)"
        case .unknownFormat(let path):
            return "\(path): cannot tell the format from the extension (use --format ndjson|csv|gpx)"
        }
    }
}

/// Opens readings inputs: files by path, or standard input as `-`.
public enum ReadingInput {
    /// Opens `path` (or standard input for `-`) with the decoder for `format`, or for the file's
    /// extension when `format` is nil (standard input defaults to NDJSON).
    ///
    /// `device` names the device of every GPX fix (default: the file name without extension); for
    /// NDJSON and CSV it is the device of records that have none.
    public static func open(path: String, format: ReadingFormat? = nil, device: String? = nil) throws -> any ReadingDecoder {
        if path == "-" {
            return decoder(fd: 0, ownsDescriptor: false, sourceName: "-", format: format ?? .ndjson, device: device)
        }
        guard let fmt = format ?? ReadingFormat(pathExtensionOf: path) else {
            // A missing file is reported as missing even when its name is odd.
            if access(path, F_OK) != 0 { throw ReadingInputError.missing(path: path) }
            throw ReadingInputError.unknownFormat(path: path)
        }
        let fd = openReadOnly(path)
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
        return decoder(fd: fd, ownsDescriptor: true, sourceName: path, format: fmt, device: device)
    }

    /// A decoder for an already open descriptor.
    public static func decoder(
        fd: Int32, ownsDescriptor: Bool, sourceName: String, format: ReadingFormat, device: String? = nil
    ) -> any ReadingDecoder {
        switch format {
        case .ndjson:
            return NDJSONDecoder(fd: fd, ownsDescriptor: ownsDescriptor, sourceName: sourceName, defaultDevice: device)
        case .csv:
            return CSVDecoder(fd: fd, ownsDescriptor: ownsDescriptor, sourceName: sourceName, defaultDevice: device)
        case .gpx:
            let name = sourceName == "-" ? (device ?? "stdin") : device
            return GPXDecoder(fd: fd, ownsDescriptor: ownsDescriptor, sourceName: sourceName, device: name)
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
