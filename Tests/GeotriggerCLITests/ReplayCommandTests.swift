import Foundation
import Testing

/// The command line's contract: exit statuses, reporting of bad input, output files.
@Suite("geotrigger replay: errors, rejects and outputs")
struct ReplayCommandTests {
    static let regions = """
        {"type":"FeatureCollection","features":[
          {"type":"Feature","id":"home","geometry":{"type":"Point","coordinates":[16.37,48.2]},"properties":{"radius":100}},
          {"type":"Feature","id":"square","geometry":{"type":"Polygon","coordinates":[[[16.0,48.0],[16.1,48.0],[16.1,48.1],[16.0,48.1],[16.0,48.0]]]},"properties":{"kind":"park"}}
        ]}
        """

    /// `regions` without the polygon.
    static let circleOnly = """
        {"type":"FeatureCollection","features":[
          {"type":"Feature","id":"home","geometry":{"type":"Point","coordinates":[16.37,48.2]},"properties":{"radius":100}}
        ]}
        """

    func write(_ text: String, _ name: String, in dir: URL) throws -> String {
        let url = dir.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test("events from standard input, with the summary on stderr")
    func stdinReplay() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write(Self.regions, "regions.geojson", in: dir)
        let input = """
            {"t":0,"device":"d1","lat":48.21,"lon":16.37}
            {"t":10,"device":"d1","lat":48.2,"lon":16.3701}
            {"t":"1970-01-01T00:00:20Z","device":"d1","lat":48.21,"lon":16.37}
            {"t":30,"device":"d2","lat":48.05,"lon":16.05}

            """
        let r = try CLI.run(["replay", "--regions", regions, "--hysteresis", "0"], stdin: Data(input.utf8))
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines == [
            #"{"t":"1970-01-01T00:00:10.000Z","event":"enter","device":"d1","region":"home","distance":7.43}"#,
            #"{"t":"1970-01-01T00:00:20.000Z","event":"exit","device":"d1","region":"home","distance":1111.94,"enteredAt":"1970-01-01T00:00:10.000Z"}"#,
            #"{"t":"1970-01-01T00:00:30.000Z","event":"enter","device":"d2","region":"square"}"#,
        ])
        #expect(r.stderr.contains("4 records from 1 input: 4 GPS fixes"))
        #expect(r.stderr.contains("2 enter, 1 exit, 0 dwell"))
        // The last line splits the time: the whole run, and of it loading and indexing the regions.
        let last = try #require(r.stderr.split(separator: "\n").last)
        #expect(last.hasPrefix("geotrigger: elapsed ") && last.contains(" records/s (2 regions loaded and indexed in "))
    }

    @Test("ids that need JSON escaping come out escaped, each device and region under its own name")
    func escapedIDs() throws {
        let dir = try CLI.temporaryDirectory()
        // Region ids and device names with quotes, backslashes, control characters and non-ASCII.
        let regions = try write(#"""
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"a\"b","geometry":{"type":"Point","coordinates":[16.37,48.2]},"properties":{"radius":100}},
              {"type":"Feature","id":"c\\d\te","geometry":{"type":"Point","coordinates":[16.3701,48.2]},"properties":{"radius":100}},
              {"type":"Feature","id":"plain","geometry":{"type":"Point","coordinates":[16.5,48.5]},"properties":{"radius":100}}
            ]}
            """#, "regions.geojson", in: dir)
        let input = #"""
            {"t":0,"device":"x\"y","lat":48.2,"lon":16.37}
            {"t":1,"device":"p\u0001q","lat":48.2,"lon":16.37}
            {"t":2,"device":"Zürich","lat":48.5,"lon":16.5}
            {"t":3,"device":"x\"y","lat":10,"lon":10}

            """#
        let r = try CLI.run(["replay", "--regions", regions, "--hysteresis", "0"], stdin: Data(input.utf8))
        #expect(r.status == 0, "\(r.stderr)")
        var seen: [String] = []
        for line in r.lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            seen.append("\(object["event"]!) \(object["device"]!) \(object["region"]!)")
        }
        #expect(seen == [
            "enter x\"y a\"b", "enter x\"y c\\d\te", "enter p\u{1}q a\"b", "enter p\u{1}q c\\d\te",
            "enter Zürich plain", "exit x\"y a\"b", "exit x\"y c\\d\te",
        ])
    }

    @Test("bad records are reported as FILE:LINE: reason, counted, written to --rejects, and skipped")
    func rejects() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write(Self.regions, "regions.geojson", in: dir)
        let input = try write("""
            {"t":10,"device":"d1","lat":48.2,"lon":16.37}
            {"t":11,"device":"d1","lat":91,"lon":16.37}
            not json
            {"t":9.5,"device":"d1","lat":48.2,"lon":16.37}
            {"t":12,"lat":48.2,"lon":16.37}
            {"t":13,"device":"d1","lat":48.3,"lon":16.37}

            """, "fixes.ndjson", in: dir)
        let rejectsPath = dir.appendingPathComponent("rejects.tsv").path
        let r = try CLI.run(["replay", "--regions", regions, "--rejects", rejectsPath, input])
        #expect(r.status == 0)
        #expect(r.lines.count == 2)  // enter at t 10, exit at t 13
        #expect(r.stderr.contains("fixes.ndjson:2: latitude outside [-90, 90]"))
        #expect(r.stderr.contains("fixes.ndjson:3: "))
        #expect(r.stderr.contains("fixes.ndjson:4: older than the device's previous reading"))
        #expect(r.stderr.contains("fixes.ndjson:5: missing device"))
        #expect(r.stderr.contains("4 rejected"))
        let rejects = try String(contentsOfFile: rejectsPath, encoding: .utf8).split(separator: "\n")
        #expect(rejects.count == 4)
        #expect(rejects[0].hasSuffix("fixes.ndjson:2\tlatitude-out-of-range\t{\"t\":11,\"device\":\"d1\",\"lat\":91,\"lon\":16.37}"))
        #expect(rejects[1].hasSuffix("\tnot json"))
        #expect(rejects[2].contains("\tolder-than-previous\t"))
    }

    /// Runs of plain fixes (NDJSON lines or CSV rows, newline or CR LF) go from the read buffer
    /// straight to the engine; a fix the engine rejects there (older than its device's previous
    /// one) is still reported under its own line, with its own bytes, and the run goes on; under
    /// `--strict` it stops the run at that line.
    ///
    /// Without the polygon, the fixes go through the monitor's batches (`Engine.batchesFixes`):
    /// a batch is applied before the rejected fix is, and the reports are the same.
    @Test("a fix rejected inside a run of plain lines is reported under its own line",
          arguments: [("ndjson", "\n"), ("ndjson", "\r\n"), ("csv", "\n"), ("csv", "\r\n")], [true, false])
    func rejectsInsidePlainRuns(_ syntax: (format: String, newline: String), polygon: Bool) throws {
        let (format, newline) = syntax
        let dir = try CLI.temporaryDirectory()
        let regions = try write(polygon ? Self.regions : Self.circleOnly, "regions.geojson", in: dir)
        func record(_ t: Int, _ device: String, _ lat: String, accuracy: Bool = true) -> String {
            format == "csv" ? "\(t),\(device),\(lat),16.37,\(accuracy ? "5" : "")"
                : #"{"t":\#(t),"device":"\#(device)","lat":\#(lat),"lon":16.37\#(accuracy ? #","accuracy":5"# : "")}"#
        }
        var lines = format == "csv" ? ["t,device,lat,lon,accuracy"] : []
        let first = lines.count  // line k of the file is lines[k - 1]
        for t in 0..<40 { lines.append(record(t, "d\(t % 3)", t < 30 ? "48.2" : "48.3")) }
        lines[first + 16] = record(5, "d1", "48.2")  // d1 was at t 13
        lines[first + 27] = record(1, "d0", "48.2", accuracy: false)
        let name = "fixes.\(format)"
        let input = try write(lines.joined(separator: newline) + newline, name, in: dir)
        let (early, late) = (first + 17, first + 28)  // their line numbers
        let rejectsPath = dir.appendingPathComponent("rejects.tsv").path
        let r = try CLI.run(["replay", "--regions", regions, "--rejects", rejectsPath, input])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("\(name):\(early): older than the device's previous reading"))
        #expect(r.stderr.contains("\(name):\(late): older than the device's previous reading"))
        #expect(r.stderr.contains("38 GPS fixes"))
        #expect(r.stderr.contains("2 rejected"))
        let rejects = try String(contentsOfFile: rejectsPath, encoding: .utf8).split(separator: "\n")
        #expect(rejects.count == 2)
        #expect(rejects.first?.hasSuffix("\(name):\(early)\tolder-than-previous\t" + lines[early - 1]) == true)
        #expect(rejects.last?.hasSuffix("\(name):\(late)\tolder-than-previous\t" + lines[late - 1]) == true)
        // Three devices enter home at their first fix and leave it at t 30–32.
        #expect(r.lines.count == 6)

        let strict = try CLI.run(["replay", "--regions", regions, "--strict", input])
        #expect(strict.status == 65)
        #expect(strict.stderr.contains("\(name):\(early): older than the device's previous reading"))
        #expect(!strict.stderr.contains("\(name):\(late)"))
        #expect(strict.lines.count <= 3)
    }

    @Test("--strict stops at the first bad record with status 65")
    func strict() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write(Self.regions, "regions.geojson", in: dir)
        let input = try write("""
            {"t":0,"device":"d1","lat":48.2,"lon":16.37}
            {"t":1,"device":"d1","lat":48.2,"lon":"east"}
            {"t":2,"device":"d1","lat":48.3,"lon":16.37}

            """, "fixes.ndjson", in: dir)
        let r = try CLI.run(["replay", "--regions", regions, "--strict", input])
        #expect(r.status == 65)
        #expect(r.stderr.contains("fixes.ndjson:2:"))
        #expect(r.lines.count <= 1)
    }

    @Test("exit statuses: 66 missing input, 65 bad regions, 64 usage")
    func exitStatuses() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write(Self.regions, "regions.geojson", in: dir)
        let missing = try CLI.run(["replay", "--regions", regions, dir.appendingPathComponent("nope.ndjson").path])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("nope.ndjson"))

        let bad = try write("""
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[16.37,48.2]},"properties":{"radius":100}},
              {"type":"Feature","id":"b","geometry":{"type":"Point","coordinates":[16.37,48.2]},"properties":{"radius":-5}}
            ]}
            """, "bad.geojson", in: dir)
        let badRegions = try CLI.run(["replay", "--regions", bad], stdin: Data())
        #expect(badRegions.status == 65)
        #expect(badRegions.stderr.contains("bad.geojson"))
        #expect(badRegions.stderr.contains("feature 1"))
        #expect(badRegions.stderr.contains("radius"))

        let bowtie = try write("""
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"bow","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]},"properties":{}}
            ]}
            """, "bowtie.geojson", in: dir)
        let invalid = try CLI.run(["replay", "--regions", bowtie], stdin: Data())
        #expect(invalid.status == 65)
        #expect(invalid.stderr.contains("bow"))
        #expect(invalid.stderr.contains("Self-intersection"))

        let usage = try CLI.run(["replay", "--regions", regions, "--hysteresis", "-3"], stdin: Data())
        #expect(usage.status == 64)
        let noRegions = try CLI.run(["replay"], stdin: Data())
        #expect(noRegions.status == 64)
    }

    @Test("--output, --state-out, --dwell and --until")
    func outputsAndState() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = try write(Self.regions, "regions.geojson", in: dir)
        let input = try write("""
            t,device,lat,lon,accuracy
            100,bus-7,48.2,16.37,5
            110,bus-7,48.2001,16.37,5
            120,tram 2,48.05,16.05,
            130,bus-7,48.2001,16.37,500

            """, "fixes.csv", in: dir)
        let events = dir.appendingPathComponent("events.ndjson").path
        let state = dir.appendingPathComponent("state.json").path
        let r = try CLI.run(["replay", "--regions", regions, "--dwell", "60", "--until", "1970-01-01T00:10:00Z",
                             "--output", events, "--state-out", state, "--echo-properties", input])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n").map(String.init)
        let keys = lines.compactMap(EventKey.init(line:)).map(\.description)
        #expect(keys == [
            "1970-01-01T00:01:40.000Z enter bus-7 home",
            "1970-01-01T00:02:00.000Z enter tram 2 square",
            "1970-01-01T00:02:40.000Z dwell bus-7 home",
            "1970-01-01T00:03:00.000Z dwell tram 2 square",
        ])
        #expect(lines[1].contains(#""properties":{"kind":"park"}"#))
        #expect(r.stderr.contains("1 fixes less accurate"))
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state))) as! [String: Any]
        #expect(json["clock"] as? String == "1970-01-01T00:10:00.000Z")
        let devices = json["devices"] as! [String: Any]
        let bus = devices["bus-7"] as! [String: Any]
        let inside = bus["inside"] as! [[String: Any]]
        #expect(inside.count == 1)
        #expect(inside[0]["region"] as? String == "home")
        #expect(inside[0]["dwelled"] as? Bool == true)
        #expect(bus["lastReading"] as? String == "1970-01-01T00:02:10.000Z")
    }
}
