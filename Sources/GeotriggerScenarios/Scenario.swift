import Geotrigger
import GeotriggerFormats

/// SPEC §6's benchmark scenarios, generated deterministically from a seed.
///
/// - **city**: circles of 50–500 m spread uniformly over a 40 × 40 km metro area (around Vienna);
///   devices walking (1.4 m/s) or driving (8–15 m/s) with a wandering heading; one fix per device
///   per second.
/// - **world**: circles of 1–5 km centred on real places (GeoNames, population ≥ 15,000; CC BY 4.0,
///   geonames.org), jittered by up to 2 km; vehicles at 20–30 m/s travelling from place to place.
/// - **beacons**: iBeacon regions (one UUID, major = venue, minor = beacon, `near` zones); devices
///   hearing one beacon of their venue a second, RSSI from the log-distance model (−59 dBm, n = 2)
///   with 6 dB Gaussian shadowing, rounded to whole dB as phones report it.
///
/// The same kind, size and seed always give the same bytes.
public struct Scenario: Sendable {
    public enum Kind: String, CaseIterable, Sendable {
        case city, world, beacons
    }

    public var kind: Kind
    public var seed: UInt64
    public var regions: Int
    public var devices: Int
    /// Readings per device (one a second).
    public var seconds: Int
    /// Unix time of the first reading.
    public var start: Double = 1_700_000_000

    /// SPEC §6's sizes: city 100k regions, 10k devices, 10M fixes; world 170k regions;
    /// beacons 10k regions and 1M sightings.
    public static func standard(_ kind: Kind, seed: UInt64) -> Scenario {
        switch kind {
        case .city: return Scenario(kind: kind, seed: seed, regions: 100_000, devices: 10_000, seconds: 1_000)
        case .world: return Scenario(kind: kind, seed: seed, regions: 170_000, devices: 10_000, seconds: 1_000)
        case .beacons: return Scenario(kind: kind, seed: seed, regions: 10_000, devices: 1_000, seconds: 1_000)
        }
    }

    public init(kind: Kind, seed: UInt64, regions: Int, devices: Int, seconds: Int) {
        self.kind = kind
        self.seed = seed
        self.regions = regions
        self.devices = devices
        self.seconds = seconds
    }

    public static let beaconUUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let cityCenter = Coordinate(latitude: 48.2082, longitude: 16.3738)
    static let cityHalfSize = 20_000.0

    /// The file name its regions are written to (CSV circles, or GeoJSON for beacons).
    public var regionsFileName: String { kind == .beacons ? "regions.geojson" : "regions.csv" }

    // MARK: Writing

    /// Writes the regions. `places` (lat, lon) are needed for `world`.
    public func writeRegions(to out: RecordBuffer, places: [Coordinate] = []) throws {
        var random = SplitMix64(seed: seed)
        switch kind {
        case .city:
            out.append("id,lat,lon,radius\n")
            for i in 0..<regions {
                let p = Self.offset(Self.cityCenter, east: random.uniform(-Self.cityHalfSize, Self.cityHalfSize),
                                    north: random.uniform(-Self.cityHalfSize, Self.cityHalfSize))
                try circle(out, i, p, radius: random.uniform(50, 500))
            }
        case .world:
            guard !places.isEmpty else { throw IOFailure("the world scenario needs places (--places)") }
            out.append("id,lat,lon,radius\n")
            for i in 0..<regions {
                // Stride through the places with a prime, so any number of regions spreads over
                // the whole list (the file is grouped by country).
                let place = places[(i &* 7_919) % places.count]
                let p = Self.offset(place, east: random.uniform(-2000, 2000), north: random.uniform(-2000, 2000))
                try circle(out, i, p, radius: random.uniform(1000, 5000))
            }
        case .beacons:
            out.append("{\"type\":\"FeatureCollection\",\"features\":[\n")
            for i in 0..<regions {
                if i > 0 { out.append(",\n") }
                out.append(string: "{\"type\":\"Feature\",\"id\":\"b\(i)\",\"geometry\":null,\"properties\":{\"beacon\":{\"uuid\":\"")
                out.append(string: Self.beaconUUID)
                out.append(string: "\",\"major\":\(i / 100),\"minor\":\(i % 100)},\"proximity\":\"near\"}}")
                try out.endRecord()
            }
            out.append("\n]}\n")
        }
        try out.flush()
    }

    private func circle(_ out: RecordBuffer, _ i: Int, _ p: Coordinate, radius: Double) throws {
        out.append("r")
        out.appendInteger(Int64(i))
        out.append(",")
        out.appendFixed(p.latitude, decimals: 6)
        out.append(",")
        out.appendFixed(p.longitude, decimals: 6)
        out.append(",")
        out.appendFixed(radius, decimals: 1)
        out.append("\n")
        try out.endRecord()
    }

    /// Writes the readings as NDJSON, in time order (all devices at second 0, then second 1, …).
    public func writeReadings(to out: RecordBuffer, places: [Coordinate] = []) throws {
        var random = SplitMix64(seed: seed ^ 0x5EED_0F_F1E5)
        switch kind {
        case .city, .world:
            var movers = (0..<devices).map { _ in startMover(&random, places: places) }
            for s in 0..<seconds {
                let t = start + Double(s)
                for d in 0..<devices {
                    step(&movers[d], &random, places: places)
                    out.append("{\"t\":")
                    out.appendInteger(Int64(t))
                    out.append(",\"device\":\"d")
                    out.appendInteger(Int64(d))
                    out.append("\",\"lat\":")
                    out.appendFixed(movers[d].position.latitude, decimals: 6)
                    out.append(",\"lon\":")
                    out.appendFixed(movers[d].position.longitude, decimals: 6)
                    out.append(",\"accuracy\":")
                    out.appendInteger(Int64(3 + random.below(20)))
                    out.append("}\n")
                    try out.endRecord()
                }
            }
        case .beacons:
            let venues = max(1, regions / 100)
            var listeners = (0..<devices).map { _ in (venue: random.below(venues), distance: random.uniform(0.5, 15)) }
            for s in 0..<seconds {
                let t = start + Double(s)
                for d in 0..<devices {
                    // A slow random walk of the distance to the venue's nearest beacon, 0.3–20 m.
                    listeners[d].distance = min(20, max(0.3, listeners[d].distance + random.uniform(-1.2, 1.2)))
                    let beacon = listeners[d].venue * 100 + random.below(min(100, regions))
                    let rssi = (-59 - 20 * log10(listeners[d].distance) + 6 * random.normal()).rounded()
                    out.append("{\"t\":")
                    out.appendInteger(Int64(t))
                    out.append(",\"device\":\"p")
                    out.appendInteger(Int64(d))
                    out.append("\",\"uuid\":\"")
                    out.append(string: Self.beaconUUID)
                    out.append("\",\"major\":")
                    out.appendInteger(Int64(beacon / 100))
                    out.append(",\"minor\":")
                    out.appendInteger(Int64(beacon % 100))
                    out.append(",\"rssi\":")
                    out.appendInteger(Int64(max(-127, min(-1, rssi))))
                    out.append("}\n")
                    try out.endRecord()
                }
            }
        }
        try out.flush()
    }

    // MARK: Movement

    struct Mover {
        var position: Coordinate
        var heading: Double
        var speed: Double
        var target: Coordinate?
        var targetIndex = 0
    }

    private func startMover(_ random: inout SplitMix64, places: [Coordinate]) -> Mover {
        switch kind {
        case .city:
            let p = Self.offset(Self.cityCenter, east: random.uniform(-Self.cityHalfSize, Self.cityHalfSize),
                                north: random.uniform(-Self.cityHalfSize, Self.cityHalfSize))
            let driving = random.below(3) == 0
            return Mover(position: p, heading: random.uniform(0, 2 * .pi),
                         speed: driving ? random.uniform(8, 15) : 1.4, target: nil)
        default:
            guard !places.isEmpty else { return Mover(position: Self.cityCenter, heading: 0, speed: 0, target: nil) }
            let from = random.below(places.count)
            let to = (from + 1 + random.below(20)) % places.count
            return Mover(position: places[from], heading: 0, speed: random.uniform(20, 30), target: places[to], targetIndex: to)
        }
    }

    private func step(_ m: inout Mover, _ random: inout SplitMix64, places: [Coordinate]) {
        if kind == .city {
            m.heading += random.uniform(-0.3, 0.3)
            var next = Self.offset(m.position, east: m.speed * sin(m.heading), north: m.speed * cos(m.heading))
            // Stay in the metro area: turn back at its edge.
            let (east, north) = Self.displacement(from: Self.cityCenter, to: next)
            if abs(east) > Self.cityHalfSize || abs(north) > Self.cityHalfSize {
                m.heading += .pi
                next = m.position
            }
            m.position = next
            return
        }
        guard let target = m.target else { return }
        let (east, north) = Self.displacement(from: m.position, to: target)
        let remaining = (east * east + north * north).squareRoot()
        if remaining <= m.speed {
            // Arrived: on to one of the next places in the list (usually the same country).
            m.position = target
            m.targetIndex = (m.targetIndex + 1 + random.below(20)) % places.count
            m.target = places[m.targetIndex]
        } else {
            m.position = Self.offset(m.position, east: east / remaining * m.speed, north: north / remaining * m.speed)
        }
    }

    /// A point `east` and `north` metres from `p` (local tangent plane; fine for scenario motion).
    static func offset(_ p: Coordinate, east: Double, north: Double) -> Coordinate {
        let lat = p.latitude + north / 111_132.954
        var lon = p.longitude + east / (111_319.49 * max(0.01, cos(p.latitude * .pi / 180)))
        if lon > 180 { lon -= 360 }
        if lon < -180 { lon += 360 }
        return Coordinate(latitude: max(-89.9, min(89.9, lat)), longitude: lon)
    }

    static func displacement(from a: Coordinate, to b: Coordinate) -> (east: Double, north: Double) {
        var dLon = b.longitude - a.longitude
        if dLon > 180 { dLon -= 360 }
        if dLon < -180 { dLon += 360 }
        return (dLon * 111_319.49 * cos(a.latitude * .pi / 180), (b.latitude - a.latitude) * 111_132.954)
    }

    /// Places (lat, lon) from a CSV with `lat` and `lon` columns, e.g. the GeoNames set.
    public static func loadPlaces(path: String) throws -> [Coordinate] {
        let bytes = try RegionFile.readFile(path: path)
        let text = String(decoding: bytes, as: UTF8.self)
        // "\r\n" is one Character in Swift, so split on newlines, not on "\n".
        var lines = text.split(whereSeparator: \.isNewline)
        guard let header = lines.first?.split(separator: ",").map({ String($0).filter { $0 != " " && $0 != "\r" } }),
              let latColumn = header.firstIndex(of: "lat"), let lonColumn = header.firstIndex(of: "lon")
        else { throw RegionFileError(file: path, reason: "places CSV needs lat and lon columns") }
        lines.removeFirst()
        let places: [Coordinate] = lines.compactMap { line in
            if line.contains("\"") { return nil }  // a quoted name may hold commas: skip the row
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.filter { $0 != "\r" && $0 != " " } }
            guard fields.count > max(latColumn, lonColumn), let lat = Double(fields[latColumn]),
                  let lon = Double(fields[lonColumn]), (-90...90).contains(lat), (-180...180).contains(lon)
            else { return nil }
            return Coordinate(latitude: lat, longitude: lon)
        }
        if places.isEmpty { throw RegionFileError(file: path, reason: "no usable places (lat, lon) in the file") }
        return places
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
