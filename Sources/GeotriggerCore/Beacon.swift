/// An iBeacon identity: 16-byte proximity UUID plus optional major and minor (-1 = absent).
///
/// In a sighting all three are concrete; in a beacon region a missing major or minor is a wildcard,
/// as in Core Location.
public struct BeaconID: Hashable, Sendable {
    public var uuidHigh: UInt64 = 0
    public var uuidLow: UInt64 = 0
    public var major: Int32 = -1
    public var minor: Int32 = -1

    public init() {}

    public init(uuidHigh: UInt64, uuidLow: UInt64, major: Int32, minor: Int32) {
        self.uuidHigh = uuidHigh
        self.uuidLow = uuidLow
        self.major = major
        self.minor = minor
    }

    /// The UUID in canonical upper-case hyphenated form, e.g. `E2C56DB5-DFFB-48D2-B060-D0F5A71096E0`.
    public var uuidString: String {
        var out = ""
        forEachUUIDByte { out.unicodeScalars.append(Unicode.Scalar($0)) }
        return out
    }

    /// The 36 ASCII bytes of `uuidString`, in order, without building a String (the event writer
    /// puts them straight into its record).
    @inlinable
    public func forEachUUIDByte(_ body: (UInt8) -> Void) {
        for i in 0..<32 {
            if i == 8 || i == 12 || i == 16 || i == 20 { body(UInt8(ascii: "-")) }
            let word = i < 16 ? uuidHigh : uuidLow
            let nibble = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * (i % 16))) & 0xF
            body(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10)
        }
    }

    /// Parses a UUID in canonical hyphenated form (8-4-4-4-12) or as 32 hex digits, any case.
    package static func parseUUID(_ p: ByteView) -> (UInt64, UInt64)? {
        let n = p.count
        let hyphenated = n == 36
        guard hyphenated || n == 32 else { return nil }
        var hi: UInt64 = 0
        var lo: UInt64 = 0
        var digits = 0
        for i in 0..<n {
            let c = p[i]
            if hyphenated && (i == 8 || i == 13 || i == 18 || i == 23) {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            let v: UInt64
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt64(c &- 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = UInt64(c &- 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = UInt64(c &- 55)
            default: return nil
            }
            if digits < 16 { hi = hi << 4 | v } else { lo = lo << 4 | v }
            digits += 1
        }
        return (hi, lo)
    }

    public static func parseUUID(_ s: String) -> (UInt64, UInt64)? {
        var s = s
        return s.withByteView { parseUUID($0) }
    }
}

/// A beacon region's definition: which beacons match, the zone, the radio model and where it is.
public struct BeaconRegion: Hashable, Sendable {
    /// The zone a matching beacon must be estimated within.
    public enum Zone: Hashable, Sendable {
        /// Proximity `immediate` (< 0.5 m), `near` (< 3 m) or `far` (anything heard).
        case immediate, near, far
        /// Seen at all.
        case any
        /// Estimated within this many metres.
        case radius(Double)

        /// The zone's extent in metres (a positioned region's circle): 0.5, 3, 30, or the radius.
        /// `far` and `any` have no outer limit for sightings; as a circle they are 30 m, SPEC's "far".
        public var radius: Double {
            switch self {
            case .immediate: return 0.5
            case .near: return 3
            case .far, .any: return 30
            case .radius(let r): return r
            }
        }

        /// The largest estimated distance that counts as inside; nil = any distance.
        public var limit: Double? {
            switch self {
            case .immediate: return 0.5
            case .near: return 3
            case .far, .any: return nil
            case .radius(let r): return r
            }
        }
    }

    /// UUID plus major/minor, -1 = wildcard.
    public var identity: BeaconID
    public var zone: Zone
    /// RSSI at 1 m (dBm), used when a sighting carries no `tx`.
    public var measuredPower: Double?
    /// The log-distance model's exponent n.
    public var pathLossExponent: Double?
    /// Where the beacon is installed, if known.
    public var position: Coordinate?

    public init(identity: BeaconID, zone: Zone = .any, measuredPower: Double? = nil, pathLossExponent: Double? = nil,
                position: Coordinate? = nil) {
        self.identity = identity
        self.zone = zone
        self.measuredPower = measuredPower
        self.pathLossExponent = pathLossExponent
        self.position = position
    }
}
