import Foundation
@testable import GeotriggerOutput
import GeotriggerRuntime
import Geotrigger
import Testing

/// The number formatting every event line goes through.
@Suite struct JSONWritingTests {
    private func written(_ body: (RecordBuffer) -> Void) -> String {
        let out = RecordBuffer(memory: ())
        body(out)
        return String(decoding: out.buffer, as: UTF8.self)
    }

    @Test(arguments: [Int64(0), 7, 9, 10, 99, 100, 101, 12_345, 1_000_000, -1, -10, -987_654_321, .max, .min])
    func integersMatchSwiftsFormatting(value: Int64) {
        #expect(written { $0.appendInteger(value) } == String(value))
    }

    @Test(arguments: [0.0, 0.004, 0.005, 1.5, 12.345, 357.105, 99.999, 1e6 + 0.25, -0.004, -2.5, -1234.567])
    func twoDecimalsMatchRoundingToCentimetres(value: Double) {
        let cents = (abs(value) * 100).rounded()
        let expected = (value < 0 && cents != 0 ? "-" : "") + String(Int64(cents) / 100) + "."
            + String(format: "%02lld", Int64(cents) % 100)
        #expect(written { $0.appendFixed2(value) } == expected)
    }

    /// The same on 200k distances of every size, from micrometres to beyond 2^53 centimetres.
    @Test func twoDecimalsMatchOnRandomValues() {
        var rng = SplitMix64(seed: 51)
        for k in 0..<200_000 {
            let magnitude = Double(rng.next() >> 11) / Double(1 << 53) * pow(10, Double(k % 17) - 3)
            let value = k % 3 == 0 ? -magnitude : magnitude
            let cents = (abs(value) * 100).rounded()
            let expected = (value < 0 && cents != 0 ? "-" : "") + String(Int64(cents) / 100) + "."
                + String(format: "%02lld", Int64(cents) % 100)
            let got = written { $0.appendFixed2(value) }
            if got != expected {
                Issue.record("\(value): \(got), expected \(expected)")
                break
            }
        }
    }

    /// Every byte below 0x80 as a name (the event writer's byte path, both its word-at-a-time
    /// check and its loop) and as a JSON value (content, userInfo, properties): one escaping, the
    /// shortest RFC 8259 form, which Foundation's JSON parser reads back to the same string.
    @Test func oneEscapingForNamesAndValues() throws {
        for byte in UInt8(0)..<0x80 {
            for name in [[byte], [UInt8](repeating: UInt8(ascii: "a"), count: 5) + [byte] + [UInt8(ascii: "b")]] {
                let string = String(decoding: name, as: UTF8.self)
                let fromBytes = written { out in name.withByteView { out.appendJSONString($0) } }
                let fromValue = JSONValue.string(string).serialized()
                #expect(fromBytes == fromValue, "byte \(byte)")
                let back = try JSONSerialization.jsonObject(with: Data("[\(fromBytes)]".utf8)) as? [String]
                #expect(back == [string], "byte \(byte)")
            }
        }
        #expect(JSONValue.string("\u{8}\u{c}\n\r\t\u{1}\"\\").serialized() == #""\b\f\n\r\t\u0001\"\\""#)
    }

    @Test func nonFiniteIsNull() {
        #expect(written { $0.appendFixed2(.nan) } == "null")
        #expect(written { $0.appendFixed2(.infinity) } == "null")
    }

    /// Times are formatted straight into the output and kept in a direct-mapped cache: whatever
    /// the sequence (repeats, alternation, times that share a cache slot evicting each other,
    /// years beyond 9999, NaN), each is written as `RFC3339.format` writes it.
    @Test func timesMatchRFC3339WhateverTheOrder() {
        // Two whole seconds and a fraction that land in the slot of 1_700_000_000.
        let slot = RecordBuffer.timeSlot(1_700_000_000)
        let sharing = (1...200_000).lazy.map { 1_700_000_000 + Double($0) / 4 }.filter { RecordBuffer.timeSlot($0) == slot }
        let rivals = Array(sharing.prefix(3))
        #expect(rivals.count == 3)
        let times: [Double] = [
            1_700_000_000, 1_700_000_000, 1_699_999_000.25, 1_700_000_000, 1_699_999_000.25, 1_700_000_001.9996,
            1_700_000_000, -62_135_596_801, 253_402_300_800, .nan, 0, 1e14, 1_700_000_000, -1.5, -1.5,
        ] + rivals.flatMap { [$0, 1_700_000_000, $0] } + [.nan, .nan, -0.0, 0]
        let out = RecordBuffer(memory: ())
        var expected = ""
        for t in times {
            out.appendTime(t)
            expected += "\"" + RFC3339.format(t) + "\""
        }
        #expect(String(decoding: out.buffer, as: UTF8.self) == expected)
    }

    /// Strings of every length up to 40, mostly plain, some with a quote, a backslash, a control
    /// byte or non-ASCII at a random place (the word-at-a-time path covers 4–16 bytes): each is
    /// written as a JSON string that decodes back to itself, with nothing escaped that JSON
    /// leaves plain, and the same through the cursor and `appendJSONString`.
    @Test func stringsRoundTripAtEveryLength() throws {
        var rng = SplitMix64(seed: 77)
        let specials: [UInt8] = [0x22, 0x5C, 0x00, 0x01, 0x0A, 0x0D, 0x09, 0x1F, 0x7F, 0xC3, 0xA9]
        for k in 0..<20_000 {
            let n = k % 41
            var bytes = (0..<n).map { _ in UInt8(0x20 + rng.next() % 95) }  // printable ASCII
            bytes.removeAll { $0 == 0x22 || $0 == 0x5C }
            if k % 3 == 0 && !bytes.isEmpty {
                let special = specials[Int(rng.next() % UInt64(specials.count))]
                bytes[Int(rng.next() % UInt64(bytes.count))] = special
                if special == 0xC3 { bytes.append(0xA9) } else if special == 0xA9 { bytes.insert(0xC3, at: 0) }
            }
            guard let text = String(validating: bytes, as: UTF8.self) else { continue }
            let out = RecordBuffer(memory: ())
            bytes.withByteView { out.appendJSONString($0) }
            let viaString = RecordBuffer(memory: ())
            viaString.appendJSONString(text)
            #expect(out.buffer == viaString.buffer)
            let json = out.buffer
            let decoded = try JSONSerialization.jsonObject(with: Data(json), options: .fragmentsAllowed) as? String
            #expect(decoded == text, "\(bytes)")
            // Plain bytes stay as they are: only quotes, backslashes and control bytes grow.
            let escaped = bytes.filter { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }.count
            #expect(json.count >= bytes.count + 2 + escaped && (escaped > 0 || json.count == bytes.count + 2))
            if decoded != text { break }
        }
    }

    /// An event's region id comes from a 16-byte slot when its JSON literal fits in 15 bytes,
    /// and from the region's `String` otherwise: ids of every length up to 24, some needing
    /// escapes or taking several UTF-8 bytes a character, are written as events that decode
    /// back to them.
    @Test func regionIDsOfEveryLengthAreWrittenExactly() throws {
        var ids: [String] = []
        for n in 1...24 {
            ids.append(String(repeating: "r", count: n))
            ids.append(String(repeating: "é", count: (n + 1) / 2))
            ids.append("a\"" + String(repeating: "b", count: n))
            ids.append(String(repeating: "c", count: n) + "\\")
            ids.append("\u{1}" + String(repeating: "d", count: n))
        }
        let regions = ids.map { Region(id: $0, shape: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 1)) }
        let devices = DeviceTable()
        let device = devices.intern("bus 7")
        let out = RecordBuffer(memory: ())
        let writer = EventWriter(output: out, devices: devices, regions: regions)
        for r in regions.indices {
            writer.regionEvent(RegionEvent(kind: r % 2 == 0 ? .enter : .exit, t: 1_700_000_000, device: device,
                                           region: Int32(r), distance: 12.5, enteredAt: r % 2 == 0 ? .nan : 1_699_999_000))
        }
        let lines = String(decoding: out.buffer, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == ids.count)
        var slotted = 0
        for (r, line) in lines.enumerated() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["region"] as? String == ids[r], "\(line)")
            #expect(object["device"] as? String == "bus 7")
            #expect(object["distance"] as? Double == 12.5)
            if writer.ids.slot(r).length != 0 { slotted += 1 }
        }
        // Short plain ids take the slots; long or escaped ones the general path.
        #expect(slotted > 20 && slotted < ids.count)
    }
}
