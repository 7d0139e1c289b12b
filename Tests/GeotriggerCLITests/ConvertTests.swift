import Foundation
import Testing

/// `geotrigger convert`: the readings as the engine sees them, written back out.
@Suite("geotrigger convert")
struct ConvertTests {
    static let readings = """
        {"t":1700000000,"device":"a","lat":45.5,"lon":13.25,"accuracy":5}
        {"t":1699999999,"device":"a","lat":45.5,"lon":13.25}
        {"t":"2023-11-14T22:13:21.5Z","device":"b,\\"x\\"","lat":45.123456789012,"lon":-13.25}
        not json
        {"t":1700000002,"device":"b,\\"x\\"","uuid":"f7826da6-4fa2-4e98-8024-bc5b71e0893e","major":1,"minor":7,"rssi":-71,"tx":-59}
        {"t":1700000003,"device":"a","op":"removePending","ids":["x"]}

        """

    @Test("NDJSON out: what replay takes, with replay's rejections reported")
    func ndjson() throws {
        let r = try CLI.run(["convert", "-"], stdin: Data(Self.readings.utf8))
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines.count == 4)
        #expect(r.lines[0] == #"{"t":"2023-11-14T22:13:20.000Z","device":"a","lat":45.5,"lon":13.25,"accuracy":5}"#)
        #expect(r.lines[3] == #"{"t":1700000003,"device":"a","op":"removePending","ids":["x"]}"#)
        // The same reasons and places as replay gives.
        #expect(r.stderr.contains("-:2: older than the device's previous reading"))
        #expect(r.stderr.contains("-:4: not a valid record"))
        #expect(r.stderr.contains("rejected: 2 (1 malformed, 1 older-than-previous)"))
        let strict = try CLI.run(["convert", "--strict", "-"], stdin: Data(Self.readings.utf8))
        #expect(strict.status == 65)
    }

    @Test("a directory of receivers' logs: every file in it, each its own device, as if named one by one")
    func directoryOfLogs() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fleet = dir.appendingPathComponent("fleet")
        try FileManager.default.createDirectory(at: fleet, withIntermediateDirectories: true)
        func sentence(_ body: String) -> String { "$" + body + "*" + String(format: "%02X", body.utf8.reduce(UInt8(0), ^)) }
        for (name, minute) in [("van2", 10), ("van1", 11)] {
            let log = (0..<3).map { k in
                sentence("GPRMC,1200\(20 + 2 * k + (name == "van1" ? 1 : 0)),A,45\(minute).0000,N,01300.0000,E,0.0,0.0,141123,,,A")
            }.joined(separator: "\r\n") + "\r\n"
            try Data(log.utf8).write(to: fleet.appendingPathComponent("\(name).log"))
        }
        let byDirectory = try CLI.run(["convert", fleet.path])
        let byName = try CLI.run(["convert", fleet.appendingPathComponent("van1.log").path, fleet.appendingPathComponent("van2.log").path])
        #expect(byDirectory.status == 0, "\(byDirectory.stderr)")
        #expect(byDirectory.lines.count == 6)
        #expect(byDirectory.stdout == byName.stdout)
        #expect(byDirectory.lines.first?.contains(#""device":"van2""#) == true, "merged by time: van2's 12:00:20 first")
        let empty = dir.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let none = try CLI.run(["replay", "--regions", CLI.fixtures.appendingPathComponent("antimeridian.regions.geojson").path, empty.path])
        #expect(none.status == 74)
        #expect(none.stderr.contains("a directory with no files in it"))
    }

    @Test("CSV and GPX out read back to the same readings")
    func roundTrips() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.ndjson")
        try Data(Self.readings.utf8).write(to: input)
        let ndjson = try CLI.run(["convert", "-q", input.path]).stdout
        // CSV holds fixes and sightings (not the control record); read back, the same lines.
        let csv = dir.appendingPathComponent("out.csv")
        #expect(try CLI.run(["convert", "-q", input.path, "-o", csv.path]).status == 0)
        let back = try CLI.run(["convert", "-q", csv.path]).stdout
        #expect(back == ndjson.split(separator: "\n").dropLast().map { $0 + "\n" }.joined())
        // GPX holds fixes, a track per device.
        let gpx = dir.appendingPathComponent("out.gpx")
        #expect(try CLI.run(["convert", "-q", input.path, "-o", gpx.path]).status == 0)
        let track = try CLI.run(["convert", "-q", "--device", "a", gpx.path]).lines
        #expect(track.count == 2)
        #expect(track[1] == #"{"t":"2023-11-14T22:13:21.500Z","device":"a","lat":45.123456789012,"lon":-13.25}"#)
    }

    @Test("gpsd reports: the device is --device, else the report's, else the file's name; an empty one names none")
    func gpsdDevices() throws {
        let dir = try CLI.temporaryDirectory()
        let path = dir.appendingPathComponent("car.log").path
        let reports = """
            {"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"2010-06-12T17:10:01.000Z","lat":52.01,"lon":4.36,"eph":5}
            {"class":"TPV","device":"","mode":3,"time":"2010-06-12T17:10:02.000Z","lat":52.01,"lon":4.36,"eph":5}
            {"class":"TPV","mode":3,"time":"2010-06-12T17:10:03.000Z","lat":52.01,"lon":4.36,"eph":5}

            """
        try reports.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try CLI.run(["convert", "-q", path])
        #expect(r.status == 0, "\(r.stderr)")
        let devices = r.lines.compactMap { $0.split(separator: "\"").dropFirst(7).first.map(String.init) }
        #expect(devices == ["/dev/ttyUSB0", "car", "car"], "\(r.stdout)")
        let named = try CLI.run(["convert", "-q", "--device", "van7", path])
        #expect(named.lines.count == 3 && named.lines.allSatisfy { $0.contains(#""device":"van7""#) }, "\(named.stdout)")
    }

    @Test("an NMEA log on standard input is told by its content; its device is stdin or --device")
    func nmeaOnStandardInput() throws {
        let log = """
            # a logger's header
            $GPGGA,093802,5213.1439,N,02100.6511,E,2,10,0.9,137.2,M,36.2,M,,*43
            $GPRMC,093802,A,5213.1439,N,02100.6511,E,000.0,226.0,160305,004.2,E,D*15
            $GPGSV,3,2,12,18,50,135,50,19,15,291,46,21,59,069,51,22,30,169,49*75
            $GPRMC,093803,A,5213.1439,N,02100.6511,E,000.0,226.0,160305,004.2,E,D*14
            $GPRMC,093804,A,5213.1439,N,02100.6511,E,000.0,226.0,160305,004.2,E,D*10

            """
        let r = try CLI.run(["convert", "-"], stdin: Data(log.utf8))
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines.first == #"{"t":"2005-03-16T09:38:02.000Z","device":"stdin","lat":52.219065,"lon":21.010851666666667,"accuracy":7.2}"#)
        // The last sentence's checksum is wrong: two cycles, two fixes.
        #expect(r.lines.count == 2)
        #expect(r.stderr.contains("-:6: NMEA sentence whose checksum does not match"))
        #expect(r.stderr.contains("passed over: 2 lines (1 GSV, 1 comment)"))
        let named = try CLI.run(["convert", "-q", "--device", "van7", "-"], stdin: Data(log.utf8))
        #expect(named.lines.first?.contains(#""device":"van7""#) == true)
    }
}
