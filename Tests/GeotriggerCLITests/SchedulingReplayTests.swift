import Foundation
import Testing

/// The scheduling core end to end: the real Cerknica lake trace, a requests file with every trigger
/// kind, and control records merged into the stream. Expected deliveries are derived independently
/// of the scheduler: location ones by filtering the oracle's region events, the others from times
/// worked out by hand below.
@Suite("geotrigger replay --requests")
struct SchedulingReplayTests {
    struct Line {
        var object: [String: Any]
        var text: String
        var t: String { object["t"] as! String }
        var event: String { object["event"] as! String }
        var key: String { "\(t) \(object["request"] as? String ?? "") \(object["trigger"] as? String ?? "") \(object["region"] as? String ?? "-")" }
    }

    static func parse(_ text: String) -> [Line] {
        text.split(separator: "\n").map { line in
            Line(object: try! JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any], text: String(line))
        }
    }

    @Test("location, time-interval, calendar and push deliveries, with control records mid-stream")
    func deliveries() throws {
        let dir = try CLI.temporaryDirectory()
        let state = dir.appendingPathComponent("state.json").path
        let f = "Tests/GeotriggerCLITests/Fixtures/"
        let r = try CLI.run(["replay", "--regions", "datasets/regions/slovenia-croatia.geojson",
                             "--requests", f + "cerknicko-requests.json",
                             "--hysteresis", "0", "--max-accuracy", "0", "--until", "2010-08-05T17:00:00Z",
                             "--state-out", state,
                             f + "cerknicko-jezero.ndjson", f + "cerknicko-controls.ndjson"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = Self.parse(r.stdout)

        // Region events are exactly the oracle's (requests must not disturb them).
        let oracle = Self.parse(try String(contentsOf: CLI.fixtures.appendingPathComponent("gpx-cerknicko-jezero.expected.ndjson"), encoding: .utf8))
        let regionEvents = lines.filter { $0.event != "deliver" }
        #expect(regionEvents.map { "\($0.t) \($0.event) \($0.object["region"]!)" } ==
                oracle.map { "\($0.t) \($0.event) \($0.object["region"]!)" })

        // Location deliveries, from the oracle's events:
        var expected: [String] = []
        let cerknica = oracle.filter { $0.object["region"] as? String == "cerknica" }
        expected.append("\(cerknica[0].t) cerknica-any location cerknica")             // first event only
        let lake = oracle.filter { $0.object["region"] as? String == "vanishing-lake" }
        for e in lake where e.event == "enter" { expected.append("\(e.t) lake-hello location vanishing-lake") }  // every entry
        let firstExit = try #require(lake.first { $0.event == "exit" })
        expected.append("\(firstExit.t) lake-bye location vanishing-lake")              // first exit only
        // The device's first reading is 1281018239 = 14:23:59Z; every-device requests start there.
        expected += [
            "2010-08-05T14:53:59.000Z stretch timeInterval -",   // + 1800 s
            "2010-08-05T15:23:59.000Z stretch timeInterval -",   // + 3600 s; the next (15:53:59) is removed at 15:43:20
            "2010-08-05T15:30:00.000Z tea calendar -",           // 17:30 CEST (UTC+2 in August)
            "2010-08-05T17:00:00.000Z sunset calendar -",        // 19:00 CEST, reached by --until
            "2010-08-05T14:53:20.000Z news push -",              // push record 1281020000
            "2010-08-05T14:55:00.000Z flash push -",             // push with its own content, 1281020100
            "2010-08-05T15:20:00.000Z later timeInterval -",     // added at 1281021000 (15:10:00Z) + 600 s
        ]
        let deliveries = lines.filter { $0.event == "deliver" }
        #expect(deliveries.map(\.key).sorted() == expected.sorted())

        // Each location delivery comes right after the region event that caused it, same t.
        for (i, line) in lines.enumerated() where line.event == "deliver" && line.object["trigger"] as? String == "location" {
            let cause = lines[..<i].last { $0.event != "deliver" }
            #expect(cause?.t == line.t && cause?.object["region"] as? String == line.object["region"] as? String)
        }
        // Time order throughout, content carried through.
        #expect(zip(lines, lines.dropFirst()).allSatisfy { $0.t <= $1.t })
        let tea = try #require(deliveries.first { $0.object["request"] as? String == "tea" })
        #expect(tea.text.contains(#""content":{"title":"Tea time","userInfo":{"cups":2}}"#))
        let flash = try #require(deliveries.first { $0.object["request"] as? String == "flash" })
        #expect(flash.text.contains(#""title":"Storm warning""#))

        // The push for an unknown id without content is rejected, with the reason.
        #expect(r.stderr.contains("cerknicko-controls.ndjson:5: bad control record"))
        #expect(r.stderr.contains("ghost"))
        #expect(r.stderr.contains("deliveries: \(expected.count) notifications delivered ("))

        // State: what is still pending, and the delivered list without the removed "flash".
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state))) as! [String: Any]
        let device = (json["devices"] as! [String: Any])["cerknicko-jezero"] as! [String: Any]
        let pending = (device["pending"] as! [[String: Any]]).map { $0["id"] as! String }
        #expect(pending == ["lake-hello"])
        let delivered = (device["delivered"] as! [[String: Any]]).map { ($0["request"] as! [String: Any])["id"] as! String }
        #expect(Set(delivered) == ["cerknica-any", "lake-hello", "lake-bye", "stretch", "tea", "sunset", "news", "later"])
    }

    @Test("a bad requests file exits 65 naming the request and the reason")
    func badRequests() throws {
        let dir = try CLI.temporaryDirectory()
        let cases = [
            (#"[{"id":"x","trigger":{"type":"location","region":"atlantis"}}]"#, #"request 0 (id "x"): unknown region "atlantis""#),
            (#"[{"id":"x","trigger":{"type":"push"}},{"id":"x","trigger":{"type":"push"}}]"#, "request 1 (id \"x\"): duplicate id"),
            (#"[{"id":"x","trigger":{"type":"timeInterval","seconds":30,"repeats":true}}]"#, #"request 0 (id "x"): time interval must be at least 60 seconds when repeating"#),
        ]
        for (text, reason) in cases {
            let path = dir.appendingPathComponent("requests.json").path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let r = try CLI.run(["replay", "--regions", "datasets/regions/slovenia-croatia.csv", "--requests", path], stdin: Data())
            #expect(r.status == 65)
            #expect(r.stderr.contains("requests.json: " + reason), "\(r.stderr)")
        }
        let missing = try CLI.run(["replay", "--regions", "datasets/regions/slovenia-croatia.csv", "--requests", "/nonexistent.json"], stdin: Data())
        #expect(missing.status == 66)
    }
}
