import Testing
@testable import GeotriggerCore

@Suite struct RFC3339ParseTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", 0.0),
        ("2021-10-29T10:00:03Z", 1_635_501_603.0),
        ("2021-10-29t10:00:03z", 1_635_501_603.0),
        ("2021-10-29 10:00:03Z", 1_635_501_603.0),
        ("2021-10-29T12:00:03+02:00", 1_635_501_603.0),
        ("2021-10-29T05:30:03-04:30", 1_635_501_603.0),
        ("2021-10-29T10:00:03-00:00", 1_635_501_603.0),
        ("2021-10-29T10:00:03.250Z", 1_635_501_603.25),
        ("2021-10-29T10:00:03.5+00:00", 1_635_501_603.5),
        ("2000-02-29T00:00:00Z", 951_782_400.0),          // 2000 is a leap year (divisible by 400)
        ("1900-03-01T00:00:00Z", -2_203_891_200.0),       // 1900 is not
        ("1969-12-31T23:59:59Z", -1.0),
        ("1969-12-31T23:59:59.5Z", -0.5),
        ("1960-06-15T06:30:00Z", -301_253_400.0),
        ("0001-01-01T00:00:00Z", -62_135_596_800.0),
        ("9999-12-31T23:59:59Z", 253_402_300_799.0),
        ("2024-02-29T12:00:00Z", 1_709_208_000.0),
        ("2016-12-31T23:59:60Z", 1_483_228_800.0),        // leap second = next minute's first second
        ("2021-01-01T00:30:00+01:00", 1_609_457_400.0),   // offset crossing the year boundary
    ])
    func parses(_ text: String, _ expected: Double) {
        #expect(RFC3339.parse(text) == expected)
    }

    @Test(arguments: [
        "", "2021-10-29", "2021-10-29T10:00:03", "2021-02-30T00:00:00Z", "2021-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z", "2021-13-01T00:00:00Z", "2021-00-10T00:00:00Z", "2021-04-31T00:00:00Z",
        "2021-10-29T24:00:00Z", "2021-10-29T10:60:00Z", "2021-10-29T10:00:61Z", "2021-10-29X10:00:03Z",
        "2021-10-29T10:00:03.Z", "2021-10-29T10:00:03+0200", "2021-10-29T10:00:03+24:00",
        "2021-10-29T10:00:03Z ", " 2021-10-29T10:00:03Z", "2021/10/29T10:00:03Z", "21-10-29T10:00:03Z",
        "2021-10-29T10:00:03+02:00x", "2021-1a-29T10:00:03Z",
    ])
    func rejects(_ text: String) {
        #expect(RFC3339.parse(text) == nil)
    }

    @Test func longFractionIsAccepted() {
        let t = RFC3339.parse("2021-10-29T10:00:03.123456789012345678901Z")
        #expect(t != nil && abs(t! - 1_635_501_603.123456789) < 1e-6)
    }
}

@Suite struct RFC3339FormatTests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1_635_501_603.0, "2021-10-29T10:00:03.000Z"),
        (1_635_501_603.25, "2021-10-29T10:00:03.250Z"),
        (1_635_501_603.9996, "2021-10-29T10:00:04.000Z"),   // rounds into the next second
        (1_635_501_603.0004, "2021-10-29T10:00:03.000Z"),
        (1_635_501_603.0016, "2021-10-29T10:00:03.002Z"),
        (1_635_551_999.9999, "2021-10-30T00:00:00.000Z"),   // …and the next day
        (951_782_400.0, "2000-02-29T00:00:00.000Z"),
        (-2_203_891_200.0, "1900-03-01T00:00:00.000Z"),
        (-1.0, "1969-12-31T23:59:59.000Z"),
        (-0.5, "1969-12-31T23:59:59.500Z"),
        (-0.0004, "1970-01-01T00:00:00.000Z"),
        (-0.0006, "1969-12-31T23:59:59.999Z"),
        (-301_253_400.0, "1960-06-15T06:30:00.000Z"),
        (-62_135_596_800.0, "0001-01-01T00:00:00.000Z"),
        (253_402_300_799.999, "9999-12-31T23:59:59.999Z"),
        (1_709_208_000.0, "2024-02-29T12:00:00.000Z"),
        // Beyond 0001…9999, the expanded form: a reading's time can be any number below 1e15.
        (-62_135_596_801.0, "0000-12-31T23:59:59.000Z"),
        (253_402_300_800.0, "10000-01-01T00:00:00.000Z"),
        (1e14, "3170843-11-07T09:46:40.000Z"),  // by 400-year cycles from 1970
        (-1e14, "-3166904-02-24T14:13:20.000Z"),
    ])
    func formats(_ t: Double, _ expected: String) {
        #expect(RFC3339.format(t) == expected)
    }

    @Test func appendsToBuffer() {
        var out = Array("t=".utf8)
        RFC3339.format(1.5, into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "t=1970-01-01T00:00:01.500Z")
    }

    @Test func roundTripsEveryDayAcrossFourCenturies() {
        // Every 7th day from 1800 to 2200 exercises leap-year rules through the formatter and parser.
        var day = RFC3339.daysFromCivil(year: 1800, month: 1, day: 1)
        let last = RFC3339.daysFromCivil(year: 2200, month: 12, day: 31)
        while day <= last {
            let t = Double(day * 86400 + 45_296) + 0.789
            let text = RFC3339.format(t)
            #expect(RFC3339.parse(text) == t, "\(text)")
            day += 7
        }
    }

    @Test func civilRoundTrip() {
        for d in stride(from: -800_000, through: 3_000_000, by: 997) {
            let c = RFC3339.civilFromDays(d)
            #expect(RFC3339.daysFromCivil(year: c.year, month: c.month, day: c.day) == d)
        }
    }

    /// A writer keeps the date of the last day it formatted (`DayCache`): whatever the order of
    /// times (the same day again, the next, back to an earlier one, a millisecond that rounds
    /// into the next day, out of range and back), each is written as a fresh `format24` writes it.
    @Test func cachedDatesMatchFreshOnes() {
        var cache = RFC3339.DayCache()
        var rng = SplitMix64(seed: 24)
        func next() -> UInt64 { rng.next() }
        var t = 1_700_000_000.0
        let cached = UnsafeMutablePointer<UInt8>.allocate(capacity: 24), fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: 24)
        defer { cached.deallocate(); fresh.deallocate() }
        for _ in 0..<20_000 {
            switch next() % 6 {
            case 0: t += Double(next() % 1000) / 1000  // the same day, mostly
            case 1: t += Double(next() % 200_000)  // a day or two on
            case 2: t -= Double(next() % 400_000)  // back a few days
            case 3: t = (t / 86400).rounded(.down) * 86400 + 86399.9996  // rounds into the next day
            case 4: t = Double(Int64(bitPattern: next() % 600_000_000_000) - 100_000_000_000)  // years −1200…21000
            default: t = 1_700_000_000 + Double(next() % 1_000_000)
            }
            let n = RFC3339.format24(t, to: cached, days: &cache)
            let m = RFC3339.format24(t, to: fresh)
            #expect(n == m)
            let a = String(decoding: UnsafeBufferPointer(start: cached, count: n), as: UTF8.self)
            let b = String(decoding: UnsafeBufferPointer(start: fresh, count: m), as: UTF8.self)
            #expect(a == b, "t = \(t)")
            if a != b { break }
        }
    }

    @Test func nonFiniteIsWrittenAsInvalid() {
        #expect(RFC3339.format(.nan) == "invalid")
    }
}
