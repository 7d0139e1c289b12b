import Foundation
import Testing

/// Beacon regions end to end: sightings and fixes of one device interleaved, wildcard naming,
/// exits by silence from the clock alone, and beacon-region location triggers delivering.
@Suite("geotrigger replay with beacon regions")
struct BeaconReplayTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let regions = """
        {"type":"FeatureCollection","features":[
          {"type":"Feature","id":"lobby","geometry":null,"properties":{"beacon":{"uuid":"\(uuid)","major":1,"minor":7},"proximity":"near"}},
          {"type":"Feature","id":"store","geometry":null,"properties":{"beacon":{"uuid":"\(uuid)"}}},
          {"type":"Feature","id":"kiosk","geometry":{"type":"Point","coordinates":[16.37,48.2]},"properties":{"beacon":{"uuid":"\(uuid)","major":9,"minor":9},"radius":10}},
          {"type":"Feature","id":"park","geometry":{"type":"Point","coordinates":[16.4,48.2]},"properties":{"radius":100}}
        ]}
        """
    static let requests = """
        [{"id":"hello","content":{"title":"Welcome to the lobby"},"trigger":{"type":"location","region":"lobby","notifyOnExit":false}}]
        """

    @Test("--beacon-min-visit: by default a near zone is entered 1.5 s after its first wanting sighting, a shorter stay not at all")
    func minimumVisit() throws {
        let dir = try CLI.temporaryDirectory()
        let regionsPath = dir.appendingPathComponent("regions.geojson").path
        try Self.regions.write(toFile: regionsPath, atomically: true, encoding: .utf8)
        let u = Self.uuid
        func sightings(_ times: [Int]) -> Data {
            Data(times.map { #"{"t":\#($0),"device":"phone","uuid":"\#(u)","major":1,"minor":7,"rssi":-59}"# + "\n" }.joined().utf8)
        }
        func lobbyEnters(_ r: CLI.Result) -> [String] {
            r.lines.filter { $0.contains(#""event":"enter""#) && $0.contains(#""region":"lobby""#) }
                .compactMap { $0.split(separator: "\"").dropFirst(3).first.map(String.init) }
        }
        let brief = try CLI.run(["replay", "--regions", regionsPath], stdin: sightings([1, 2]))
        #expect(brief.status == 0 && lobbyEnters(brief).isEmpty, "\(brief.stdout)")
        let stays = try CLI.run(["replay", "--regions", regionsPath], stdin: sightings([1, 2, 3, 4]))
        #expect(lobbyEnters(stays) == ["1970-01-01T00:00:03.000Z"], "\(stays.stdout)")
        let atOnce = try CLI.run(["replay", "--regions", regionsPath, "--beacon-min-visit", "0"], stdin: sightings([1, 2]))
        #expect(lobbyEnters(atOnce) == ["1970-01-01T00:00:01.000Z"], "\(atOnce.stdout)")
        let bad = try CLI.run(["replay", "--regions", regionsPath, "--beacon-min-visit", "-1"], stdin: sightings([1]))
        #expect(bad.status == 64 && bad.stderr.contains("--beacon-min-visit"), "\(bad.stderr)")
    }

    @Test("mixed fixes and sightings: beacon events, wildcard naming, silence exits, fix-entered positioned zones, deliveries")
    func mixedStream() throws {
        let dir = try CLI.temporaryDirectory()
        let regionsPath = dir.appendingPathComponent("regions.geojson").path
        try Self.regions.write(toFile: regionsPath, atomically: true, encoding: .utf8)
        let requestsPath = dir.appendingPathComponent("requests.json").path
        try Self.requests.write(toFile: requestsPath, atomically: true, encoding: .utf8)
        let u = Self.uuid
        let input = """
            {"t":0,"device":"phone","lat":48.2,"lon":16.4}
            {"t":1,"device":"phone","uuid":"\(u)","major":1,"minor":7,"rssi":-59}
            {"t":2,"device":"phone","uuid":"\(u)","major":1,"minor":7,"rssi":-60}
            {"t":3,"device":"phone","lat":48.2,"lon":16.37000001}
            {"t":4,"device":"phone","uuid":"\(u)","major":1,"minor":7,"rssi":-200}
            {"t":5,"device":"phone","uuid":"00000000-0000-0000-0000-000000000000","major":1,"minor":1,"rssi":-60}
            {"t":10,"device":"phone","lat":48.3,"lon":16.37}

            """
        // Two sightings a second apart are a visit only without the minimum visit (its own test below).
        let r = try CLI.run(["replay", "--regions", regionsPath, "--requests", requestsPath, "--until", "100",
                             "--beacon-min-visit", "0"],
                            stdin: Data(input.utf8))
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.lines
        func has(_ fragment: String) -> Bool { lines.contains { $0.contains(fragment) } }
        // GPS fix in the park; sightings put the phone in the lobby (exact beacon) and the store (wildcard).
        #expect(lines.first?.contains(#""event":"enter","device":"phone","region":"park""#) == true)
        #expect(has(#""t":"1970-01-01T00:00:01.000Z","event":"enter","device":"phone","region":"lobby","beacon":{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":7},"proximity":"near""#))
        #expect(has(#""event":"enter","device":"phone","region":"store","beacon":{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":7}"#))
        #expect(has(#""event":"deliver","device":"phone","request":"hello","trigger":"location","region":"lobby""#))
        // A fix inside the kiosk's 10 m circle enters that positioned beacon region; leaving exits it.
        #expect(has(#""t":"1970-01-01T00:00:03.000Z","event":"enter","device":"phone","region":"kiosk""#))
        #expect(has(#""t":"1970-01-01T00:00:10.000Z","event":"exit","device":"phone","region":"kiosk""#))
        // No more sightings after t = 2: lobby and store end by silence at 2 + 30, from the clock alone.
        #expect(has(#""t":"1970-01-01T00:00:32.000Z","event":"exit","device":"phone","region":"lobby""#))
        #expect(has(#""reason":"silence""#))
        // The junk RSSI is rejected with its reason; the unknown beacon is counted as unmatched.
        #expect(r.stderr.contains("-:5: RSSI outside [-127, -1]"))
        #expect(r.stderr.contains("1 beacon sightings match no beacon region"))
        let times = lines.compactMap(EventKey.init(line:)).map(\.t)
        #expect(times == times.sorted())
    }
}
