import Foundation
import Testing

/// SPEC §3's input limits end to end: times outside the years 0001–9999 and identifiers over 256
/// bytes of UTF-8 are rejected with their own reasons (counted, reported, written to --rejects,
/// stopping --strict runs), no event ever carries a time that is not RFC 3339, and the limits on
/// --until, --device, the regions file and the requests file are checked before anything is read.
@Suite("geotrigger replay: input limits")
struct InputLimitsCLITests {
    static let regions = """
        {"type":"FeatureCollection","features":[
          {"type":"Feature","id":"home","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"radius":100}}
        ]}
        """
    /// 256 bytes of UTF-8 in 128 characters, and 257 bytes.
    static let id256 = String(repeating: "é", count: 128)
    static let id257 = id256 + "x"

    static let lines = [
        #"{"t":-62135596800,"device":"a","lat":1,"lon":2}"#,  // 1: enter, 0001-01-01T00:00:00.000Z
        #"{"t":-62135596800.001,"device":"b","lat":1,"lon":2}"#,  // 2: time
        #"{"t":1e300,"device":"d","lat":1,"lon":2}"#,  // 3: time
        #"{"t":-1e300,"device":"d","lat":1,"lon":2}"#,  // 4: time
        #"{"t":253402300800,"device":"d","lat":1,"lon":2}"#,  // 5: time
        #"{"t":"0000-12-31T23:59:59Z","device":"d","lat":1,"lon":2}"#,  // 6: time
        #"{"t":1635501603,"device":"\#(id257)","lat":1,"lon":2}"#,  // 7: id
        #"{"t":1635501603,"device":"\#(String(repeating: "d", count: 257))","lat":1,"lon":2}"#,  // 8: id (plain form)
        #"{"t":1635501603,"device":"\#(id256)","lat":1,"lon":2}"#,  // 9: enter, 2021
        #"{"t":1635501604,"device":"c","op":"push","id":"\#(id257)","content":{"title":"x"}}"#,  // 10: id
        #"{"t":1e300,"device":"c","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","rssi":-70}"#,  // 11: time
        #"{"t":1635501605,"device":"c","op":"removePending","ids":["\#(id257)"]}"#,  // 12: id
        #"{"t":253402300799.999,"device":"a","lat":1,"lon":2.01}"#,  // 13: exit, 9999-12-31T23:59:59.999Z
        #"{"t":253402300799.9995,"device":"a","lat":1,"lon":2}"#,  // 14: time (10000-01-01 once rounded)
        #"{"t":"10000-01-01T00:00:00Z","device":"a","lat":1,"lon":2}"#,  // 15: not a time
    ]
    static let timeLines = [2, 3, 4, 5, 6, 11, 14]
    static let idLines = [7, 8, 10, 12]

    func write(_ text: String, _ name: String, in dir: URL) throws -> String {
        let url = dir.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test("times outside 0001–9999 and ids over 256 bytes are rejected with their reasons; no event says \"invalid\"")
    func rejectedAndReported() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write(Self.regions, "regions.geojson", in: dir)
        let input = try write(Self.lines.joined(separator: "\n") + "\n", "limits.ndjson", in: dir)
        let rejectsPath = dir.appendingPathComponent("rejects.tsv").path
        let r = try CLI.run(["replay", "--regions", regions, "--rejects", rejectsPath, input])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines == [
            #"{"t":"0001-01-01T00:00:00.000Z","event":"enter","device":"a","region":"home","distance":0.00}"#,
            #"{"t":"2021-10-29T10:00:03.000Z","event":"enter","device":"\#(Self.id256)","region":"home","distance":0.00}"#,
            #"{"t":"9999-12-31T23:59:59.999Z","event":"exit","device":"a","region":"home","distance":1113.03,"enteredAt":"0001-01-01T00:00:00.000Z"}"#,
        ])
        #expect(!r.stdout.contains("invalid"))
        for k in Self.timeLines {
            #expect(r.stderr.contains("limits.ndjson:\(k): time \"t\" outside the years 0001–9999\n"), "line \(k)")
        }
        for k in Self.idLines {
            #expect(r.stderr.contains("limits.ndjson:\(k): identifier longer than 256 bytes\n"), "line \(k)")
        }
        #expect(r.stderr.contains("limits.ndjson:15: time \"t\" is neither Unix seconds nor an RFC 3339 date"))
        #expect(r.stderr.contains("12 rejected"))
        #expect(r.stderr.contains("bad-time 1, time-out-of-range 7, id-too-long 4"), "\(r.stderr)")

        let rejects = try String(contentsOfFile: rejectsPath, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(rejects.count == 12)
        var expected: [String] = []
        for k in 1...Self.lines.count {
            let reason = Self.timeLines.contains(k) ? "time-out-of-range" : Self.idLines.contains(k) ? "id-too-long"
                : k == 15 ? "bad-time" : nil
            if let reason { expected.append("limits.ndjson:\(k)\t\(reason)\t\(Self.lines[k - 1])") }
        }
        #expect(rejects.count == expected.count)
        for (got, want) in zip(rejects, expected) { #expect(got.hasSuffix(want), "\(got)") }
    }

    @Test("--jobs 2 gives the output of --jobs 1 for out-of-range times and long ids")
    func jobsAgree() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write(Self.regions, "regions.geojson", in: dir)
        let input = try write(Self.lines.joined(separator: "\n") + "\n", "limits.ndjson", in: dir)
        // A dwell that would fall in the year 10000 is never due before the clock's last time.
        let args = ["--regions", regions, input, "--dwell", "600", "--until", "9999-12-31T23:59:59.999Z"]
        let one = try JobsTests.replay(args, jobs: 1, in: dir)
        let two = try JobsTests.replay(args, jobs: 2, in: dir)
        #expect(one.status == 0, "\(one.summary)")
        #expect(two == one)
        #expect(one.summary.contains("time-out-of-range 7, id-too-long 4"))
        #expect(one.rejects.split(separator: "\n").count == 12)
        #expect(!one.events.contains("invalid") && !one.state.contains("invalid"))
        #expect(!one.events.contains("10000-") && !one.state.contains("10000-"))
        #expect(one.state.contains("9999-12-31T23:59:59.999Z"))
    }

    @Test("--strict stops at the first time out of range or long id with status 65")
    func strict() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write(Self.regions, "regions.geojson", in: dir)
        for (lines, message) in [
            ([Self.lines[0], Self.lines[2], Self.lines[8]], "limits.ndjson:2: time \"t\" outside the years 0001–9999"),
            ([Self.lines[0], Self.lines[6], Self.lines[8]], "limits.ndjson:2: identifier longer than 256 bytes"),
        ] {
            let input = try write(lines.joined(separator: "\n") + "\n", "limits.ndjson", in: dir)
            for jobs in ["1", "2"] {
                let r = try CLI.run(["replay", "--regions", regions, "--strict", "--jobs", jobs, input])
                #expect(r.status == 65)
                #expect(r.stderr.contains(message), "\(r.stderr)")
                #expect(!r.stdout.contains(Self.id256))
            }
        }
    }

    @Test("--until outside the years 0001–9999 is a usage error", arguments: [
        "253402300800", "1e300", "--until=-62135596800.001", "0000-12-31T23:59:59Z", "9999-12-31T23:59:59.9995Z",
    ])
    func untilOutOfRange(_ until: String) throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write(Self.regions, "regions.geojson", in: dir)
        let option = until.hasPrefix("--") ? [until] : ["--until", until]
        let r = try CLI.run(["replay", "--regions", regions] + option, stdin: Data())
        #expect(r.status == 64)
        #expect(r.stderr.contains("--until must be a time in the years 0001–9999"), "\(r.stderr)")
    }

    @Test("--until at the ends of the years 0001–9999 is accepted", arguments: [
        "253402300799.999", "--until=-62135596800", "9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00Z",
    ])
    func untilInRange(_ until: String) throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write(Self.regions, "regions.geojson", in: dir)
        let option = until.hasPrefix("--") ? [until] : ["--until", until]
        let r = try CLI.run(["replay", "--regions", regions] + option, stdin: Data())
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test("--device longer than 256 bytes is a usage error; GPX points of a long device are rejected")
    func deviceLimit() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write(Self.regions, "regions.geojson", in: dir)
        let gpx = try write("""
            <gpx><trk><trkseg>
            <trkpt lat="1" lon="2"><time>2021-10-29T10:00:03Z</time></trkpt>
            <trkpt lat="1" lon="2"><time>0000-12-31T23:59:59Z</time></trkpt>
            </trkseg></trk></gpx>
            """, "walk.gpx", in: dir)
        let long = try CLI.run(["replay", "--regions", regions, "--device", Self.id257, gpx])
        #expect(long.status == 64)
        #expect(long.stderr.contains("--device: the device id is 257 bytes long; identifiers are limited to 256 bytes of UTF-8"),
                "\(long.stderr)")
        let fits = try CLI.run(["replay", "--regions", regions, "--device", Self.id256, gpx])
        #expect(fits.status == 0, "\(fits.stderr)")
        #expect(fits.lines.count == 1 && fits.stdout.contains(Self.id256))
        #expect(fits.stderr.contains("walk.gpx:3: time \"t\" outside the years 0001–9999"))
    }

    @Test("a region id longer than 256 bytes is a bad regions file (65) naming the feature")
    func longRegionID() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write("""
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"\(Self.id256)","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"radius":100}},
              {"type":"Feature","id":"\(Self.id257)","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"radius":100}}
            ]}
            """, "long-ids.geojson", in: dir)
        let r = try CLI.run(["replay", "--regions", regions], stdin: Data())
        #expect(r.status == 65)
        #expect(r.stderr.contains("long-ids.geojson: feature 1: id is 257 bytes long; identifiers are limited to 256 bytes of UTF-8"),
                "\(r.stderr)")
    }

    @Test("a request id longer than 256 bytes is a bad requests file (65)")
    func longRequestID() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write(Self.regions, "regions.geojson", in: dir)
        for (id, status) in [(Self.id256, Int32(0)), (Self.id257, 65)] {
            let requests = try write(#"[{"id":"ok","trigger":{"type":"push"}},{"id":"\#(id)","trigger":{"type":"push"}}]"#,
                                     "requests.json", in: dir)
            let r = try CLI.run(["replay", "--regions", regions, "--requests", requests], stdin: Data())
            #expect(r.status == status, "\(r.stderr)")
            if status == 65 {
                #expect(r.stderr.contains("requests.json: request 1: the request id is 257 bytes long"), "\(r.stderr)")
            }
        }
    }
}
