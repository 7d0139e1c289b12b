import GeotriggerCore

/// Byte-level JSON scanning helpers shared by the NDJSON decoder: strings, escapes and skipping
/// whole values (with full validation) without building anything.
///
/// Functions return the index after what they scanned, or a negative error code.
enum JSONScan {
    static let malformed = -1
    static let invalidUTF8 = -2
    static let maxDepth = 256

    @inline(__always)
    static func skipWhitespace(_ p: PaddedBytes, _ i: Int, _ n: Int) -> Int {
        var j = i
        while j < n {
            let c = p[j]
            if c == 0x20 || c == 0x09 || c == 0x0D || c == 0x0A { j += 1 } else { break }
        }
        return j
    }

    @inline(__always)
    static func isHex(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 102)
    }

    /// Scans a string body starting just after its opening quote. Returns the index of the closing
    /// quote. Checks escapes, control characters and UTF-8; sets `hasEscape` when a `\` was seen.
    @inline(__always)
    static func scanString(_ p: PaddedBytes, _ i: Int, _ n: Int, _ hasEscape: inout Bool) -> Int {
        var j = i
        while j < n {
            let c = p[j]
            if c == UInt8(ascii: "\"") { return j }
            if c == UInt8(ascii: "\\") {
                hasEscape = true
                guard j + 1 < n else { return malformed }
                switch p[j + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                     UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    j += 2
                case UInt8(ascii: "u"):
                    guard j + 5 < n, isHex(p[j + 2]), isHex(p[j + 3]), isHex(p[j + 4]), isHex(p[j + 5])
                    else { return malformed }
                    j += 6
                default:
                    return malformed
                }
                continue
            }
            if c < 0x20 { return malformed }
            if c >= 0x80 {
                let len = utf8SequenceLength(p, j, n)
                if len == 0 { return invalidUTF8 }
                j += len
                continue
            }
            j += 1
        }
        return malformed
    }

    @inline(__always)
    private static func hex4(_ p: PaddedBytes, _ j: Int) -> UInt32 {
        var v: UInt32 = 0
        for k in 0..<4 {
            let c = p[j + k]
            let d: UInt32 = c <= 57 ? UInt32(c &- 48) : UInt32((c | 0x20) &- 87)
            v = v << 4 | d
        }
        return v
    }

    /// Resolves the escapes of an already scanned string body `p[i..<end]` into `out`.
    /// Returns the number of bytes written, or `invalidUTF8` for an unpaired surrogate.
    static func unescape(_ p: PaddedBytes, _ i: Int, _ end: Int, _ out: ByteWriter) -> Int {
        var j = i
        var o = 0
        while j < end {
            let c = p[j]
            if c != UInt8(ascii: "\\") {
                out[o] = c
                o += 1
                j += 1
                continue
            }
            let e = p[j + 1]
            j += 2
            switch e {
            case UInt8(ascii: "b"): out[o] = 0x08; o += 1
            case UInt8(ascii: "f"): out[o] = 0x0C; o += 1
            case UInt8(ascii: "n"): out[o] = 0x0A; o += 1
            case UInt8(ascii: "r"): out[o] = 0x0D; o += 1
            case UInt8(ascii: "t"): out[o] = 0x09; o += 1
            case UInt8(ascii: "u"):
                var cp = hex4(p, j)
                j += 4
                if cp >= 0xD800 && cp <= 0xDBFF {
                    guard j + 6 <= end, p[j] == UInt8(ascii: "\\"), p[j + 1] == UInt8(ascii: "u") else { return invalidUTF8 }
                    let low = hex4(p, j + 2)
                    guard low >= 0xDC00 && low <= 0xDFFF else { return invalidUTF8 }
                    j += 6
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                } else if cp >= 0xDC00 && cp <= 0xDFFF {
                    return invalidUTF8
                }
                // A \uXXXX escape (6 bytes, or 12 for a pair) always encodes to fewer UTF-8 bytes.
                if cp < 0x80 {
                    out[o] = UInt8(cp); o += 1
                } else if cp < 0x800 {
                    out[o] = UInt8(0xC0 | cp >> 6)
                    out[o + 1] = UInt8(0x80 | cp & 0x3F)
                    o += 2
                } else if cp < 0x10000 {
                    out[o] = UInt8(0xE0 | cp >> 12)
                    out[o + 1] = UInt8(0x80 | cp >> 6 & 0x3F)
                    out[o + 2] = UInt8(0x80 | cp & 0x3F)
                    o += 3
                } else {
                    out[o] = UInt8(0xF0 | cp >> 18)
                    out[o + 1] = UInt8(0x80 | cp >> 12 & 0x3F)
                    out[o + 2] = UInt8(0x80 | cp >> 6 & 0x3F)
                    out[o + 3] = UInt8(0x80 | cp & 0x3F)
                    o += 4
                }
            default:  // " \ /
                out[o] = e
                o += 1
            }
        }
        return o
    }

    @inline(__always)
    static func literal(_ p: PaddedBytes, _ i: Int, _ n: Int, _ word: StaticString) -> Int {
        let count = word.utf8CodeUnitCount
        guard n - i >= count, p.matches(word, at: i) else { return malformed }
        return i + count
    }

    /// Skips one JSON value at `p[i]` (no leading whitespace), validating it. Accepts the
    /// non-standard `NaN` / `Infinity` that Python's `json` writes.
    static func skipValue(_ p: PaddedBytes, _ i: Int, _ n: Int, depth: Int = 0) -> Int {
        guard i < n else { return malformed }
        switch p[i] {
        case UInt8(ascii: "\""):
            var esc = false
            let e = scanString(p, i + 1, n, &esc)
            return e < 0 ? e : e + 1
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < maxDepth else { return malformed }
            let isObject = p[i] == UInt8(ascii: "{")
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            var j = skipWhitespace(p, i + 1, n)
            if j < n && p[j] == close { return j + 1 }
            while true {
                if isObject {
                    guard j < n, p[j] == UInt8(ascii: "\"") else { return malformed }
                    var esc = false
                    let e = scanString(p, j + 1, n, &esc)
                    if e < 0 { return e }
                    j = skipWhitespace(p, e + 1, n)
                    guard j < n, p[j] == UInt8(ascii: ":") else { return malformed }
                    j = skipWhitespace(p, j + 1, n)
                }
                j = skipValue(p, j, n, depth: depth + 1)
                if j < 0 { return j }
                j = skipWhitespace(p, j, n)
                guard j < n else { return malformed }
                if p[j] == close { return j + 1 }
                guard p[j] == UInt8(ascii: ",") else { return malformed }
                j = skipWhitespace(p, j + 1, n)
            }
        case UInt8(ascii: "t"): return literal(p, i, n, "true")
        case UInt8(ascii: "f"): return literal(p, i, n, "false")
        case UInt8(ascii: "n"): return literal(p, i, n, "null")
        default:
            var v = 0.0
            let e = NumberParser.parse(p, i, n, &v)
            if e > i { return e }
            if let w = NumberParser.nonFiniteWord(p, i, n) { return w.end }
            return malformed
        }
    }
}
