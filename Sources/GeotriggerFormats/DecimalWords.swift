import GeotriggerCore

/// Decimal digits read eight at a time from a padded field (SWAR: SIMD within a word), for the
/// numbers of a receiver's sentences (`NMEAFields`).
///
/// Why: every fix carries a latitude and a longitude of ten to thirteen characters, a time of day
/// and a few small numbers; read a byte at a time, with a test and a multiply-add each, they cost
/// more than the rest of the sentence. Eight ASCII digits loaded as one little-endian word are
/// checked in one step (`nonDigits`) and turned into their value by three multiplies (`value`).
///
/// Reads up to sixteen bytes from a field's start: only for a field of at most sixteen bytes with
/// sixteen bytes of padding after it (a line of the reader's buffer); `NMEAFields.parts` reads
/// any other a byte at a time, with the same result.
enum DecimalWords {
    /// Whether `parts` may read `f`: at most sixteen bytes, sixteen readable after them.
    @inline(__always)
    static func fits(_ f: PaddedBytes) -> Bool { f.count <= 16 && f.padding >= 16 }

    /// The high bit of each byte of `w` that is not an ASCII digit.
    @inline(__always)
    static func nonDigits(_ w: UInt64) -> UInt64 {
        // A digit XOR "0" is 0-9: adding 0x76 to its low seven bits leaves the high bit clear,
        // as it does for no other byte below 0x80; bytes from 0x80 have it set already. The
        // low seven bits plus 0x76 never carry into the next byte.
        let x = w ^ 0x3030_3030_3030_3030
        return ((x & 0x7F7F_7F7F_7F7F_7F7F) &+ 0x7676_7676_7676_7676 | x) & 0x8080_8080_8080_8080
    }

    /// The bytes of a word below byte `n` (0...8).
    @inline(__always)
    static func below(_ n: Int) -> UInt64 { n >= 8 ? ~0 : (1 &<< UInt64(8 &* n)) &- 1 }

    /// The value of the first `n` (1...8) bytes of `w`, all digits, the first byte the most
    /// significant: shifted up so the bytes below them are leading zeros, then pairs, fours and
    /// eights of digits combined by one multiply each.
    @inline(__always)
    static func value(_ w: UInt64, digits n: Int) -> UInt64 {
        var v = (w & 0x0F0F_0F0F_0F0F_0F0F) &<< UInt64(8 &* (8 &- n))
        v = (v &* 2561) &>> 8
        v = ((v & 0x00FF_00FF_00FF_00FF) &* 6_553_601) &>> 16
        return ((v & 0x0000_FFFF_0000_FFFF) &* 42_949_672_960_001) &>> 32
    }

    /// The value of the `n` (0...16) digits of `f` from `i` on; `i + 16` must be readable.
    @inline(__always)
    static func value(_ f: PaddedBytes, from i: Int, digits n: Int) -> UInt64 {
        if n == 0 { return 0 }
        if n <= 8 { return value(f.word(at: i), digits: n) }
        return value(f.word(at: i), digits: 8) &* NumberParser.pow10Int(n &- 8)
            &+ value(f.word(at: i &+ 8), digits: n &- 8)
    }

    /// `NMEAFields.parts` of a field that `fits`: digits, then optionally a point and digits.
    @inline(__always)
    static func parts(_ f: PaddedBytes) -> (whole: UInt64, fraction: UInt64, digits: Int)? {
        let n = f.count
        guard n > 0 else { return nil }
        var low = nonDigits(f.word(at: 0)) & below(n)
        var high = n > 8 ? nonDigits(f.word(at: 8)) & below(n &- 8) : 0
        if low == 0 && high == 0 { return (value(f, from: 0, digits: n), 0, 0) }
        // The first byte that is no digit must be the point, and the only one.
        let point = low != 0 ? low.trailingZeroBitCount &>> 3 : 8 &+ high.trailingZeroBitCount &>> 3
        guard f[point] == UInt8(ascii: "."), n > 1 else { return nil }
        if low != 0 { low &= low &- 1 } else { high &= high &- 1 }
        guard low == 0 && high == 0 else { return nil }
        let digits = n &- point &- 1
        return (value(f, from: 0, digits: point), value(f, from: point &+ 1, digits: digits), digits)
    }

    /// `NMEAFields.smallInteger` of a field that `fits`: 1 to 4 digits.
    @inline(__always)
    static func smallInteger(_ f: PaddedBytes) -> Int? {
        let n = f.count
        guard n >= 1 && n <= 4 else { return nil }
        let w = f.word(at: 0)
        guard nonDigits(w) & below(n) == 0 else { return nil }
        return Int(value(w, digits: n))
    }
}
