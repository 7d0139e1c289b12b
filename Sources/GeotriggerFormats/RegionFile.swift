import GeotriggerRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore

/// Reads a regions file (§3 of the spec): a GeoJSON FeatureCollection or a CSV of circles.
///
/// The whole file is validated before anything is returned; the first problem found is thrown as
/// a ``RegionFileError`` naming the file, the feature (index and id, when known) and the reason.
/// Polygon rings are checked only for size and closure; deeper validity is the geometry layer's.
public enum RegionFile {
    public enum Format: String, Sendable, CaseIterable {
        case geojson
        case csv
        /// By extension (`.geojson`/`.json`, `.csv`); otherwise a document starting with `{` is
        /// GeoJSON and anything else CSV.
        case auto
    }

    /// Reads and parses the file at `path`.
    public static func load(path: String, format: Format = .auto) throws(RegionFileError) -> [Region] {
        let bytes = try readFile(path: path)
        return try parse(bytes: bytes, fileName: path, format: format)
    }

    /// Parses regions from `bytes`; `fileName` names the file in errors and picks the format for `.auto`.
    public static func parse(bytes: [UInt8], fileName: String, format: Format = .auto) throws(RegionFileError) -> [Region] {
        switch format == .auto ? detectFormat(fileName: fileName, bytes: bytes) : format {
        case .csv: try CSVRegionReader(file: fileName).read(bytes)
        default: try GeoJSONRegionReader(file: fileName).read(bytes)
        }
    }

    /// One GeoJSON Feature, read and checked as a feature of a regions file is (the same reasons;
    /// a polygon's validity is the index's to check): an `addRegion` record's `region` (SPEC §7).
    /// The error names no file or feature index.
    public static func parseFeature(_ value: JSONValue) throws(RegionFileError) -> Region {
        try GeoJSONRegionReader(file: "").readFeature(value, index: 0)
    }

    /// `.geojson` or `.csv`, never `.auto`.
    public static func detectFormat(fileName: String, bytes: [UInt8]) -> Format {
        let lowercased = fileName.lowercased()
        if lowercased.hasSuffix(".geojson") || lowercased.hasSuffix(".json") { return .geojson }
        if lowercased.hasSuffix(".csv") { return .csv }
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        let firstSignificant = bytes[start...].first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return firstSignificant == UInt8(ascii: "{") ? .geojson : .csv
    }

    /// The whole file, read with POSIX calls so errors can say why (and tell a missing file apart).
    /// Also used for other files read once (requests), whose callers map the error's `kind`.
    public static func readFile(path: String) throws(RegionFileError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            let code = errno
            throw RegionFileError(
                file: path, reason: "cannot open: \(String(cString: strerror(code)))",
                kind: code == ENOENT ? .fileNotFound : .unreadable)
        }
        defer { close(descriptor) }
        // A regular file is read into one buffer of its size (no regrowing: a million-region file
        // is tens of megabytes); anything else, or a file that grew meanwhile, in 64 KiB steps.
        var info = stat()
        let size = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : 0
        // Not zero-filled first: the reads below write every byte kept (the rest is cut off).
        var bytes = [UInt8](unsafeUninitializedCapacity: max(size, 1 << 16)) { _, count in count = max(size, 1 << 16) }
        var filled = 0
        var probe: [UInt8] = []
        while true {
            if filled == bytes.count {
                // Full: a regular file is at its end unless it grew meanwhile. Ask with a small
                // read of its own rather than growing the buffer first, which would copy the
                // whole file into a larger one only to learn that nothing follows.
                if probe.isEmpty { probe = [UInt8](repeating: 0, count: 1 << 16) }
                let count = SystemIO.read(descriptor, into: &probe, 0..<probe.count)
                if count == 0 { return bytes }
                if count < 0 {
                    throw RegionFileError(
                        file: path, reason: "cannot read: \(String(cString: strerror(Int32(-count))))", kind: .unreadable)
                }
                bytes.append(contentsOf: probe[0..<count])
                filled += count
                continue
            }
            let count = SystemIO.read(descriptor, into: &bytes, filled..<bytes.count)
            if count == 0 {
                bytes.removeLast(bytes.count - filled)
                return bytes
            }
            if count < 0 {
                throw RegionFileError(
                    file: path, reason: "cannot read: \(String(cString: strerror(Int32(-count))))", kind: .unreadable)
            }
            filled += count
        }
    }
}

/// Formats a number for messages the way it is written in JSON (`95`, not `95.0`).
func formatNumber(_ value: Double) -> String {
    var bytes: [UInt8] = []
    JSONValue.writeNumber(value, into: &bytes)
    return String(decoding: bytes, as: UTF8.self)
}

/// Checks a latitude/longitude pair; returns the reason it is unusable, or `nil`.
func coordinateProblem(latitude: Double, longitude: Double) -> String? {
    if !latitude.isFinite || !(-90...90).contains(latitude) {
        return "latitude \(formatNumber(latitude)) is outside [-90, 90]"
    }
    if !longitude.isFinite || !(-180...180).contains(longitude) {
        return "longitude \(formatNumber(longitude)) is outside [-180, 180]"
    }
    return nil
}

/// Checks a circle radius in metres; returns the reason it is unusable, or `nil`.
func radiusProblem(_ radius: Double) -> String? {
    if !radius.isFinite { return "radius must be finite" }
    if radius <= 0 { return "radius must be greater than 0 (got \(formatNumber(radius)))" }
    return nil
}
