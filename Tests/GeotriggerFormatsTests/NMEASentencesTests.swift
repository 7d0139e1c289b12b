import Foundation
import Testing
import GeotriggerCore
@testable import GeotriggerFormats

/// NMEA 0183 lines, fields and cycles, on hand-made sentences whose values are worked out here.
@Suite struct NMEASentencesTests {
    /// A sentence with its checksum appended.
    static func sentence(_ body: String) -> String {
        let sum = body.utf8.reduce(UInt8(0), ^)
        return "$" + body + "*" + String(sum, radix: 16, uppercase: true).leftPadded(2)
    }

    static func kind(_ line: String) -> NMEALine.Kind {
        var l = line
        return l.withByteView { NMEALine.classify($0) }
    }

    @Test func linesAreClassifiedByWhatTheyAre() {
        let rmc = Self.sentence("GPRMC,125106,A,3854.5087,N,07726.4523,W,0.0,0.0,241011,10.5,W,S")
        if case .fixSentence(.rmc, _) = Self.kind(rmc) {} else { Issue.record("RMC with a good checksum") }
        if case .fixSentence(.rmc, _) = Self.kind(rmc + "\r") {} else { Issue.record("a CR at the end") }
        // Binary bytes of a vendor packet before the sentence on its line.
        if case .fixSentence(.gga, _) = Self.kind("\u{1}b\u{2}" + Self.sentence("GNGGA,011903.00,4552.65550,S,17030.00756,E,1,12,1.17,16.7,M,1.8,M,,")) {} else {
            Issue.record("a sentence after binary bytes")
        }
        var damaged = Array(rmc)
        damaged[10] = "7"
        if case .badChecksum = Self.kind(String(damaged)) {} else { Issue.record("one digit changed") }
        // Without a checksum (the HP 58534A writes none): read, its fields checked as any.
        if case .fixSentence(.gga, _) = Self.kind("$GPGGA,222449,3349.0337,S,01843.9282,E,1,07,02.31,000115.4,M,0033.3,M,,") {} else {
            Issue.record("no checksum")
        }
        if case .otherSentence(let k) = Self.kind(Self.sentence("GPGSV,3,1,10,03,41,050,46")), k.name == "GSV" {} else { Issue.record("GSV") }
        if case .otherSentence(let k) = Self.kind(Self.sentence("PGRME,1.7,M,2.4,M,3.0,M")), k.name == "PGRME" {} else { Issue.record("a vendor's sentence") }
        if case .comment = Self.kind("# Name: Garmin GPSmap 76S") {} else { Issue.record("comment") }
        if case .blank = Self.kind("  \r") {} else { Issue.record("blank") }
        if case .noise = Self.kind("\u{b5}b\u{1}\u{7}") {} else { Issue.record("binary") }
    }

    /// `body` of `s`'s bytes, unpadded (read a byte at a time) and then padded with sixteen
    /// bytes (read a word at a time, `DecimalWords`): the two must agree, and the value is
    /// returned once they do.
    static func bothWays<R: Equatable>(_ s: String, _ body: (PaddedBytes) -> R) -> R {
        var plain = s
        let unpadded = plain.withByteView { body(PaddedBytes($0)) }
        // Digits and points after the field, as the rest of a line would have: never read as it.
        let bytes = Array(s.utf8) + Array("9.9.9,9999999999".utf8)
        let padded = bytes.withUnsafeBytes { body(PaddedBytes(unsafe: UnsafeRawBufferPointer(rebasing: $0[0..<s.utf8.count]), padding: 16)) }
        #expect(unpadded == padded, "\(s)")
        return padded
    }

    @Test func fieldsAreReadExactly() {
        func view<R: Equatable>(_ s: String, _ body: (PaddedBytes) -> R) -> R { Self.bothWays(s, body) }
        func angle(_ f: String, _ h: String, _ limit: Double) -> Double? { view(f) { f in view(h) { NMEAFields.angle(f, $0, limit: limit) } } }
        // 38° 54.5087′ is 38 + 54.5087/60 = 23,345,087 / 600,000 degrees (77° 26.4523′ is
        // 46,464,523 / 600,000): read as the double nearest that (one correctly rounded
        // division), as "38.90847833…" in decimal would be.
        let north: Double = 23_345_087 / 600_000, west: Double = -(46_464_523 / 600_000 as Double)
        let noon: Double? = 46_266  // 12:51:06
        #expect(view("125106") { NMEAFields.timeOfDay($0) } == noon)
        let early: Double? = 11_239.25  // 03:07:19.25
        #expect(view("030719.250") { NMEAFields.timeOfDay($0) } == early)
        #expect(view("250000") { NMEAFields.timeOfDay($0) } == nil)
        #expect(view("12510") { NMEAFields.timeOfDay($0) } == nil)
        #expect(angle("3854.5087", "N", 90) == north)
        #expect(angle("07726.4523", "W", 180) == west)
        #expect(angle("9100.0000", "N", 90) == nil)
        #expect(angle("3860.0000", "N", 90) == nil)
        #expect(angle("3854.5087", "X", 90) == nil)
        #expect(view("241011") { NMEACycles.day(ddmmyy: $0) } == RFC3339.daysFromCivil(year: 2011, month: 10, day: 24))
        #expect(view("310299") { NMEACycles.day(ddmmyy: $0) } == nil)
        #expect(view("010199") { NMEACycles.day(ddmmyy: $0) } == RFC3339.daysFromCivil(year: 1999, month: 1, day: 1))
    }

    /// Feeds sentences (bodies) to a cycle reader; returns the outcomes, the last cycle's included.
    static func outcomes(_ bodies: [String]) -> [NMEACycles.Outcome] {
        var cycles = NMEACycles()
        var out: [NMEACycles.Outcome] = []
        for body in bodies {
            var line = sentence(body)
            let o: NMEACycles.Outcome? = line.withByteView { v in
                guard case .fixSentence(let type, let fields) = NMEALine.classify(v) else { return nil }
                return cycles.take(type, fields)
            }
            if let o { out.append(o) }
        }
        if let o = cycles.finish() { out.append(o) }
        return out
    }

    @Test func aCycleIsOneFixWithGGAsPositionAndTheDateOfItsRMC() {
        let out = Self.outcomes([
            "GPGGA,093802,5213.1439,N,02100.6511,E,2,10,0.9,137.2,M,36.2,M,,",
            "GPGSA,A,3,03,06,15,16,18,19,21,22,,27,29,,1.6,0.9,1.3",
            "GPRMC,093802,A,5213.143,N,02100.651,E,000.0,226.0,160305,004.2,E,D",
            "GPGLL,5213.1439,N,02100.6511,E,093802,A,D",
        ])
        let day = Double(RFC3339.daysFromCivil(year: 2005, month: 3, day: 16))
        let t: Double = day * 86_400 + 34_682  // 09:38:02
        // 52° 13.1439′ and 21° 0.6511′: 31,331,439 / 600,000 and 12,606,511 / 600,000 degrees.
        let latitude: Double = 31_331_439 / 600_000, longitude: Double = 12_606_511 / 600_000, accuracy: Double = 0.9 * 8
        let expected: [NMEACycles.Outcome] = [.fix(t: t, latitude: latitude, longitude: longitude, accuracy: accuracy)]
        #expect(out == expected)
    }

    @Test func voidCyclesAndCyclesBeforeAnyDateAreTold() {
        let out = Self.outcomes([
            "GPRMC,125106,V,3854.5087,N,07726.4523,W,0.0,0.0,241011,10.5,W,S",
            "GPGGA,125106,3854.5087,N,07726.4523,W,8,10,2.0,268.8,M,-33.9,M,,",
            "GPGGA,125107,3854.5087,N,07726.4523,W,1,00,2.0,268.8,M,-33.9,M,,",
            "GPGGA,125108,3854.5087,N,07726.4523,W,1,05,2.0,268.8,M,-33.9,M,,",
            "GPRMC,125109,A,3854.5087,N,07726.4523,W,0.0,0.0,241011,10.5,W,S",
        ])
        // Simulated (8), no satellite used, no date yet (the void RMC's date is not taken), a fix.
        #expect(out.count == 4)
        #expect(out[0] == .void && out[1] == .void && out[2] == .noDate)
        if case .fix(let t, _, _, let accuracy) = out[3] {
            let day = Double(RFC3339.daysFromCivil(year: 2011, month: 10, day: 24))
            #expect(t == day * 86_400 + 46_269)  // 12:51:09
            #expect(accuracy.isNaN)
        } else {
            Issue.record("\(out[3])")
        }
    }

    @Test func timesMillisecondsApartAreOneCycleAndMidnightTakesTheNewDate() {
        let out = Self.outcomes([
            "GPGLL,5313.2228,N,00634.4228,E,235959.995,A",
            "GPRMC,235959.99,A,5313.2228,N,00634.4228,E,00.0,000.0,200506,00,W",
            "GPRMC,000000.99,A,5313.2227,N,00634.4228,E,00.0,000.0,210506,00,W",
        ])
        let day20 = Double(RFC3339.daysFromCivil(year: 2006, month: 5, day: 20)) * 86_400
        #expect(out.count == 2)
        if case .fix(let t0, _, _, _) = out[0], case .fix(let t1, _, _, _) = out[1] {
            #expect(t0 == day20 + 86_399.99 && t1 == day20 + 86_400.99)
        }
    }

    @Test func aCycleEndedEarlyPassesOverItsLateSentences() {
        var cycles = NMEACycles()
        func take(_ body: String) -> NMEACycles.Outcome? {
            var line = Self.sentence(body)
            return line.withByteView { v in
                guard case .fixSentence(let type, let fields) = NMEALine.classify(v) else { return nil }
                return cycles.take(type, fields)
            }
        }
        #expect(take("GPRMC,093802,A,5213.1439,N,02100.6511,E,000.0,226.0,160305,004.2,E,D") == nil)
        let early = cycles.finish()
        if case .fix = early {} else { Issue.record("the input would block: the cycle ends") }
        #expect(take("GPGGA,093802,5213.1439,N,02100.6511,E,2,10,0.9,137.2,M,36.2,M,,") == nil)
        #expect(cycles.finish() == nil)
        #expect(take("GPRMC,093803,A,5213.1439,N,02100.6511,E,000.0,226.0,160305,004.2,E,D") == nil)
        if case .fix = cycles.finish() {} else { Issue.record("the next cycle") }
    }

    /// Decimal fields of every shape (digits, points, other bytes, 0 to 20 long) read the same a
    /// word at a time as a byte at a time, and an angle written with up to nine decimals of
    /// minutes reads as the double nearest it, as its decimal degrees would.
    @Test func numbersReadAWordAtATimeAsAByteAtATime() {
        var generator = SplitMix64(seed: 8_1632)
        let alphabet = Array("0123456789012345678901234567890123456789..,-+ Ae".utf8)
        for _ in 0..<20_000 {
            let n = Int.random(in: 0...20, using: &generator)
            let field = String(decoding: (0..<n).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }, as: UTF8.self)
            let parts = Self.bothWays(field) { f in NMEAFields.parts(f).map { [$0.whole, $0.fraction, UInt64($0.digits)] } }
            if let parts, field.count <= 16 {
                // And as the text says.
                let text = field.split(separator: ".", omittingEmptySubsequences: false)
                #expect(parts[0] == UInt64(text[0]) ?? 0 && parts[2] == UInt64(text.count > 1 ? text[1].count : 0), "\(field)")
            }
            _ = Self.bothWays(field) { NMEAFields.smallInteger($0) }
            _ = Self.bothWays(field) { NMEAFields.timeOfDay($0) }
        }
        for _ in 0..<20_000 {
            let degrees = Int.random(in: 0...89, using: &generator), minutes = Int.random(in: 0...59, using: &generator)
            let decimals = Int.random(in: 0...9, using: &generator)
            let fraction = Int.random(in: 0..<Int(NumberParser.pow10Int(decimals)), using: &generator)
            let text = String(format: "%02d%02d", degrees, minutes) + (decimals > 0 ? "." + String(fraction).leftPadded(decimals) : "")
            let read = Self.bothWays(text) { f in Self.bothWays("N") { NMEAFields.angle(f, $0, limit: 90) } }
            // The exact angle as a fraction of integers, divided once (exact below 2⁵³).
            let p = Int(NumberParser.pow10Int(decimals))
            let exact = Double((degrees * 60 + minutes) * p + fraction) / Double(60 * p)
            #expect(read == exact, "\(text)")
        }
    }

    /// What a line is, worked out a byte at a time from SPEC §3's rules, as the decoder's
    /// sixteen-bytes-at-a-time classification (`NMEALine.classify`, `NMEAFields`) must find it.
    static func reference(_ line: [UInt8]) -> String {
        var end = line.count
        while end > 0 && [0x20, 0x0D, 0x09].contains(line[end - 1]) { end -= 1 }
        var first = 0
        while first < end && [0x20, 0x09].contains(line[first]) { first += 1 }
        if first == end { return "blank" }
        if line[first] == UInt8(ascii: "#") { return "comment" }
        guard let dollar = line[first..<end].lastIndex(of: UInt8(ascii: "$")), end - dollar >= 7 else { return "noise" }
        func alnum(_ b: UInt8) -> Bool { (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) }
        guard line[(dollar + 1)...(dollar + 5)].allSatisfy(alnum) else { return "noise" }
        let type = String(decoding: line[(dollar + 3)...(dollar + 5)], as: UTF8.self)
        guard ["RMC", "GGA", "GLL", "ZDA"].contains(type), line[dollar + 1] != UInt8(ascii: "P") else {
            let from = line[dollar + 1] == UInt8(ascii: "P") ? dollar + 1 : dollar + 3
            return "other " + String(decoding: line[from..<min(from + 5, end)].prefix(while: alnum), as: UTF8.self)
        }
        var fieldsEnd = end
        if line[end - 3] == UInt8(ascii: "*") && end - 3 > dollar {
            let hex = String(decoding: line[(end - 2)..<end], as: UTF8.self)
            guard let sum = UInt8(hex, radix: 16), hex.allSatisfy(\.isHexDigit) else { return "bad checksum" }
            guard line[(dollar + 1)..<(end - 3)].reduce(0, ^) == sum else { return "bad checksum" }
            fieldsEnd = end - 3
        }
        let rest = line[(dollar + 6)..<fieldsEnd]
        let fields = rest.first == UInt8(ascii: ",")
            ? rest.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).dropFirst().map { String(decoding: $0, as: UTF8.self) }
            : []
        return "fix \(type) [\(fields.joined(separator: "|"))]"
    }

    /// The same, from the decoder's classification.
    static func classified(_ line: [UInt8]) -> String {
        line.withByteView { describe(NMEALine.classify($0)) }
    }

    static func describe(_ kind: NMEALine.Kind) -> String {
        switch kind {
        case .blank: return "blank"
        case .comment: return "comment"
        case .noise: return "noise"
        case .badChecksum: return "bad checksum"
        case .otherSentence(let kind): return "other " + kind.name
        case .fixSentence(let type, var fields):
            var all: [String] = []
            while let f = fields.next() { all.append(f.bytes.string) }
            let name = switch type { case .rmc: "RMC"; case .gga: "GGA"; case .gll: "GLL"; case .zda: "ZDA" }
            return "fix \(name) [\(all.joined(separator: "|"))]"
        }
    }

    /// Sentences as receivers send them, then damaged every way a line of a log is: bytes before
    /// (a binary packet's), another `$` within, commas, spaces and CRs at the ends, cut short,
    /// a byte changed, lengthened past what one pass maps (128 bytes): each line classified as
    /// the byte-at-a-time reading of SPEC §3 says, its fields split where it splits them.
    @Test func linesAreClassifiedAsTheRulesReadByteByByteSay() {
        var generator = SplitMix64(seed: 3_0183)
        let bodies = [
            "GPGGA,093802,5213.1439,N,02100.6511,E,2,10,0.9,137.2,M,36.2,M,,",
            "GNRMC,011903.00,A,4552.65550,S,17030.00756,E,0.021,,010119,,,A",
            "GPGLL,3854.5087,N,07726.4523,W,125106,A",
            "GPZDA,125106.00,24,10,2011,00,00",
            "GPGSA,A,3,02,05,06,09,12,17,19,25,,,,,3.50,2.5,1.10",
            "PGRME,1.7,M,2.4,M,3.0,M",
            "GPGSV,3,1,10,03,41,050,46",
        ]
        var checked = 0, kinds = Set<String>()
        // The receiver (which knows a repeated sentence without classifying it again) says the
        // same of every line, in the stream's order.
        var receiver = NMEAReceiver()
        for _ in 0..<20_000 {
            var line = Array(Self.sentence(bodies[Int.random(in: 0..<bodies.count, using: &generator)]).utf8)
            for _ in 0..<Int.random(in: 0..<4, using: &generator) {
                let at = Int.random(in: 0...line.count, using: &generator)
                switch Int.random(in: 0..<9, using: &generator) {
                case 0: line.insert(contentsOf: (0..<Int.random(in: 1..<40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }, at: 0)
                case 1: line.insert(UInt8(ascii: "$"), at: at)
                case 2: line.insert(UInt8(ascii: ","), at: at)
                case 3: line += Array(" \r\t".utf8).shuffled(using: &generator).prefix(Int.random(in: 1...3, using: &generator))
                case 4: line = Array(line.prefix(at))
                case 5: if !line.isEmpty { line[Int.random(in: 0..<line.count, using: &generator)] = UInt8.random(in: 0x20...0x7E, using: &generator) }
                case 6: line.insert(contentsOf: Array(repeating: UInt8(ascii: "7"), count: Int.random(in: 40..<200, using: &generator)), at: min(at, line.count))
                case 7: line.insert(contentsOf: Array("  ".utf8), at: 0)
                default: line += Array(Self.sentence(bodies[Int.random(in: 0..<bodies.count, using: &generator)]).utf8)
                }
            }
            let expected = Self.reference(line), got = Self.classified(line)
            #expect(got == expected, "\(String(decoding: line, as: UTF8.self))")
            // Framed as the decoder frames a buffered line (its end found in the same pass as its
            // `$`, commas and checksum), followed by more lines and bytes that must not count.
            if !line.contains(0x0A) {
                let end: [UInt8] = Bool.random(using: &generator) ? [0x0D, 0x0A] : [0x0A]
                let next = Array("$GPGSA,$,,,\n*00".utf8)
                let buffer = line + end + next
                let count = line.count + end.count + Int.random(in: 0...next.count, using: &generator)
                buffer.withUnsafeBytes { raw in
                    // Copied where sixteen bytes of padding follow, as the reader's buffer has.
                    let copy = PaddedBuffer(capacity: buffer.count)
                    copy.copy(ByteView(unsafe: raw), to: 0)
                    let inCopy = copy.bytes(from: 0, count: count)
                    let frame = NMEALine.frame(inCopy)
                    // A line ending within 128 bytes is framed, its terminator's CR not part of it.
                    let ends = line.count + end.count <= 128
                    #expect((frame != nil) == ends, "\(String(decoding: line, as: UTF8.self))")
                    guard let frame else { return }
                    // A CR before the newline ends the line with it, the line's own or not.
                    let cr = end == [0x0A] && line.last == 0x0D ? 1 : 0
                    #expect(frame.length == line.count - cr && frame.terminator == end.count + cr)
                    let framed = Self.describe(NMEALine.classify(inCopy.slice(0..<frame.length), framed: frame))
                    #expect(framed == expected, "framed: \(String(decoding: line, as: UTF8.self))")
                }
            }
            let read: String = line.withByteView { view in
                switch receiver.read(view, place: Int64(checked)) {
                case .blank: return "blank"
                case .passedOver(let kind): return kind == "comment" ? "comment" : "noise"
                case .otherSentence(let kind): return "other " + kind.name
                case .badChecksum: return "bad checksum"
                case .taken, .ended: return "fix"
                }
            }
            #expect(read == (expected.hasPrefix("fix") ? "fix" : expected), "\(String(decoding: line, as: UTF8.self))")
            kinds.insert(String(expected.prefix(5)))
            checked += 1
        }
        // The kinds that matter came up.
        #expect(kinds.isSuperset(of: ["noise", "other", "bad c", "fix G", "fix R", "fix Z"]), "\(kinds)")
        #expect(checked == 20_000)
    }
}

extension String {
    func leftPadded(_ n: Int) -> String { String(repeating: "0", count: max(0, n - count)) + self }

}
