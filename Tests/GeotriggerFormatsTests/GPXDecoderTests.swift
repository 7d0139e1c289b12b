import Foundation
import GeotriggerCore
import Testing
@testable import GeotriggerFormats

let gpxDataset = "/work/shared/datasets/gpxpy_tracks/cerknicko-jezero.gpx"

@Suite struct GPXDecoderTests {
    @Test(.enabled(if: FileManager.default.fileExists(atPath: gpxDataset),
                   "dataset /work/shared/datasets/gpxpy_tracks is absent; skipping the real-file GPX test"))
    func realTrack() throws {
        let d = try ReadingInput.open(path: gpxDataset)
        #expect(d is GPXDecoder)
        let seen = drain(d)
        // 296 track points in 8 segments, all timed (SOURCE.txt); the 7 waypoints are not readings.
        #expect(seen.count == 296)
        #expect(seen.allSatisfy { $0.step == .reading && $0.kind == .fix && $0.device == "cerknicko-jezero" })
        let first = try #require(seen.first)
        #expect(first.line == 68)
        #expect(first.latitude == 45.772175035 && first.longitude == 14.357659249)
        #expect(first.t == RFC3339.parse("2010-08-05T14:23:59Z"))
        #expect(first.text.hasPrefix(#"<trkpt lat="45.772175035" lon="14.357659249">"#) && first.text.hasSuffix("</trkpt>"))
        #expect(first.accuracy.isNaN)
        #expect(seen.last?.t == RFC3339.parse("2010-08-05T16:23:49Z"))
        // Time order holds within the file, as the merge assumes.
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.t <= $1.t })
        #expect(d.untimedPoints == 0)
        #expect(d.ioError == nil)
    }

    @Test func handWrittenTrack() throws {
        let gpx = """
        <?xml version="1.0"?>
        <gpx><!-- <trkpt lat="1" lon="1"><time>2020-01-01T00:00:00Z</time></trkpt> -->
        <wpt lat="5" lon="5"><time>2020-01-01T00:00:00Z</time></wpt>
        <trk><trkseg>
        <trkpt lat="48.2" lon='16.37'><ele>170</ele><time>2021-10-29T10:00:03Z</time></trkpt>
        <trkpt lat="48.3" lon="16.4"/>
        <trkpt lon="16.5"
               lat="48.4">
          <time> 2021-10-29T10:00:05.500+00:00 </time>
        </trkpt>
        <trkpt lat="91" lon="16.5"><time>2021-10-29T10:00:06Z</time></trkpt>
        <trkpt lat="48" lon="16.5"><time>not a time</time></trkpt>
        <trkpt lat="abc" lon="16.5"><time>2021-10-29T10:00:07Z</time></trkpt>
        <trkpt lon="16.5"><time>2021-10-29T10:00:07Z</time></trkpt>
        <trkpt lat="48.5" lon="16.6"><ele>1</ele></trkpt>
        <trkpts lat="1" lon="1"><time>2021-10-29T10:00:08Z</time></trkpts>
        </trkseg></trk></gpx>
        """
        let file = TempFile(gpx, name: "my.track.gpx")
        let d = try ReadingInput.open(path: file.path, device: nil)
        let seen = drain(d)
        #expect(seen.map(\.step) == [.reading, .reading, .rejected(.latitudeOutOfRange), .rejected(.badTime),
                                     .rejected(.malformed), .rejected(.missingCoordinate)])
        #expect(seen.map(\.line) == [5, 7, 11, 12, 13, 14])
        #expect(seen[0].device == "my.track" && seen[0].t == 1_635_501_603 && seen[0].latitude == 48.2 && seen[0].longitude == 16.37)
        #expect(seen[1].latitude == 48.4 && seen[1].t == 1_635_501_605.5)
        #expect(seen[2].text == #"<trkpt lat="91" lon="16.5"><time>2021-10-29T10:00:06Z</time></trkpt>"#)
        #expect(d.untimedPoints == 2)
    }

    @Test func deviceOverride() throws {
        let file = TempFile(#"<gpx><trkpt lat="1" lon="2"><time>2021-10-29T10:00:03Z</time></trkpt></gpx>"#, name: "a.gpx")
        let d = try ReadingInput.open(path: file.path, device: "phone")
        #expect(drain(d).map(\.device) == ["phone"])
    }

    @Test func deviceNameFromPath() {
        #expect(GPXDecoder.deviceName(fromPath: "/x/y/ride.gpx") == "ride")
        #expect(GPXDecoder.deviceName(fromPath: "ride") == "ride")
        #expect(GPXDecoder.deviceName(fromPath: ".hidden") == ".hidden")
        #expect(GPXDecoder.deviceName(fromPath: "logs/bus 7.v2.nmea") == "bus 7.v2")
        #expect(GPXDecoder.deviceName(fromPath: "logs/d12/") == "d12")
        #expect(GPXDecoder.deviceName(fromPath: "///") == "///")
        #expect(GPXDecoder.deviceName(fromPath: "/x/.log") == ".log")
        #expect(GPXDecoder.deviceName(fromPath: "/x/Zürich.gpx") == "Zürich")
    }

    @Test func truncatedElementIsRejected() {
        let file = TempFile(#"<gpx><trkpt lat="1" lon="2"><time>2021-10-29T10:00:03Z</time>"#, name: "cut.gpx")
        let d = GPXDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path)
        #expect(drain(d).map(\.step) == [.rejected(.malformed)])
    }

    @Test("a <time tag whose > lies past the point's close is no time of the point (it crashed the decoder)")
    func timeTagClosingAfterThePoint() {
        let file = TempFile("""
            <gpx><trk><trkseg><trkpt lat="1" lon="2"><time </trkpt>
            <trkpt lat="3" lon="4"><time>2020-01-01T00:00:00Z</time></trkpt></trkseg></trk></gpx>
            """, name: "time.gpx")
        let d = GPXDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path)
        let seen = drain(d)
        #expect(seen.map(\.step) == [.reading])
        #expect(seen.first?.latitude == 3 && seen.first?.line == 2)
        #expect(d.untimedPoints == 1)
    }
}
