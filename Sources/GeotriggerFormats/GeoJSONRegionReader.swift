import GeotriggerCore
/// Turns a GeoJSON FeatureCollection into regions, validating every feature.
package struct GeoJSONRegionReader {
    let file: String

    package init(file: String) { self.file = file }

    func read(_ bytes: [UInt8]) throws(RegionFileError) -> [Region] {
        // The fast lane first (GeoJSONFastPath.swift); whatever it declines is read here.
        if let regions = try? readFast(bytes) { return regions }
        return try readGeneral(bytes)
    }

    /// The whole document parsed, then every feature read: the reference the fast lane must
    /// agree with, and where every error of a regions file is reported.
    package func readGeneral(_ bytes: [UInt8]) throws(RegionFileError) -> [Region] {
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            throw RegionFileError(
                file: file, reason: "not valid JSON: \(error.reason)", line: error.line, column: error.column)
        }
        guard case .object(let collection) = document else {
            throw fail("not a GeoJSON FeatureCollection: the document is \(document.kindDescription)")
        }
        guard let type = collection["type"] else {
            throw fail("not a GeoJSON FeatureCollection: no \"type\" member")
        }
        guard type == .string("FeatureCollection") else {
            throw fail("not a GeoJSON FeatureCollection: type is \(type.serialized())")
        }
        guard let featuresValue = collection["features"] else {
            throw fail("FeatureCollection has no \"features\" member")
        }
        guard case .array(let features) = featuresValue else {
            throw fail("\"features\" must be an array, not \(featuresValue.kindDescription)")
        }

        var regions: [Region] = []
        regions.reserveCapacity(features.count)
        var firstIndexByID: [String: Int] = [:]
        firstIndexByID.reserveCapacity(features.count)
        for (index, feature) in features.enumerated() {
            let region = try readFeature(feature, index: index)
            if let first = firstIndexByID.updateValue(index, forKey: region.id) {
                throw fail("duplicate id \"\(region.id)\" (first used by feature \(first))", index, region.id)
            }
            regions.append(region)
        }
        return regions
    }

    func readFeature(_ value: JSONValue, index: Int) throws(RegionFileError) -> Region {
        guard case .object(let feature) = value else {
            throw fail("feature must be an object, not \(value.kindDescription)", index)
        }
        // The id first, so every later error can name it.
        var id = try regionID(feature["id"], field: "id", index: index)
        let properties: [String: JSONValue]?
        switch feature["properties"] {
        case nil, .null?: properties = nil
        case .object(let members)?: properties = members
        case let other?:
            throw fail("properties must be an object or null, not \(other.kindDescription)", index, id)
        }
        if id == nil { id = try regionID(properties?["id"], field: "properties.id", index: index) }

        guard feature["type"] == .string("Feature") else {
            let found = feature["type"].map { "type is \($0.serialized())" } ?? "no \"type\" member"
            throw fail("not a GeoJSON Feature: \(found)", index, id)
        }
        guard let id else {
            throw fail("missing id (give the feature an \"id\" or properties.id)", index)
        }
        let notifyOnEntry = try flag("notifyOnEntry", in: properties, index: index, id: id)
        let notifyOnExit = try flag("notifyOnExit", in: properties, index: index, id: id)
        let shape: Region.Shape
        if let beacon = properties?["beacon"], !beacon.isNull {
            shape = .beacon(try readBeacon(beacon, geometry: feature["geometry"], properties: properties ?? [:],
                                           index: index, id: id))
        } else {
            shape = try readShape(feature["geometry"], properties: properties, index: index, id: id)
        }
        return Region(
            id: id, shape: shape, notifyOnEntry: notifyOnEntry, notifyOnExit: notifyOnExit,
            properties: properties.map(JSONValue.object), featureIndex: index)
    }

    /// A string id as is; a number id as its JSON text (`7`, `2.5`); `nil` when absent or null.
    private func regionID(_ value: JSONValue?, field: String, index: Int) throws(RegionFileError) -> String? {
        switch value {
        case nil, .null?:
            return nil
        case .string(let text)?:
            guard !text.isEmpty else { throw fail("\(field) must not be empty", index) }
            // Not named in the error: it is the problem, and may be any length.
            guard InputLimits.identifierFits(text) else {
                throw fail(InputLimits.identifierTooLong(field, byteCount: text.utf8.count), index)
            }
            return text
        case .number(let number)?:
            return formatNumber(number)
        case let other?:
            throw fail("\(field) must be a string or a number, not \(other.kindDescription)", index)
        }
    }

    private func flag(
        _ name: String, in properties: [String: JSONValue]?, index: Int, id: String
    ) throws(RegionFileError) -> Bool {
        switch properties?[name] {
        case nil, .null?: return true
        case .bool(let value)?: return value
        case let other?: throw fail("properties.\(name) must be true or false, not \(other.kindDescription)", index, id)
        }
    }

    // MARK: Beacon regions

    /// `properties.beacon` = {uuid, major?, minor?}; `proximity` or `radius`; `measuredPower`,
    /// `pathLossExponent`; geometry null or a Point where the beacon is installed.
    private func readBeacon(
        _ value: JSONValue, geometry: JSONValue?, properties: [String: JSONValue], index: Int, id: String
    ) throws(RegionFileError) -> BeaconRegion {
        guard case .object(let b) = value else {
            throw fail("properties.beacon must be an object {uuid, major, minor}, not \(value.kindDescription)", index, id)
        }
        guard let text = b["uuid"]?.stringValue else {
            throw fail("properties.beacon.uuid is missing (a UUID string is required)", index, id)
        }
        guard let (hi, lo) = BeaconID.parseUUID(text) else {
            throw fail("properties.beacon.uuid \"\(text)\" is not a UUID (8-4-4-4-12 hex digits)", index, id)
        }
        func part(_ name: String) throws(RegionFileError) -> Int32 {
            guard let v = b[name], !v.isNull else { return -1 }
            guard let x = v.doubleValue, x == x.rounded(), (0...65535).contains(x) else {
                throw fail("properties.beacon.\(name) must be a whole number from 0 to 65535", index, id)
            }
            return Int32(x)
        }
        let identity = BeaconID(uuidHigh: hi, uuidLow: lo, major: try part("major"), minor: try part("minor"))
        if identity.major < 0 && identity.minor >= 0 {
            throw fail("properties.beacon.minor needs a major (Core Location matches minor only within a major)", index, id)
        }
        if let extra = b.keys.sorted().first(where: { !["uuid", "major", "minor"].contains($0) }) {
            throw fail("properties.beacon has an unknown field \"\(extra)\"", index, id)
        }

        func number(_ name: String) throws(RegionFileError) -> Double? {
            guard let v = properties[name], !v.isNull else { return nil }
            guard case .number(let x) = v, x.isFinite else {
                throw fail("properties.\(name) must be a finite number", index, id)
            }
            return x
        }
        var zone = BeaconRegion.Zone.any
        let radius = try number("radius")
        if let p = properties["proximity"], !p.isNull {
            if radius != nil { throw fail("give properties.proximity or properties.radius, not both", index, id) }
            switch p.stringValue {
            case "immediate": zone = .immediate
            case "near": zone = .near
            case "far": zone = .far
            case "any": zone = .any
            default: throw fail("properties.proximity must be immediate, near, far or any", index, id)
            }
        } else if let radius {
            if let problem = radiusProblem(radius) { throw fail("properties.\(problem)", index, id) }
            zone = .radius(radius)
        }
        let power = try number("measuredPower")
        if let power, !(-127 ... -1).contains(power) {
            throw fail("properties.measuredPower (RSSI at 1 m) must be from -127 to -1 dBm", index, id)
        }
        let exponent = try number("pathLossExponent")
        if let exponent, !(exponent > 0 && exponent <= 10) {
            throw fail("properties.pathLossExponent must be greater than 0 and at most 10 (free space is 2)", index, id)
        }
        var position: Coordinate?
        switch geometry {
        case nil, .null?:
            position = nil
        case .object(let g)? where g["type"] == .string("Point"):
            guard let coordinates = g["coordinates"] else { throw fail("Point geometry has no coordinates", index, id) }
            position = try CoordinateContext(reader: self, index: index, id: id).position(coordinates, path: "coordinates")
        default:
            throw fail("a beacon region's geometry must be null or a Point (where the beacon is installed)", index, id)
        }
        return BeaconRegion(identity: identity, zone: zone, measuredPower: power, pathLossExponent: exponent,
                            position: position)
    }

    // MARK: Geometry

    private func readShape(
        _ geometryValue: JSONValue?, properties: [String: JSONValue]?, index: Int, id: String
    ) throws(RegionFileError) -> Region.Shape {
        let geometry: [String: JSONValue]
        switch geometryValue {
        case nil: throw fail("feature has no geometry", index, id)
        case .null?: throw fail("geometry is null (only beacon regions may leave it out)", index, id)
        case .object(let members)?: geometry = members
        case let other?: throw fail("geometry must be an object, not \(other.kindDescription)", index, id)
        }
        guard let typeValue = geometry["type"] else { throw fail("geometry has no type", index, id) }
        guard case .string(let type) = typeValue else {
            throw fail("geometry type must be a string, not \(typeValue.kindDescription)", index, id)
        }
        let radius = properties?["radius"].flatMap { $0.isNull ? nil : $0 }
        switch type {
        case "Point", "Polygon", "MultiPolygon": break
        default:
            throw fail("unsupported geometry type \"\(type)\" (expected Point, Polygon or MultiPolygon)", index, id)
        }
        guard let coordinates = geometry["coordinates"] else {
            throw fail("\(type) geometry has no coordinates", index, id)
        }
        let context = CoordinateContext(reader: self, index: index, id: id)

        switch type {
        case "Point":
            let center = try context.position(coordinates, path: "coordinates")
            guard let radius else { throw fail("Point needs properties.radius (metres)", index, id) }
            guard case .number(let metres) = radius else {
                throw fail("properties.radius must be a number, not \(radius.kindDescription)", index, id)
            }
            if let problem = radiusProblem(metres) { throw fail("properties.\(problem)", index, id) }
            return .circle(center: center, radius: metres)
        case "Polygon":
            if radius != nil { throw fail("properties.radius applies only to Point geometries, not Polygon", index, id) }
            return .polygons([try context.polygon(coordinates, path: "coordinates", name: "Polygon")])
        default:  // MultiPolygon
            if radius != nil {
                throw fail("properties.radius applies only to Point geometries, not MultiPolygon", index, id)
            }
            let polygons = try context.array(coordinates, path: "coordinates", of: "polygons")
            guard !polygons.isEmpty else { throw fail("MultiPolygon has no polygons", index, id) }
            var result: [[[Coordinate]]] = []
            result.reserveCapacity(polygons.count)
            for (number, polygon) in polygons.enumerated() {
                result.append(try context.polygon(polygon, path: "coordinates[\(number)]", name: "MultiPolygon polygon \(number)"))
            }
            return .polygons(result)
        }
    }

    /// Coordinate checks for one feature; messages give the JSON path (`coordinates[0][3]`).
    private struct CoordinateContext {
        let reader: GeoJSONRegionReader
        let index: Int
        let id: String

        func array(_ value: JSONValue, path: String, of what: String) throws(RegionFileError) -> [JSONValue] {
            guard case .array(let elements) = value else {
                throw reader.fail("\(path) must be an array of \(what), not \(value.kindDescription)", index, id)
            }
            return elements
        }

        /// `[lon, lat]` or `[lon, lat, altitude]`; the altitude is ignored.
        func position(_ value: JSONValue, path: String) throws(RegionFileError) -> Coordinate {
            guard case .array(let elements) = value else {
                throw reader.fail("\(path) must be a position [lon, lat], not \(value.kindDescription)", index, id)
            }
            guard elements.count == 2 || elements.count == 3 else {
                throw reader.fail(
                    "\(path) has \(elements.count) elements; a position is [lon, lat] or [lon, lat, altitude]", index, id)
            }
            var numbers: [Double] = []
            for (offset, element) in elements.enumerated() {
                guard case .number(let number) = element else {
                    throw reader.fail("\(path)[\(offset)] must be a number, not \(element.kindDescription)", index, id)
                }
                numbers.append(number)
            }
            let (longitude, latitude) = (numbers[0], numbers[1])
            if let problem = coordinateProblem(latitude: latitude, longitude: longitude) {
                throw reader.fail("\(path): \(problem) (GeoJSON positions are [lon, lat])", index, id)
            }
            return Coordinate(latitude: latitude, longitude: longitude)
        }

        /// Rings of at least four positions whose first and last positions are equal.
        func polygon(_ value: JSONValue, path: String, name: String) throws(RegionFileError) -> [[Coordinate]] {
            let rings = try array(value, path: path, of: "rings")
            guard !rings.isEmpty else { throw reader.fail("\(name) has no rings", index, id) }
            var result: [[Coordinate]] = []
            result.reserveCapacity(rings.count)
            for (ringNumber, ringValue) in rings.enumerated() {
                let ringPath = "\(path)[\(ringNumber)]"
                let positions = try array(ringValue, path: ringPath, of: "positions")
                var ring: [Coordinate] = []
                ring.reserveCapacity(positions.count)
                for (number, position) in positions.enumerated() {
                    ring.append(try self.position(position, path: "\(ringPath)[\(number)]"))
                }
                guard ring.count >= 4 else {
                    throw reader.fail(
                        "\(name) ring \(ringNumber) has \(ring.count) positions; a ring needs at least 4", index, id)
                }
                guard ring.first == ring.last else {
                    throw reader.fail(
                        "\(name) ring \(ringNumber) is not closed (its first and last positions differ)", index, id)
                }
                result.append(ring)
            }
            return result
        }
    }

    fileprivate func fail(_ reason: String, _ index: Int? = nil, _ id: String? = nil) -> RegionFileError {
        RegionFileError(file: file, featureIndex: index, id: id, reason: reason)
    }
}
