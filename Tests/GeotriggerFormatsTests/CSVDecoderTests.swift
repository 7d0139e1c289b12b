import GeotriggerCore
import Testing
@testable import GeotriggerFormats

@Suite struct CSVDecoderTests {
    @Test func fixesWithHeaderInAnyOrderAndExtraColumns() {
        let text = "lon,extra,t,device,lat,accuracy\r\n16.37,zzz,1635501603,d1,48.2,12\r\n\r\n16.38,,2021-10-29T10:00:04Z,d1,48.21,\r\n"
        let (d, seen) = decodeCSV(text)
        #expect(seen.map(\.step) == [.reading, .reading])
        #expect(seen.map(\.line) == [2, 4])
        #expect(seen[0].t == 1_635_501_603 && seen[0].latitude == 48.2 && seen[0].longitude == 16.37 && seen[0].accuracy == 12)
        #expect(seen[1].t == 1_635_501_604 && seen[1].accuracy.isNaN)
        #expect(seen[0].text == "16.37,zzz,1635501603,d1,48.2,12")
        #expect(d.header == ["lon", "extra", "t", "device", "lat", "accuracy"])
        #expect(d.blankLines == 1)
    }

    @Test func sightings() {
        let text = "t,device,uuid,major,minor,rssi,tx\n5,d1,\(uuidText),1,7,-71,-59\n6,d1,\(uuidText.lowercased()),,,-70,\n"
        let (_, seen) = decodeCSV(text)
        #expect(seen.map(\.step) == [.reading, .reading])
        #expect(seen[0].kind == .sighting && seen[0].beacon == BeaconID(uuidHigh: uuidHigh, uuidLow: uuidLow, major: 1, minor: 7))
        #expect(seen[0].tx == -59)
        #expect(seen[1].beacon.major == -1 && seen[1].beacon.minor == -1 && seen[1].tx.isNaN)
    }

    @Test func quotedFields() {
        let text = #"""
        t,device,lat,lon,note
        1,"dev, one",1,2,x
        2,"say ""hi""",1,2,"a,b"
        3, "spaced" ,1,2,
        4,  plain  ,1,2,""
        5,"",1,2,
        """#
        let (_, seen) = decodeCSV(text)
        #expect(seen.map(\.step) == [.reading, .reading, .reading, .reading, .rejected(.missingDevice)])
        #expect(seen.prefix(4).map(\.device) == ["dev, one", #"say "hi""#, "spaced", "plain"])
    }

    @Test(arguments: [
        ("1,d,1", RejectReason.badCSVRow),
        ("1,d,1,2,3", .badCSVRow),
        ("1,\"d,1,2", .badCSVRow),
        ("1,\"d\"x,1,2", .badCSVRow),
        ("1,d,91,2", .latitudeOutOfRange),
        ("1,d,1,-181", .longitudeOutOfRange),
        ("1,d,1,2,-1", .badCSVRow),
        (",d,1,2", .missingTime),
        ("yesterday,d,1,2", .badTime),
        ("1,,1,2", .missingDevice),
        ("1,d,,2", .missingCoordinate),
        ("1,d,abc,2", .malformed),
        ("1,d,NaN,2", .nonFinite),
        ("1,d,1e999,2", .nonFinite),
        ("1,d,1,inf", .nonFinite),
    ])
    func rejections(_ row: String, _ reason: RejectReason) {
        let (_, seen) = decodeCSV("t,device,lat,lon\n" + row + "\n")
        #expect(seen.map(\.step) == [.rejected(reason)], "\(row)")
        #expect(seen.first?.text == row && seen.first?.line == 2)
    }

    @Test func accuracyRssiAndBeaconRejections() {
        let text = """
        t,device,lat,lon,accuracy,uuid,major,rssi
        1,d,1,2,-3,,,
        1,d,,,,\(uuidText),1,0
        1,d,,,,\(uuidText),x,-60
        1,d,,,,nonsense,1,-60
        1,d,,,,\(uuidText),,
        1,d,,,,,,
        """
        let (_, seen) = decodeCSV(text)
        #expect(seen.map(\.step) == [
            .rejected(.negativeAccuracy), .rejected(.rssiOutOfRange), .rejected(.badBeacon),
            .rejected(.badBeacon), .rejected(.missingRSSI), .rejected(.unknownRecord),
        ])
    }

    @Test func invalidUTF8Device() {
        let bytes = Array("t,device,lat,lon\n1,d".utf8) + [0xFE] + Array(",1,2\n2,ok,1,2".utf8)
        let file = TempFile(bytes, name: "x.csv")
        let d = CSVDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path)
        let seen = drain(d)
        #expect(seen.map(\.step) == [.rejected(.invalidUTF8), .reading])
        #expect(seen[1].device == "ok")
    }

    @Test func numbersWithSignsAndExponents() {
        let (_, seen) = decodeCSV("t,device,lat,lon\n1.6355016e9,d,+4.82e1,-0\n")
        #expect(seen.first?.step == .reading)
        #expect(seen.first?.latitude == 48.2 && seen.first?.longitude.sign == .minus)
    }
}

/// Rows under a `t,device,lat,lon[,accuracy]` header are first offered to a plain-row parser;
/// it must decide every row as the general path does (or leave it to it).
@Suite struct CSVPlainRowTests {
    static func rows(accuracy: Bool, seed: UInt64) -> [String] {
        var random = NDJSONPlainLineTests.Random(generator: SplitMix64(seed: seed))
        var rows: [String] = []
        for _ in 0..<6000 {
            let t = random.next() % 3 == 0
                ? random.pick(["0", "-0", "-1", "1e9", "1.7E9", "1700000000.123456789", "1700000000.0", "1700000000.000000", "123456789012.000", "01", "1.", "2023-11-14T22:13:20Z",
                               "", " 1700000000", "1700000000 ", "\"1700000000\"", "123456789012345678"])
                : random.decimal(1_600_000_000, 1_800_000_000)
            let device = random.next() % 3 == 0
                ? random.pick(["", " a", "a ", "a b", "\u{e9}", "\"q\"", "x\"y", "back\\slash", "tab\there", "~", "\u{7f}",
                               "12345678901234567890", "\"a,b\"", "a\u{1}"])
                : "d\(random.next() % 100_000)"
            let lat = random.next() % 4 == 0
                ? random.pick(["90", "-90", "90.0000001", "-90.000001", "1e1", "-0", "91", "48.0", "-0.0", "90.000", "0.0000000", "", " 48.2", "48.2 ", "\"48.2\""])
                : random.decimal(-95, 95)
            let lon = random.next() % 4 == 0
                ? random.pick(["180", "-180", "180.000001", "-181", "1e2", "-0", "16.0", "-180.0", "-0.000", "0000", "16.", "", "16.37 ", "1.5e308"])
                : random.decimal(-185, 185)
            var row = "\(t),\(device),\(lat),\(lon)"
            if accuracy {
                row += "," + (random.next() % 3 == 0 ? random.pick(["0", "-0", "-1", "1e2", "", " 5", "5 ", "12.5", "x", "9.0", "0.0", "-0.0", "120.00"])
                                                     : String(random.next() % 100))
            }
            switch random.next() % 12 {
            case 0: row += ","
            case 1: row += "\r"
            case 2: row = ""
            default: break
            }
            rows.append(row)
        }
        return rows
    }

    @Test(arguments: [false, true])
    func plainRowsDecodeAsTheGeneralPathDecodesThem(accuracy: Bool) {
        let header = accuracy ? "t,device,lat,lon,accuracy" : "t,device,lat,lon"
        let text = ([header] + Self.rows(accuracy: accuracy, seed: accuracy ? 7 : 8)).joined(separator: "\n")
        let (fastDecoder, fast) = decodeCSV(text)
        let (_, slow) = decodeCSV(text, plainRows: false)
        #expect(fastDecoder.plainColumns, "the header turns the plain path on")
        #expect(fast.count == slow.count)
        for (a, b) in zip(fast, slow) where a != b || a.text != b.text {
            Issue.record("got \(a) \(a.text), expected \(b) \(b.text)")
            break
        }
        #expect(fast.filter { $0.step == .reading }.count > 1500, "many rows are valid fixes")
        #expect(fast.filter { $0.step != .reading }.count > 1500, "many are rejected")
        // Read as the replay loop reads, runs of plain rows through the fast lane.
        let (lane, fromLane) = decodeCSVWithFastLane(text)
        #expect(lane.count == slow.count)
        #expect(fromLane > 40, "runs of plain rows go through the lane")
        for (a, b) in zip(lane, slow) where a != b || a.text != b.text {
            Issue.record("fast lane: got \(a) \(a.text), expected \(b) \(b.text)")
            break
        }
    }

    /// Rows of one tick share their time, and the plain path takes a time whose bytes (and the
    /// byte after them) repeat the last one's without parsing it again: times from a small pool
    /// that differ in a digit, in length, or after the bytes the last one took decode as the
    /// general path decodes them, row by row and through the fast lane.
    @Test func repeatedTimesDecodeAsTheGeneralPathDecodesThem() {
        var rng = SplitMix64(seed: 41)
        let pool = ["1700000000", "1700000001", "1700000010", "2700000000", "17000000000", "170000000", "1700000000.5",
                    "1700000000e0", "-1700000000", "1700000000 ", "17000000", "170000000000000", "1700000000000000",
                    "1700000000.25", "0", "1"]
        var rows = ["t,device,lat,lon"]
        for k in 0..<4000 {
            let t = k % 7 == 0 || rng.below(4) == 0 ? pool[Int(rng.below(pool.count))] : pool[(k / 7) % 3]
            rows.append("\(t),d\(k % 50),48.\(k),16.\(k % 97)")
        }
        let text = rows.joined(separator: "\n") + "\n"
        let (_, fast) = decodeCSV(text)
        let (_, slow) = decodeCSV(text, plainRows: false)
        let (lane, _) = decodeCSVWithFastLane(text)
        #expect(fast.count == slow.count && lane.count == slow.count)
        for (k, b) in slow.enumerated() where fast[k] != b || lane[k] != b {
            Issue.record("row \(b.line): got \(fast[k]) and \(lane[k]), expected \(b)")
            break
        }
        #expect(slow.filter { $0.step == .reading }.count > 3000)
    }

    /// The usual row is taken by the plain path (a wrong guard there would send every row the
    /// general way without changing any output).
    @Test func theUsualRowTakesThePlainPath() throws {
        let file = TempFile("t,device,lat,lon,accuracy\n1700000000,d0,48.282320,16.618337,9\n", name: "r.csv")
        let d = CSVDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path)
        d.plainColumns = true  // as the header sets it
        d.plainHasAccuracy = true
        let row = Array("1700000000,d0,48.282320,16.618337,9".utf8) + [UInt8](repeating: 0x0A, count: 17)
        #expect(row.withPaddedBytes { d.plainRow($0, 35) })
        #expect(!row.withPaddedBytes { d.plainRow($0, 34) })  // "…16.618337,"
    }
}
