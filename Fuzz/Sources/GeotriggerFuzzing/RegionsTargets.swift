import GeotriggerCore
import GeotriggerFormats

/// The regions files (SPEC §3) and the JSON parser under them.
enum RegionsTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget(
            name: "geojson-regions",
            about: "GeoJSON regions: whatever the fast lane reads, the general reader reads the same (ids, shapes to "
                + "the bit, flags, properties); what the general reader refuses, the fast lane declines, and the "
                + "file's reader reports the general reader's error",
            check: { geojson($0) }),
        FuzzTarget(
            name: "csv-regions",
            about: "CSV regions: the plain rows' way reads what the general scan reads (regions to the bit, or the "
                + "same error); an accepted file's circles, written back as CSV with every id quoted and as GeoJSON, "
                + "read again the same",
            check: { csv($0) }),
        FuzzTarget(
            name: "json-value",
            about: "The JSON parser (requests, control records, region records, payloads): a parsed document "
                + "serialized and parsed again is the same value, and serializes to the same bytes",
            check: { json($0) }),
    ]

    static func geojson(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var findings = Findings()
        let array = Array(bytes)
        let reader = GeoJSONRegionReader(file: "fuzz.geojson")
        let general = Result { () throws(RegionFileError) in try reader.readGeneral(array) }
        let fast = Result { () throws(GeoJSONDeclined) in try reader.readFast(array) }
        let whole = Result { () throws(RegionFileError) in try RegionFile.parse(bytes: array, fileName: "fuzz.geojson") }
        switch (fast, general) {
        case (.success(let a), .success(let b)):
            compare(a, "the fast lane", b, "the general reader", &findings)
        case (.success(let a), .failure(let e)):
            findings.add("the fast lane read \(a.count) regions, the general reader refused: \(e)")
        case (.failure, _):
            break
        }
        switch (whole, general) {
        case (.success(let a), .success(let b)): compare(a, "RegionFile.parse", b, "the general reader", &findings)
        case (.failure(let a), .failure(let b)):
            findings.expect(a == b, "RegionFile.parse reported \(a), the general reader \(b)")
        case (.success, .failure(let e)): findings.add("RegionFile.parse read the file, the general reader refused: \(e)")
        case (.failure(let e), .success): findings.add("RegionFile.parse refused (\(e)), the general reader read it")
        }
        return findings.problems
    }

    static func csv(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var findings = Findings()
        let array = Array(bytes)
        let fast = Result { () throws(RegionFileError) in try CSVRegionReader(file: "fuzz.csv").read(array) }
        let general = Result { () throws(RegionFileError) in try CSVRegionReader(file: "fuzz.csv", plainRows: false).read(array) }
        switch (fast, general) {
        case (.success(let a), .success(let b)): compare(a, "plain rows", b, "the general scan", &findings)
        case (.failure(let a), .failure(let b)): findings.expect(a == b, "plain rows: \(a); the general scan: \(b)")
        case (.success(let a), .failure(let e)): findings.add("plain rows read \(a.count) regions, the general scan refused: \(e)")
        case (.failure(let e), .success(let b)): findings.add("plain rows refused (\(e)), the general scan read \(b.count) regions")
        }
        guard let regions = try? RegionFile.parse(bytes: array, fileName: "fuzz.csv") else { return findings.problems }
        var quoted = "id,lat,lon,radius\r\n"
        var geojson = #"{"type":"FeatureCollection","features":["#
        for (k, r) in regions.enumerated() {
            guard case .circle(let c, let radius) = r.shape else {
                findings.add("a CSV region that is not a circle: \(describe(r))")
                continue
            }
            quoted += "\"\(r.id.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\""))\",\(c.latitude),\(c.longitude),\(radius)\r\n"
            if k > 0 { geojson += "," }
            geojson += #"{"type":"Feature","id":\#(JSONValue.string(r.id).serialized()),"geometry":{"type":"Point","coordinates":[\#(c.longitude),\#(c.latitude)]},"properties":{"radius":\#(radius)}}"#
        }
        geojson += "]}"
        do {
            compare(regions, "the file", try RegionFile.parse(bytes: Array(quoted.utf8), fileName: "again.csv"),
                    "the same regions written as quoted CSV", &findings)
        } catch {
            findings.add("the regions written as quoted CSV were refused: \(error)")
        }
        do {
            compare(regions, "the file", try RegionFile.parse(bytes: Array(geojson.utf8), fileName: "again.geojson"),
                    "the same regions written as GeoJSON", &findings, withProperties: false)
        } catch {
            findings.add("the regions written as GeoJSON were refused: \(error)")
        }
        return findings.problems
    }

    static func json(_ bytes: UnsafeRawBufferPointer) -> [String] {
        guard let value = try? JSONValue.parse(Array(bytes)) else { return [] }
        var findings = Findings()
        let text = value.serialized()
        do {
            let again = try JSONValue.parse(text)
            // NaN cannot arise (the grammar has no such number); -0 and 0 are equal as Doubles and
            // serialize apart, so the text is compared too.
            findings.expect(again == value, "`\(quoted(text.utf8))` parsed again is another value")
            findings.expect(again.serialized() == text, "`\(quoted(text.utf8))` serialized again differs")
        } catch {
            findings.add("its serialization `\(quoted(text.utf8))` does not parse: \(error)")
        }
        return findings.problems
    }

    /// `withProperties: false`: a CSV circle has none, the same circle in GeoJSON its radius.
    static func compare(_ a: [Region], _ aName: String, _ b: [Region], _ bName: String, _ findings: inout Findings,
                        withProperties: Bool = true) {
        guard a.count == b.count else {
            findings.add("\(aName) read \(a.count) regions, \(bName) \(b.count)")
            return
        }
        for (x, y) in zip(a, b) where describe(x, withProperties) != describe(y, withProperties) {
            findings.add("\(aName) read \(describe(x)), \(bName) \(describe(y))")
            return
        }
    }

    /// A region to the bit: id, shape, flags and properties.
    static func describe(_ r: Region, _ withProperties: Bool = true) -> String {
        func bits(_ x: Double) -> String { "\(x)[\(String(x.bitPattern, radix: 16))]" }
        func point(_ c: Coordinate) -> String { "(\(bits(c.latitude)),\(bits(c.longitude)))" }
        let shape: String
        switch r.shape {
        case .circle(let c, let radius): shape = "circle \(point(c)) r=\(bits(radius))"
        case .polygons(let polygons): shape = "polygons " + polygons.map { $0.map { $0.map(point).joined() }.joined(separator: "|") }.joined(separator: "/")
        case .beacon(let b):
            shape = "beacon \(b.identity) \(b.zone) \(b.measuredPower.map(bits) ?? "-") \(b.pathLossExponent.map(bits) ?? "-") \(b.position.map(point) ?? "-")"
        }
        return "`\(quoted(r.id.utf8))` \(shape) entry=\(r.notifyOnEntry) exit=\(r.notifyOnExit)"
            + (withProperties ? " properties=\(r.properties?.serialized() ?? "-")" : "")
    }
}
