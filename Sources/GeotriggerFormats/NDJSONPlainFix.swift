import GeotriggerCore

/// The plain-fix grammar of NDJSON readings (`NDJSONDecoder`'s fast lane): a line that is
/// exactly `{"t":T,"device":"D","lat":Y,"lon":X}`, or the same with `,"accuracy":A`, in any
/// layout of its members. A value: its only state is the last time read (`times`), so a copy
/// decodes the same lines to the same fixes on another thread (`DecodeAhead`).
struct NDJSONPlainFix: PlainLineParser {
    /// The last plain line's time, reused by the next line of the same tick.
    private var times = PlainLine.RepeatedNumber()

    /// The time at `p[5]` (after `{"t":`), as `PlainLine.RepeatedNumber` reads it.
    @inline(__always)
    private mutating func plainTime(_ p: PaddedBytes, _ n: Int, _ t: inout Double) -> Int {
        times.number(p, 5, n, &t)
    }

    /// The plain-line grammar over `p[0..<n]`: the index of the closing brace, every
    /// value valid and every number ending before `n`, or -1. Bytes at or past `n` decide nothing:
    /// the line's slack (`LineReader.slack`, 16 readable bytes past `n`) lets keys be compared and
    /// digits and device bytes read 8 at a time, but every key and number must end before `n`.
    ///
    /// Keys are compared as whole words (`PlainLine`), the device's bytes are scanned a word at a
    /// time for the first quote, backslash or byte outside printable ASCII, and numbers take
    /// `PlainLine.number`, which declines anything but the usual decimals. Whatever it declines,
    /// the general path decides.
    ///
    /// A line that is not in that exact layout from its first bytes (spaces after the colons and
    /// commas, as Python's `json.dumps` writes, or the members in another order) is tried by
    /// `flexibleFixBrace`; one that is, but goes on otherwise (a sighting, a control record),
    /// goes straight to the general path, not through a second lane that would decline it too.
    @inline(__always)
    mutating func brace(_ p: PaddedBytes, _ n: Int, _ fix: inout PlainFix) -> Int {
        let brace = compactFixBrace(p, n, &fix)
        return brace == -2 ? flexibleFixBrace(p, n, &fix) : brace
    }

    /// `brace`'s exact layout: the brace's index, or -1, or -2 when the line differs
    /// from it in its first member (`{"t":` and a number) or by a space before its closing brace.
    @inline(__always)
    private mutating func compactFixBrace(_ p: PaddedBytes, _ n: Int, _ fix: inout PlainFix) -> Int {
        typealias L = PlainLine
        @inline(__always) func word(_ at: Int) -> UInt64 { p.word(at: at) }
        guard word(0) & L.mask5 == L.braceT else { return -2 }
        var i = plainTime(p, n, &fix.t)
        guard i > 0 else { return -2 }
        guard InputLimits.timeIsWritable(fix.t), i + 11 <= n, word(i) == L.commaDevice, word(i + 8) & L.mask3 == L.quoteColonQuote else { return -1 }
        let deviceStart = i + 11
        i = L.nameEnd(p, from: deviceStart, n, also: UInt8(ascii: "\""))
        guard i >= 0 else { return -1 }
        fix.deviceStart = deviceStart
        fix.deviceCount = i - deviceStart
        guard fix.deviceCount > 0, InputLimits.identifierFits(byteCount: fix.deviceCount), i + 8 <= n,
              word(i) == L.quoteLat
        else { return -1 }
        i = L.number(p, i + 8, n, &fix.latitude)
        guard i > 0, fix.latitude >= -90 && fix.latitude <= 90, i + 7 <= n, word(i) & L.mask7 == L.commaLon else {
            return -1
        }
        i = L.number(p, i + 7, n, &fix.longitude)
        guard i > 0, fix.longitude >= -180 && fix.longitude <= 180 else { return -1 }
        if i + 12 <= n && word(i) == L.commaAccura && word(i + 8) & L.mask4 == L.cyColon {
            i = L.number(p, i + 12, n, &fix.accuracy)
            guard i > 0, fix.accuracy >= 0 else { return -1 }
        }
        guard i < n else { return -1 }
        // Every member read and a space before the brace: the other layout's to try (another
        // member, as a sighting's or a control record's, is the general path's at once).
        if p[i] == 0x20 || p[i] == 0x09 { return -2 }
        return p[i] == UInt8(ascii: "}") ? i : -1
    }

    /// The same fixes, the same values and checks, in any layout of their members: spaces or
    /// tabs around the colons and commas and after the brace, the five keys in any order (`t`,
    /// `device`, `lat` and `lon` once each, `accuracy` at most once). Anything else (another key,
    /// a repeated one, a value written otherwise) gives -1 and the general path decides.
    @inline(__always)
    private mutating func flexibleFixBrace(_ p: PaddedBytes, _ n: Int, _ fix: inout PlainFix) -> Int {
        typealias L = PlainLine
        @inline(__always) func spaces(_ from: Int) -> Int {
            var i = from
            while i < n, p[i] == 0x20 || p[i] == 0x09 { i &+= 1 }
            return i
        }
        guard n > 0, p[0] == UInt8(ascii: "{") else { return -1 }
        var i = spaces(1)
        var seen: UInt8 = 0
        while true {
            // The key: its bytes after the quote compared as one word, all of them before `n`.
            guard i < n, p[i] == UInt8(ascii: "\"") else { return -1 }
            let w = p.word(at: i &+ 1)
            let key: UInt8, after: Int
            if w & L.mask2 == L.tQuote {
                (key, after) = (1, i &+ 3)
            } else if w & L.mask7 == L.deviceQuote {
                (key, after) = (2, i &+ 8)
            } else if w & L.mask4 == L.latQuote {
                (key, after) = (4, i &+ 5)
            } else if w & L.mask4 == L.lonQuote {
                (key, after) = (8, i &+ 5)
            } else if w == L.accuracy, i &+ 9 < n, p[i &+ 9] == UInt8(ascii: "\"") {
                (key, after) = (16, i &+ 10)
            } else {
                return -1
            }
            guard after < n, seen & key == 0 else { return -1 }
            seen |= key
            i = spaces(after)
            guard i < n, p[i] == UInt8(ascii: ":") else { return -1 }
            i = spaces(i &+ 1)
            guard i < n else { return -1 }
            switch key {
            case 1:
                i = times.number(p, i, n, &fix.t)
                guard i > 0, InputLimits.timeIsWritable(fix.t) else { return -1 }
            case 2:
                guard p[i] == UInt8(ascii: "\"") else { return -1 }
                let start = i &+ 1
                i = L.nameEnd(p, from: start, n, also: UInt8(ascii: "\""))
                guard i >= 0, p[i] == UInt8(ascii: "\"") else { return -1 }
                fix.deviceStart = start
                fix.deviceCount = i &- start
                guard fix.deviceCount > 0, InputLimits.identifierFits(byteCount: fix.deviceCount) else { return -1 }
                i &+= 1
            case 4:
                i = L.number(p, i, n, &fix.latitude)
                guard i > 0, fix.latitude >= -90 && fix.latitude <= 90 else { return -1 }
            case 8:
                i = L.number(p, i, n, &fix.longitude)
                guard i > 0, fix.longitude >= -180 && fix.longitude <= 180 else { return -1 }
            default:
                i = L.number(p, i, n, &fix.accuracy)
                guard i > 0, fix.accuracy >= 0 else { return -1 }
            }
            i = spaces(i)
            guard i < n else { return -1 }
            if p[i] == UInt8(ascii: ",") {
                i = spaces(i &+ 1)
                continue
            }
            guard p[i] == UInt8(ascii: "}"), seen & 15 == 15 else { return -1 }
            return i
        }
    }

    /// `brace` on bytes that run on past the line (a read buffer, a mapped file): the length of the
    /// line if it is a plain fix whose brace is followed by a newline or CR LF within `available`
    /// bytes, the fix in `fix`; else -1 with nothing decided.
    @inline(__always)
    mutating func lineLength(_ p: PaddedBytes, _ available: Int, _ fix: inout PlainFix) -> Int {
        let brace = self.brace(p, available, &fix)
        guard brace >= 0, brace + 1 < available else { return -1 }
        let ends = p[brace + 1] == UInt8(ascii: "\n")
            || brace + 2 < available && p[brace + 1] == UInt8(ascii: "\r") && p[brace + 2] == UInt8(ascii: "\n")
        return ends ? brace + 1 : -1
    }
}
