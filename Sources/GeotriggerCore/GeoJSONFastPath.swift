// A fast lane through a GeoJSON regions file (issue 27): the common feature, a circle
//
//     {"type":"Feature","id":"r1","geometry":{"type":"Point","coordinates":[16.4,48.3]},"properties":{"radius":150}}
//
// (members in any order, whitespace anywhere), is read straight off the bytes into a `Region`,
// with no `JSONValue` tree and no dictionary. Any other feature (a polygon, a beacon, more
// properties, escapes in a string, a number id, a duplicate member) is parsed by the general
// parser and read by `readFeature`, as before, one feature at a time. Every byte still goes
// through `JSONParser`'s own checks (strict RFC 8259, UTF-8, numbers rounded the same), and any
// problem anywhere sends the whole file through the general reader again, so errors, and the
// order in which a broken file reports them, are the general reader's.

/// The fast lane declined the file: it is read by the general reader instead.
struct GeoJSONDeclined: Error {}

extension GeoJSONRegionReader {
    /// The regions of a FeatureCollection, or `GeoJSONDeclined` when the file is not one the fast
    /// lane reads (the general reader then reads it and reports what is wrong, if anything).
    func readFast(_ bytes: [UInt8]) throws(GeoJSONDeclined) -> [Region] {
        let result: Result<[Region], GeoJSONDeclined> = bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(buffer, maxDepth: JSONValue.defaultMaxDepth)
            do throws(GeoJSONDeclined) {
                return .success(try readCollection(&parser))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private func readCollection(_ p: inout JSONParser) throws(GeoJSONDeclined) -> [Region] {
        let bytes = p.bytes
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { p.index = 3 }
        p.skipWhitespace()
        // {"type":"FeatureCollection","features":[…]} in this order, nothing else.
        try openObject(&p)
        guard try key(&p) == .type, try stringValue(&p) == .featureCollection else { throw GeoJSONDeclined() }
        try comma(&p)
        guard try key(&p) == .features else { throw GeoJSONDeclined() }
        p.skipWhitespace()
        guard p.peek(UInt8(ascii: "[")) else { throw GeoJSONDeclined() }
        p.index += 1
        var regions: [Region] = []
        regions.reserveCapacity(max(16, bytes.count / 128))
        var firstIndexByID: [String: Int] = [:]
        firstIndexByID.reserveCapacity(max(16, bytes.count / 128))
        p.skipWhitespace()
        if p.peek(UInt8(ascii: "]")) {
            p.index += 1
        } else {
            while true {
                let index = regions.count
                let region: Region
                do {
                    region = try feature(&p, index: index)
                } catch {
                    throw GeoJSONDeclined()
                }
                if firstIndexByID.updateValue(index, forKey: region.id) != nil { throw GeoJSONDeclined() }
                regions.append(region)
                p.skipWhitespace()
                guard p.index < bytes.count else { throw GeoJSONDeclined() }
                if bytes[p.index] == UInt8(ascii: "]") {
                    p.index += 1
                    break
                }
                guard bytes[p.index] == UInt8(ascii: ",") else { throw GeoJSONDeclined() }
                p.index += 1
                p.skipWhitespace()
            }
        }
        p.skipWhitespace()
        guard p.peek(UInt8(ascii: "}")) else { throw GeoJSONDeclined() }
        p.index += 1
        p.skipWhitespace()
        guard p.index == bytes.count else { throw GeoJSONDeclined() }
        return regions
    }

    /// One feature: the circle read off the bytes, or anything else through the general parser
    /// and `readFeature`. Throws for a problem the general reader is to report.
    private func feature(_ p: inout JSONParser, index: Int) throws -> Region {
        let start = p.index
        if let region = try? circle(&p, index: index) { return region }
        p.index = start
        // At the depth the whole document's parse would be at (collection, features array).
        p.depth = 2
        defer { p.depth = 0 }
        let value = try p.parseValue()
        return try readFeature(value, index: index)
    }

    /// `{"type":"Feature","id":STRING,"geometry":{"type":"Point","coordinates":[lon,lat]},
    /// "properties":{"radius":NUMBER}}`, members in any order, each once; else declines.
    private func circle(_ p: inout JSONParser, index: Int) throws -> Region {
        var id: String?
        var center: Coordinate?
        var radius: Double?
        let seen = try members(&p) { k, p in
            switch k {
            case .type:
                guard try stringValue(&p) == .feature else { throw GeoJSONDeclined() }
            case .id:
                p.skipWhitespace()
                guard p.peek(UInt8(ascii: "\"")) else { throw GeoJSONDeclined() }
                let text = try p.parseString()
                guard !text.isEmpty, InputLimits.identifierFits(text) else { throw GeoJSONDeclined() }
                id = text
            case .geometry:
                center = try point(&p)
            case .properties:
                try openObject(&p)
                guard try key(&p) == .radius else { throw GeoJSONDeclined() }
                radius = try number(&p)
                try closeObject(&p)
            default:
                throw GeoJSONDeclined()
            }
        }
        guard seen == Key.type.bit | Key.id.bit | Key.geometry.bit | Key.properties.bit,
              let id, let center, let radius, radiusProblem(radius) == nil
        else { throw GeoJSONDeclined() }
        return Region(id: id, shape: .circle(center: center, radius: radius), storedProperties: .radius(radius),
                      featureIndex: index)
    }

    /// `{"type":"Point","coordinates":[lon,lat]}` (or the other order), a valid position.
    private func point(_ p: inout JSONParser) throws -> Coordinate {
        var position: (Double, Double)?
        let seen = try members(&p) { k, p in
            switch k {
            case .type:
                guard try stringValue(&p) == .point else { throw GeoJSONDeclined() }
            case .coordinates:
                p.skipWhitespace()
                guard p.peek(UInt8(ascii: "[")) else { throw GeoJSONDeclined() }
                p.index += 1
                let longitude = try number(&p)
                try comma(&p)
                let latitude = try number(&p)
                p.skipWhitespace()
                guard p.peek(UInt8(ascii: "]")) else { throw GeoJSONDeclined() }
                p.index += 1
                position = (longitude, latitude)
            default:
                throw GeoJSONDeclined()
            }
        }
        guard seen == Key.type.bit | Key.coordinates.bit, let (longitude, latitude) = position,
              coordinateProblem(latitude: latitude, longitude: longitude) == nil
        else { throw GeoJSONDeclined() }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    /// An object's members, each name known and given once, handed to `body` to read its value;
    /// returns the names seen (their bits).
    private func members(_ p: inout JSONParser, _ body: (Key, inout JSONParser) throws -> Void) throws -> UInt8 {
        try openObject(&p)
        var seen: UInt8 = 0
        while true {
            let k = try key(&p)
            guard k.bit & seen == 0 else { throw GeoJSONDeclined() }
            seen |= k.bit
            try body(k, &p)
            if try endOfObject(&p) { return seen }
        }
    }

    // MARK: Tokens

    /// The member names the fast lane knows; each has a bit for "seen once".
    private enum Key: UInt8 {
        case type = 1, id = 2, geometry = 4, properties = 8, coordinates = 16, radius = 32, features = 64
        var bit: UInt8 { rawValue }
    }

    /// The string values it compares against.
    private enum Word { case feature, featureCollection, point }

    /// A member name (plain ASCII, no escapes) and its colon.
    private func key(_ p: inout JSONParser) throws(GeoJSONDeclined) -> Key {
        p.skipWhitespace()
        guard let name = plainString(&p) else { throw GeoJSONDeclined() }
        p.skipWhitespace()
        guard p.peek(UInt8(ascii: ":")) else { throw GeoJSONDeclined() }
        p.index += 1
        switch name.count {
        case 2 where equal(name, "id"): return .id
        case 4 where equal(name, "type"): return .type
        case 6 where equal(name, "radius"): return .radius
        case 8 where equal(name, "geometry"): return .geometry
        case 8 where equal(name, "features"): return .features
        case 10 where equal(name, "properties"): return .properties
        case 11 where equal(name, "coordinates"): return .coordinates
        default: throw GeoJSONDeclined()
        }
    }

    private func stringValue(_ p: inout JSONParser) throws(GeoJSONDeclined) -> Word {
        p.skipWhitespace()
        guard let text = plainString(&p) else { throw GeoJSONDeclined() }
        if equal(text, "Feature") { return .feature }
        if equal(text, "Point") { return .point }
        if equal(text, "FeatureCollection") { return .featureCollection }
        throw GeoJSONDeclined()
    }

    /// The bytes of a string of printable ASCII without escapes, after its closing quote; nil
    /// (the index unmoved) for any other string.
    private func plainString(_ p: inout JSONParser) -> UnsafeBufferPointer<UInt8>? {
        let bytes = p.bytes
        guard p.index < bytes.count, bytes[p.index] == UInt8(ascii: "\"") else { return nil }
        var i = p.index + 1
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(rebasing: bytes[(p.index + 1)..<i])
                p.index = i + 1
                return text
            }
            if c < 0x20 || c >= 0x80 || c == UInt8(ascii: "\\") { return nil }
            i += 1
        }
        return nil
    }

    private func equal(_ text: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        guard text.count == word.utf8CodeUnitCount else { return false }
        for k in 0..<text.count where text[k] != word.utf8Start[k] { return false }
        return true
    }

    /// A number, as the general parser reads it (the same rounding).
    private func number(_ p: inout JSONParser) throws -> Double {
        p.skipWhitespace()
        guard p.index < p.bytes.count else { throw GeoJSONDeclined() }
        let c = p.bytes[p.index]
        guard c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) else { throw GeoJSONDeclined() }
        let x = try p.parseNumber()
        guard x.isFinite else { throw GeoJSONDeclined() }
        return x
    }

    private func openObject(_ p: inout JSONParser) throws(GeoJSONDeclined) {
        p.skipWhitespace()
        guard p.peek(UInt8(ascii: "{")) else { throw GeoJSONDeclined() }
        p.index += 1
    }

    private func closeObject(_ p: inout JSONParser) throws(GeoJSONDeclined) {
        p.skipWhitespace()
        guard p.peek(UInt8(ascii: "}")) else { throw GeoJSONDeclined() }
        p.index += 1
    }

    private func comma(_ p: inout JSONParser) throws(GeoJSONDeclined) {
        p.skipWhitespace()
        guard p.peek(UInt8(ascii: ",")) else { throw GeoJSONDeclined() }
        p.index += 1
    }

    /// After a member's value: true at the object's `}`, false after a `,` (another member).
    private func endOfObject(_ p: inout JSONParser) throws(GeoJSONDeclined) -> Bool {
        p.skipWhitespace()
        guard p.index < p.bytes.count else { throw GeoJSONDeclined() }
        switch p.bytes[p.index] {
        case UInt8(ascii: "}"):
            p.index += 1
            return true
        case UInt8(ascii: ","):
            p.index += 1
            return false
        default:
            throw GeoJSONDeclined()
        }
    }
}
