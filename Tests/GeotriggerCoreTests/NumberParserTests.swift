import Testing
@testable import GeotriggerCore

@Suite struct NumberParserTests {
    func parse(_ s: String) -> (Double, Int)? {
        let bytes = Array(s.utf8)
        return bytes.withPaddedBytes { b in
            var v = 0.0
            let end = NumberParser.parse(b, 0, b.count, &v)
            return end == 0 ? nil : (v, end)
        }
    }

    @Test(arguments: [
        "0", "-0", "1", "-1", "48.2", "16.37", "-71", "1635501603", "1635501603.25", "0.1", "0.3",
        "1e3", "1E3", "1e+3", "1.5e-3", "-2.5E+10", "123456789012345678", "9007199254740993",
        "12345678901234567890123", "1.7976931348623157e308", "5e-324", "2.2250738585072014e-308",
        "0.000001234", "1e22", "1e23", "4.35e-5", "3.141592653589793238462643383279",
        "179.99999999999997", "-89.123456789012", "1e-400", "0e999",
    ])
    func matchesStrtod(_ s: String) {
        let got = parse(s)
        #expect(got != nil)
        let expected = Double(s)!  // Swift's own correctly rounded parser
        #expect(got!.0.bitPattern == expected.bitPattern, "\(s): \(got!.0) vs \(expected)")
        #expect(got!.1 == s.utf8.count)
    }

    /// The plain-line parsers divide by `pow10Small` (no branch): the same powers, exactly.
    @Test func smallPowersOfTenAreExact() {
        for k in 0...7 {
            #expect(NumberParser.pow10Small(k) == NumberParser.pow10(k))
            #expect(NumberParser.pow10Small(k) == Double(NumberParser.pow10Int(k)))
        }
    }

    @Test func negativeZeroKeepsItsSign() {
        #expect(parse("-0")!.0.sign == .minus)
        #expect(parse("-0.0e5")!.0.sign == .minus)
    }

    @Test func overflowIsInfinite() {
        #expect(parse("1e999")!.0 == .infinity)
        #expect(parse("-1e999")!.0 == -.infinity)
    }

    @Test(arguments: ["", "-", "+1", ".5", "01x", "1.", "1e", "1e+", "abc", "--1"])
    func strictGrammar(_ s: String) {
        if let (_, end) = parse(s) {
            // "01x" parses "0" only; everything else must not parse at all.
            #expect(s == "01x" && end == 1)
        }
    }

    @Test func stopsAtTheFirstByteThatCannotContinue() {
        #expect(parse("12.5,")!.1 == 4)
        #expect(parse("7}")!.1 == 1)
    }

    @Test func randomDecimalsRoundTrip() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let v = Double.random(in: -1e6...1e6, using: &rng)
            let s = "\(v)"
            #expect(parse(s)?.0 == v, "\(s)")
        }
    }

    /// Parses `s` followed by `tail` (so 8-byte chunks can be read) and checks the value and the end.
    func expectParsed(_ s: String, before tail: String) {
        let bytes = Array((s + tail).utf8)
        let (v, end) = bytes.withPaddedBytes { b in
            var v = 0.0
            let end = NumberParser.parse(b, 0, b.count, &v)
            return (v, end)
        }
        let expected = Double(s)!
        #expect(end == s.utf8.count, "\(s)\(tail): ended at \(end)")
        #expect(v.bitPattern == expected.bitPattern, "\(s)\(tail): \(v) vs \(expected)")
    }

    /// Numbers followed by more bytes take the 8-digits-at-a-time path; the bytes next to the
    /// digits in ASCII ('/' and ':') and a following digit-free tail must stop it exactly.
    @Test(arguments: ["", ",", "}", "/", ":", ",\"lon\":16.1}", " 99999999", "E5x"])
    func chunkedDigitsMatchSwift(tail: String) {
        // Deterministic digit strings of every length up to 24 on each side of the point.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        func digits(_ n: Int, leadingNonZero: Bool) -> String {
            String((0..<n).map { k in
                Character(String(k == 0 && leadingNonZero ? 1 + next() % 9 : next() % 10))
            })
        }
        for whole in 1...24 {
            for fraction in 0...24 {
                for _ in 0..<3 {
                    var s = next() % 2 == 0 ? "-" : ""
                    s += whole == 1 && next() % 4 == 0 ? "0" : digits(whole, leadingNonZero: true)
                    if fraction > 0 { s += "." + digits(fraction, leadingNonZero: false) }
                    if tail == "E5x" {
                        expectParsed(s + "E5", before: "x")
                    } else {
                        expectParsed(s, before: tail)
                    }
                }
            }
        }
        for s in ["48.282320", "16.618337", "1700000000", "0.000123456789", "12345678.87654321", "99999999.99999999"] {
            if tail == "E5x" { expectParsed(s + "E5", before: "x") } else { expectParsed(s, before: tail) }
        }
    }
}
