#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Decimal numbers (JSON grammar) parsed straight from bytes.
///
/// Ordinary decimals take Clinger's fast path: when the significant digits fit in an integer below
/// 2^53 and the power of ten is at most 22, both are exact Doubles and one multiplication or
/// division is correctly rounded. Everything else (long mantissas, large exponents) goes to
/// `strtod` on a NUL-terminated copy, which is correctly rounded too. Overflow gives ±infinity,
/// which callers report as a non-finite number.
///
/// Runs of digits are taken eight at a time (`eightDigits`) while eight bytes of the input remain,
/// so a coordinate costs a few operations rather than a loop step per digit.
///
/// In Core so the regions CSV reader and the readings decoders share it. `public` and inlinable,
/// not `package`: this toolchain does not inline `package` inlinable code into other modules, and
/// the NDJSON decoder calls `parse` for every number of every line.
public enum NumberParser {
    @inlinable @inline(__always)
    public static func pow10(_ e: Int) -> Double {
        switch e {
        case 0: return 1e0
        case 1: return 1e1
        case 2: return 1e2
        case 3: return 1e3
        case 4: return 1e4
        case 5: return 1e5
        case 6: return 1e6
        case 7: return 1e7
        case 8: return 1e8
        case 9: return 1e9
        case 10: return 1e10
        case 11: return 1e11
        case 12: return 1e12
        case 13: return 1e13
        case 14: return 1e14
        case 15: return 1e15
        case 16: return 1e16
        case 17: return 1e17
        case 18: return 1e18
        case 19: return 1e19
        case 20: return 1e20
        case 21: return 1e21
        default: return 1e22
        }
    }

    /// 10^k for k in 0...7, exactly, with no branch: (1 + 9·b₀)(1 + 99·b₁)(1 + 9999·b₂) for the
    /// bits of k. The plain-line parsers divide by 10^(digits after the point), whose number
    /// varies at random from one coordinate to the next; `pow10`'s switch became a jump table,
    /// and an indirect jump on random data mispredicts.
    @inlinable @inline(__always)
    public static func pow10Small(_ k: Int) -> Double {
        let b0 = Double(k & 1), b1 = Double((k >> 1) & 1), b2 = Double((k >> 2) & 1)
        return (1 + 9 * b0) * ((1 + 99 * b1) * (1 + 9999 * b2))
    }

    /// 10^k for k in 0...8, as an integer.
    @inlinable @inline(__always)
    public static func pow10Int(_ k: Int) -> UInt64 {
        switch k {
        case 0: return 1
        case 1: return 10
        case 2: return 100
        case 3: return 1_000
        case 4: return 10_000
        case 5: return 100_000
        case 6: return 1_000_000
        case 7: return 10_000_000
        default: return 100_000_000
        }
    }

    /// The run of ASCII digits at the start of `word` (8 bytes, little-endian): how many there
    /// are (0–8) and their value. Branch-free SWAR: a byte is a digit when, XORed with 0x30, it
    /// is at most 9; the digits are then combined in pairs, fours and eights.
    @inlinable @inline(__always)
    public static func eightDigits(_ word: UInt64) -> (count: Int, value: UInt64) {
        let count = digitRun(word)
        guard count > 0 else { return (0, 0) }
        return (count, runValue(word, count))
    }

    /// The value of the first `count` (1–8) bytes of `word`, ASCII digits (`digitRun`'s count).
    @inlinable @inline(__always)
    public static func runValue(_ word: UInt64, _ count: Int) -> UInt64 {
        // The first digit is the lowest byte: shifting the run to the top leaves zeros before it.
        topDigitsValue((word ^ 0x3030_3030_3030_3030) << UInt64(64 &- 8 &* count))
    }

    /// How many ASCII digits `word` (8 bytes, little-endian) starts with, 0–8. A byte XORed with
    /// 0x30 is a digit when it is at most 9; the high bit of each byte that is not is set, and a
    /// carry out of such a byte only reaches bytes after it, which are not counted.
    @inlinable @inline(__always)
    public static func digitRun(_ word: UInt64) -> Int {
        let x = word ^ 0x3030_3030_3030_3030
        let nonDigit = (x | (x &+ 0x7676_7676_7676_7676)) & 0x8080_8080_8080_8080
        return nonDigit == 0 ? 8 : nonDigit.trailingZeroBitCount >> 3
    }

    /// The value of digit values 0–9 held in the top bytes of `v`, the most significant in the
    /// lowest of them, with zero bytes below: combined in pairs, fours and eights.
    @inlinable @inline(__always)
    public static func topDigitsValue(_ v: UInt64) -> UInt64 {
        var v = v
        v = ((v & 0x0F0F_0F0F_0F0F_0F0F) &* 2561) >> 8
        v = ((v & 0x00FF_00FF_00FF_00FF) &* 6_553_601) >> 16
        v = ((v & 0x0000_FFFF_0000_FFFF) &* 42_949_672_960_001) >> 32
        return v
    }

    /// The value of the `k` digits at the start of `whole` followed by the `f` digits at the start
    /// of `fraction` (k, f ≥ 1, k + f ≤ 8), as one integer: the two runs are placed side by side
    /// in the top bytes of one word and combined once.
    @inlinable @inline(__always)
    public static func joinedDigits(_ whole: UInt64, _ k: Int, _ fraction: UInt64, _ f: Int) -> UInt64 {
        let zeros: UInt64 = 0x3030_3030_3030_3030
        let tail = (fraction ^ zeros) << UInt64(64 - 8 * f)
        let head = ((whole ^ zeros) << UInt64(64 - 8 * k)) >> UInt64(8 * f)
        return topDigitsValue(head | tail)
    }

    /// Parses a JSON number starting at `p[i]`, stopping at the first byte that cannot continue it.
    ///
    /// Returns the index after the number, or `i` when no number starts there (the grammar is
    /// strict: no leading `+`, no leading zeros, digits required after `.` and after `e`).
    @inlinable @inline(__always)
    package static func parse(_ p: PaddedBytes, _ i: Int, _ n: Int, _ value: inout Double) -> Int {
        // The usual number, whole: [-]digits[.digits] with at most 15 digits before the point, 1–7
        // after it and 19 in all, no exponent, and room to read 8 bytes at each run. Its digits
        // are an exact integer m below 2^53 and the value m / 10^k one correctly rounded division
        // (Clinger), as in `parseGeneral`, which takes everything else.
        var j = i
        let negative = j < n && p[j] == UInt8(ascii: "-")
        if negative { j += 1 }
        if j + 8 <= n {
            let (k, v) = eightDigits(p.word(at: j))
            var m = v, digits = k, end = j + k
            // No leading zero unless the whole part is "0".
            var usual = k > 0 && (k == 1 || p[j] != UInt8(ascii: "0"))
            if usual && k == 8 {
                if end + 8 <= n {
                    let (k2, v2) = eightDigits(p.word(at: end))
                    m = m &* pow10Int(k2) &+ v2
                    digits += k2
                    end += k2
                    usual = k2 < 8
                } else {
                    usual = false
                }
            }
            var scale = 0
            if usual && end < n && p[end] == UInt8(ascii: ".") {
                if end + 9 <= n {
                    let (k3, v3) = eightDigits(p.word(at: end + 1))
                    m = m &* pow10Int(k3) &+ v3
                    digits += k3
                    scale = k3
                    end += 1 + k3
                    usual = k3 > 0 && k3 < 8
                } else {
                    usual = false
                }
            }
            if usual && digits <= 19 && m <= 1 << 53 && (end == n || p[end] | 0x20 != UInt8(ascii: "e")) {
                let magnitude = scale == 0 ? Double(m) : Double(m) / pow10Small(scale)
                value = negative ? -magnitude : magnitude
                return end
            }
        }
        return parseGeneral(p, i, n, &value)
    }

    /// `parse` for any number: digit runs eight at a time while they fit, then one at a time;
    /// long mantissas and exponents beyond Clinger's fast path go to `strtod`.
    @usableFromInline
    static func parseGeneral(_ p: PaddedBytes, _ i: Int, _ n: Int, _ value: inout Double) -> Int {
        var j = i
        var negative = false
        if j < n && p[j] == UInt8(ascii: "-") {
            negative = true
            j += 1
        }
        guard j < n else { return i }
        var mantissa: UInt64 = 0
        var significant = 0
        var exp10 = 0
        var truncated = false
        let first = p[j]
        if first == UInt8(ascii: "0") {
            j += 1
        } else if first >= UInt8(ascii: "1") && first <= UInt8(ascii: "9") {
            // Eight digits at a time while they stay within 19 significant digits; the loop
            // below takes whatever is left (the line's end, a longer mantissa).
            while j + 8 <= n {
                let (k, v) = eightDigits(p.word(at: j))
                if significant + k > 19 { break }
                mantissa = mantissa &* pow10Int(k) &+ v
                significant += k
                j += k
                if k < 8 { break }
            }
            while j < n {
                let d = p[j] &- 48
                if d > 9 { break }
                if significant < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(d)
                    significant += 1
                } else {
                    exp10 += 1
                    if d != 0 { truncated = true }
                }
                j += 1
            }
        } else {
            return i
        }
        if j < n && p[j] == UInt8(ascii: ".") {
            j += 1
            let start = j
            // As above. Leading zeros counted as significant here only send a long fraction to
            // the loop sooner; the mantissa and exponent are the same either way.
            while j + 8 <= n {
                let (k, v) = eightDigits(p.word(at: j))
                if significant + k > 19 { break }
                mantissa = mantissa &* pow10Int(k) &+ v
                significant += k
                exp10 -= k
                j += k
                if k < 8 { break }
            }
            while j < n {
                let d = p[j] &- 48
                if d > 9 { break }
                if mantissa == 0 && d == 0 {
                    exp10 -= 1
                } else if significant < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(d)
                    significant += 1
                    exp10 -= 1
                } else if d != 0 {
                    truncated = true
                }
                j += 1
            }
            guard j > start else { return i }
        }
        if j < n && (p[j] | 0x20) == UInt8(ascii: "e") {
            j += 1
            var expNegative = false
            if j < n && (p[j] == UInt8(ascii: "+") || p[j] == UInt8(ascii: "-")) {
                expNegative = p[j] == UInt8(ascii: "-")
                j += 1
            }
            let start = j
            var e = 0
            while j < n {
                let d = p[j] &- 48
                if d > 9 { break }
                if e < 100_000 { e = e * 10 + Int(d) }
                j += 1
            }
            guard j > start else { return i }
            exp10 += expNegative ? -e : e
        }

        if mantissa == 0 {
            value = negative ? -0.0 : 0.0
            return j
        }
        if !truncated && mantissa <= 1 << 53 {
            if exp10 == 0 {
                let v = Double(mantissa)
                value = negative ? -v : v
                return j
            }
            if exp10 > 0 && exp10 <= 22 {
                let v = Double(mantissa) * pow10(exp10)
                value = negative ? -v : v
                return j
            }
            if exp10 < 0 && exp10 >= -22 {
                let v = Double(mantissa) / pow10(-exp10)
                value = negative ? -v : v
                return j
            }
        }
        value = slowPath(p, i..<j)
        return j
    }

    /// `strtod` on a NUL-terminated copy of the number's bytes, `p[range]`.
    @inline(never)
    package static func slowPath(_ p: PaddedBytes, _ range: Range<Int>) -> Double {
        p.withCString(range) { strtod($0, nil) }
    }

    /// Parses bytes that must be exactly one number: a JSON number, optionally `+`-signed, or the
    /// non-finite spellings `NaN`, `Infinity`, `inf` (any case, optionally signed).
    /// Returns `false` when the bytes are not a number.
    @inlinable
    package static func parseWhole(_ p: PaddedBytes, _ n: Int, _ value: inout Double) -> Bool {
        guard n > 0 else { return false }
        var start = 0
        if p[0] == UInt8(ascii: "+") && n > 1 && p[1] != UInt8(ascii: "-") { start = 1 }
        if parse(p.dropFirst(start), 0, n - start, &value) == n - start { return true }
        if let special = nonFiniteWord(p, 0, n), special.end == n {
            value = special.value
            return true
        }
        return false
    }

    /// Recognises `NaN`, `Infinity`, `-Infinity`, `inf`, `-inf` (as Python's `json` writes them)
    /// at `p[i]`, so that such records are rejected as non-finite rather than malformed.
    @inlinable
    package static func nonFiniteWord(_ p: PaddedBytes, _ i: Int, _ n: Int) -> (value: Double, end: Int)? {
        var j = i
        var negative = false
        if j < n && (p[j] == UInt8(ascii: "-") || p[j] == UInt8(ascii: "+")) {
            negative = p[j] == UInt8(ascii: "-")
            j += 1
        }
        @inline(__always) func matches(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard n - j >= count else { return false }
            let w = word.utf8Start
            for k in 0..<count where (p[j + k] | 0x20) != w[k] { return false }
            return true
        }
        if matches("nan") { return (.nan, j + 3) }
        if matches("infinity") { return (negative ? -.infinity : .infinity, j + 8) }
        if matches("inf") { return (negative ? -.infinity : .infinity, j + 3) }
        return nil
    }
}
