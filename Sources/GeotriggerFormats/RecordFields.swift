import GeotriggerCore

/// The fields a reading record may carry, as named in NDJSON keys and CSV headers.
enum FieldName: UInt8 {
    case t, device, lat, lon, accuracy, speed, course, altitude
    case uuid, major, minor, rssi, tx
    case op, request, ids, id, content, region
    case unknown

    /// The keys of an ordinary fix, each with its closing quote and the colon, as the first 8
    /// bytes read little-endian (`matchPlainKey` masks off what follows the shorter ones). Literal
    /// constants rather than a computed `static let`, whose lazy initialisation would be checked
    /// at every key; `plainKeyWords` spells them out and a test holds the two equal.
    static let plainKeyT: UInt64 = 0x3A2274  // t":
    static let plainKeyLat: UInt64 = 0x3A2274616C  // lat":
    static let plainKeyLon: UInt64 = 0x3A226E6F6C  // lon":
    static let plainKeyDevice: UInt64 = 0x3A22656369766564  // device":
    static let plainKeyAccuracy: UInt64 = 0x7963617275636361  // accuracy

    /// The same words, made from the key spellings.
    static var plainKeyWords: [UInt64] {
        func word(_ s: StaticString) -> UInt64 {
            var w: UInt64 = 0
            for k in 0..<min(8, s.utf8CodeUnitCount) { w |= UInt64(s.utf8Start[k]) << (8 * UInt64(k)) }
            return w
        }
        return [word("t\":"), word("lat\":"), word("lon\":"), word("device\":"), word("accuracy")]
    }

    /// Recognises the key of an ordinary fix (`t`, `lat`, `lon`, `device`, `accuracy`) written
    /// plainly and followed at once by `":`, from `p[i]`, the byte after the opening quote.
    /// Returns the field and the index after the colon, or nil: then the general path (scan the
    /// string, resolve escapes, match, skip whitespace, expect the colon) decides, and it decides
    /// these spellings the same way. Needs 10 readable bytes from `p[i]` (it checks `n`).
    @inline(__always)
    static func matchPlainKey(_ p: PaddedBytes, _ i: Int, _ n: Int) -> (field: FieldName, end: Int)? {
        guard i + 10 <= n else { return nil }
        let w = p.word(at: i)
        if w & 0xFF_FFFF == plainKeyT { return (.t, i + 3) }
        if w & 0xFF_FFFF_FFFF == plainKeyLat { return (.lat, i + 5) }
        if w & 0xFF_FFFF_FFFF == plainKeyLon { return (.lon, i + 5) }
        if w == plainKeyDevice { return (.device, i + 8) }
        if w == plainKeyAccuracy && p[i + 8] == UInt8(ascii: "\"") && p[i + 9] == UInt8(ascii: ":") {
            return (.accuracy, i + 10)
        }
        return nil
    }

    /// Recognises a field name from its UTF-8 bytes without allocating.
    @inline(__always)
    static func match(_ name: ByteView) -> FieldName {
        let p = PaddedBytes(name), n = name.count
        @inline(__always) func eq(_ s: StaticString) -> Bool {
            s.utf8CodeUnitCount == n && p.matches(s, at: 0)
        }
        switch n {
        case 1: return p[0] == UInt8(ascii: "t") ? .t : .unknown
        case 2: return eq("tx") ? .tx : eq("op") ? .op : eq("id") ? .id : .unknown
        case 3: return eq("lat") ? .lat : eq("lon") ? .lon : eq("ids") ? .ids : .unknown
        case 4: return eq("uuid") ? .uuid : eq("rssi") ? .rssi : .unknown
        case 5: return eq("speed") ? .speed : eq("major") ? .major : eq("minor") ? .minor : .unknown
        case 6: return eq("device") ? .device : eq("course") ? .course : eq("region") ? .region : .unknown
        case 7: return eq("request") ? .request : eq("content") ? .content : .unknown
        case 8: return eq("accuracy") ? .accuracy : eq("altitude") ? .altitude : .unknown
        default: return .unknown
        }
    }
}

/// One record's raw field values, collected by a format decoder and then validated into a `Reading`.
///
/// Shared by the NDJSON and CSV decoders so both apply exactly the rules of SPEC §3.
struct RecordFields {
    enum TimeState: UInt8 { case missing, ok, bad }

    var timeState: TimeState = .missing
    var t: Double = .nan
    /// Set when a device field is present but is not a string.
    var deviceWrongType = false
    var device: ByteView? = nil
    var latitude: Double = .nan
    var longitude: Double = .nan
    var accuracy: Double = .nan
    var rssi: Double = .nan
    var tx: Double = .nan
    var major: Double = .nan
    var minor: Double = .nan
    var hasLat = false
    var hasLon = false
    var hasRSSI = false
    var hasMajor = false
    var hasMinor = false
    var uuid: ByteView? = nil
    /// Set when a uuid, major or minor is present with the wrong JSON type.
    var beaconWrongType = false
    var op: ByteView? = nil
    var opWrongType = false
    var hasRequestObject = false
    var hasIDsArray = false
    var hasIDString = false
    /// An `addRegion` record's `region` is an object.
    var hasRegionObject = false
    /// A control record's request id (`id`, one of `ids`, `request.id`) is longer than
    /// `InputLimits.identifierBytes`; set by the decoder.
    var idTooLong = false
    var nonFinite = false
    /// A known numeric field holding something that is not a number.
    var wrongType = false

    @inline(__always)
    mutating func reset() { self = RecordFields() }

    /// Stores a numeric field's value (already parsed).
    @inline(__always)
    mutating func setNumber(_ field: FieldName, _ v: Double) {
        if !v.isFinite { nonFinite = true }
        switch field {
        case .t:
            t = v
            timeState = v.isFinite ? .ok : .bad
        case .lat: latitude = v; hasLat = true
        case .lon: longitude = v; hasLon = true
        case .accuracy: accuracy = v
        case .rssi: rssi = v; hasRSSI = true
        case .tx: tx = v
        case .major: major = v; hasMajor = true
        case .minor: minor = v; hasMinor = true
        case .speed, .course, .altitude: break
        case .device: deviceWrongType = true
        case .uuid: beaconWrongType = true
        case .op: opWrongType = true
        case .request, .ids, .id, .content, .region, .unknown: break
        }
    }

    /// Validates the collected fields and fills `reading`; returns the rejection reason if any.
    /// `reading.line` is left to the caller.
    @inline(__always)
    func validate(into r: inout Reading, defaultDevice: ByteView?) -> RejectReason? {
        if nonFinite { return .nonFinite }
        switch timeState {
        case .missing: return .missingTime
        case .bad: return .badTime
        case .ok: break
        }
        guard InputLimits.timeIsWritable(t) else { return .timeOutOfRange }
        // A region record (SPEC §7) is device-less: it applies to every device.
        if let o = op, !opWrongType, let kind = controlOp(o), kind.isRegionChange {
            if device != nil || deviceWrongType { return .badControl }
            switch kind {
            case .addRegion: if !hasRegionObject { return .badControl }
            default: if !hasIDString { return .badControl }
            }
            if idTooLong { return .idTooLong }
            r.t = t
            r.device = .empty
            r.setControl(kind)
            return nil
        }
        if deviceWrongType { return .missingDevice }
        guard let dev = device ?? defaultDevice, dev.count > 0 else { return .missingDevice }
        guard InputLimits.identifierFits(byteCount: dev.count) else { return .idTooLong }
        if wrongType { return .malformed }
        r.t = t
        r.device = dev
        if hasLat || hasLon {
            guard hasLat && hasLon else { return .missingCoordinate }
            guard latitude >= -90 && latitude <= 90 else { return .latitudeOutOfRange }
            guard longitude >= -180 && longitude <= 180 else { return .longitudeOutOfRange }
            if accuracy < 0 { return .negativeAccuracy }  // NaN (absent) compares false
            r.setFix(t: t, device: dev, latitude: latitude, longitude: longitude, accuracy: accuracy)
            return nil
        }
        if uuid != nil || beaconWrongType || hasRSSI {
            if !hasRSSI { return .missingRSSI }
            guard let u = uuid, !beaconWrongType, let (hi, lo) = BeaconID.parseUUID(u) else { return .badBeacon }
            var beacon = BeaconID(uuidHigh: hi, uuidLow: lo, major: -1, minor: -1)
            if hasMajor {
                guard let m = uint16(major) else { return .badBeacon }
                beacon.major = m
            }
            if hasMinor {
                guard let m = uint16(minor) else { return .badBeacon }
                beacon.minor = m
            }
            guard rssi >= -127 && rssi <= -1 else { return .rssiOutOfRange }
            r.kind = .sighting
            r.beacon = beacon
            r.rssi = rssi
            r.tx = tx
            r.latitude = .nan
            r.longitude = .nan
            r.accuracy = .nan
            return nil
        }
        if op != nil || opWrongType {
            guard let o = op, !opWrongType, let kind = controlOp(o) else { return .badControl }
            switch kind {
            case .add: if !hasRequestObject { return .badControl }
            case .removePending, .removeDelivered: if !hasIDsArray { return .badControl }
            case .push, .respond: if !hasIDString { return .badControl }
            case .removeAllPending, .removeAllDelivered, .setCategories, .authorize, .appState: break
            case .addRegion, .removeRegion: return .badControl  // decided above
            }
            if idTooLong { return .idTooLong }
            r.setControl(kind)
            return nil
        }
        return .unknownRecord
    }

    @inline(__always)
    private func uint16(_ v: Double) -> Int32? {
        guard v >= 0 && v <= 65535 && v.rounded(.towardZero) == v else { return nil }
        return Int32(v)
    }
}

/// Whether the control record `line` (one JSON object) names an identifier longer than
/// `InputLimits.identifierBytes`: a request id in `ids`, the id of `request`, the id of an
/// `addRegion` record's feature, a `respond` record's action, or a category's or action's id.
/// Parsed by the JSON parser that `ControlRecord` applies the record with, so the ids checked are
/// the ids applied. False for a line it cannot parse (the caller has already parsed it).
func controlIDsTooLong(_ line: ByteView) -> Bool {
    guard let json = try? JSONValue.parse(line) else { return false }
    @inline(__always) func tooLong(_ v: JSONValue?) -> Bool {
        guard let s = v?.stringValue else { return false }
        return !InputLimits.identifierFits(s)
    }
    if let ids = json["ids"]?.arrayValue, ids.contains(where: tooLong) { return true }
    // A `respond` record's action; a `setCategories` record's category and action ids.
    if tooLong(json["action"]) { return true }
    for category in json["categories"]?.arrayValue ?? [] {
        if tooLong(category["id"]) { return true }
        if let actions = category["actions"]?.arrayValue, actions.contains(where: { tooLong($0["id"]) }) { return true }
    }
    // An `addRegion` record's feature id (`id`, else `properties.id`).
    let region = json["region"]
    if tooLong(region?["id"]) || region?["id"]?.stringValue == nil && tooLong(region?["properties"]?["id"]) { return true }
    return tooLong(json["request"]?["id"])
}

/// The control operation named by `bytes`, or nil.
func controlOp(_ b: ByteView) -> ControlOp? {
    let p = PaddedBytes(b), n = b.count
    guard n > 0 else { return nil }
    @inline(__always) func eq(_ s: StaticString) -> Bool {
        s.utf8CodeUnitCount == n && p.matches(s, at: 0)
    }
    if eq("add") { return .add }
    if eq("removePending") { return .removePending }
    if eq("removeDelivered") { return .removeDelivered }
    if eq("removeAllPending") { return .removeAllPending }
    if eq("removeAllDelivered") { return .removeAllDelivered }
    if eq("push") { return .push }
    if eq("setCategories") { return .setCategories }
    if eq("respond") { return .respond }
    if eq("authorize") { return .authorize }
    if eq("appState") { return .appState }
    if eq("addRegion") { return .addRegion }
    if eq("removeRegion") { return .removeRegion }
    return nil
}

/// Checks that `p[i..<n]` is valid UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
func isValidUTF8(_ p: PaddedBytes, _ i: Int, _ n: Int) -> Bool {
    var j = i
    while j < n {
        if p[j] < 0x80 {
            j += 1
            continue
        }
        let len = utf8SequenceLength(p, j, n)
        if len == 0 { return false }
        j += len
    }
    return true
}

/// Length of the valid multi-byte UTF-8 sequence starting at `p[j]` (a byte ≥ 0x80), or 0.
@inline(__always)
func utf8SequenceLength(_ p: PaddedBytes, _ j: Int, _ n: Int) -> Int {
    let c = p[j]
    @inline(__always) func cont(_ k: Int, _ lo: UInt8 = 0x80, _ hi: UInt8 = 0xBF) -> Bool {
        j + k < n && p[j + k] >= lo && p[j + k] <= hi
    }
    switch c {
    case 0xC2...0xDF: return cont(1) ? 2 : 0
    case 0xE0: return cont(1, 0xA0) && cont(2) ? 3 : 0
    case 0xE1...0xEC, 0xEE...0xEF: return cont(1) && cont(2) ? 3 : 0
    case 0xED: return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0
    case 0xF0: return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0
    case 0xF1...0xF3: return cont(1) && cont(2) && cont(3) ? 4 : 0
    case 0xF4: return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0
    default: return 0
    }
}

extension Reading {
    /// Makes this reading a fix, as a validated fix record leaves it (sighting fields cleared).
    @inline(__always)
    mutating func setFix(t: Double, device: ByteView, latitude: Double, longitude: Double,
                         accuracy: Double) {
        self.t = t
        self.device = device
        kind = .fix
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        beacon = BeaconID()
        rssi = .nan
        tx = .nan
    }
}

extension Reading {
    /// A control record's kind and op, its fix and sighting fields cleared (`t` and `device` are
    /// the caller's).
    mutating func setControl(_ op: ControlOp) {
        kind = .control
        self.op = op
        beacon = BeaconID()
        latitude = .nan
        longitude = .nan
        accuracy = .nan
        rssi = .nan
        tx = .nan
    }
}
