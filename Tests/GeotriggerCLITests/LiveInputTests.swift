import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A live stream on standard input (SPEC §2, "Live input"): a reading's events come out while the
/// stream is still open, not at its end, whatever the format.
@Suite("live standard input")
struct LiveInputTests {
    static let regions = #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"c","geometry":{"type":"Point","coordinates":[13.0,45.0]},"properties":{"radius":100}}]}"#

    /// Six readings, each crossing the circle, written one at a time into a pipe; each one's event
    /// is read back before the next reading is written. Returns how many came while the stream
    /// was open, and the longest wait.
    static func eventsWhileOpen(_ readings: [String], arguments: [String] = []) throws -> (count: Int, longest: Double) {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let regionsFile = dir.appendingPathComponent("r.geojson")
        try Data(regions.utf8).write(to: regionsFile)
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["replay", "--regions", regionsFile.path, "-q", "--hysteresis", "0"] + arguments + ["-"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        let fd = output.fileHandleForReading.fileDescriptor
        var count = 0, longest = 0.0
        for reading in readings {
            input.fileHandleForWriting.write(Data((reading + "\n").utf8))
            let start = Date()
            var line: [UInt8] = []
            // Up to 5 s for the event's line.
            while !line.contains(0x0A) {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let waited = Date().timeIntervalSince(start)
                guard waited < 5, poll(&p, 1, Int32((5 - waited) * 1000)) > 0 else { break }
                var byte: UInt8 = 0
                guard read(fd, &byte, 1) == 1 else { break }
                line.append(byte)
            }
            if line.contains(0x0A) {
                count += 1
                longest = max(longest, Date().timeIntervalSince(start))
            }
        }
        return (count, longest)
    }

    static let latitudes = [45.0, 45.01, 45.0, 45.01, 45.0, 45.01]

    /// The six readings as NDJSON fixes.
    static let ndjson = latitudes.enumerated().map { k, la in #"{"t":\#(1_700_000_000 + k),"device":"d","lat":\#(la),"lon":13.0}"# }

    /// As gpsd's reports: gpspipe -w begins with gpsd's VERSION and DEVICES, told apart from
    /// NDJSON by their "class".
    static let gpsd: [String] = {
        var readings = latitudes.enumerated().map { k, la in
            #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"2023-11-14T22:13:\#(20 + k).000Z","lat":\#(la),"lon":13.0,"eph":5}"#
        }
        readings[0] = #"{"class":"VERSION","release":"3.22","proto_major":3,"proto_minor":14}"# + "\n"
            + #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyUSB0","driver":"NMEA0183"}]}"# + "\n" + readings[0]
        return readings
    }()

    /// As a receiver's NMEA bursts, one cycle (RMC and GGA) each.
    static let nmea: [String] = {
        func sentence(_ body: String) -> String {
            "$" + body + "*" + String(format: "%02X", body.utf8.reduce(UInt8(0), ^))
        }
        return latitudes.enumerated().map { k, la -> String in
            let minutes = (la - 45) * 60
            let lat = String(format: "45%07.4f", minutes)
            let time = String(format: "2213%02d", 20 + k)
            return sentence("GPRMC,\(time),A,\(lat),N,01300.0000,E,0.0,0.0,141123,,,A") + "\n"
                + sentence("GPGGA,\(time),\(lat),N,01300.0000,E,1,08,1.0,10.0,M,0.0,M,,")
        }
    }()

    @Test("NDJSON: each reading's event before the next reading is written")
    func ndjsonLive() throws {
        let r = try Self.eventsWhileOpen(Self.ndjson)
        #expect(r.count == 6, "\(r.count) of 6 events came while the stream was open")
        #expect(r.longest < 0.5)
    }

    @Test("gpsd's reports (gpspipe -w): each fix's event as it arrives")
    func gpsdLive() throws {
        let r = try Self.eventsWhileOpen(Self.gpsd)
        #expect(r.count == 6, "\(r.count) of 6 events came while the stream was open")
        #expect(r.longest < 0.5)
    }

    @Test("NMEA: a receiver's cycle ends when its burst does, not when the next begins")
    func nmeaLive() throws {
        let r = try Self.eventsWhileOpen(Self.nmea, arguments: ["--format", "nmea"])
        #expect(r.count == 6, "\(r.count) of 6 events came while the stream was open")
        #expect(r.longest < 0.5)
    }

    @Test("--jobs 2: the jobs apply what was read and their events leave before the reader waits",
          arguments: ["ndjson", "gpsd", "nmea"])
    func jobsLive(format: String) throws {
        let readings = format == "ndjson" ? Self.ndjson : format == "gpsd" ? Self.gpsd : Self.nmea
        let r = try Self.eventsWhileOpen(readings, arguments: ["--jobs", "2", "--format", format])
        #expect(r.count == 6, "\(format): \(r.count) of 6 events came while the stream was open")
        #expect(r.longest < 0.5)
    }
}
