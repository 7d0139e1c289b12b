/// RFC 3339 time stamps to and from Unix seconds, without Foundation.
///
/// Parsing accepts `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` with `T`, `t` or a space between date
/// and time and `Z` or `z` for UTC. Calendar dates are checked (no February 30, no hour 24); a leap
/// second `:60` is accepted and counts as the first second of the next minute, as Unix time does.
/// Formatting writes UTC with milliseconds: `2021-10-29T10:00:03.000Z`.
///
/// Day arithmetic follows Howard Hinnant's `days_from_civil` / `civil_from_days`
/// (proleptic Gregorian calendar), so dates before 1970 and far from it are exact.
public enum RFC3339 {
    // MARK: Calendar arithmetic

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    @inlinable
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// The proleptic Gregorian date of a day number (days since 1970-01-01).
    @inlinable
    public static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    @inlinable
    public static func isLeapYear(_ y: Int) -> Bool {
        y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
    }

    @inlinable
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // MARK: Parsing

    /// Parses an RFC 3339 date-time into Unix seconds, or returns `nil` if it is not one.
    package static func parse(_ bytes: ByteView) -> Double? {
        let n = bytes.count
        guard n >= 20 else { return nil }
        let p = PaddedBytes(bytes)

        @inline(__always) func digit(_ i: Int) -> Int? {
            let d = Int(p[i]) &- 48
            return d >= 0 && d <= 9 ? d : nil
        }
        @inline(__always) func two(_ i: Int) -> Int? {
            guard let a = digit(i), let b = digit(i + 1) else { return nil }
            return a * 10 + b
        }
        guard let y1 = two(0), let y2 = two(2), p[4] == UInt8(ascii: "-"),
              let month = two(5), p[7] == UInt8(ascii: "-"),
              let day = two(8)
        else { return nil }
        let sep = p[10]
        guard sep == UInt8(ascii: "T") || sep == UInt8(ascii: "t") || sep == UInt8(ascii: " ") else { return nil }
        guard let hour = two(11), p[13] == UInt8(ascii: ":"),
              let minute = two(14), p[16] == UInt8(ascii: ":"),
              let second = two(17)
        else { return nil }
        let year = y1 * 100 + y2
        guard month >= 1, month <= 12, day >= 1, day <= daysInMonth(year: year, month: month),
              hour <= 23, minute <= 59, second <= 60
        else { return nil }

        var i = 19
        var fraction = 0.0
        if p[i] == UInt8(ascii: ".") {
            i += 1
            var m: UInt64 = 0
            var scale: UInt64 = 1
            let start = i
            while i < n, let d = digit(i) {
                if scale < 1_000_000_000_000_000 {  // 18 digits are far below a Double's resolution here
                    m = m * 10 + UInt64(d)
                    scale *= 10
                }
                i += 1
            }
            guard i > start else { return nil }
            fraction = Double(m) / Double(scale)
        }
        guard i < n else { return nil }
        var offset = 0
        let z = p[i]
        if z == UInt8(ascii: "Z") || z == UInt8(ascii: "z") {
            i += 1
        } else if z == UInt8(ascii: "+") || z == UInt8(ascii: "-") {
            guard i + 6 == n, let oh = two(i + 1), p[i + 3] == UInt8(ascii: ":"), let om = two(i + 4),
                  oh <= 23, om <= 59
            else { return nil }
            offset = (oh * 60 + om) * 60
            if z == UInt8(ascii: "-") { offset = -offset }
            i += 6
        } else {
            return nil
        }
        guard i == n else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let whole = days * 86400 + hour * 3600 + minute * 60 + second - offset
        return Double(whole) + fraction
    }

    /// Parses an RFC 3339 date-time string into Unix seconds.
    public static func parse(_ s: String) -> Double? {
        var s = s
        return s.withByteView { parse($0) }
    }

    // MARK: Formatting

    /// `t` (Unix seconds, finite) split into its UTC calendar day, second of the day and
    /// millisecond, rounded to the nearest millisecond; nil when `t` is not finite or huge.
    @inline(__always)
    static func parts(_ t: Double) -> (year: Int, month: Int, day: Int, second: Int, ms: Int)? {
        guard let (days, sod, ms) = split(t) else { return nil }
        let (year, month, day) = civilFromDays(days)
        return (year, month, day, sod, ms)
    }

    /// `t` (Unix seconds) as days since 1970-01-01, second of the day and millisecond, rounded to
    /// the nearest millisecond; nil when `t` is not finite or huge.
    @inline(__always)
    static func split(_ t: Double) -> (days: Int, second: Int, ms: Int)? {
        guard t.isFinite, abs(t) < 1e15 else { return nil }
        // floor and the subtraction are exact, so only the millisecond rounding rounds.
        let whole = t.rounded(.down)
        var secs = Int(whole)
        var ms = Int(((t - whole) * 1000).rounded(.toNearestOrAwayFromZero))
        if ms >= 1000 {
            ms -= 1000
            secs += 1
        }
        var days = secs / 86400
        var sod = secs % 86400
        if sod < 0 {
            sod += 86400
            days -= 1
        }
        return (days, sod, ms)
    }

    /// Appends `t` (Unix seconds) as `YYYY-MM-DDTHH:MM:SS.mmmZ`, rounded to the nearest millisecond.
    ///
    /// Years outside 0001…9999 are written with as many digits as needed and a leading `-` when
    /// negative (ISO 8601 expanded form); a non-finite `t` is written as `invalid`. Neither is
    /// RFC 3339: the replay never gets here with such a time, as readings and `--until` are held to
    /// `InputLimits.timeIsWritable` where they are read; this spelling is only a defence.
    public static func format(_ t: Double, into out: inout [UInt8]) {
        guard let (year, month, day, sod, ms) = parts(t) else {
            out.append(contentsOf: "invalid".utf8)
            return
        }
        if year >= 0 && year <= 9999 {
            append24(t, to: &out)
            return
        }
        @inline(__always) func put2(_ v: Int) {
            out.append(UInt8(48 + v / 10))
            out.append(UInt8(48 + v % 10))
        }
        if year < 0 { out.append(UInt8(ascii: "-")) }
        let digits = String(abs(year)).utf8
        if digits.count < 4 {
            for _ in digits.count..<4 { out.append(UInt8(ascii: "0")) }
        }
        out.append(contentsOf: digits)
        out.append(UInt8(ascii: "-"))
        put2(month)
        out.append(UInt8(ascii: "-"))
        put2(day)
        out.append(UInt8(ascii: "T"))
        put2(sod / 3600)
        out.append(UInt8(ascii: ":"))
        put2(sod / 60 % 60)
        out.append(UInt8(ascii: ":"))
        put2(sod % 60)
        out.append(UInt8(ascii: "."))
        out.append(UInt8(48 + ms / 100))
        put2(ms % 100)
        out.append(UInt8(ascii: "Z"))
    }

    /// `t` (Unix seconds) as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public static func format(_ t: Double) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        format(t, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
