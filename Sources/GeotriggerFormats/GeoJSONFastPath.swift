#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerRuntime
import GeotriggerCore

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
package struct GeoJSONDeclined: Error {}

extension GeoJSONRegionReader {
    /// The regions of a FeatureCollection, or `GeoJSONDeclined` when the file is not one the fast
    /// lane reads (the general reader then reads it and reports what is wrong, if anything).
    package func readFast(_ bytes: [UInt8]) throws(GeoJSONDeclined) -> [Region] {
        let result: Result<[Region], GeoJSONDeclined> = bytes.withPaddedBytes { buffer in
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
        // A large file is read by two threads: this one from the start, another from a feature
        // in the middle (`splitPoint`). The guess holds only if this thread, reading on, reaches a
        // feature starting exactly there; otherwise it reads on alone and the other's work is
        // dropped. Either way every feature is read once from a place a plain reading reaches.
        var head: [Region]
        var stop = Int.max
        var tail: SecondHalf?
        if bytes.count >= Self.splitBytes, let split = Self.splitPoint(bytes, from: p.index) {
            stop = split
            let half = SecondHalf(reader: self, bytes: bytes, start: split)
            half.thread = JobThread { half.run() }
            tail = half
        }
        // Joined on every way out, a throw from the first half's features included: the other
        // thread reads the caller's bytes, which are not ours to hold once this returns, and a
        // thread never joined is never released (ThreadSanitizer: "thread leak").
        defer { tail?.thread?.join() }
        var reachedStop: Bool
        (head, reachedStop) = try features(&p, until: stop, atArrayStart: true, roomFor: bytes.count - p.index)
        if let tail {
            tail.thread?.join()
            if reachedStop, let (rest, end) = tail.result {
                let offset = head.count
                head.reserveCapacity(head.count + rest.count)
                for var region in rest {
                    region.featureIndex += offset
                    head.append(region)
                }
                p.index = end
            } else if reachedStop {
                throw GeoJSONDeclined()  // the second half met something only the general reader reports
            }
        }
        // After the array: the collection's `}`, then nothing.
        p.skipWhitespace()
        guard p.peek(UInt8(ascii: "}")) else { throw GeoJSONDeclined() }
        p.index += 1
        p.skipWhitespace()
        guard p.index == bytes.count else { throw GeoJSONDeclined() }
        // Ids unique (the general reader names a repeated one): the open-addressing table the
        // id lookups use, rather than a dictionary of Strings.
        var ids = RegionIDSlots(capacity: head.count)
        if ids.insertAll(head) != nil { throw GeoJSONDeclined() }
        return head
    }

    /// Files at least this large are read by two threads.
    static let splitBytes = 4 << 20

    /// Features from `p.index` (just after `[` when `atArrayStart`, else at a feature) up to the
    /// array's `]` (consumed), or up to the feature starting at `until`, where it stops before
    /// reading it (then `reachedStop`). Feature indices count from 0 here.
    /// `roomFor`: the bytes whose features the array is made room for, about 128 each (the first
    /// half's array takes the second half's features too, without growing).
    private func features(_ p: inout JSONParser, until stop: Int, atArrayStart: Bool, roomFor: Int? = nil)
        throws(GeoJSONDeclined) -> (regions: [Region], reachedStop: Bool) {
        var regions: [Region] = []
        regions.reserveCapacity(max(16, (roomFor ?? (min(stop, p.bytes.count) - p.index)) / 128))
        p.skipWhitespace()
        if atArrayStart, p.peek(UInt8(ascii: "]")) {
            p.index += 1
            return (regions, false)
        }
        while true {
            if p.index == stop { return (regions, true) }
            do {
                regions.append(try feature(&p, index: regions.count))
            } catch {
                throw GeoJSONDeclined()
            }
            p.skipWhitespace()
            guard p.index < p.bytes.count else { throw GeoJSONDeclined() }
            if p.bytes[p.index] == UInt8(ascii: "]") {
                p.index += 1
                return (regions, false)
            }
            guard p.bytes[p.index] == UInt8(ascii: ",") else { throw GeoJSONDeclined() }
            p.index += 1
            p.skipWhitespace()
        }
    }

    /// Where a feature seems to start near the middle: `{"type":"Feature"` after a `,` (and
    /// whitespace). Only a guess (it may sit inside a string); `readCollection` checks it.
    static func splitPoint(_ bytes: PaddedBytes, from start: Int) -> Int? {
        let pattern = Array(#"{"type":"Feature""#.utf8)
        var i = start + (bytes.count - start) / 2
        let limit = min(bytes.count - pattern.count, i + (1 << 20))
        while i < limit {
            if bytes[i] == pattern[0], (0..<pattern.count).allSatisfy({ bytes[i + $0] == pattern[$0] }) {
                var j = i - 1
                while j > start, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[j]) { j -= 1 }
                if bytes[j] == UInt8(ascii: ",") { return i }
            }
            i += 1
        }
        return nil
    }

    /// The second thread's part: features from a guessed start to the array's end.
    private final class SecondHalf: @unchecked Sendable {
        // `@unchecked Sendable`: made before the thread starts, read by it, and read back by the
        // first thread only after `join`. The bytes outlive both (the caller's array).
        let reader: GeoJSONRegionReader
        let bytes: PaddedBytes
        let start: Int
        var thread: JobThread?
        /// The features and the index after the array's `]`; nil when it declined.
        var result: ([Region], Int)?

        init(reader: GeoJSONRegionReader, bytes: PaddedBytes, start: Int) {
            self.reader = reader
            self.bytes = bytes
            self.start = start
        }

        func run() {
            var p = JSONParser(bytes, maxDepth: JSONValue.defaultMaxDepth)
            p.index = start
            guard let (regions, _) = try? reader.features(&p, until: .max, atArrayStart: false) else { return }
            result = (regions, p.index)
        }
    }

    /// One feature: the circle read off the bytes, or anything else through the general parser
    /// and `readFeature`. Throws for a problem the general reader is to report.
    private func feature(_ p: inout JSONParser, index: Int) throws -> Region {
        let start = p.index
        if let region = canonicalCircle(&p, index: index) { return region }
        p.index = start
        if let region = try? circle(&p, index: index) { return region }
        p.index = start
        // At the depth the whole document's parse would be at (collection, features array).
        p.depth = 2
        defer { p.depth = 0 }
        let value = try p.parseValue()
        return try readFeature(value, index: index)
    }

    /// The circle feature as writers lay it out, byte for byte (no whitespace, members in this
    /// order, an id of printable ASCII without escapes):
    ///
    ///     {"type":"Feature","id":"ID","geometry":{"type":"Point","coordinates":[LON,LAT]},"properties":{"radius":R}}
    ///
    /// The fixed parts are compared whole and the numbers read by `number` (the general parser's
    /// grammar and rounding), so a feature taken here reads as `circle` would read it; nil for
    /// anything else, which `circle` then reads member by member.
    private func canonicalCircle(_ p: inout JSONParser, index: Int) -> Region? {
        let bytes = p.bytes
        @inline(__always) func literal(_ text: StaticString) -> Bool {
            let n = text.utf8CodeUnitCount
            guard p.index + n <= bytes.count, bytes.matches(text, at: p.index) else { return false }
            p.index += n
            return true
        }
        guard literal(#"{"type":"Feature","id":""#) else { return nil }
        let idStart = p.index
        while p.index < bytes.count, bytes[p.index] >= 0x20, bytes[p.index] < 0x7F,
              bytes[p.index] != UInt8(ascii: "\""), bytes[p.index] != UInt8(ascii: "\\") {
            p.index += 1
        }
        let idEnd = p.index
        guard idEnd > idStart, InputLimits.identifierFits(byteCount: idEnd - idStart),
              literal(#"","geometry":{"type":"Point","coordinates":["#), let longitude = try? number(&p),
              literal(","), let latitude = try? number(&p),
              literal(#"]},"properties":{"radius":"#), let radius = try? number(&p),
              literal("}}"),
              coordinateProblem(latitude: latitude, longitude: longitude) == nil, radiusProblem(radius) == nil
        else { return nil }
        let id = bytes.string(idStart..<idEnd)
        return Region(id: id, shape: .circle(center: Coordinate(latitude: latitude, longitude: longitude), radius: radius),
                      storedProperties: .radius(radius), featureIndex: index)
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
    private func plainString(_ p: inout JSONParser) -> ByteView? {
        let bytes = p.bytes
        guard p.index < bytes.count, bytes[p.index] == UInt8(ascii: "\"") else { return nil }
        var i = p.index + 1
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                let text = bytes.view((p.index + 1)..<i)
                p.index = i + 1
                return text
            }
            if c < 0x20 || c >= 0x80 || c == UInt8(ascii: "\\") { return nil }
            i += 1
        }
        return nil
    }

    private func equal(_ text: ByteView, _ word: StaticString) -> Bool {
        text.count == word.utf8CodeUnitCount && PaddedBytes(text).matches(word, at: 0)
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
