import GeotriggerCore
import Foundation
import Testing
@testable import GeotriggerFormats

let uuidText = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
let uuidHigh: UInt64 = 0xE2C5_6DB5_DFFB_48D2
let uuidLow: UInt64 = 0xB060_D0F5_A710_96E0

@Suite struct NDJSONFieldTests {
    @Test func fix() {
        let s = one(#"{"t":1635501603,"device":"d1","lat":48.2,"lon":16.37,"accuracy":12}"#)
        #expect(s.step == .reading)
        #expect(s.kind == .fix && s.t == 1_635_501_603 && s.device == "d1")
        #expect(s.latitude == 48.2 && s.longitude == 16.37 && s.accuracy == 12)
        #expect(s.text == #"{"t":1635501603,"device":"d1","lat":48.2,"lon":16.37,"accuracy":12}"#)
    }

    @Test func fixWithoutAccuracyHasNaN() {
        let s = one(#"{"t":1,"device":"d1","lat":0,"lon":0}"#)
        #expect(s.step == .reading && s.accuracy.isNaN)
    }

    @Test(arguments: [
        (#"1635501603.25"#, 1_635_501_603.25),
        (#"1.63550160325e9"#, 1_635_501_603.25),
        (#"16355016032500E-4"#, 1_635_501_603.25),
        (#""2021-10-29T10:00:03.250Z""#, 1_635_501_603.25),
        (#""2021-10-29T12:00:03.250+02:00""#, 1_635_501_603.25),
        (#""2021-10-29 10:00:03.25z""#, 1_635_501_603.25),
        (#""2021-10-29T10:00:03.25\u005A""#, 1_635_501_603.25),  // escaped Z
        (#"-0"#, 0),
        (#"-1.5"#, -1.5),
    ])
    func timeForms(_ t: String, _ expected: Double) {
        let s = one(#"{"t":"# + t + #","device":"d","lat":1,"lon":2}"#)
        #expect(s.step == .reading)
        #expect(s.t == expected)
    }

    @Test func numberForms() {
        let s = one(#"{"lat":-0.0,"lon":1.8e2,"accuracy":1E-1,"t":0,"device":"x","speed":-3e-2,"course":359.9,"altitude":-12}"#)
        #expect(s.step == .reading)
        #expect(s.latitude == 0 && s.latitude.sign == .minus)
        #expect(s.longitude == 180 && s.accuracy == 0.1)
    }

    @Test(arguments: [
        (#""d1""#, "d1"),
        (#""caf\u00e9""#, "café"),
        (#""café""#, "café"),
        (#""a\"b\\c\/d""#, #"a"b\c/d"#),
        (#""tab\there\nnl""#, "tab\there\nnl"),
        (#""\ud83d\ude00 smile""#, "😀 smile"),
        (#""\u0041\u00DF\u4E2D""#, "Aß中"),
        (#""a-very-long-device-identifier-with-more-than-fifteen-bytes""#, "a-very-long-device-identifier-with-more-than-fifteen-bytes"),
    ])
    func deviceForms(_ json: String, _ expected: String) {
        let s = one(#"{"t":1,"device":"# + json + #","lat":1,"lon":2}"#)
        #expect(s.step == .reading)
        #expect(s.device == expected)
    }

    @Test func sighting() {
        let s = one(#"{"t":5,"device":"d1","uuid":"\#(uuidText)","major":1,"minor":7,"rssi":-71,"tx":-59}"#)
        #expect(s.step == .reading && s.kind == .sighting)
        #expect(s.beacon == BeaconID(uuidHigh: uuidHigh, uuidLow: uuidLow, major: 1, minor: 7))
        #expect(s.rssi == -71 && s.tx == -59)
        #expect(s.latitude.isNaN)
    }

    @Test(arguments: [uuidText.lowercased(), uuidText.replacingOccurrences(of: "-", with: ""),
                      uuidText.replacingOccurrences(of: "-", with: "").lowercased()])
    func uuidForms(_ u: String) {
        let s = one(#"{"t":5,"device":"d1","uuid":"\#(u)","rssi":-1}"#)
        #expect(s.step == .reading)
        #expect(s.beacon == BeaconID(uuidHigh: uuidHigh, uuidLow: uuidLow, major: -1, minor: -1))
        #expect(s.tx.isNaN)
    }

    @Test func majorMinorBounds() {
        #expect(one(#"{"t":5,"device":"d","uuid":"\#(uuidText)","major":0,"minor":65535,"rssi":-127}"#).step == .reading)
        #expect(one(#"{"t":5,"device":"d","uuid":"\#(uuidText)","major":7.0,"rssi":-50}"#).beacon.major == 7)
    }

    @Test(arguments: [
        (#"{"t":1,"device":"d","op":"add","request":{"id":"r","trigger":{"type":"push"}}}"#, ControlOp.add),
        (#"{"t":1,"device":"d","op":"removePending","ids":["a","b"]}"#, .removePending),
        (#"{"t":1,"device":"d","op":"removeDelivered","ids":[]}"#, .removeDelivered),
        (#"{"t":1,"device":"d","op":"removeAllPending"}"#, .removeAllPending),
        (#"{"t":1,"device":"d","op":"removeAllDelivered"}"#, .removeAllDelivered),
        (#"{"t":1,"device":"d","op":"push","id":"welcome","content":{"title":"Hi \"you\"","n":[1,{"x":null}]}}"#, .push),
    ])
    func controlRecords(_ line: String, _ op: ControlOp) {
        let s = one(line)
        #expect(s.step == .reading && s.kind == .control && s.op == op)
        #expect(s.text == line)
    }

    @Test func unknownKeysAndNestedValuesAreSkipped() {
        let s = one(#"  { "x" : {"a":[1,2,{"b":"}\"]"}]}, "t" : 1 , "y":[true,false,null,"\ud83d\ude00"], "device" : "d", "lat":1,"lon":2, "z":-1.5e-7, "w":"", "\u006c\u0061\u0074" : 3 }  "#)
        #expect(s.step == .reading)
        #expect(s.latitude == 3)  // escaped key "lat" is recognised; last value wins
    }

    @Test func nullOptionalFieldsAreAbsent() {
        let s = one(#"{"t":1,"device":"d","lat":1,"lon":2,"accuracy":null,"speed":null}"#)
        #expect(s.step == .reading && s.accuracy.isNaN)
    }
}

@Suite struct NDJSONRejectionTests {
    @Test(arguments: [
        // malformed
        (#"not json"#, RejectReason.malformed),
        (#"{"t":1,"device":"d","lat":1,"lon":2"#, .malformed),
        (#"{"t":1,"device":"d","lat":1,"lon":2} x"#, .malformed),
        (#"{"t":1,"device":"d","lat":1,"lon":2}{}"#, .malformed),
        (#"{"t":1,"device":"d","lat":1,"lon":2,}"#, .malformed),
        (#"{"t":1 "device":"d"}"#, .malformed),
        (#"{"t":01,"device":"d","lat":1,"lon":2}"#, .malformed),
        (#"{"t":1,"device":"d","lat":+1,"lon":2}"#, .malformed),
        (#"{"t":1,"device":"d","lat":1,"lon":2,"x":[1,2}"#, .malformed),
        (#"{"t":1,"device":"d","lat":1,"lon":2,"x":tru}"#, .malformed),
        (#"{"t":1,"device":"d\x","lat":1,"lon":2}"#, .malformed),
        (#"{"t":1,"device":"d\u12","lat":1,"lon":2}"#, .malformed),
        (#"{"t":1,"device":"d","lat":"48.2","lon":2}"#, .malformed),
        (#"{"t":1,"device":"d","lat":1,"lon":2,"accuracy":true}"#, .malformed),
        ("{\"t\":1,\"device\":\"a\tb\",\"lat\":1,\"lon\":2}", .malformed),  // raw control character
        (#"[1,2]"#, .malformed),
        // time
        (#"{"device":"d","lat":1,"lon":2}"#, .missingTime),
        (#"{"t":null,"device":"d","lat":1,"lon":2}"#, .missingTime),
        (#"{"t":"yesterday","device":"d","lat":1,"lon":2}"#, .badTime),
        (#"{"t":"2021-02-30T00:00:00Z","device":"d","lat":1,"lon":2}"#, .badTime),
        (#"{"t":true,"device":"d","lat":1,"lon":2}"#, .badTime),
        // device
        (#"{"t":1,"lat":1,"lon":2}"#, .missingDevice),
        (#"{"t":1,"device":"","lat":1,"lon":2}"#, .missingDevice),
        (#"{"t":1,"device":7,"lat":1,"lon":2}"#, .missingDevice),
        (#"{"t":1,"device":null,"lat":1,"lon":2}"#, .missingDevice),
        // coordinates
        (#"{"t":1,"device":"d","lat":1}"#, .missingCoordinate),
        (#"{"t":1,"device":"d","lon":1}"#, .missingCoordinate),
        (#"{"t":1,"device":"d","lat":90.0000001,"lon":2}"#, .latitudeOutOfRange),
        (#"{"t":1,"device":"d","lat":-91,"lon":2}"#, .latitudeOutOfRange),
        (#"{"t":1,"device":"d","lat":1,"lon":180.5}"#, .longitudeOutOfRange),
        (#"{"t":1,"device":"d","lat":1,"lon":-1e3}"#, .longitudeOutOfRange),
        // non-finite
        (#"{"t":1,"device":"d","lat":1e999,"lon":2}"#, .nonFinite),
        (#"{"t":1e400,"device":"d","lat":1,"lon":2}"#, .nonFinite),
        (#"{"t":1,"device":"d","lat":NaN,"lon":2}"#, .nonFinite),
        (#"{"t":1,"device":"d","lat":1,"lon":-Infinity}"#, .nonFinite),
        (#"{"t":1,"device":"d","lat":1,"lon":2,"speed":Infinity}"#, .nonFinite),
        // accuracy
        (#"{"t":1,"device":"d","lat":1,"lon":2,"accuracy":-0.5}"#, .negativeAccuracy),
        // beacons
        (#"{"t":1,"device":"d","uuid":"\#(uuidText)","rssi":0}"#, .rssiOutOfRange),
        (#"{"t":1,"device":"d","uuid":"\#(uuidText)","rssi":-128}"#, .rssiOutOfRange),
        (#"{"t":1,"device":"d","uuid":"\#(uuidText)","rssi":"-70"}"#, .malformed),
        (#"{"t":1,"device":"d","uuid":"\#(uuidText)"}"#, .missingRSSI),
        (#"{"t":1,"device":"d","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E","rssi":-70}"#, .badBeacon),
        (#"{"t":1,"device":"d","uuid":"E2C56DB5DFFB-48D2-B060-D0F5A71096E0x","rssi":-70}"#, .badBeacon),
        (#"{"t":1,"device":"d","uuid":"G2C56DB5-DFFB-48D2-B060-D0F5A71096E0","rssi":-70}"#, .badBeacon),
        (#"{"t":1,"device":"d","uuid":12,"rssi":-70}"#, .badBeacon),
        (#"{"t":1,"device":"d","rssi":-70,"major":1}"#, .badBeacon),
        (#"{"t":1,"device":"d","uuid":"\#(uuidText)","major":65536,"rssi":-70}"#, .badBeacon),
        (#"{"t":1,"device":"d","uuid":"\#(uuidText)","minor":-1,"rssi":-70}"#, .badBeacon),
        (#"{"t":1,"device":"d","uuid":"\#(uuidText)","minor":1.5,"rssi":-70}"#, .badBeacon),
        (#"{"t":1,"device":"d","uuid":"\#(uuidText)","major":"1","rssi":-70}"#, .badBeacon),
        // control
        (#"{"t":1,"device":"d","op":"launch"}"#, .badControl),
        (#"{"t":1,"device":"d","op":3}"#, .badControl),
        (#"{"t":1,"device":"d","op":"add"}"#, .badControl),
        (#"{"t":1,"device":"d","op":"add","request":[]}"#, .badControl),
        (#"{"t":1,"device":"d","op":"removePending"}"#, .badControl),
        (#"{"t":1,"device":"d","op":"removeDelivered","ids":"a"}"#, .badControl),
        (#"{"t":1,"device":"d","op":"push"}"#, .badControl),
        // unknown
        (#"{"t":1,"device":"d"}"#, .unknownRecord),
        (#"{"t":1,"device":"d","speed":3}"#, .unknownRecord),
        (#"{}"#, .missingTime),
    ])
    func rejects(_ line: String, _ reason: RejectReason) {
        let s = one(line)
        #expect(s.step == .rejected(reason), "\(line)")
        #expect(s.text == line)
        #expect(s.line == 1)
    }

    @Test(arguments: [
        [0xFF] as [UInt8], [0xC3], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
    ])
    func invalidUTF8InStrings(_ bad: [UInt8]) {
        let line = Array(#"{"t":1,"device":"d"#.utf8) + bad + Array(#"","lat":1,"lon":2}"#.utf8) + [0x0A]
        let (_, seen) = decodeNDJSON(line)
        #expect(seen.map(\.step) == [.rejected(.invalidUTF8)])
        // Also inside a skipped value.
        let skipped = Array(#"{"t":1,"device":"d","x":["#.utf8) + [0x22] + bad + [0x22] + Array(#"],"lat":1,"lon":2}"#.utf8)
        #expect(decodeNDJSON(skipped).1.map(\.step) == [.rejected(.invalidUTF8)])
    }

    @Test func loneSurrogateInDeviceIsInvalidUTF8() {
        #expect(one(#"{"t":1,"device":"a\ud800b","lat":1,"lon":2}"#).step == .rejected(.invalidUTF8))
        #expect(one(#"{"t":1,"device":"a\udc00","lat":1,"lon":2}"#).step == .rejected(.invalidUTF8))
    }

    @Test func everyReasonHasAKeyAndMessage() {
        #expect(Set(RejectReason.allCases.map(\.rawValue)).count == RejectReason.allCases.count)
        for r in RejectReason.allCases { #expect(!r.message.isEmpty) }
    }
}

@Suite struct NDJSONFramingTests {
    let fix = #"{"t":1,"device":"d","lat":1,"lon":2}"#

    @Test func crlfBlankLinesAndMissingTrailingNewline() {
        let text = "\r\n" + fix + "\r\n   \n\t\r\n\n" + fix + "\n" + fix
        let (d, seen) = decodeNDJSON(text)
        #expect(seen.map(\.step) == [.reading, .reading, .reading])
        #expect(seen.map(\.line) == [2, 6, 7])
        #expect(seen.allSatisfy { $0.text == fix })
        #expect(d.blankLines == 4)
        #expect(d.bytesRead == text.utf8.count)
        #expect(d.ioError == nil)
    }

    @Test func byteOrderMarkIsIgnored() {
        let (_, seen) = decodeNDJSON([0xEF, 0xBB, 0xBF] + Array((fix + "\n").utf8))
        #expect(seen.map(\.step) == [.reading])
    }

    @Test func emptyInput() {
        let (d, seen) = decodeNDJSON("")
        #expect(seen.isEmpty && d.blankLines == 0)
    }

    @Test func hugeLineIsRejectedAndDecodingContinues() {
        // 5 MiB line (longer than the 1 MiB limit and the 1 MiB buffer), then good lines.
        var bytes = Array(#"{"t":1,"device":"d","pad":""#.utf8)
        bytes += [UInt8](repeating: UInt8(ascii: "x"), count: 5 << 20)
        bytes += Array(#"","lat":1,"lon":2}"#.utf8) + [0x0A]
        bytes += Array((fix + "\n" + fix + "\n").utf8)
        let (_, seen) = decodeNDJSON(bytes)
        #expect(seen.map(\.step) == [.rejected(.lineTooLong), .reading, .reading])
        #expect(seen.map(\.line) == [1, 2, 3])
        #expect(seen[0].text.hasPrefix(#"{"t":1,"device":"d","pad":"xxx"#))
        #expect(seen[0].text.utf8.count == LineReader.tooLongPrefixLength)
    }

    @Test func hugeLastLineWithoutNewline() {
        let bytes = Array((fix + "\n").utf8) + [UInt8](repeating: UInt8(ascii: "y"), count: 3 << 20)
        let (_, seen) = decodeNDJSON(bytes)
        #expect(seen.map(\.step) == [.reading, .rejected(.lineTooLong)])
    }

    @Test(arguments: [35, 36, 37, 38, 64, 100])
    func lineLengthLimitWithSmallBuffers(_ maxLine: Int) {
        // `fix` is 36 bytes, `long` 37 (plus a CR that does not count): lines up to the limit pass.
        let long = #"{"t":1,"device":"dd","lat":1,"lon":2}"#
        #expect(fix.utf8.count == 36 && long.utf8.count == 37)
        let text = String(repeating: fix + "\n" + long + "\r\n", count: 50)
        let (_, seen) = decodeNDJSON(text, bufferSize: 16, maxLineLength: maxLine)
        #expect(seen.count == 100)
        for (i, s) in seen.enumerated() {
            let length = i % 2 == 0 ? 36 : 37
            #expect(s.step == (length <= maxLine ? .reading : .rejected(.lineTooLong)), "line \(i + 1)")
            #expect(s.line == i + 1)
        }
    }

    @Test func pipeInputInSmallChunks() {
        var text = ""
        for i in 0..<20_000 {
            text += #"{"t":\#(i),"device":"dev\#(i % 7)","lat":\#(Double(i % 180) - 89.5),"lon":\#(i % 360 - 180)}"# + "\n"
        }
        let fd = pipeFeeding(Array(text.utf8), chunk: 4093)
        let d = NDJSONDecoder(fd: fd, ownsDescriptor: true, sourceName: "-", bufferSize: 1 << 16, maxLineLength: 1 << 12)
        let seen = drain(d)
        #expect(seen.count == 20_000)
        #expect(seen.allSatisfy { $0.step == .reading })
        #expect(seen.last?.t == 19_999 && seen.last?.device == "dev\(19_999 % 7)")
        #expect(d.sourceName == "-")
    }

    @Test func defaultDeviceFillsMissingDevice() {
        let file = TempFile(#"{"t":1,"lat":1,"lon":2}"# + "\n" + #"{"t":2,"device":"own","lat":1,"lon":2}"#)
        let d = NDJSONDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path, defaultDevice: "fallback")
        #expect(drain(d).map(\.device) == ["fallback", "own"])
    }

    @Test func fieldsOfAnEarlierRecordDoNotLeakIntoTheNext() {
        let (_, seen) = decodeNDJSON(#"{"t":1,"device":"d","uuid":"\#(uuidText)","major":1,"rssi":-60,"tx":-59}"# + "\n"
            + #"{"t":2,"device":"d","lat":1,"lon":2}"# + "\n" + #"{"t":3,"device":"d","op":"removeAllPending"}"#)
        #expect(seen.map(\.kind) == [.sighting, .fix, .control])
        #expect(seen[1].beacon == BeaconID() && seen[1].rssi.isNaN && seen[1].tx.isNaN)
        #expect(seen[2].latitude.isNaN && seen[2].beacon == BeaconID())
    }

    @Test func readingsStayValidUntilNext() {
        // Device views point into the line buffer or the scratch buffer; both must survive `current`.
        let (_, seen) = decodeNDJSON(#"{"t":1,"device":"a\u0062c","lat":1,"lon":2}"# + "\n" + #"{"t":2,"device":"xyz","lat":1,"lon":2}"#)
        #expect(seen.map(\.device) == ["abc", "xyz"])
    }
}

/// The usual keys of a fix are recognised in one comparison when written plainly; every other
/// spelling of the same record goes the general way. Both must read the same record.
@Suite struct NDJSONPlainKeyTests {
    static let plain = #"{"t":1635501603,"device":"d1","lat":48.2,"lon":16.37,"accuracy":12}"#

    /// The literal key words are the keys' bytes: a wrong constant would never match and
    /// silently send every line the general way.
    @Test func keyWordsAreTheKeysBytes() {
        #expect(FieldName.plainKeyWords == [
            FieldName.plainKeyT, FieldName.plainKeyLat, FieldName.plainKeyLon, FieldName.plainKeyDevice,
            FieldName.plainKeyAccuracy,
        ])
    }

    @Test(arguments: [
        #"{"\u0074":1635501603,"device":"d1","lat":48.2,"lon":16.37,"accuracy":12}"#,  // escaped key
        #"{"t" :1635501603,"device" : "d1","lat"  :48.2,"lon":16.37,"accuracy" :12}"#,  // space before colons
        #"{ "accuracy":12, "lon":16.37, "lat":48.2, "device":"d1", "t":1635501603 }"#,  // other order
        #"{"t":1635501603,"d\u0065vice":"d1","l\u0061t":48.2,"lon":16.37,"accurac\u0079":12}"#,
        #"{"t":1635501603,"device":"d1","lat":48.2,"lon":16.37,"accuracy":12,"accuracyX":1}"#,  // unknown key
    ])
    func otherSpellingsReadTheSame(_ line: String) {
        let general = one(line), fast = one(Self.plain)
        #expect(fast.step == .reading)
        #expect(general.kind == fast.kind && general.t == fast.t && general.device == fast.device)
        #expect(general.latitude == fast.latitude && general.longitude == fast.longitude)
        #expect(general.accuracy == fast.accuracy)
    }

    /// Near-misses of the plain keys must not be taken for them.
    @Test(arguments: [
        (#"{"tt":1,"device":"d1","lat":1,"lon":2}"#, "no time"),
        (#"{"t":1,"devices":"d1","lat":1,"lon":2}"#, "no device"),
        (#"{"t":1,"device":"d1","latitude":1,"lon":2}"#, "no latitude"),
        (#"{"t":1,"device":"d1","lat":1,"lon":2,"accuracyy":900}"#, "accuracy ignored"),
        (#"{"t":1,"device":"d1","lat":1,"lon":2,"accuracy"}"#, "malformed"),
    ])
    func nearMissesAreNotTheKeys(_ line: String, _ expected: String) {
        let s = one(line)
        switch expected {
        case "accuracy ignored":
            #expect(s.step == .reading && s.accuracy.isNaN, "\(line)")
        case "malformed":
            #expect(s.step == .rejected(.malformed), "\(line)")
        default:
            if case .rejected = s.step {} else { Issue.record("\(line) was read: \(s)") }
        }
    }

    /// A key that ends within 10 bytes of the line's end is read the general way.
    @Test func keyAtTheEndOfTheLine() {
        let s = one(#"{"device":"d1","lat":1,"lon":2,"t":5}"#)
        #expect(s.step == .reading && s.t == 5)
    }
}

/// Lines written exactly as `{"t":…,"device":"…","lat":…,"lon":…[,"accuracy":…]}` are decoded by a
/// straight-line path; any other line by the general parser. Differential test: thousands of
/// such lines, valid and not (odd numbers, escapes, control and non-ASCII bytes, values out of
/// range, trailing bytes), must decode exactly as the same line with a CR after the brace,
/// which only the general parser reads.
@Suite struct NDJSONPlainLineTests {
    /// Seeded, so a failure can be replayed.
    struct Random {
        var generator: SplitMix64
        mutating func next() -> UInt64 { generator.next() }
        mutating func pick<T>(_ options: [T]) -> T { options[generator.below(options.count)] }
        mutating func decimal(_ lo: Double, _ hi: Double) -> String {
            let v = generator.uniform(lo, hi)
            return String(format: "%.\(generator.below(10))f", v)
        }
    }

    @Test func plainLinesDecodeAsTheGeneralParserDecodesThem() {
        var random = Random(generator: SplitMix64(seed: 2026))
        var plain: [String] = []
        for _ in 0..<6000 {
            let t = random.next() % 3 == 0
                ? random.pick(["0", "-0", "-1", "1e9", "1.7E9", "17000000000000000000000", "1700000000.123456789",
                               "01", "1.", "1e999", "\"2023-11-14T22:13:20Z\"", "null", "NaN", "true", "123456789012345678"])
                : random.decimal(1_600_000_000, 1_800_000_000)
            let device = random.next() % 3 == 0
                ? random.pick(["", "a b", "\u{e9}", "x\\\"y", "\\u0041", "tab\there", "~", "\u{7f}", "d\\\\", "12345678901234567890"])
                : "d\(random.next() % 100_000)"
            let lat = random.next() % 4 == 0
                ? random.pick(["90", "-90", "90.0000001", "-90.000001", "1e1", "-0", "91", "48.0", "-0.0", "90.000", "0.0000000", "0.5e-3", "\"48.2\"", "[]"])
                : random.decimal(-95, 95)
            let lon = random.next() % 4 == 0
                ? random.pick(["180", "-180", "180.000001", "-181", "1e2", "-0", "16.0", "-180.0", "-0.000", "16.37E0", "0000", "16.", "1.5e308"])
                : random.decimal(-185, 185)
            var line = #"{"t":\#(t),"device":"\#(device)","lat":\#(lat),"lon":\#(lon)"#
            switch random.next() % 4 {
            case 0: break
            case 1: line += ",\"accuracy\":" + random.pick(["0", "-0", "-1", "1e2", "12.5", "-0.001", "null", "1e999", "9.0", "0.0", "-0.0", "120.00"])
            default: line += ",\"accuracy\":" + random.decimal(-5, 300)
            }
            line += random.next() % 10 == 0 ? random.pick(["} ", "}}", "", ",\"x\":1}", "}\u{0}", ",}"]) : "}"
            plain.append(line)
        }
        let (lines, readings) = Self.expectPlainDecodesAsGeneral(plain)
        #expect(readings > 2000, "most lines are valid fixes")
        #expect(lines - readings > 500, "many are rejected")
    }

    /// Decodes `plain` as it is and with a space after each brace (which only the general parser
    /// takes), expecting the same from both; returns the lines decoded and the readings among them.
    static func expectPlainDecodesAsGeneral(_ plain: [String]) -> (lines: Int, readings: Int) {
        // A CR after the brace: JSON whitespace, which only the general path skips.
        let general = plain.map { "{\r" + $0.dropFirst() }
        let (_, fast) = decodeNDJSON(plain.joined(separator: "\n") + "\n")
        let (_, slow) = decodeNDJSON(general.joined(separator: "\n") + "\n")
        #expect(fast.count == slow.count)
        var readings = 0
        for (k, (a, b)) in zip(fast, slow).enumerated() {
            #expect(a == b, "\(plain[k])")
            if a.step == .reading { readings += 1 }
        }
        return (fast.count, readings)
    }

    /// Readings of one tick share their time, and the plain path takes a time whose bytes (and
    /// the byte after them) repeat the last one's without parsing it again. Times from a small
    /// pool that differ in one digit, in length, or only after the bytes the last one took (a
    /// fraction, an exponent, a space): each line decodes as the general parser decodes it.
    @Test func repeatedTimesDecodeAsTheGeneralParserDecodesThem() {
        var rng = SplitMix64(seed: 31)
        let pool = ["1700000000", "1700000001", "1700000010", "2700000000", "17000000000", "170000000", "1700000000.5",
                    "1700000000e0", "-1700000000", "1700000000 ", "17000000", "170000000000000", "1700000000000000",
                    "1700000000.25", "0", "1"]
        var plain: [String] = []
        for k in 0..<4000 {
            // Runs of one time, as a fleet's tick writes them, broken by others.
            let t = k % 7 == 0 || rng.below(4) == 0 ? pool[Int(rng.below(pool.count))] : pool[(k / 7) % 3]
            plain.append(#"{"t":\#(t),"device":"d\#(k % 50)","lat":48.\#(k),"lon":16.\#(k % 97)}"#)
        }
        #expect(Self.expectPlainDecodesAsGeneral(plain).readings > 3000)
    }

    /// Fixes as Python's `json.dumps` writes them (`", "`, `": "`), and with their members in
    /// other orders, tabs, spaces after the brace and before the colons (issue 39): the plain
    /// lane takes every one (the replay loop's fast lane reads them all), each decoded as the
    /// general path decodes it; the lines it must leave to the general path decode the same too.
    @Test func spacedAndReorderedFixesTakeThePlainLane() throws {
        var rng = SplitMix64(seed: 41)
        let orders = [["t", "device", "lat", "lon", "accuracy"], ["device", "t", "lat", "lon"],
                      ["lon", "lat", "accuracy", "device", "t"], ["accuracy", "t", "lon", "device", "lat"]]
        let separators = [(", ", ": "), (",", ":"), (" , ", " : "), (",\t", ":\t")]
        var plain: [String] = []
        for k in 0..<2000 {
            let (comma, colon) = separators[Int(rng.below(4))]
            let value = ["t": String(1_700_000_000 + k / 10), "device": "\"d\(k % 50)\"",
                         "lat": String(format: "%.6f", Double(rng.below(180_000_000)) / 1e6 - 90),
                         "lon": String(format: "%.\(rng.below(8))f", Double(rng.below(360_000_000)) / 1e6 - 180),
                         "accuracy": String(rng.below(60))]
            let members = orders[k % 4].map { "\"\($0)\"" + colon + value[$0]! }
            plain.append("{" + (k % 5 == 0 ? " " : "") + members.joined(separator: comma) + (k % 7 == 0 ? " " : "") + "}")
        }
        #expect(Self.expectPlainDecodesAsGeneral(plain).readings == 2000)
        let file = TempFile(plain.joined(separator: "\n") + "\n")
        let (seen, fromLane) = drainWithFastLane(NDJSONDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path))
        // All but the first line, which `next()` reads as it fills the buffer, and the lines its
        // refills cut (one at each 64 KiB).
        #expect(seen.count == 2000 && fromLane >= 1995, "\(fromLane) from the lane")

        let declined = [
            #"{"t": 1, "device": "a", "lat": 1, "lat": 2, "lon": 3}"#, #"{"t": 1, "device": "a", "lat": 1, "lon": 3, "x": 1}"#,
            #"{"t": 1, "device": "a", "lat": 1, "lon": 3, "accuracy": null}"#, #"{"device": "a", "lat": 1, "lon": 3}"#,
            #"{"t": 1, "device": "", "lat": 1, "lon": 3}"#, #"{"t": 1, "device": "a\u0041", "lat": 1, "lon": 3}"#,
            #"{"t": 1, "device": "a", "lat": 91, "lon": 3}"#, #"{"t": 1e3, "device": "a", "lat": 1, "lon": 3}"#,
            #"{"t": 1, "device": "a", "lat": 1, "lon": 3 ,}"#, #"{"t": 1, "device": "a", "lat": 1, "lon": 3} x"#,
            #"{"t": 1, "device": "a", "lat": 1, "lon": -0.5, "accuracy": -1}"#, #"{"t": 1, "device": "a", "latitude": 1, "lon": 3}"#,
            #"{"t": 1, "device": "é", "lat": 1, "lon": 3}"#, #"{"t": 1, "device": "a", "lat": 1, "lon": 3, "accuracy": 5, "accuracy": 6}"#,
        ]
        #expect(Self.expectPlainDecodesAsGeneral(declined).lines == declined.count)
    }
}


/// The usual fix line is taken straight from the read buffer, its end found by the plain-line
/// parser (no newline search first); every other line, and every line the buffer cuts short,
/// goes the old way. Both must decode every line alike.
@Suite struct NDJSONWholeLineTests {
    /// A stream of plain fixes with numbers of every length, and around them every kind of line
    /// the whole-line path must leave alone.
    static func lines() -> [String] {
        var rng = SplitMix64(seed: 5)
        var lines = ["\u{FEFF}" + #"{"t":1700000000,"device":"bom","lat":48.1,"lon":16.2}"#]
        for i in 0..<400 {
            let lat = (Double(rng.below(180_000_000)) / 1_000_000 - 90)
            let lon = (Double(rng.below(360_000_000)) / 1_000_000 - 180)
            let digits = Int(rng.below(9))
            let latText = String(format: "%.\(digits)f", lat), lonText = String(format: "%.\(8 - digits)f", lon)
            let accuracy = i % 3 == 0 ? "" : #","accuracy":"# + String(rng.below(5000))
            lines.append(#"{"t":"# + String(1_700_000_001 + i) + #","device":"d"# + String(rng.below(1 << 20))
                         + #"","lat":"# + latText + #","lon":"# + lonText + accuracy + "}")
            switch i % 40 {
            case 3:
                // A run of CRLF lines (the whole-line path takes them too), one with two CRs.
                for k in 0..<3 { lines.append(#"{"t":1700000500,"device":"crlf"# + String(k) + #"","lat":1.5,"lon":2.5}"# + "\r") }
                lines.append(#"{"t":1700000500,"device":"crcr","lat":1.5,"lon":2.5}"# + "\r\r")
            case 7: lines.append("")
            case 11: lines.append(#"{"t":1700000500,"device":"gap","lat":1.5,"lon":2.5}x"#)
            case 13: lines.append(#"{"t": 1700000500, "device":"spaced","lat":1.5,"lon":2.5}"#)
            case 17: lines.append(#"{"t":1700000500,"device":"esc\u0041","lat":1.5,"lon":2.5}"#)
            case 19: lines.append(#"{"t":1700000500,"device":"neg","lat":1.5,"lon":2.5,"accuracy":-1}"#)
            case 23:
                // A run of sightings: the plain path steps aside, then returns with the fixes.
                for k in 0..<3 {
                    lines.append(#"{"t":1700000500,"device":"p"# + String(k) + #"","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"rssi":-70}"#)
                }
            case 29: lines.append(#"{"t":1700000500,"device":""# + String(repeating: "L", count: 300) + #"","lat":1.5,"lon":2.5}"#)
            case 31: lines.append(#"{"t":1700000500,"device":"far","lat":91,"lon":2.5}"#)
            case 37: lines.append(#"{"t":1700000500,"device":"brace","lat":1.5,"lon":2.5}}"#)
            default: break
            }
        }
        lines.append(#"{"t":1700009999,"device":"last","lat":3.5,"lon":4.5}"#)  // no newline after it
        return lines
    }

    @Test(arguments: [1 << 20, 64, 97, 128, 211, 4096])
    func wholeStreamDecodesAsEachLineAlone(bufferSize: Int) {
        let lines = Self.lines()
        let maxLine = 256
        // The oracle: each line decoded alone, without a newline, so only the old path can take it.
        var expected: [Seen] = []
        for (k, line) in lines.enumerated() {
            for var s in decodeNDJSON(line, maxLineLength: maxLine).1 {
                s.line = k + 1
                expected.append(s)
            }
        }
        let text = lines.joined(separator: "\n")
        let (_, seen) = decodeNDJSON(text, bufferSize: bufferSize, maxLineLength: maxLine)
        // And as the replay loop reads it: runs of plain fixes through the fast lane.
        let file = TempFile(text)
        let (seenFast, fromLane) = drainWithFastLane(NDJSONDecoder(
            fd: file.openFD(), ownsDescriptor: true, sourceName: file.path, bufferSize: bufferSize, maxLineLength: maxLine))
        #expect(seen.count == expected.count)
        #expect(seenFast.count == expected.count)
        #expect(fromLane > 100, "runs of plain fixes go through the lane")
        // An over-long line keeps as much of its start as the buffer held when it was cut: a
        // prefix of the line, not always the same one.
        func sameText(_ a: Seen, _ b: Seen) -> Bool {
            if case .rejected(.lineTooLong) = a.step { return b.text.hasPrefix(a.text) || a.text.hasPrefix(b.text) }
            return a.text == b.text
        }
        for (a, b) in zip(seen, expected) where a != b || !sameText(a, b) {
            Issue.record("buffer \(bufferSize): got \(a) \(a.text.prefix(80)), expected \(b) \(b.text.prefix(80))")
            break
        }
        for (a, b) in zip(seenFast, expected) where a != b || !sameText(a, b) {
            Issue.record("fast lane, buffer \(bufferSize): got \(a) \(a.text.prefix(80)), expected \(b) \(b.text.prefix(80))")
            break
        }
        // The stream holds plain fixes, rejections and a sighting: the comparison covers them all.
        #expect(expected.filter { $0.step == .reading }.count > 400)
        #expect(expected.contains { if case .rejected(.lineTooLong) = $0.step { true } else { false } })
    }
}

/// The pieces of the plain-line path: a wrong key word or a scanner that declines the usual
/// line would silently send every line the general way; one that accepts too much would decide
/// differently from it.
@Suite struct PlainLineTests {
    static func word(_ s: String) -> UInt64 {
        var w: UInt64 = 0
        for (k, b) in s.utf8.prefix(8).enumerated() { w |= UInt64(b) << (8 * UInt64(k)) }
        return w
    }

    @Test func keyWordsAreTheKeysBytes() {
        #expect(PlainLine.braceT == Self.word(#"{"t":"#))
        #expect(PlainLine.commaDevice == Self.word(#","device"#))
        #expect(PlainLine.quoteColonQuote == Self.word(#"":""#))
        #expect(PlainLine.quoteLat == Self.word(#"","lat":"#))
        #expect(PlainLine.commaLon == Self.word(#","lon":"#))
        #expect(PlainLine.commaAccura == Self.word(#","accura"#))
        #expect(PlainLine.cyColon == Self.word(#"cy":"#))
        #expect(PlainLine.tQuote == Self.word(#"t""#))
        #expect(PlainLine.deviceQuote == Self.word(#"device""#))
        #expect(PlainLine.latQuote == Self.word(#"lat""#))
        #expect(PlainLine.lonQuote == Self.word(#"lon""#))
        #expect(PlainLine.accuracy == Self.word("accuracy"))
    }

    /// `number` on `text` followed by `tail`: its end and value, or nil where it declines.
    static func number(_ text: String, tail: String = "}\n") -> (end: Int, value: Double)? {
        var bytes = Array((text + tail).utf8)
        let n = bytes.count
        bytes += [UInt8](repeating: 0x39, count: 16)  // slack full of digits: none may be taken
        return bytes.withPaddedBytes { b in
            var v = 0.0
            let end = PlainLine.number(b, 0, n, &v)
            return end < 0 ? nil : (end, v)
        }
    }

    /// Whatever `number` accepts, `NumberParser.parse` reads to the same end and the same bits.
    @Test func acceptsTheUsualNumbersAndAgreesWithTheGeneralParser() {
        var rng = SplitMix64(seed: 11)
        var accepted = 0
        let fixed = ["0", "-0", "7", "48.282320", "-16.618337", "1700000000", "1700000000.125", "0.5", "-0.0000001",
                     "123456789012345", "1234567890123456", "12345678.1234567", "01", "-", "1.", ".5", "1e3", "1.5E-2",
                     "-01.5", "00", "1.12345678", "99999999", "100000000", "9007199254740993",
                     // Whole and fraction digits totalling 8 or fewer are converted as one word.
                     "1234567.1", "123.45678", "1.2345678", "12345.678", "9999999.9", "1234.5678", "-7.0000001",
                     "1234567.12", "12345678.1", "0.1234567", "10.0000000"]
        var texts = fixed
        for _ in 0..<20_000 {
            let whole = String(rng.below(10) == 0 ? rng.below(100_000_000_000) : rng.below(1000))
            let digits = Int(rng.below(10))
            var fraction = ""
            for _ in 0..<digits { fraction += String(rng.below(10)) }
            let sign = rng.below(3) == 0 ? "-" : ""
            texts.append(sign + whole + (digits > 0 ? "." + fraction : ""))
        }
        for text in texts {
            var general = 0.0
            let bytes = Array((text + "}\n").utf8) + [UInt8](repeating: 0, count: 16)
            let generalEnd = bytes.withPaddedBytes { NumberParser.parse($0, 0, text.utf8.count + 2, &general) }
            guard let fast = Self.number(text) else { continue }
            accepted += 1
            #expect(fast.end == generalEnd && fast.value.bitPattern == general.bitPattern, "\(text)")
        }
        // The forms every scenario and fleet feed writes are taken.
        for text in ["48.282320", "-16.618337", "1700000000", "9", "0", "12.5"] { #expect(Self.number(text) != nil, "\(text)") }
        for text in ["01", "-", "1.", "1e3", "1.12345678", "1234567890123456", "123456789.1234567"] {
            #expect(Self.number(text) == nil, "\(text)")
        }
        #expect(accepted > 15_000)
        // A number must end before the line does: digits in the slack are not taken.
        #expect(Self.number("48.5", tail: "") == nil)
    }

    /// The word scanner finds the first byte a plain device name cannot hold, as a byte loop does.
    @Test func specialBytesFindsTheFirstByteANameCannotHold() {
        var rng = SplitMix64(seed: 12)
        let interesting: [UInt8] = [0x22, 0x5C, 0x1F, 0x20, 0x7E, 0x7F, 0x80, 0xFF, 0x00, 0x21, 0x5B, 0x5D, 0x41]
        for _ in 0..<100_000 {
            var bytes = [UInt8]()
            for _ in 0..<8 {
                bytes.append(rng.below(2) == 0 ? interesting[rng.below(interesting.count)] : UInt8(0x20 + rng.below(0x5F)))
            }
            let w = bytes.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
            let expected = bytes.firstIndex { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 || $0 > 0x7E }
            let stop = PlainLine.specialBytes(w)
            let found = stop == 0 ? nil : stop.trailingZeroBitCount >> 3
            #expect(found == expected, "\(bytes)")
            if found != expected { break }
        }
    }
}
