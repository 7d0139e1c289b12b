import Foundation
import Testing

/// `geotrigger replay` in exact mode against the independent oracle (`tools/oracle/exact_events.py`:
/// GeographicLib distances, exact point-in-polygon), on real GPX traces and on real traces moved
/// across the antimeridian and over the poles. See Fixtures/README.md for how each case was made.
@Suite("Exact mode equals the geodesic oracle")
struct ExactModeOracleTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var expected: String
        var regions: String
        var readings: [String]
        var viaStdin = false
        var testDescription: String { expected }
    }

    static let tracks = ["Mojstrovka.gpx", "around-visnjan-with-car.gpx", "cerknicko-jezero.gpx", "korita-zbevnica.gpx"]
        .map { "datasets/gpxpy_tracks/\($0)" }
    static let demoRegions = "datasets/regions/slovenia-croatia.geojson"
    static let fixtures = "Tests/GeotriggerCLITests/Fixtures/"

    static let cases: [Case] = tracks.map { track in
        let name = (track as NSString).lastPathComponent.replacingOccurrences(of: ".gpx", with: "")
        return Case(expected: "gpx-\(name)", regions: demoRegions, readings: [track])
    } + [
        Case(expected: "gpx-all", regions: demoRegions, readings: tracks),
        Case(expected: "gpx-all.csv-regions", regions: "datasets/regions/slovenia-croatia.csv", readings: tracks),
        Case(expected: "cerknicko-jezero", regions: demoRegions, readings: [fixtures + "cerknicko-jezero.ndjson"], viaStdin: true),
        Case(expected: "antimeridian", regions: fixtures + "antimeridian.regions.geojson", readings: [fixtures + "antimeridian.ndjson"]),
        Case(expected: "polar-north", regions: fixtures + "polar-north.regions.geojson", readings: [fixtures + "polar-north.ndjson"]),
        Case(expected: "polar-south", regions: fixtures + "polar-south.regions.geojson", readings: [fixtures + "polar-south.ndjson"]),
    ]

    @Test("events equal the oracle's, line by line", arguments: cases)
    func matchesOracle(_ c: Case) throws {
        let exact = ["--hysteresis", "0", "--max-accuracy", "0", "--initial", "enter"]
        let result: CLI.Result
        if c.viaStdin {
            let input = try Data(contentsOf: CLI.root.appendingPathComponent(c.readings[0]))
            result = try CLI.run(["replay", "--regions", c.regions] + exact, stdin: input)
        } else {
            result = try CLI.run(["replay", "--regions", c.regions] + exact + c.readings)
        }
        #expect(result.status == 0, "\(result.stderr)")
        let expectedText = try String(contentsOf: CLI.fixtures.appendingPathComponent("\(c.expected).expected.ndjson"), encoding: .utf8)
        let expected = expectedText.split(separator: "\n").compactMap { EventKey(line: String($0)) }
        let got = result.lines.compactMap(EventKey.init(line:))
        #expect(got.count == result.lines.count, "every output line is an event")
        #expect(expected.count > 10, "the fixture has a meaningful number of events")
        #expect(got.count == expected.count)
        for (i, (g, e)) in zip(got, expected).enumerated() where g != e {
            Issue.record("line \(i + 1): got \(g), oracle says \(e)")
            break
        }
        // Output is in non-decreasing time for input in time order.
        #expect(zip(got, got.dropFirst()).allSatisfy { $0.t <= $1.t })
    }
}
