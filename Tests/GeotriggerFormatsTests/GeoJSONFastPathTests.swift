import Foundation
@testable import GeotriggerCore
@testable import GeotriggerFormats
import Testing

/// The GeoJSON fast lane (issue 27) must give exactly what the general reader gives: the same
/// regions (ids, shapes to the bit, flags, properties, feature indices) for every file it reads,
/// and for every broken file the general reader's error, whatever the lane met first.
@Suite("GeoJSON regions: the fast lane agrees with the general reader")
struct GeoJSONFastPathTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A region in words, every Double by its bits.
    static func describe(_ r: Region) -> String {
        var s = "\(r.featureIndex) \(r.id) \(r.notifyOnEntry) \(r.notifyOnExit) "
        switch r.shape {
        case .circle(let c, let radius):
            s += "circle \(c.latitude.bitPattern) \(c.longitude.bitPattern) \(radius.bitPattern)"
        case .polygons(let p):
            s += "polygons " + p.map { $0.map { $0.map { "\($0.latitude.bitPattern),\($0.longitude.bitPattern)" }.joined(separator: " ") }.joined(separator: "|") }.joined(separator: "/")
        case .beacon(let b):
            s += "beacon \(b)"
        }
        return s + " " + (r.properties.map { $0.serialized() } ?? "nil")
    }

    static func agree(_ text: String, file: String = "test.geojson") throws -> Result<[String], RegionFileError> {
        let bytes = Array(text.utf8)
        let reader = GeoJSONRegionReader(file: file)
        let general: Result<[String], RegionFileError>
        do { general = .success(try reader.readGeneral(bytes).map(describe)) } catch { general = .failure(error) }
        let both: Result<[String], RegionFileError>
        do { both = .success(try RegionFile.parse(bytes: bytes, fileName: file).map(describe)) } catch { both = .failure(error) }
        #expect(both == general)
        return both
    }

    static func circle(_ k: Int, _ lat: Double, _ lon: Double, _ r: Double) -> String {
        #"{"type":"Feature","id":"c\#(k)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":\#(r)}}"#
    }

    @Test("the shipped regions files and test fixtures read the same", arguments: [
        "datasets/regions/slovenia-croatia.geojson", "datasets/beacons/lobby.geojson",
        "Tests/GeotriggerFormatsTests/Fixtures/vienna-regions.geojson",
    ])
    func shippedFiles(path: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
        let regions = try Self.agree(text).get()
        #expect(!regions.isEmpty)
    }

    /// The layout writers use (`circle` above), taken byte for byte by the lane's first reader:
    /// its ids and numbers at their edges read as the general reader reads them, and what is not
    /// that layout (or not valid) goes on to the member-by-member reader or to the error.
    @Test("the canonical circle layout at its edges: ids", arguments: [
        // Ids: punctuation and spaces; a DEL byte, an escape, non-ASCII, empty, at and over the limit.
        #""a b""#, ##""#!$%&'()*+,-./:;<=>?@[]^_`{|}~""##, "\"x\u{7F}y\"", #""a\"b""#, #""Zürich""#, #""""#,
        "\"" + String(repeating: "i", count: InputLimits.identifierBytes) + "\"",
        "\"" + String(repeating: "i", count: InputLimits.identifierBytes + 1) + "\"",
    ])
    func canonicalIds(id: String) throws {
        let feature = #"{"type":"Feature","id":\#(id),"geometry":{"type":"Point","coordinates":[16.4,48.2]},"properties":{"radius":150}}"#
        _ = try Self.agree(#"{"type":"FeatureCollection","features":[\#(Self.circle(0, 1, 2, 3)),\#(feature),\#(Self.circle(2, 4, 5, 6))]}"#)
    }

    @Test("the canonical circle layout at its edges: numbers and ranges", arguments: [
        ("-0", "48.2", "150"), ("1e2", "-0.0", "1E-3"), ("0.5e+1", "90", "0.5"), ("-180", "-90.0", "1e7"),
        ("180", "1.0000000000000002", "123456789012345678901234567890"),
        ("01", "48", "150"), ("1.", "48", "150"), (".5", "48", "150"), ("+1", "48", "150"), ("1", "NaN", "150"),
        ("181", "48", "150"), ("16", "91", "150"), ("16", "48", "0"), ("16", "48", "-1"), ("16", "48", "1e999"),
        ("16", "48", "150,\"x\":1"), ("16 ", "48", "150"), ("16", "48]", "150"),
    ])
    func canonicalNumbers(lon: String, lat: String, radius: String) throws {
        let feature = #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":\#(radius)}}"#
        _ = try Self.agree(#"{"type":"FeatureCollection","features":[\#(Self.circle(0, 1, 2, 3)),\#(feature),\#(Self.circle(2, 4, 5, 6))]}"#)
    }

    @Test("circles as the fast lane reads them, in every member order and spacing, mixed with what it does not read")
    func mixed() throws {
        var rng = SystemRandomNumberGenerator()
        var features: [String] = []
        for k in 0..<400 {
            let lat = Double.random(in: -89...89, using: &rng), lon = Double.random(in: -179.9...179.9, using: &rng)
            let r = Double(Int.random(in: 1...5000, using: &rng)) / 7
            switch k % 8 {
            case 0: features.append(Self.circle(k, lat, lon, r))
            case 1: features.append(#"{ "properties" : { "radius" : \#(r) } ,"geometry":{"coordinates":[ \#(lon) , \#(lat) ],"type":"Point"}, "id":"c\#(k)","type":"Feature" }"#)
            case 2: features.append(#"{"type":"Feature","id":"c\#(k)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat),312.5]},"properties":{"radius":\#(r)}}"#)
            case 3: features.append(#"{"type":"Feature","id":"c\#(k)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":\#(r),"name":"Zürich \u00e9","notifyOnExit":false}}"#)
            case 4: features.append(#"{"type":"Feature","id":\#(k),"geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":\#(r)}}"#)
            case 5: features.append(#"{"type":"Feature","id":"c\u0041\#(k)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":1e2}}"#)
            case 6: features.append(#"{"type":"Feature","id":"p\#(k)","geometry":{"type":"Polygon","coordinates":[[[16.0,48.0],[16.1,48.0],[16.1,48.1],[16.0,48.0]]]},"properties":null}"#)
            default: features.append(#"{"type":"Feature","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"id":"q\#(k)","radius":0.5E+1}}"#)
            }
        }
        let text = "\u{FEFF}{\"type\":\"FeatureCollection\",\n\"features\":[\n" + features.joined(separator: ",\n") + "\n]\n}\n"
        #expect(try Self.agree(text).get().count == 400)
        // Members of the collection in another order, or more of them: read in full, the same.
        #expect(try Self.agree(#"{"features":[\#(Self.circle(1, 1, 2, 3))],"type":"FeatureCollection"}"#).get().count == 1)
        #expect(try Self.agree(#"{"type":"FeatureCollection","name":"x","features":[\#(Self.circle(1, 1, 2, 3))]}"#).get().count == 1)
        #expect(try Self.agree(#"{"type":"FeatureCollection","features":[]}"#).get().isEmpty)
    }

    /// A file large enough for two threads (`GeoJSONRegionReader.splitBytes`), `middle` put in as
    /// the feature at the middle.
    static func large(middle: String, count: Int = 36_000) -> String {
        var features: [String] = []
        features.reserveCapacity(count)
        for k in 0..<count {
            features.append(k == count / 2 ? middle : circle(k, 40 + Double(k % 1000) / 100, 10 + Double(k / 1000) / 100, Double(50 + k % 300)))
        }
        let text = "{\"type\":\"FeatureCollection\",\"features\":[\n" + features.joined(separator: ",\n") + "\n]}\n"
        precondition(text.utf8.count >= GeoJSONRegionReader.splitBytes)
        return text
    }

    @Test("a large file read by two threads gives the same regions, even when the middle guess falls inside a feature")
    func twoThreads() throws {
        // A plain middle: the second thread's half is taken.
        #expect(try Self.agree(Self.large(middle: Self.circle(999_999, 1, 1, 1))).get().count == 36_000)
        // The guess `{"type":"Feature"` after a comma, inside a feature's properties: dropped.
        let decoy = #"{"type":"Feature","id":"decoy","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":5,"list":[1,{"type":"Feature","x":1}]}}"#
        var text = Self.large(middle: decoy)
        #expect(try Self.agree(text).get().count == 36_000)
        // Decoys in every line around the middle, so the guess is surely one of them.
        text = Self.large(middle: decoy).replacingOccurrences(of: #""properties":{"radius":200.0}"#,
                                                              with: #""properties":{"radius":200.0,"l":[0,{"type":"Feature"}]}"#)
        #expect(try Self.agree(text).get().count == 36_000)
        // The layout-free guess, `}` `,` `{`, inside a property's array of objects: dropped too.
        text = Self.large(middle: decoy).replacingOccurrences(of: #""properties":{"radius":200.0}"#,
                                                              with: #""properties":{"radius":200.0,"l":[{"a":1}, {"type":"Feature"}]}"#)
        #expect(try Self.agree(text).get().count == 36_000)
    }

    @Test("a large file with a problem in its second half, or an id repeated across the halves, reports the general reader's error")
    func twoThreadsBroken() throws {
        for middle in [
            #"{"type":"Feature","id":"bad","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":0}}"#,
            #"{"type":"Feature","id":"c10","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":5}}"#,
            #"{"type":"Feature","id":"late","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":5},}"#,
        ] {
            guard case .failure = try Self.agree(Self.large(middle: middle)) else {
                Issue.record("accepted: \(middle)")
                continue
            }
        }
    }

    @Test("broken files report the general reader's error, even when a later problem is the one it names", arguments: [
        // A bad radius early and a syntax error late: the whole document's parse fails first.
        #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"radius":-1}},{"type":"Feature","id":"b",}]}"#,
        #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"radius":-1}}]}"#,
        #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"radius":5}},{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"radius":5}}]}"#,
        #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[200,2]},"properties":{"radius":5}}]}"#,
        #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","id":"b","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"radius":5}}]}"#,
        #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[1,02]},"properties":{"radius":5}}]}"#,
        #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"radius":5}}],}"#,
        #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"radius":5}}]}"#,
        #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"radius":5}}]} x"#,
        #"{"type":"Collection","features":[]}"#,
    ])
    func brokenFiles(text: String) throws {
        guard case .failure = try Self.agree(text) else {
            Issue.record("accepted: \(text)")
            return
        }
    }

    // MARK: Every writer's layout (issue 39)

    /// Whether the fast lane read the file, and read every feature itself (a feature it passes to
    /// the general parser keeps its properties as a dictionary, `.value`): the speed a user of
    /// that writer gets. The regions must also be the general reader's.
    static func readByTheLane(_ bytes: [UInt8], _ file: String) throws -> [Region] {
        let reader = GeoJSONRegionReader(file: file)
        let fast: [Region]
        do { fast = try reader.readFast(bytes) } catch {
            Issue.record("\(file): the fast lane declined the file")
            return []
        }
        #expect(fast.map(describe) == (try reader.readGeneral(bytes)).map(describe), "\(file)")
        for r in fast {
            if case .value = r.storedProperties { Issue.record("\(file): feature \(r.featureIndex) went to the general parser") }
        }
        return fast
    }

    @Test("files written by GDAL (and so QGIS), geopandas and Python's json are read by the fast lane, feature by feature, as the general reader reads them",
          arguments: ["gdal", "gdal-rfc7946-bbox", "geopandas-to-file", "geopandas-to-json", "python-json-dump",
                      "python-json-dump-indent-sorted"])
    func writersLayouts(name: String) throws {
        let url = Self.root.appendingPathComponent("Tests/GeotriggerFormatsTests/Fixtures/layouts/\(name).geojson")
        let regions = try Self.readByTheLane(Array(try Data(contentsOf: url)), name)
        #expect(regions.count == 12)
        // What the tools wrote, as the user meant it: the flags and the properties kept.
        guard regions.count == 12 else { return }
        #expect(regions.map(\.notifyOnExit) == (0..<12).map { $0 % 4 != 1 })
        guard case .object(let p)? = regions[2].properties else { Issue.record("no properties"); return }
        #expect(p["name"] == .string("Schönbrunn") && p["capacity"] == .number(200) && p["note"] == .string("visit 2 — ünïcode"))
        guard case .circle(let c, let radius) = regions[11].shape else { Issue.record("not a circle"); return }
        #expect(radius == 487.5 && abs(c.longitude - 16.443) < 1e-12 && abs(c.latitude - 48.247) < 1e-12)
        // geopandas' to_json gives every feature its row number as the id; the others keep v0…v11.
        #expect(regions.map(\.id) == (0..<12).map { name == "geopandas-to-json" ? "\($0)" : "v\($0)" })
    }

    @Test("a large file in GDAL's layout is split for two threads at a feature, and reads the same")
    func writersLayoutTwoThreads() throws {
        var text = "{\n\"type\": \"FeatureCollection\",\n\"name\": \"big\",\n"
            + "\"crs\": { \"type\": \"name\", \"properties\": { \"name\": \"urn:ogc:def:crs:OGC:1.3:CRS84\" } },\n\"features\": [\n"
        var features: [String] = []
        for k in 0..<30_000 {
            let extra = k % 3 == 0 ? #", "name": "Platz \#(k)", "kind": null"# : ""
            features.append(#"{ "type": "Feature", "properties": { "id": "g\#(k)", "radius": \#(50 + k % 400).5\#(extra) }, "geometry": { "type": "Point", "coordinates": [ \#(16 + Double(k % 997) / 1000), \#(48 + Double(k / 997) / 1000) ] } }"#)
        }
        text += features.joined(separator: ",\n") + "\n]\n}\n"
        let bytes = Array(text.utf8)
        #expect(bytes.count >= GeoJSONRegionReader.splitBytes)
        let guess = bytes.withPaddedBytes { b in GeoJSONRegionReader.splitPoint(b, from: 0) }
        if let guess {
            #expect(String(decoding: bytes[guess..<(guess + 19)], as: UTF8.self) == #"{ "type": "Feature""#)
        } else {
            Issue.record("no split point found in GDAL's layout")
        }
        let regions = try Self.readByTheLane(bytes, "big.geojson")
        #expect(regions.count == 30_000 && regions.last?.id == "g29999")
    }

    @Test("what the any-layout lane meets at its edges reads as the general reader reads it", arguments: [
        // The id in the properties only, in both places, as a number; flags; a beacon left null.
        #"{"type":"Feature","properties":{"radius":5,"id":"x"},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"y","properties":{"id":"x","radius":5},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","properties":{"id":7,"radius":5},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":2.50,"properties":{"radius":5},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"a","properties":{"radius":5,"notifyOnEntry":null,"notifyOnExit":false,"beacon":null},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"a","properties":{"radius":5,"notifyOnEntry":0},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":null,"properties":{"radius":5},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"a","properties":{"radius":5,"beacon":{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}},"geometry":null}"#,
        // Foreign members at every level, valid and not; repeated, which the parser refuses.
        #"{"type":"Feature","bbox":[1,2,1,2],"id":"a","properties":{"radius":5},"geometry":{"bbox":[1,2,1,2],"type":"Point","coordinates":[1,2]},"x":{"y":[true,false,null,"\u00e9"]}}"#,
        #"{"type":"Feature","bbox":[1,2],"bbox":[1,2],"id":"a","properties":{"radius":5},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"a","properties":{"radius":5},"geometry":{"type":"Point","type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"a","properties":{"radius":5,"n":1,"n":2},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"a","properties":{"radius":5,"radius":6},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"a","properties":{"radius":5,"n":tru},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"a","properties":{"radius":5,"n":"\ud800"},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"a","properties":{"radius":5,"n\u0061me":"x","name":"y"},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"a","properties":{},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"a","properties":{"radius":5},"geometry":{"type":"Point","coordinates":[1,2,3]}}"#,
        #"{"type":"Feature","id":"a","properties":{"radius":5},"geometry":{"type":"Point","coordinates":[1,2,"3"]}}"#,
        // Nesting at the parser's depth limit (512: collection, features, feature, properties, …).
        #"{"type":"Feature","id":"a","properties":{"radius":5,"deep":"# + String(repeating: "[", count: 508) + String(repeating: "]", count: 508) + #"},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"a","properties":{"radius":5,"deep":"# + String(repeating: "[", count: 509) + String(repeating: "]", count: 509) + #"},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
    ])
    func anyLayoutEdges(feature: String) throws {
        let text = #"{"name":"n","type":"FeatureCollection","crs":null,"features":[\#(Self.circle(0, 1, 2, 3)),\#(feature)]}"#
        _ = try Self.agree(text)
        // A collection member repeated: refused by the parser, so by the file.
        guard case .failure = try Self.agree(#"{"name":"n","type":"FeatureCollection","name":"m","features":[\#(feature)]}"#) else {
            Issue.record("a repeated collection member was accepted")
            return
        }
    }

    @Test("regions whose properties the lane keeps as text give them back whole, to the map and to --echo-properties")
    func propertiesKeptAsText() throws {
        let text = #"{"type": "FeatureCollection", "features": [{"type": "Feature", "id": "a", "properties": {"radius": 5, "name": "Caf\u00e9", "tags": ["x", {"k": 1.50}]}, "geometry": {"type": "Point", "coordinates": [1, 2]}}, {"type": "Feature", "properties": {"id": "b", "radius": 6}, "geometry": {"type": "Point", "coordinates": [1, 2]}}]}"#
        let regions = try Self.readByTheLane(Array(text.utf8), "t.geojson")
        #expect(regions.first?.properties?.serialized() == #"{"name":"Café","radius":5,"tags":["x",{"k":1.5}]}"#)
        #expect(regions.last?.properties?.serialized() == #"{"id":"b","radius":6}"#)
    }

    /// Python's layout (the id the feature's), GDAL's (the id the properties') and geopandas'
    /// `to_json` (an id in both places, the properties' `p` + the id), for `learntLayoutEdges`.
    enum Writer: CaseIterable { case python, gdal, geopandas }
    static func spaced(_ id: String, _ lon: String, _ lat: String, _ radius: String, _ writer: Writer) -> String {
        switch writer {
        case .python:
            #"{"type": "Feature", "id": \#(id), "geometry": {"type": "Point", "coordinates": [\#(lon), \#(lat)]}, "properties": {"radius": \#(radius)}}"#
        case .gdal:
            #"{ "type": "Feature", "properties": { "id": \#(id), "radius": \#(radius) }, "geometry": { "type": "Point", "coordinates": [ \#(lon), \#(lat) ] } }"#
        case .geopandas:
            #"{"id": \#(id), "type": "Feature", "properties": {"id": "p\#(id.replacingOccurrences(of: "\"", with: ""))", "radius": \#(radius)}, "geometry": {"type": "Point", "coordinates": [\#(lon), \#(lat)]}}"#
        }
    }

    @Test("a writer's layout learnt from one feature reads the next ones as the member-by-member lane does, at their edges", arguments: [
        // The properties' id (geopandas): empty, with a quote, non-ASCII.
        (#""""#, "1", "2", "3"), (#""q\"""#, "1", "2", "3"), (#""é""#, "1", "2", "3"),
        // Ids: spaces, empty, an escape, non-ASCII, a number, null, at and over the limit.
        (#""a b""#, "16.4", "48.2", "150"), (#""""#, "16.4", "48.2", "150"), (#""a\"b""#, "16.4", "48.2", "150"),
        (#""Zürich""#, "16.4", "48.2", "150"), ("7", "16.4", "48.2", "150"), ("null", "16.4", "48.2", "150"),
        ("\"" + String(repeating: "i", count: InputLimits.identifierBytes) + "\"", "16.4", "48.2", "150"),
        ("\"" + String(repeating: "i", count: InputLimits.identifierBytes + 1) + "\"", "16.4", "48.2", "150"),
        // Numbers: spellings, out of range, not numbers, more whitespace than the layout's.
        (#""x""#, "-0", "1e2", "1E-3"), (#""x""#, "01", "48", "150"), (#""x""#, "181", "48", "150"),
        (#""x""#, "16", "91", "150"), (#""x""#, "16", "48", "0"), (#""x""#, "16", "48", "1e999"),
        (#""x""#, "16", "48", "\"150\""), (#""x""#, "16 ", "48", "150"), (#""x""#, " 16", "48", "150"),
        (#""x""#, "16", "48", "150, \"name\": \"n\""), (#""x""#, "16", "48, 30", "150"), (#""x""#, "16", "48", "150.0e"),
    ])
    func learntLayoutEdges(id: String, lon: String, lat: String, radius: String) throws {
        for writer in Writer.allCases {
            let features = [Self.spaced(#""c0""#, "1", "2", "3", writer), Self.spaced(#""c1""#, "1.5", "2.5", "3.5", writer),
                            Self.spaced(id, lon, lat, radius, writer), Self.spaced(#""c3""#, "4", "5", "6", writer)]
            _ = try Self.agree(#"{"type": "FeatureCollection", "features": [\#(features.joined(separator: ", "))]}"#)
        }
    }
}
