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
// however its writer laid it out (members in any order, whitespace anywhere, other members
// passed over, the id in the properties or a number, other properties kept as their text: issue
// 39), is read straight off the bytes into a `Region`, with no `JSONValue` tree and no
// dictionary: by a byte-for-byte compare of the project's own layout, by the writer's layout
// learnt from an earlier feature (`CircleTemplate`), or member by member. Any other feature (a
// polygon, a beacon, a flag that is not a boolean, escapes in a name, a duplicate member) is
// parsed by the general parser and read by `readFeature`, one feature at a time. Every byte still goes
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
        // The collection's members in any order: its "type", its "features", and whatever else a
        // writer adds (GDAL's "name" and "crs", a "bbox"), each validated as the general parser
        // would and passed over.
        try openObject(&p)
        var regions: [Region]?
        var sawType = false
        var others = MemberNames()
        repeat {
            let (k, name) = try key(&p)
            switch k {
            case .type:
                guard !sawType, try stringValue(&p) == .featureCollection else { throw GeoJSONDeclined() }
                sawType = true
            case .features where regions == nil:
                regions = try featureArray(&p)
            case .other:
                guard others.insert(name) else { throw GeoJSONDeclined() }
                do { try skipValue(&p, depth: 1) } catch { throw GeoJSONDeclined() }
            default:
                throw GeoJSONDeclined()
            }
        } while !(try endOfObject(&p))
        p.skipSpace()
        guard sawType, let regions, p.index == bytes.count else { throw GeoJSONDeclined() }
        // Ids unique (the general reader names a repeated one): the open-addressing table the
        // id lookups use, rather than a dictionary of Strings.
        var ids = RegionIDSlots(capacity: regions.count)
        if ids.insertAll(regions) != nil { throw GeoJSONDeclined() }
        return regions
    }

    /// The "features" array, from its `[` to its `]`.
    private func featureArray(_ p: inout JSONParser) throws(GeoJSONDeclined) -> [Region] {
        let bytes = p.bytes
        p.skipSpace()
        guard p.at(UInt8(ascii: "[")) else { throw GeoJSONDeclined() }
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
        let texts = PropertiesTexts()
        var layout: CircleTemplate?
        p.skipSpace()
        if atArrayStart, p.at(UInt8(ascii: "]")) {
            p.index += 1
            return (regions, false)
        }
        while true {
            if p.index == stop { return (regions, true) }
            do {
                regions.append(try feature(&p, index: regions.count, texts: texts, layout: &layout))
            } catch {
                throw GeoJSONDeclined()
            }
            p.skipSpace()
            guard p.index < p.bytes.count else { throw GeoJSONDeclined() }
            if p.bytes[p.index] == UInt8(ascii: "]") {
                p.index += 1
                return (regions, false)
            }
            guard p.bytes[p.index] == UInt8(ascii: ",") else { throw GeoJSONDeclined() }
            p.index += 1
            p.skipSpace()
        }
    }

    /// Where a feature seems to start near the middle: a `{` after `}` and `,` (whitespace
    /// between them allowed), whoever wrote the file. Only a guess (it may sit inside a string or
    /// a property's array of objects); `readCollection` checks it.
    static func splitPoint(_ bytes: PaddedBytes, from start: Int) -> Int? {
        @inline(__always) func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }
        var i = start + (bytes.count - start) / 2
        let limit = min(bytes.count, i + (1 << 20))
        while i < limit {
            guard let comma = bytes.firstIndex(of: UInt8(ascii: ","), in: i..<limit) else { return nil }
            i = comma + 1
            var before = comma - 1
            while before > start, isSpace(bytes[before]) { before -= 1 }
            guard bytes[before] == UInt8(ascii: "}") else { continue }
            var after = comma + 1
            while after < limit, isSpace(bytes[after]) { after += 1 }
            if after < limit, bytes[after] == UInt8(ascii: "{") { return after }
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
    ///
    /// `layout`: the writer's layout of a circle, learnt from the last feature the member-by-member
    /// lane read that a template can be made of, and tried before that lane.
    private func feature(_ p: inout JSONParser, index: Int, texts: PropertiesTexts, layout: inout CircleTemplate?) throws -> Region {
        let start = p.index
        if let region = canonicalCircle(&p, index: index) { return region }
        p.index = start
        if let template = layout {
            if let region = template.read(&p, index: index, texts: texts) { return region }
            p.index = start
        }
        var values = CircleValues()
        if let region = try? circle(&p, index: index, texts: texts, values: &values) {
            // A template of a feature whose ids are strings (a number's text is not read back the same).
            let quote = UInt8(ascii: "\"")
            if values.templatable, let kept = values.kept(region),
               values.id.isEmpty || p.bytes[values.id.lowerBound] == quote,
               values.propertiesID.isEmpty || p.bytes[values.propertiesID.lowerBound] == quote {
                layout = CircleTemplate(p.bytes, feature: start..<p.index, values: values, kept: kept)
            }
            return region
        }
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
        p.skipPlainID()
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

    /// A circle feature however it is written: members in any order and whitespace anywhere
    /// (Python's `json.dump`, GDAL, geopandas, QGIS, indented or not), the id as the feature's
    /// `id` or `properties.id`, a string or a number, other members of the feature, its geometry
    /// or its properties validated as the general parser would and passed over, properties other
    /// than the radius kept as their text. Declines anything the general reader would read
    /// otherwise or reject (a polygon, a beacon, a flag that is not a boolean, a repeated member,
    /// a name with escapes), which `feature` then reads through the general parser.
    private func circle(_ p: inout JSONParser, index: Int, texts: PropertiesTexts, values: inout CircleValues) throws -> Region {
        var featureID: String?
        var propertiesID: String?
        var center: Coordinate?
        var radius: Double?
        var notifyOnEntry = true, notifyOnExit = true
        var properties: Range<Int>?
        var propertiesAreRadiusOnly = false
        var propertiesIDIsText = false
        var propertiesAreIDAndRadius = false
        var sawType = false
        var others = MemberNames()
        try openObject(&p)
        repeat {
            let (k, name) = try key(&p)
            switch k {
            case .type:
                guard !sawType, try stringValue(&p) == .feature else { throw GeoJSONDeclined() }
                sawType = true
            case .id:
                guard others.insert(name) else { throw GeoJSONDeclined() }
                p.skipSpace()
                values.id = p.index..<p.index
                featureID = try identifier(&p)
                values.id = values.id.lowerBound..<p.index
            case .geometry:
                guard center == nil else { throw GeoJSONDeclined() }
                center = try point(&p, values: &values)
            case .properties:
                guard properties == nil else { throw GeoJSONDeclined() }
                p.skipSpace()
                let start = p.index
                var names = MemberNames()
                try openObject(&p)
                if try !closed(&p) {
                    repeat {
                        let (pk, pname) = try key(&p)
                        guard names.insert(pname) else { throw GeoJSONDeclined() }
                        switch pk {
                        case .radius:
                            p.skipSpace()
                            let at = p.index
                            radius = try number(&p)
                            values.radius = at..<p.index
                        case .id:
                            p.skipSpace()
                            propertiesIDIsText = p.at(UInt8(ascii: "\""))
                            values.propertiesID = p.index..<p.index
                            propertiesID = try identifier(&p)
                            values.propertiesID = values.propertiesID.lowerBound..<p.index
                        case .notifyOnEntry:
                            notifyOnEntry = try flag(&p)
                            values.templatable = false
                        case .notifyOnExit:
                            notifyOnExit = try flag(&p)
                            values.templatable = false
                        case .beacon:
                            try null(&p)  // a beacon region: the general reader's
                            values.templatable = false
                        default:
                            try skipValue(&p, depth: 4)
                            values.templatable = false
                        }
                    } while !(try endOfObject(&p))
                }
                properties = start..<p.index
                values.properties = start..<p.index
                values.propertiesNames = names.count
                propertiesAreRadiusOnly = names.count == 1 && radius != nil
                propertiesAreIDAndRadius = names.count == 2 && radius != nil && propertiesID != nil && propertiesIDIsText
            case .other, .coordinates, .radius, .features, .notifyOnEntry, .notifyOnExit, .beacon:
                guard others.insert(name) else { throw GeoJSONDeclined() }
                try skipValue(&p, depth: 3)
                values.templatable = false
            }
        } while !(try endOfObject(&p))
        guard sawType, let center, let radius, radiusProblem(radius) == nil, let properties,
              let id = featureID ?? propertiesID
        else { throw GeoJSONDeclined() }
        // The common properties kept without a string of their own: the radius alone, or the
        // radius and the id (as GDAL, QGIS and geopandas write a feature without its own id).
        let stored: Region.StoredProperties
        if propertiesAreRadiusOnly {
            stored = .radius(radius)
        } else if propertiesAreIDAndRadius, propertiesID == id {
            stored = .idAndRadius(radius)
        } else {
            guard let text = texts.append(p.bytes.view(properties)) else { throw GeoJSONDeclined() }
            stored = text
        }
        return Region(id: id, shape: .circle(center: center, radius: radius), notifyOnEntry: notifyOnEntry,
                      notifyOnExit: notifyOnExit, storedProperties: stored, featureIndex: index)
    }

    /// `{"type":"Point","coordinates":[lon,lat]}` (or `[lon,lat,altitude]`), members in any
    /// order, others passed over; a valid position.
    private func point(_ p: inout JSONParser, values: inout CircleValues) throws -> Coordinate {
        var position: (Double, Double)?
        var sawType = false
        var others = MemberNames()
        try openObject(&p)
        repeat {
            let (k, name) = try key(&p)
            switch k {
            case .type:
                guard !sawType, try stringValue(&p) == .point else { throw GeoJSONDeclined() }
                sawType = true
            case .coordinates where position == nil:
                p.skipSpace()
                guard p.at(UInt8(ascii: "[")) else { throw GeoJSONDeclined() }
                p.index += 1
                p.skipSpace()
                var at = p.index
                let longitude = try number(&p)
                values.longitude = at..<p.index
                try comma(&p)
                p.skipSpace()
                at = p.index
                let latitude = try number(&p)
                values.latitude = at..<p.index
                p.skipSpace()
                if p.at(UInt8(ascii: ",")) {
                    p.index += 1
                    _ = try number(&p)  // the altitude, read and ignored as the general reader does
                    p.skipSpace()
                    values.templatable = false
                }
                guard p.at(UInt8(ascii: "]")) else { throw GeoJSONDeclined() }
                p.index += 1
                position = (longitude, latitude)
            case .other, .id, .radius, .features, .notifyOnEntry, .notifyOnExit, .beacon:
                guard others.insert(name) else { throw GeoJSONDeclined() }
                try skipValue(&p, depth: 4)
                values.templatable = false
            default:
                throw GeoJSONDeclined()
            }
        } while !(try endOfObject(&p))
        guard sawType, let (longitude, latitude) = position,
              coordinateProblem(latitude: latitude, longitude: longitude) == nil
        else { throw GeoJSONDeclined() }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    // MARK: Learnt layouts

    /// Where the member-by-member lane found a circle's values in its feature, and whether the
    /// feature holds nothing else (no other member, flag or altitude) a template would have to
    /// keep.
    struct CircleValues {
        var id = 0..<0, propertiesID = 0..<0, longitude = 0..<0, latitude = 0..<0, radius = 0..<0
        var properties = 0..<0
        var propertiesNames = 0
        var templatable = true

        /// How a feature of this layout keeps its properties: the radius alone (the id the
        /// feature's), the radius and the id (the id the properties'), or, with an id in both
        /// places (geopandas' `to_json`), the properties' text; nil for any other.
        func kept(_ region: Region) -> CircleTemplate.Kept? {
            switch region.storedProperties {
            case .radius where !id.isEmpty && propertiesID.isEmpty: return .radius
            case .idAndRadius where id.isEmpty && !propertiesID.isEmpty: return .idAndRadius
            case .idAndRadius, .text:
                return !id.isEmpty && !propertiesID.isEmpty && propertiesNames == 2 ? .text : nil
            default: return nil
            }
        }
    }

    /// A writer's layout of a circle feature: the bytes between its values (keys, punctuation
    /// and whitespace, exactly as the writer put them), learnt from one feature the
    /// member-by-member lane read, to read the next ones as the canonical lane reads its own
    /// layout: each piece compared whole, each value read as that lane reads it (an id of
    /// printable ASCII without escapes, numbers by `number`). A feature that matches is the
    /// learnt one with other values, so it reads as the member-by-member lane would read it;
    /// any other is read by that lane.
    final class CircleTemplate {
        enum Kept { case radius, idAndRadius, text }
        /// `string`: the properties' id beside the feature's (`Kept.text`), kept only in the text.
        private enum Value { case id, string, longitude, latitude, radius }
        /// The bytes before each value, and after the last.
        private let pieces: [[UInt8]]
        private let values: [Value]
        private let kept: Kept
        /// `Kept.text`: where the properties object starts and ends, as (piece, offset in it).
        private var propertiesStart = (-1, 0), propertiesEnd = (-1, 0)

        init(_ bytes: PaddedBytes, feature: Range<Int>, values found: CircleValues, kept: Kept) {
            // The ids' values without their quotes: they are part of the pieces around them.
            func inside(_ r: Range<Int>) -> Range<Int> { (r.lowerBound + 1)..<(r.upperBound - 1) }
            var slots: [(Range<Int>, Value)] = [(found.longitude, .longitude), (found.latitude, .latitude),
                                                (found.radius, .radius)]
            switch kept {
            case .radius: slots.append((inside(found.id), .id))
            case .idAndRadius: slots.append((inside(found.propertiesID), .id))
            case .text: slots += [(inside(found.id), .id), (inside(found.propertiesID), .string)]
            }
            slots.sort { $0.0.lowerBound < $1.0.lowerBound }
            var pieces: [[UInt8]] = []
            var at = feature.lowerBound
            for (range, _) in slots + [(feature.upperBound..<feature.upperBound, .id)] {
                let piece = at..<range.lowerBound
                if kept == .text {
                    if piece.contains(found.properties.lowerBound) {
                        propertiesStart = (pieces.count, found.properties.lowerBound - at)
                    }
                    if propertiesEnd.0 < 0, found.properties.upperBound > at, found.properties.upperBound <= range.lowerBound {
                        propertiesEnd = (pieces.count, found.properties.upperBound - at)
                    }
                }
                pieces.append(piece.map { bytes[$0] })
                at = range.upperBound
            }
            self.pieces = pieces
            self.values = slots.map(\.1)
            self.kept = kept
        }

        /// The feature at `p.index` if it has this layout (the index after it), else nil.
        func read(_ p: inout JSONParser, index: Int, texts: PropertiesTexts) -> Region? {
            let bytes = p.bytes
            var id = 0..<0
            var longitude = 0.0, latitude = 0.0, radius = 0.0
            var properties = (0, 0)
            for k in 0...values.count {
                if k == propertiesStart.0 { properties.0 = p.index + propertiesStart.1 }
                if k == propertiesEnd.0 { properties.1 = p.index + propertiesEnd.1 }
                guard piece(k, &p) else { return nil }
                guard k < values.count else { break }
                switch values[k] {
                case .id, .string:
                    let start = p.index
                    p.skipPlainID()
                    if values[k] == .id {
                        id = start..<p.index
                    } else if p.index == start {
                        return nil  // the properties' id empty: the general reader names it
                    }
                // No whitespace before a number here: the pieces hold it.
                case .longitude: guard let x = p.plainNumber() else { return nil }; longitude = x
                case .latitude: guard let x = p.plainNumber() else { return nil }; latitude = x
                case .radius: guard let x = p.plainNumber() else { return nil }; radius = x
                }
            }
            guard !id.isEmpty, InputLimits.identifierFits(byteCount: id.count),
                  coordinateProblem(latitude: latitude, longitude: longitude) == nil, radiusProblem(radius) == nil
            else { return nil }
            let stored: Region.StoredProperties
            switch kept {
            case .radius: stored = .radius(radius)
            case .idAndRadius: stored = .idAndRadius(radius)
            case .text:
                guard let text = texts.append(bytes.view(properties.0..<properties.1)) else { return nil }
                stored = text
            }
            return Region(id: bytes.string(id), shape: .circle(center: Coordinate(latitude: latitude, longitude: longitude), radius: radius),
                          storedProperties: stored, featureIndex: index)
        }

        /// Piece `k` at `p.index` (then after it).
        @inline(__always)
        private func piece(_ k: Int, _ p: inout JSONParser) -> Bool {
            let n = pieces[k].count
            guard p.index + n <= p.bytes.count else { return false }
            let equal = pieces[k].withUnsafeBytes { piece in
                p.bytes.view(from: p.index, count: n).withUnsafeBytes { here in
                    n == 0 || memcmp(piece.baseAddress!, here.baseAddress!, n) == 0
                }
            }
            if equal { p.index += n }
            return equal
        }
    }

    // MARK: Tokens

    /// The member names the fast lane knows; `other` for any other name.
    private enum Key {
        case type, id, geometry, properties, coordinates, radius, features, notifyOnEntry, notifyOnExit, beacon
        case other
    }

    /// The string values it compares against.
    private enum Word { case feature, featureCollection, point }

    /// A member name (plain ASCII, no escapes: a name with escapes declines) and its colon.
    @inline(__always)
    private func key(_ p: inout JSONParser) throws(GeoJSONDeclined) -> (Key, ByteView) {
        p.skipSpace()
        guard let name = plainString(&p) else { throw GeoJSONDeclined() }
        p.skipSpace()
        guard p.at(UInt8(ascii: ":")) else { throw GeoJSONDeclined() }
        p.index += 1
        let k: Key
        switch name.count {
        case 2 where equal(name, "id"): k = .id
        case 4 where equal(name, "type"): k = .type
        case 6 where equal(name, "radius"): k = .radius
        case 6 where equal(name, "beacon"): k = .beacon
        case 8 where equal(name, "geometry"): k = .geometry
        case 8 where equal(name, "features"): k = .features
        case 10 where equal(name, "properties"): k = .properties
        case 11 where equal(name, "coordinates"): k = .coordinates
        case 12 where equal(name, "notifyOnExit"): k = .notifyOnExit
        case 13 where equal(name, "notifyOnEntry"): k = .notifyOnEntry
        default: k = .other
        }
        return (k, name)
    }

    private func stringValue(_ p: inout JSONParser) throws(GeoJSONDeclined) -> Word {
        p.skipSpace()
        guard let text = plainString(&p) else { throw GeoJSONDeclined() }
        if equal(text, "Feature") { return .feature }
        if equal(text, "Point") { return .point }
        if equal(text, "FeatureCollection") { return .featureCollection }
        throw GeoJSONDeclined()
    }

    /// An id as the general reader takes it: a non-empty string that fits, or a number as its
    /// JSON text; nil for `null`. Anything else declines (the general reader names the problem).
    private func identifier(_ p: inout JSONParser) throws -> String? {
        p.skipSpace()
        guard p.index < p.bytes.count else { throw GeoJSONDeclined() }
        switch p.bytes[p.index] {
        case UInt8(ascii: "\""):
            let start = p.index + 1
            let text: String
            if let plain = plainString(&p) {
                text = p.bytes.string(start..<(start + plain.count))
            } else {
                text = try p.parseString()
            }
            guard !text.isEmpty, InputLimits.identifierFits(text) else { throw GeoJSONDeclined() }
            return text
        case UInt8(ascii: "n"):
            try null(&p)
            return nil
        default:
            return formatNumber(try number(&p))
        }
    }

    /// `true` or `false`, or `null` (true, as the general reader takes a flag left out).
    private func flag(_ p: inout JSONParser) throws(GeoJSONDeclined) -> Bool {
        p.skipSpace()
        let bytes = p.bytes
        guard p.index + 5 <= bytes.count else { throw GeoJSONDeclined() }
        if bytes.matches("true", at: p.index) { p.index += 4; return true }
        if bytes.matches("null", at: p.index) { p.index += 4; return true }
        if bytes.matches("false", at: p.index) { p.index += 5; return false }
        throw GeoJSONDeclined()
    }

    private func null(_ p: inout JSONParser) throws(GeoJSONDeclined) {
        p.skipSpace()
        guard p.index + 4 <= p.bytes.count, p.bytes.matches("null", at: p.index) else { throw GeoJSONDeclined() }
        p.index += 4
    }

    /// Any value, checked by the general parser's rules (strings, numbers, literals, nested
    /// containers at `depth`, the depth the whole document's parse would be at) and passed over.
    private func skipValue(_ p: inout JSONParser, depth: Int) throws {
        p.skipSpace()
        guard p.index < p.bytes.count else { throw GeoJSONDeclined() }
        switch p.bytes[p.index] {
        case UInt8(ascii: "\""):
            if plainString(&p) == nil { _ = try p.parseString() }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try p.parseNumber()
        default:
            p.depth = depth
            defer { p.depth = 0 }
            _ = try p.parseValue()
        }
    }

    /// The bytes of a string of printable ASCII without escapes, after its closing quote; nil
    /// (the index unmoved) for any other string.
    @inline(__always)
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
    private func number(_ p: inout JSONParser) throws(GeoJSONDeclined) -> Double {
        p.skipSpace()
        guard let x = p.plainNumber() else { throw GeoJSONDeclined() }
        return x
    }

    private func openObject(_ p: inout JSONParser) throws(GeoJSONDeclined) {
        p.skipSpace()
        guard p.at(UInt8(ascii: "{")) else { throw GeoJSONDeclined() }
        p.index += 1
    }

    /// Just after an object's `{`: true (the `}` consumed) when it has no members.
    private func closed(_ p: inout JSONParser) throws(GeoJSONDeclined) -> Bool {
        p.skipSpace()
        guard p.at(UInt8(ascii: "}")) else { return false }
        p.index += 1
        return true
    }

    private func comma(_ p: inout JSONParser) throws(GeoJSONDeclined) {
        p.skipSpace()
        guard p.at(UInt8(ascii: ",")) else { throw GeoJSONDeclined() }
        p.index += 1
    }

    /// After a member's value: true at the object's `}`, false after a `,` (another member).
    private func endOfObject(_ p: inout JSONParser) throws(GeoJSONDeclined) -> Bool {
        p.skipSpace()
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

extension JSONParser {
    // The parser's own `skipWhitespace` and `peek`, inlined: another module's functions are
    // calls, and the fast lane makes them at every token.
    @inline(__always)
    fileprivate mutating func skipSpace() {
        while index < bytes.count {
            let c = bytes[index]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            index += 1
        }
    }

    @inline(__always)
    fileprivate func at(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }

    /// Past an id's bytes as the fast lane takes them whole: printable ASCII, no quote, no
    /// backslash (anything else is the member-by-member lane's or the general parser's).
    @inline(__always)
    fileprivate mutating func skipPlainID() {
        while index < bytes.count, bytes[index] >= 0x20, bytes[index] < 0x7F,
              bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            index += 1
        }
    }

    /// A finite number starting right here, as the general parser reads it (the same rounding);
    /// nil for anything else.
    @inline(__always)
    fileprivate mutating func plainNumber() -> Double? {
        guard index < bytes.count else { return nil }
        let c = bytes[index]
        guard c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")),
              let x = try? parseNumber(), x.isFinite else { return nil }
        return x
    }
}

/// The names of an object's members so far, to find a repeated one (the general parser rejects
/// it) without a set or an allocation: objects here have a handful of members, compared byte for
/// byte. Past `capacity` names it reports a repeat, which declines (the general reader decides).
private struct MemberNames {
    private var names = InlineArray<16, ByteView>(repeating: .empty)
    private(set) var count = 0

    /// False when `name` was seen already (or too many names were).
    @inline(__always)
    mutating func insert(_ name: ByteView) -> Bool {
        for k in 0..<count where names[k].count == name.count && names[k].elementsEqual(name) { return false }
        guard count < names.count else { return false }
        names[count] = name
        count += 1
        return true
    }
}
