import Testing

@testable import GeotriggerCore
import GeotriggerFormats

/// A FeatureCollection around the given feature texts.
private func collection(_ features: String...) -> String {
    #"{"type": "FeatureCollection", "features": ["# + features.joined(separator: ",\n") + "]}"
}

private func parse(_ text: String, fileName: String = "regions.geojson") throws(RegionFileError) -> [Region] {
    try RegionFile.parse(bytes: Array(text.utf8), fileName: fileName)
}

private let stephansplatz = #"{"type": "Feature", "id": "stephansplatz", "properties": {"radius": 150}, "geometry": {"type": "Point", "coordinates": [16.3725, 48.2084]}}"#

@Suite("Regions from GeoJSON")
struct RegionFileGeoJSONTests {
    @Test func parsesACircle() throws {
        let regions = try parse(collection(stephansplatz))
        #expect(regions.count == 1)
        let region = try #require(regions.first)
        #expect(region.id == "stephansplatz")
        guard case .circle(let center, let radius) = region.shape else {
            Issue.record("not a circle: \(region.shape)")
            return
        }
        // GeoJSON is [lon, lat].
        #expect(center == Coordinate(latitude: 48.2084, longitude: 16.3725))
        #expect(radius == 150)
        #expect(region.notifyOnEntry && region.notifyOnExit)
        #expect(region.properties == ["radius": 150])
        #expect(region.featureIndex == 0)
    }

    @Test func parsesAPolygonWithAHole() throws {
        let regions = try parse(collection(#"""
            {"type": "Feature", "id": "park", "properties": null, "geometry": {"type": "Polygon", "coordinates": [
              [[16.0, 48.0], [16.1, 48.0], [16.1, 48.1], [16.0, 48.1], [16.0, 48.0]],
              [[16.02, 48.02, 170], [16.04, 48.02, 170], [16.04, 48.04, 170], [16.02, 48.02, 170]]
            ]}}
            """#))
        let region = try #require(regions.first)
        #expect(region.properties == nil)
        guard case .polygons(let polygons) = region.shape else {
            Issue.record("not a polygon: \(region.shape)")
            return
        }
        #expect(polygons.count == 1)
        #expect(polygons[0].count == 2)
        #expect(polygons[0][0].count == 5)
        #expect(polygons[0][0][1] == Coordinate(latitude: 48.0, longitude: 16.1))
        #expect(polygons[0][1][2] == Coordinate(latitude: 48.04, longitude: 16.04))
    }

    @Test func parsesAMultiPolygon() throws {
        let regions = try parse(collection(#"""
            {"type": "Feature", "id": "islands", "geometry": {"type": "MultiPolygon", "coordinates": [
              [[[179.0, -17.0], [180.0, -17.0], [180.0, -16.0], [179.0, -17.0]]],
              [[[-180.0, -17.0], [-179.0, -17.0], [-180.0, -16.0], [-180.0, -17.0]]]
            ]}}
            """#))
        guard case .polygons(let polygons) = try #require(regions.first).shape else {
            Issue.record("not polygons")
            return
        }
        #expect(polygons.count == 2)
        #expect(polygons[1][0][0] == Coordinate(latitude: -17, longitude: -180))
        #expect(polygons[1][0][2] == Coordinate(latitude: -16, longitude: -180))
    }

    @Test func keepsFeatureOrderAndIndices() throws {
        let regions = try parse(collection(
            stephansplatz,
            #"{"type": "Feature", "id": "b", "properties": {"radius": 1}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#))
        #expect(regions.map(\.id) == ["stephansplatz", "b"])
        #expect(regions.map(\.featureIndex) == [0, 1])
    }

    @Test(arguments: [
        (#""id": "feature-id", "properties": {"radius": 5}"#, "feature-id"),
        (#""properties": {"id": "prop-id", "radius": 5}"#, "prop-id"),
        (#""id": "wins", "properties": {"id": "loses", "radius": 5}"#, "wins"),
        (#""id": null, "properties": {"id": "prop-id", "radius": 5}"#, "prop-id"),
        (#""id": 42, "properties": {"radius": 5}"#, "42"),
        (#""id": 2.5, "properties": {"radius": 5}"#, "2.5"),
        (#""properties": {"id": 7, "radius": 5}"#, "7"),
    ])
    func takesTheIdFromTheFeatureOrItsProperties(members: String, expectedID: String) throws {
        let feature = #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [1, 2]}, "# + members + "}"
        #expect(try parse(collection(feature)).first?.id == expectedID)
    }

    @Test func readsNotifyFlagsAndKeepsPropertiesVerbatim() throws {
        let regions = try parse(collection(#"""
            {"type": "Feature", "id": "a", "properties": {"radius": 10, "notifyOnEntry": false, "notifyOnExit": null,
             "name": "Café", "tags": ["x", {"y": 1}]}, "geometry": {"type": "Point", "coordinates": [1, 2]}}
            """#))
        let region = try #require(regions.first)
        #expect(!region.notifyOnEntry)
        #expect(region.notifyOnExit)
        #expect(region.properties?["name"] == "Café")
        #expect(region.properties?["tags"] == ["x", ["y": 1]])
        #expect(region.properties?["notifyOnEntry"] == false)
    }

    @Test func acceptsAnEmptyCollection() throws {
        #expect(try parse(collection()).isEmpty)
    }

    @Test(arguments: [
        // The document
        ("[]", "not a GeoJSON FeatureCollection: the document is an array"),
        (#"{"features": []}"#, "not a GeoJSON FeatureCollection: no \"type\" member"),
        (#"{"type": "Feature", "features": []}"#, #"not a GeoJSON FeatureCollection: type is "Feature""#),
        (#"{"type": "FeatureCollection"}"#, #"FeatureCollection has no "features" member"#),
        (#"{"type": "FeatureCollection", "features": {}}"#, #""features" must be an array, not an object"#),
        // The feature
        (collection("3"), "feature must be an object, not a number"),
        (collection(#"{"id": "a", "properties": {"radius": 1}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "not a GeoJSON Feature: no \"type\" member"),
        (collection(#"{"type": "Feature", "id": "a", "properties": [], "geometry": null}"#),
         "properties must be an object or null, not an array"),
        // The id
        (collection(#"{"type": "Feature", "properties": {"radius": 1}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "missing id"),
        (collection(#"{"type": "Feature", "id": "", "properties": {"radius": 1}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "id must not be empty"),
        (collection(#"{"type": "Feature", "id": true, "properties": {"radius": 1}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "id must be a string or a number, not a boolean"),
        (collection(#"{"type": "Feature", "properties": {"id": ["a"], "radius": 1}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "properties.id must be a string or a number, not an array"),
        (collection(stephansplatz, stephansplatz), #"duplicate id "stephansplatz" (first used by feature 0)"#),
        // Flags and beacons
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1, "notifyOnEntry": "yes"}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "properties.notifyOnEntry must be true or false, not a string"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1, "notifyOnExit": 0}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "properties.notifyOnExit must be true or false, not a number"),
(collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"major": 1}}, "geometry": null}"#),
         "properties.beacon.uuid is missing"),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "not-a-uuid"}}, "geometry": null}"#),
         "is not a UUID"),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": "E2C5"}, "geometry": null}"#),
         "properties.beacon must be an object"),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 70000}}, "geometry": null}"#),
         "properties.beacon.major must be a whole number from 0 to 65535"),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 1.5}}, "geometry": null}"#),
         "properties.beacon.minor must be a whole number"),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "minor": 7}}, "geometry": null}"#),
         "minor needs a major"),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "mayor": 7}}, "geometry": null}"#),
         "unknown field \"mayor\""),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}, "proximity": "close"}, "geometry": null}"#),
         "proximity must be immediate, near, far or any"),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}, "proximity": "near", "radius": 2}, "geometry": null}"#),
         "not both"),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}, "radius": -2}, "geometry": null}"#),
         "radius must be greater than 0"),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}, "measuredPower": 5}, "geometry": null}"#),
         "measuredPower (RSSI at 1 m) must be from -127 to -1"),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}, "pathLossExponent": 0}, "geometry": null}"#),
         "pathLossExponent must be greater than 0"),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}}, "geometry": {"type": "Polygon", "coordinates": []}}"#),
         "geometry must be null or a Point"),
        (collection(#"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}}, "geometry": {"type": "Point", "coordinates": [0, 95]}}"#),
         "latitude 95 is outside"),
        // The geometry
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1}}"#), "feature has no geometry"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1}, "geometry": null}"#), "geometry is null"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1}, "geometry": [0, 0]}"#),
         "geometry must be an object, not an array"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1}, "geometry": {"coordinates": [0, 0]}}"#),
         "geometry has no type"),
        (collection(#"{"type": "Feature", "id": "a", "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}"#),
         #"unsupported geometry type "LineString" (expected Point, Polygon or MultiPolygon)"#),
        (collection(#"{"type": "Feature", "id": "a", "geometry": {"type": "GeometryCollection", "geometries": []}}"#),
         #"unsupported geometry type "GeometryCollection""#),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1}, "geometry": {"type": "Point"}}"#),
         "Point geometry has no coordinates"),
        // Positions
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1}, "geometry": {"type": "Point", "coordinates": "0,0"}}"#),
         "coordinates must be a position [lon, lat], not a string"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1}, "geometry": {"type": "Point", "coordinates": [16]}}"#),
         "coordinates has 1 elements; a position is [lon, lat] or [lon, lat, altitude]"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1}, "geometry": {"type": "Point", "coordinates": [16, "48"]}}"#),
         "coordinates[1] must be a number, not a string"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1}, "geometry": {"type": "Point", "coordinates": [16, 95]}}"#),
         "coordinates: latitude 95 is outside [-90, 90]"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1}, "geometry": {"type": "Point", "coordinates": [180.5, 0]}}"#),
         "coordinates: longitude 180.5 is outside [-180, 180]"),
        (collection(#"{"type": "Feature", "id": "a", "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, -91], [0, 0]]]}}"#),
         "coordinates[0][2]: latitude -91 is outside [-90, 90]"),
        // Radius
        (collection(#"{"type": "Feature", "id": "a", "properties": {"name": "x"}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "Point needs properties.radius"),
        (collection(#"{"type": "Feature", "id": "a", "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "Point needs properties.radius"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": "50"}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "properties.radius must be a number, not a string"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 0}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "properties.radius must be greater than 0 (got 0)"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": -2.5}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "properties.radius must be greater than 0 (got -2.5)"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 1e999}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#),
         "not valid JSON: number out of range"),
        (collection(#"{"type": "Feature", "id": "a", "properties": {"radius": 5}, "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}}"#),
         "properties.radius applies only to Point geometries, not Polygon"),
        // Polygon rings
        (collection(#"{"type": "Feature", "id": "a", "geometry": {"type": "Polygon", "coordinates": []}}"#),
         "Polygon has no rings"),
        (collection(#"{"type": "Feature", "id": "a", "geometry": {"type": "Polygon", "coordinates": [[0, 0], [1, 0], [1, 1], [0, 0]]}}"#),
         "coordinates[0][0] must be a position [lon, lat], not a number"),
        (collection(#"{"type": "Feature", "id": "a", "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [0, 0]]]}}"#),
         "Polygon ring 0 has 3 positions; a ring needs at least 4"),
        (collection(#"{"type": "Feature", "id": "a", "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]], [[0, 0], [1, 0], [1, 1], [0, 1]]]}}"#),
         "Polygon ring 1 is not closed"),
        (collection(#"{"type": "Feature", "id": "a", "geometry": {"type": "MultiPolygon", "coordinates": []}}"#),
         "MultiPolygon has no polygons"),
        (collection(#"{"type": "Feature", "id": "a", "geometry": {"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 0]]], [[[0, 0], [1, 0], [1, 1], [0, 0]], [[0, 0], [0, 1], [0, 0]]]]}}"#),
         "MultiPolygon polygon 1 ring 1 has 3 positions"),
        (collection(#"{"type": "Feature", "id": "a", "geometry": {"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 1]]]]}}"#),
         "MultiPolygon polygon 0 ring 0 is not closed"),
    ])
    func rejects(document: String, expectedReason: String) {
        do {
            let regions = try parse(document)
            Issue.record("accepted: \(regions.map(\.id))")
        } catch {
            #expect(error.reason.contains(expectedReason), "\(error)")
            #expect(error.file == "regions.geojson")
            #expect(error.kind == .invalidContent)
        }
    }

    @Test func errorsNameTheFileFeatureAndId() {
        let second = #"{"type": "Feature", "id": "b", "properties": {"radius": -1}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#
        #expect(
            throws: RegionFileError(
                file: "city.geojson", featureIndex: 1, id: "b", reason: "properties.radius must be greater than 0 (got -1)")
        ) {
            try parse(collection(stephansplatz, second), fileName: "city.geojson")
        }
        do {
            _ = try parse(collection(stephansplatz, second), fileName: "city.geojson")
        } catch {
            #expect(error.description == #"city.geojson: feature 1 (id "b"): properties.radius must be greater than 0 (got -1)"#)
        }
    }

    @Test func duplicateIdsNameTheFirstFeature() {
        let other = #"{"type": "Feature", "properties": {"id": "stephansplatz", "radius": 3}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#
        #expect(
            throws: RegionFileError(
                file: "regions.geojson", featureIndex: 2, id: "stephansplatz",
                reason: #"duplicate id "stephansplatz" (first used by feature 0)"#)
        ) {
            try parse(collection(stephansplatz, #"{"type": "Feature", "id": 1, "properties": {"radius": 1}, "geometry": {"type": "Point", "coordinates": [0, 0]}}"#, other))
        }
    }

    @Test func jsonSyntaxErrorsGiveLineAndColumn() {
        let text = "{\"type\": \"FeatureCollection\",\n \"features\": [,]}"
        do {
            _ = try parse(text)
            Issue.record("accepted")
        } catch {
            #expect(error.line == 2)
            #expect(error.column == 15)
            #expect(error.description == "regions.geojson:2:15: not valid JSON: unexpected ',', expected a value")
        }
    }

    @Test(arguments: ["regions.geojson", "regions.json", "REGIONS.GeoJSON", "regions.txt", "-"])
    func detectsGeoJSON(fileName: String) throws {
        #expect(try parse("\n  " + collection(stephansplatz), fileName: fileName).count == 1)
    }

    @Test("beacon regions: identity with wildcards, zone, radio model, optional position")
    func parsesBeaconRegions() throws {
        let text = collection(
            #"{"type": "Feature", "id": "lobby", "properties": {"beacon": {"uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "major": 1, "minor": 7}, "proximity": "near", "measuredPower": -61, "pathLossExponent": 2.5}, "geometry": {"type": "Point", "coordinates": [16.37, 48.2]}}"#,
            #"{"type": "Feature", "id": "store", "properties": {"beacon": {"uuid": "E2C56DB5DFFB48D2B060D0F5A71096E0", "major": 2}, "radius": 8}, "geometry": null}"#,
            #"{"type": "Feature", "id": "chain", "properties": {"beacon": {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}}, "geometry": null}"#)
        let regions = try RegionFile.parse(bytes: Array(text.utf8), fileName: "b.geojson")
        guard case .beacon(let lobby) = regions[0].shape, case .beacon(let store) = regions[1].shape,
              case .beacon(let chain) = regions[2].shape else {
            Issue.record("expected beacon regions")
            return
        }
        #expect(lobby.identity.uuidString == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        #expect(lobby.identity.uuidHigh == 0xE2C5_6DB5_DFFB_48D2 && lobby.identity.uuidLow == 0xB060_D0F5_A710_96E0)
        #expect(lobby.identity.major == 1 && lobby.identity.minor == 7)
        #expect(lobby.zone == .near && lobby.measuredPower == -61 && lobby.pathLossExponent == 2.5)
        #expect(lobby.position == Coordinate(latitude: 48.2, longitude: 16.37))
        #expect(store.identity == lobby.identity.with(major: 2, minor: -1))
        #expect(store.zone == .radius(8) && store.position == nil && store.measuredPower == nil)
        #expect(chain.identity.major == -1 && chain.identity.minor == -1 && chain.zone == .any)
    }
}

extension BeaconID {
    func with(major: Int32, minor: Int32) -> BeaconID {
        BeaconID(uuidHigh: uuidHigh, uuidLow: uuidLow, major: major, minor: minor)
    }
}
