import GeotriggerCore

/// One decoded input record: a GPS fix, a beacon sighting or a control record for the scheduler.
///
/// A `Reading` is a view: `device` and `line` point into the decoder's buffers and stay valid only
/// until the decoder is advanced. This is what lets the hot path run without allocating per reading.
public struct Reading {
    public enum Kind: UInt8, Sendable {
        case fix
        case sighting
        case control
    }

    public var kind: Kind = .fix
    /// Unix seconds (fractions allowed).
    public var t: Double = 0
    /// The device identifier as UTF-8 bytes, JSON escapes already resolved.
    package var device = ByteView.empty

    // Fix fields.
    public var latitude: Double = .nan
    public var longitude: Double = .nan
    /// Horizontal accuracy in metres; NaN when the record has none.
    public var accuracy: Double = .nan

    // Sighting fields.
    public var beacon: BeaconID = BeaconID()
    public var rssi: Double = .nan
    /// Calibrated RSSI at 1 m from the sighting; NaN when absent.
    public var tx: Double = .nan

    // Control fields: the scheduler parses `line` itself (control records are rare). A region
    // record (`op.isRegionChange`) has no device: `device` is empty.
    public var op: ControlOp = .add

    /// The whole input record, verbatim (without its line terminator).
    package var line = ByteView.empty

    public init() {}

    /// A fix of `device` at `t` (the receivers' decoders make theirs with this): `line` is the
    /// record that stands for it.
    package static func fix(t: Double, device: ByteView, latitude: Double, longitude: Double, accuracy: Double,
                            line: ByteView) -> Reading {
        var r = Reading()
        r.kind = .fix
        r.t = t
        r.device = device
        r.latitude = latitude
        r.longitude = longitude
        r.accuracy = accuracy
        r.line = line
        return r
    }

    /// The device identifier as a `String` (allocates for ids longer than 15 bytes; not for the hot path).
    public var deviceString: String { device.string }
}

/// Operations a control record asks of the scheduling core.
public enum ControlOp: UInt8, Sendable {
    case add
    case removePending
    case removeDelivered
    case removeAllPending
    case removeAllDelivered
    case push
    /// Device-less (SPEC §7): adds a region, or replaces the region with the same id.
    case addRegion
    /// Device-less (SPEC §7): removes the region with the record's `id`.
    case removeRegion
    // Raw values are written in snapshots (region changes): new operations go last.
    /// SPEC §5.1: the device's categories of actions, the user's response to a delivered
    /// notification, what the user allowed, the app's state and foreground presentation.
    case setCategories
    case respond
    case authorize
    case appState

    /// Whether the record changes the regions (device-less) rather than a device's center.
    @inlinable public var isRegionChange: Bool { self == .addRegion || self == .removeRegion }
}

/// Why an input record was rejected. The raw value is the stable key used in summaries.
public enum RejectReason: String, CaseIterable, Sendable {
    case malformed = "malformed"
    case invalidUTF8 = "invalid-utf8"
    case lineTooLong = "line-too-long"
    case missingTime = "missing-time"
    case badTime = "bad-time"
    case missingDevice = "missing-device"
    case missingCoordinate = "missing-coordinate"
    case latitudeOutOfRange = "latitude-out-of-range"
    case longitudeOutOfRange = "longitude-out-of-range"
    case nonFinite = "non-finite-number"
    case negativeAccuracy = "negative-accuracy"
    case rssiOutOfRange = "rssi-out-of-range"
    case badBeacon = "bad-beacon-identity"
    case badControl = "bad-control-record"
    case unknownRecord = "unknown-record"
    case badCSVRow = "bad-csv-row"
    case outOfOrder = "older-than-previous"
    /// A beacon sighting (it has a `uuid`) without an `rssi`.
    case missingRSSI = "missing-rssi"
    /// A time (Unix seconds or RFC 3339) RFC 3339 cannot write with milliseconds
    /// (`InputLimits.timeIsWritable`): before 0001-01-01T00:00:00Z, or at 10000-01-01 once rounded.
    case timeOutOfRange = "time-out-of-range"
    /// An identifier (the device, a request id in a control record) longer than
    /// `InputLimits.identifierBytes` bytes of UTF-8.
    case idTooLong = "id-too-long"
    /// An NMEA sentence whose checksum does not match its bytes.
    case badChecksum = "bad-checksum"
    /// A receiver cycle whose sentences call their position void (RMC or GLL status V, GGA
    /// quality 0, manual or simulated).
    case voidFix = "void-fix"
    /// A receiver's valid position before any sentence gave the date (RMC or ZDA).
    case noDate = "fix-before-date"

    /// A sentence for `FILE:LINE: reason` messages.
    public var message: String {
        switch self {
        case .malformed: return "not a valid record (cannot be parsed)"
        case .invalidUTF8: return "invalid UTF-8"
        case .lineTooLong: return "line too long"
        case .missingTime: return "missing time field \"t\""
        case .badTime: return "time \"t\" is neither Unix seconds nor an RFC 3339 date"
        case .missingDevice: return "missing device"
        case .missingCoordinate: return "missing latitude or longitude"
        case .latitudeOutOfRange: return "latitude outside [-90, 90]"
        case .longitudeOutOfRange: return "longitude outside [-180, 180]"
        case .nonFinite: return "non-finite number"
        case .negativeAccuracy: return "negative accuracy"
        case .rssiOutOfRange: return "RSSI outside [-127, -1]"
        case .badBeacon: return "bad beacon identity (uuid, major or minor)"
        case .badControl: return "bad control record"
        case .unknownRecord: return "neither a fix, a beacon sighting nor a control record"
        case .badCSVRow: return "CSV row does not match the header"
        case .outOfOrder: return "older than the device's previous reading"
        case .missingRSSI: return "beacon sighting without \"rssi\""
        case .timeOutOfRange: return "time \"t\" outside the years 0001–9999"
        case .idTooLong: return "identifier longer than \(InputLimits.identifierBytes) bytes"
        case .badChecksum: return "NMEA sentence whose checksum does not match"
        case .voidFix: return "the receiver calls its position void"
        case .noDate: return "a fix before any date (RMC or ZDA)"
        }
    }
}
