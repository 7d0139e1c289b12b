import GeotriggerCore

extension PaddedBytes {
    /// The length of the line break at `i` (below `count`): 1 for LF, 2 for CR LF, else 0.
    @inline(__always)
    func lineBreakLength(at i: Int) -> Int {
        if self[i] == 0x0A { return 1 }
        return self[i] == 0x0D && i + 1 < count && self[i + 1] == 0x0A ? 2 : 0
    }
}

/// The pieces of the plain-line paths of `NDJSONDecoder` and `CSVDecoder`: the NDJSON keys as
/// little-endian words (a test holds them equal to their spellings) and the number and
/// device-name scanners both use.
enum PlainLine {
    static let braceT: UInt64 = 0x3A22_7422_7B  // {"t":
    static let commaDevice: UInt64 = 0x6563_6976_6564_222C  // ,"device
    static let quoteColonQuote: UInt64 = 0x22_3A22  // ":"
    static let quoteLat: UInt64 = 0x3A22_7461_6C22_2C22  // ","lat":
    static let commaLon: UInt64 = 0x3A_226E_6F6C_222C  // ,"lon":
    static let commaAccura: UInt64 = 0x6172_7563_6361_222C  // ,"accura
    static let cyColon: UInt64 = 0x3A22_7963  // cy":
    // The keys of the spaced or reordered layout (`NDJSONPlainFix.flexibleFixBrace`), each read
    // at the byte after its opening quote.
    static let tQuote: UInt64 = 0x2274  // t"
    static let deviceQuote: UInt64 = 0x22_6563_6976_6564  // device"
    static let latQuote: UInt64 = 0x2274_616C  // lat"
    static let lonQuote: UInt64 = 0x226E_6F6C  // lon"
    static let accuracy: UInt64 = 0x7963_6172_7563_6361  // accuracy
    static let mask2: UInt64 = 0xFFFF
    static let mask3: UInt64 = 0xFF_FFFF
    static let mask4: UInt64 = 0xFFFF_FFFF
    static let mask5: UInt64 = 0xFF_FFFF_FFFF
    static let mask7: UInt64 = 0xFF_FFFF_FFFF_FFFF

    /// The high bit of each byte of `w` equal to `b` is set in the result, exactly up to the first
    /// such byte (bits above it may be set spuriously, by borrows).
    @inline(__always)
    static func bytesEqual(_ w: UInt64, _ b: UInt8) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let x = w ^ (ones &* UInt64(b))
        return (x &- ones) & ~x & 0x8080_8080_8080_8080
    }

    /// The high bit of the first byte of `w` (lowest) that cannot be in a plain device name — a
    /// quote, a backslash, a control byte or one outside ASCII's printable range — is the lowest
    /// set bit of the result (0: none). Bits above it may be set spuriously (borrows), never
    /// below: each test below is exact up to its own first hit.
    @inline(__always)
    static func specialBytes(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func zeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let quote = zeroByte(w ^ (ones &* 0x22))
        let backslash = zeroByte(w ^ (ones &* 0x5C))
        let control = (w &- ones &* 0x20) & ~w & highs
        let high = (w | zeroByte(w ^ (ones &* 0x7F))) & highs
        return quote | backslash | control | high
    }

    /// Where a plain device name starting at `p[from]` ends: the index of its first byte that is
    /// `also` or that no plain name holds (`specialBytes`), found 8 bytes at a time, or -1 if
    /// there is none before `n`. Reads words only from indices below `n`.
    @inline(__always)
    static func nameEnd(_ p: PaddedBytes, from: Int, _ n: Int, also: UInt8) -> Int {
        var i = from
        while i < n {
            let w = p.word(at: i)
            let stop = specialBytes(w) | bytesEqual(w, also)
            if stop != 0 {
                let end = i + stop.trailingZeroBitCount >> 3
                return end < n ? end : -1
            }
            i += 8
        }
        return -1
    }

    /// `number`, remembering the last number it read that took 8 to 15 bytes, with the byte
    /// after it: readings of one tick share their time, so the next line's time is taken from
    /// here when the same bytes (the terminator included, so the number ends at the same place)
    /// stand at its start. The words at `at` and `at + 8` are read only from a line longer than
    /// `at + 15` bytes, so never past it; shorter ones take `number`.
    struct RepeatedNumber {
        private var words: (UInt64, UInt64) = (0, 0)
        private var mask: UInt64 = 0
        /// 0: none yet.
        private var length = 0
        private var value = 0.0

        @inline(__always)
        mutating func number(_ p: PaddedBytes, _ at: Int, _ n: Int, _ v: inout Double) -> Int {
            guard n > at &+ 15 else { return PlainLine.number(p, at, n, &v) }
            let w0 = p.word(at: at), w1 = p.word(at: at &+ 8)
            if length > 0 && w0 == words.0 && w1 & mask == words.1 && at &+ length < n {
                v = value
                return at &+ length
            }
            let end = PlainLine.number(p, at, n, &v)
            let count = end &- at
            if end > 0 && count >= 8 && count <= 15 {
                // The number and the byte after it: 9 to 16 bytes, the second word's low 1 to 8.
                let m = UInt64.max >> (64 &- 8 &* (count &- 7))
                words = (w0, w1 & m)
                mask = m
                length = count
                value = v
            }
            return end
        }
    }

    /// A number at `p[i]` written the usual way: `-?D+(.F+)?` with no leading zero, at most 15
    /// digits in all and at most 7 after the point, followed by neither a digit nor an exponent,
    /// and ending before `n`. Its digits are then an exact integer m below 10¹⁵ and its value
    /// m / 10ᵏ one correctly rounded division (Clinger), the same bits `NumberParser.parse`
    /// gives. Returns the index after it, or -1 for anything else (which the general path
    /// decides). Words are read only from indices below `n`, so at most 8 bytes past it. Index
    /// sums stay below `n` + 16, so they are added without overflow checks. Transparent, so it is
    /// inlined at each of its call sites (`@inline(__always)` left it a call at four).
    @_transparent
    static func number(_ p: PaddedBytes, _ i: Int, _ n: Int, _ value: inout Double) -> Int {
        guard i &+ 1 < n else { return -1 }
        let negative = p[i] == UInt8(ascii: "-")
        let j = negative ? i &+ 1 : i
        let w0 = p.word(at: j)
        var k = NumberParser.digitRun(w0)
        // The leading byte first: it is almost never a zero, so the digit count (1 or 2 at random
        // for an accuracy) is not branched on.
        guard k > 0, p[j] != UInt8(ascii: "0") || k == 1 else { return -1 }
        var end = j &+ k
        guard end < n else { return -1 }
        // The digits' value; while the whole part is one word (k < 8) it is made only once it is
        // known whether the fraction joins it in one conversion.
        var m: UInt64 = 0
        if k == 8 {
            let (k2, v2) = NumberParser.eightDigits(p.word(at: end))
            guard k2 < 8 else { return -1 }
            m = NumberParser.runValue(w0, 8) &* NumberParser.pow10Int(k2) &+ v2
            k &+= k2
            end &+= k2
            guard end < n else { return -1 }
        }
        var scale = 0
        if p[end] == UInt8(ascii: ".") {
            let w1 = p.word(at: end &+ 1)
            let k3 = NumberParser.digitRun(w1)
            guard k3 > 0, k3 < 8, k &+ k3 <= 15 else { return -1 }
            if (w1 ^ 0x3030_3030_3030_3030) << UInt64(64 &- 8 &* k3) == 0 {
                // A fraction of zeros ("9.0", "1700000000.0"): the whole part's value, exactly
                // what the division would give, without it.
                if k < 8 { m = NumberParser.runValue(w0, k) }
            } else {
                if k &+ k3 <= 8 {
                    // The usual coordinate (48.282320): both runs in one word, one conversion.
                    m = NumberParser.joinedDigits(w0, k, w1, k3)
                } else {
                    m = (k < 8 ? NumberParser.runValue(w0, k) : m) &* NumberParser.pow10Int(k3)
                        &+ NumberParser.runValue(w1, k3)
                }
                scale = k3
            }
            end &+= 1 &+ k3
            guard end < n else { return -1 }
        } else if k < 8 {
            m = NumberParser.runValue(w0, k)
        }
        guard p[end] | 0x20 != UInt8(ascii: "e") else { return -1 }
        // m < 10¹⁵ converts exactly, and as a signed integer in one instruction.
        let exact = Double(Int64(bitPattern: m))
        let magnitude = scale == 0 ? exact : exact / NumberParser.pow10Small(scale)
        value = negative ? -magnitude : magnitude
        return end
    }
}
