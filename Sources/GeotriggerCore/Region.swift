/// A point on the WGS84 ellipsoid, in degrees.
public struct Coordinate: Hashable, Sendable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// A monitored region as read from a regions file, before any geometry library sees it.
///
/// Polygon rings are kept as given (RFC 7946 `[lon, lat]` order already turned into `Coordinate`s);
/// the geometry layer checks validity with GEOS and reports GEOS's reason.
public struct Region: Sendable {
    public enum Shape: Sendable {
        /// A geodesic circle: every point whose WGS84 distance to `center` is at most `radius` metres.
        case circle(center: Coordinate, radius: Double)
        /// One or more polygons, each an exterior ring followed by its holes; edges straight in lon/lat.
        case polygons([[[Coordinate]]])
        /// An iBeacon region; with a position it is also a circle of its zone's radius for fixes.
        /// Boxed, so the common circle does not pay for its size (a Region takes 80 bytes, not 144).
        indirect case beacon(BeaconRegion)
    }

    /// The region's unique identifier (feature `id` or `properties.id`).
    public var id: String
    public var shape: Shape
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool
    /// The feature's `properties` object, kept verbatim for `--echo-properties`.
    public var properties: JSONValue? {
        get { storedProperties.value(id: id) }
        set { storedProperties = newValue.map(StoredProperties.value) ?? .none }
    }
    /// How `properties` is kept: a circle read by the GeoJSON fast lane keeps only its radius
    /// (its properties were `{"radius":…}`) or the properties' text, not a dictionary per region.
    package var storedProperties: StoredProperties
    /// Zero-based position of the feature in its file, for error messages.
    public var featureIndex: Int

    public init(
        id: String, shape: Shape, notifyOnEntry: Bool = true, notifyOnExit: Bool = true,
        properties: JSONValue? = nil, featureIndex: Int = 0
    ) {
        self.id = id
        self.shape = shape
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
        self.storedProperties = properties.map(StoredProperties.value) ?? .none
        self.featureIndex = featureIndex
    }

    package init(id: String, shape: Shape, notifyOnEntry: Bool = true, notifyOnExit: Bool = true,
                 storedProperties: StoredProperties, featureIndex: Int) {
        self.id = id
        self.shape = shape
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
        self.storedProperties = storedProperties
        self.featureIndex = featureIndex
    }

    package enum StoredProperties: Sendable {
        case none
        case value(JSONValue)
        /// `{"radius": r}`.
        case radius(Double)
        /// `{"id": the region's id, "radius": r}`.
        case idAndRadius(Double)
        /// The object's JSON text, already checked by the parser's rules, parsed when asked for:
        /// bytes in a buffer the regions read with it share, rather than a dictionary (or a
        /// string) per region.
        case text(PropertiesTexts, offset: Int32, count: Int32)

        func value(id: String) -> JSONValue? {
            switch self {
            case .none: return nil
            case .value(let v): return v
            case .radius(let r): return .object(["radius": .number(r)])
            case .idAndRadius(let r): return .object(["id": .string(id), "radius": .number(r)])
            case .text(let texts, let offset, let count):
                let bytes = texts.bytes[Int(offset)..<Int(offset + count)]
                guard let v = try? JSONValue.parse(bytes) else { preconditionFailure("Region: stored properties are not JSON") }
                return v
            }
        }
    }
}

/// The properties texts of the regions read together (one half of a GeoJSON file), one after
/// another in one buffer: one allocation for them all, freed once, instead of one per region.
/// Appended to only by the thread reading them, before the regions are handed on; read-only
/// after, which is what makes it `Sendable`.
package final class PropertiesTexts: @unchecked Sendable {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    /// `text` kept, as the stored properties that name it; nil past 2 GiB of texts.
    package func append(_ text: some Collection<UInt8>) -> Region.StoredProperties? {
        guard let offset = Int32(exactly: bytes.count), let count = Int32(exactly: text.count),
              Int32(exactly: bytes.count + text.count) != nil else { return nil }
        bytes.append(contentsOf: text)
        return .text(self, offset: offset, count: count)
    }
}

/// A regions file that cannot be used: names the file, the feature and the reason.
public struct RegionFileError: Error, Equatable, CustomStringConvertible, Sendable {
    /// What went wrong, for callers that map errors to exit codes (66 missing file, 74 I/O, 65 data).
    public enum Kind: Equatable, Sendable {
        case fileNotFound
        case unreadable
        case invalidContent
    }

    public var file: String
    /// Zero-based feature index (or data row index for CSV), when the problem is in one feature.
    public var featureIndex: Int?
    public var id: String?
    public var reason: String
    /// 1-based line in the file, when known (JSON syntax errors, CSV rows).
    public var line: Int?
    /// 1-based column, when known (JSON syntax errors).
    public var column: Int?
    public var kind: Kind

    public init(
        file: String, featureIndex: Int? = nil, id: String? = nil, reason: String,
        line: Int? = nil, column: Int? = nil, kind: Kind = .invalidContent
    ) {
        self.file = file
        self.featureIndex = featureIndex
        self.id = id
        self.reason = reason
        self.line = line
        self.column = column
        self.kind = kind
    }

    /// `FILE[:LINE[:COLUMN]][: feature N][ (id "ID")]: reason`; the feature index is left out when
    /// a line is given (CSV rows), since the line already says where.
    public var description: String {
        var where_ = file
        if let line {
            where_ += ":\(line)"
            if let column { where_ += ":\(column)" }
        } else if let featureIndex {
            where_ += ": feature \(featureIndex)"
        }
        if let id { where_ += " (id \"\(id)\")" }
        return "\(where_): \(reason)"
    }
}
