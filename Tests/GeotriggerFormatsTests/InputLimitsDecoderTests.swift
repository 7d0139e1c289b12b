import Foundation
import GeotriggerCore
import Testing
@testable import GeotriggerFormats

/// SPEC §3's limits through every decoder path: times outside the years 0001–9999 are rejected as
/// `timeOutOfRange`, identifiers over 256 bytes of UTF-8 as `idTooLong`. The plain-line paths
/// (NDJSON fix lines, CSV rows) decline such lines so the general path names the reason; the fast
/// lane (`drainPlainFixes`) must see exactly what `next()` sees.
@Suite struct InputLimitsDecoderTests {
    /// 256 bytes of UTF-8 in 128 characters, and 257 bytes in 129.
    static let id256 = String(repeating: "é", count: 128)
    static let id257 = id256 + "x"
    /// The same in ASCII, which the plain paths read.
    static let ascii256 = String(repeating: "d", count: 256)
    static let ascii257 = ascii256 + "d"

    /// Hand-computed boundaries: (t as written in the line, accepted, its millisecond rendering).
    static let times: [(String, Bool, String?)] = [
        ("-62135596800", true, "0001-01-01T00:00:00.000Z"),
        ("-62135596800.001", false, nil),
        ("253402300799.999", true, "9999-12-31T23:59:59.999Z"),
        ("253402300799.9995", false, nil),  // would be written 10000-01-01T00:00:00.000Z
        ("253402300800", false, nil),
        ("1e300", false, nil),
        ("-1e300", false, nil),
        (#""0001-01-01T00:00:00Z""#, true, "0001-01-01T00:00:00.000Z"),
        (#""9999-12-31T23:59:59.999Z""#, true, "9999-12-31T23:59:59.999Z"),
        (#""0000-12-31T23:59:59Z""#, false, nil),
        (#""9999-12-31T23:59:59.9995Z""#, false, nil),
    ]

    func expectTime(_ s: Seen, _ accepted: Bool, _ written: String?, _ context: String) {
        if accepted {
            #expect(s.step == .reading, "\(context)")
            #expect(RFC3339.format(s.t) == written, "\(context)")
        } else {
            #expect(s.step == .rejected(.timeOutOfRange), "\(context)")
        }
    }

    // MARK: NDJSON

    @Test(arguments: times)
    func ndjsonFixTimes(_ t: String, _ accepted: Bool, _ written: String?) {
        // The plain form (a number `PlainLine.number` reads goes the plain path) and a general one.
        let plain = #"{"t":\#(t),"device":"d","lat":1,"lon":2}"#
        let general = #"{"device":"d", "t":\#(t), "lat":1, "lon":2}"#
        for line in [plain, general] {
            expectTime(one(line), accepted, written, line)
            // Read as the replay loop reads: the fast lane, after a plain line that opens it.
            let opener = #"{"t":-62135596800,"device":"o","lat":1,"lon":2}"#
            let file = TempFile(opener + "\n" + line + "\n")
            let (seen, _) = drainWithFastLane(NDJSONDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path))
            #expect(seen.count == 2)
            if seen.count == 2 { expectTime(seen[1], accepted, written, "lane: " + line) }
        }
    }

    @Test(arguments: times)
    func ndjsonSightingAndControlTimes(_ t: String, _ accepted: Bool, _ written: String?) {
        expectTime(one(#"{"t":\#(t),"device":"d","uuid":"\#(uuidText)","rssi":-70}"#), accepted, written, "sighting")
        expectTime(one(#"{"t":\#(t),"device":"d","op":"removeAllPending"}"#), accepted, written, "control")
    }

    @Test func ndjsonTheYear10000IsNotATime() {
        #expect(one(#"{"t":"10000-01-01T00:00:00Z","device":"d","lat":1,"lon":2}"#).step == .rejected(.badTime))
    }

    @Test(arguments: [(ascii256, true), (ascii257, false), (id256, true), (id257, false)])
    func ndjsonDeviceLength(_ device: String, _ accepted: Bool) {
        let lines = [
            #"{"t":1,"device":"\#(device)","lat":1,"lon":2}"#,  // plain when ASCII
            #"{"t":1,"device":"\#(device)","lat":1,"lon":2,"accuracy":5}"#,
            #"{"lat":1,"lon":2,"t":1,"device":"\#(device)"}"#,
            #"{"t":1,"device":"\#(device)","uuid":"\#(uuidText)","rssi":-70}"#,
            #"{"t":1,"device":"\#(device)","op":"removeAllDelivered"}"#,
        ]
        for line in lines {
            let s = one(line)
            if accepted {
                #expect(s.step == .reading && s.device == device, "\(line)")
            } else {
                #expect(s.step == .rejected(.idTooLong), "\(line)")
                #expect(s.text == line)
            }
        }
        // An escaped spelling counts its bytes once unescaped: \u00e9 is "é", 2 bytes.
        let escaped = String(repeating: #"\u00e9"#, count: 128) + (accepted ? "" : "x")
        if device.utf8.first != UInt8(ascii: "d") {
            let s = one(#"{"t":1,"device":"\#(escaped)","lat":1,"lon":2}"#)
            #expect(s.step == (accepted ? .reading : .rejected(.idTooLong)))
        }
    }

    @Test func ndjsonPlainFastLaneDeclinesALongDevice() {
        let text = [
            #"{"t":1,"device":"a","lat":1,"lon":2}"#,
            #"{"t":2,"device":"\#(Self.ascii256)","lat":1,"lon":2}"#,
            #"{"t":3,"device":"\#(Self.ascii257)","lat":1,"lon":2}"#,
            #"{"t":4,"device":"a","lat":1,"lon":2}"#,
            #"{"t":253402300800,"device":"a","lat":1,"lon":2}"#,
            #"{"t":5,"device":"a","lat":1,"lon":2}"#,
        ].joined(separator: "\n") + "\n"
        let file = TempFile(text)
        let (seen, fromLane) = drainWithFastLane(NDJSONDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path))
        #expect(seen.map(\.step) == [.reading, .reading, .rejected(.idTooLong), .reading, .rejected(.timeOutOfRange), .reading])
        #expect(seen.map(\.line) == [1, 2, 3, 4, 5, 6])
        #expect(fromLane >= 1)
        #expect(seen == decodeNDJSON(text).1.map { $0 })
    }

    @Test(arguments: [(id256, true), (id257, false), (ascii257, false)])
    func ndjsonControlRecordIds(_ id: String, _ accepted: Bool) {
        let lines = [
            #"{"t":1,"device":"d","op":"push","id":"\#(id)","content":{"title":"x"}}"#,
            #"{"t":1,"device":"d","op":"removePending","ids":["a","\#(id)"]}"#,
            #"{"t":1,"device":"d","op":"removeDelivered","ids":["\#(id)"]}"#,
            #"{"t":1,"device":"d","op":"add","request":{"id":"\#(id)","trigger":{"type":"push"}}}"#,
        ]
        for line in lines {
            let s = one(line)
            #expect(s.step == (accepted ? .reading : .rejected(.idTooLong)), "\(line)")
        }
    }

    // MARK: CSV

    @Test(arguments: times)
    func csvTimes(_ t: String, _ accepted: Bool, _ written: String?) {
        // Unquoted: a CSV time is a number or an RFC 3339 text, without JSON quotes.
        let cell = t.replacingOccurrences(of: "\"", with: "")
        for header in ["t,device,lat,lon", "t,device,lat,lon,accuracy", "device,t,lat,lon"] {
            let row = header == "device,t,lat,lon" ? "d,\(cell),1,2" : header.hasSuffix("accuracy") ? "\(cell),d,1,2,5" : "\(cell),d,1,2"
            let text = "\(header)\n\(row)\n"
            for plainRows in [true, false] {
                let seen = decodeCSV(text, plainRows: plainRows).1
                #expect(seen.count == 1)
                if let s = seen.first { expectTime(s, accepted, written, "\(text) plain: \(plainRows)") }
            }
            let opener = header == "device,t,lat,lon" ? "o,0,1,2" : header.hasSuffix("accuracy") ? "0,o,1,2,5" : "0,o,1,2"
            let lane = decodeCSVWithFastLane("\(header)\n\(opener)\n\(row)\n").seen
            #expect(lane.count == 2)
            if lane.count == 2 { expectTime(lane[1], accepted, written, "lane: \(text)") }
        }
    }

    @Test(arguments: [(ascii256, true), (ascii257, false), (id256, true), (id257, false)])
    func csvDeviceLength(_ device: String, _ accepted: Bool) {
        let text = "t,device,lat,lon\n1,\(device),1,2\n2,d,1,2\n3,\(device),1,2\n"
        let expected: [DecodeStep] = accepted ? [.reading, .reading, .reading] : [.rejected(.idTooLong), .reading, .rejected(.idTooLong)]
        #expect(decodeCSV(text).1.map(\.step) == expected)
        #expect(decodeCSV(text, plainRows: false).1.map(\.step) == expected)
        #expect(decodeCSVWithFastLane(text).seen.map(\.step) == expected)
        let sightings = "t,device,uuid,rssi\n1,\(device),\(uuidText),-70\n"
        #expect(decodeCSV(sightings).1.map(\.step) == [accepted ? .reading : .rejected(.idTooLong)])
    }

    // MARK: GPX

    func gpx(_ times: [String], name: String = "walk.gpx", device: String? = nil) -> [Seen] {
        let points = times.map { #"<trkpt lat="1" lon="2"><time>\#($0)</time></trkpt>"# }.joined(separator: "\n")
        let file = TempFile("<gpx><trk><trkseg>\n" + points + "\n</trkseg></trk></gpx>", name: "walk.gpx")
        let d = GPXDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: name, device: device)
        return drain(d)
    }

    @Test func gpxTimes() {
        let seen = gpx([
            "0001-01-01T00:00:00Z", "0000-12-31T23:59:59Z", "9999-12-31T23:59:59.999Z",
            "9999-12-31T23:59:59.9995Z", "10000-01-01T00:00:00Z",
        ])
        #expect(seen.map(\.step) == [.reading, .rejected(.timeOutOfRange), .reading, .rejected(.timeOutOfRange),
                                     .rejected(.badTime)])
        #expect(seen.map(\.line) == [2, 3, 4, 5, 6])
        #expect(RFC3339.format(seen[0].t) == "0001-01-01T00:00:00.000Z")
        #expect(RFC3339.format(seen[2].t) == "9999-12-31T23:59:59.999Z")
    }

    @Test func gpxDeviceFromAFileNameOrGivenIsLimited() {
        // The file name less its extension: 256 bytes are a device, 257 are not.
        #expect(gpx(["2021-10-29T10:00:03Z"], name: "/tracks/\(Self.id256).gpx").map(\.device) == [Self.id256])
        #expect(gpx(["2021-10-29T10:00:03Z", "2021-10-29T10:00:04Z"], name: "/tracks/\(Self.id257).gpx").map(\.step)
                == [.rejected(.idTooLong), .rejected(.idTooLong)])
        #expect(gpx(["2021-10-29T10:00:03Z"], device: Self.id257).map(\.step) == [.rejected(.idTooLong)])
        #expect(gpx(["2021-10-29T10:00:03Z"], device: Self.id256).map(\.device) == [Self.id256])
    }
}
