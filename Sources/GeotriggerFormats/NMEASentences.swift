import CLineScan
import GeotriggerCore
import GeotriggerRuntime

/// NMEA 0183 as GPS receivers write it (SPEC §3, "Real receivers"): what a line is, the fields of
/// a sentence, and the sentences of one receiver cycle made into one fix (`NMEACycles`).
///
/// A sentence is `$` `TTSSS` `,` fields `*HH`: a two-letter talker (GP, GN, GL, GA, BD, GB, GQ…)
/// and a three-letter type, then comma-separated fields, then the XOR of every byte between `$`
/// and `*` in hexadecimal. Only RMC, GGA, GLL and ZDA carry what a fix needs; every other line is
/// passed over and counted by kind (`NMEALine.Kind`).
enum NMEALine {
    enum Kind {
        /// Empty, or only spaces.
        case blank
        /// A `#` line (the logs' headers, a logger's notes).
        case comment
        /// A sentence of a type no fix needs (GSA, GSV, VTG, a vendor's `$P…`), checked or not:
        /// its type (the vendor's whole address for `$P…`).
        case otherSentence(ShortKind)
        /// Bytes that are not a sentence (a binary vendor packet between sentences, noise).
        case noise
        /// An RMC, GGA, GLL or ZDA whose checksum does not match its bytes.
        case badChecksum
        /// An RMC, GGA, GLL or ZDA with a good checksum, or none (some receivers write none, as
        /// NMEA 0183 once allowed; a line cut short loses the fields after the cut, and a fix
        /// needs its last ones): its fields, after its type.
        case fixSentence(NMEASentenceType, fields: NMEAFields)
    }

    /// What `line` (without its line end) is. A sentence starts at the line's last `$` (binary
    /// bytes before it, as a vendor packet leaves them, are passed over with it) and ends at the
    /// line's end, spaces and a CR taken off.
    @inline(__always)
    static func classify(_ line: ByteView) -> Kind { classify(PaddedBytes(line), framed: nil) }

    /// A line as `geotrigger_frame_line` found it at the start of the reader's buffer, in the
    /// pass that found its end: what `scan` and `xor` would find, so neither is run again.
    struct Frame {
        /// The line's length without its end, and how many bytes end it (newline, or CR LF).
        let length: Int, terminator: Int
        /// The line's last `$` (-1 if none) and the commas after it.
        let dollar: Int
        let commas: CommaMap
        /// The XOR of the line's bytes after its first.
        let xorAfterFirst: UInt8
    }

    /// The first line of `buffered` when it ends within 128 bytes (`geotrigger_frame_line`); nil
    /// otherwise, or where there is no SSE: the line is then read as any other.
    @inline(__always)
    static func frame(_ buffered: PaddedBytes) -> Frame? {
        // The C function loads sixteen bytes at a time from the buffer's start on, up to fifteen
        // past its end: legal only in the padding.
        precondition(buffered.padding >= 16)
        guard let base = buffered.bytes.unsafeBytes.baseAddress else { return nil }
        let r = geotrigger_frame_line(base.assumingMemoryBound(to: UInt8.self), Int64(buffered.count))
        guard r.length >= 0 else { return nil }
        return Frame(length: Int(r.length), terminator: Int(r.terminator), dollar: Int(r.dollar),
                     commas: CommaMap(low: r.low, high: r.high), xorAfterFirst: r.xor_after_first)
    }

    /// `classify(_:)` of a line that may be padded (its fields' numbers are then read a word at
    /// a time, `DecimalWords`), with what `frame` found of it already (nil: found here).
    @inline(__always)
    static func classify(_ padded: PaddedBytes, framed frame: Frame?) -> Kind {
        let line = padded.bytes
        // Read without a check a byte: every index below is within `0..<end`, `end` <= the count.
        let p = line.unsafeBytes
        var end = line.count
        while end > 0 && (p[end - 1] == 0x20 || p[end - 1] == 0x0D || p[end - 1] == 0x09) { end -= 1 }
        var first = 0
        while first < end && (p[first] == 0x20 || p[first] == 0x09) { first += 1 }
        if first == end { return .blank }
        if p[first] == UInt8(ascii: "#") { return .comment }
        // A line that begins as a fix sentence has its commas mapped (another `$` later on it
        // may begin a sentence of another type: the map is of the whole line all the same).
        let dollar: Int, commas: CommaMap?
        if let frame {
            // The line's last `$` and commas: none is among the spaces and CR trimmed off.
            (dollar, commas) = (frame.dollar, frame.commas)
        } else {
            let fixLike = end - first >= 6 && p[first] == UInt8(ascii: "$")
                && NMEASentenceType(p[first + 3], p[first + 4], p[first + 5]) != nil
            (dollar, commas) = scan(line, from: first, to: end, mapCommas: fixLike)
        }
        guard dollar >= 0, end - dollar >= 7 else { return .noise }
        // The address: two letters of talker, three of type (a fix sentence's are letters).
        let type = NMEASentenceType(p[dollar + 3], p[dollar + 4], p[dollar + 5])
        for j in (dollar + 1)...(dollar + (type == nil ? 5 : 2)) where !isUpperAlphanumeric(p[j]) { return .noise }
        let star = end >= 3 && p[end - 3] == UInt8(ascii: "*") ? end - 3 : -1
        guard let type, p[dollar + 1] != UInt8(ascii: "P") else {
            // Three letters of type, or a vendor's whole address (at most five: a word, no string).
            // Every byte before `dollar + 6` is alphanumeric (checked above).
            let from = p[dollar + 1] == UInt8(ascii: "P") ? dollar + 1 : dollar + 3
            var to = dollar + 6
            while to < end && to < from + 5 && isUpperAlphanumeric(p[to]) { to += 1 }
            guard let kind = ShortKind(line[from..<to]) else { return .noise }
            return .otherSentence(kind)
        }
        guard star > dollar else { return .fixSentence(type, fields: NMEAFields(padded, from: dollar + 6, to: end, commas: commas)) }
        guard let high = hexValue(p[end - 2]), let low = hexValue(p[end - 1]) else { return .badChecksum }
        // The checksum covers the bytes between `$` and `*`: when the frame has XORed all after
        // the line's first, and the `$` is the first, those from the `*` on are XORed back out.
        let sum: UInt8
        if let frame, dollar == 0 {
            var x = frame.xorAfterFirst
            for i in star..<line.count { x ^= p[i] }
            sum = x
        } else {
            sum = xor(line, from: dollar + 1, to: star)
        }
        guard sum == high << 4 | low else { return .badChecksum }
        // After the address: the fields, each after a comma.
        return .fixSentence(type, fields: NMEAFields(padded, from: dollar + 6, to: star, commas: commas))
    }

    /// The lines whose commas `scan` maps: NMEA 0183 allows 82 bytes a sentence.
    static let commaMapLength = 128

    /// The index of the last `$` in `line[from..<to]` (-1 if none) and, when `mapCommas` and the
    /// line is at most `commaMapLength` bytes long, where the commas after it are (bit i set
    /// where byte i of the line is one; nil otherwise).
    ///
    /// Why in C: every line of a log is searched for its last `$`, and a fix sentence's fields
    /// are found between its commas; byte by byte, or even a word at a time, that was most of the
    /// decoder's time. SSE compares sixteen bytes at once and turns the matches into bits
    /// (`geotrigger_scan_line`), which Swift's SIMD types cannot.
    static func scan(_ line: ByteView, from: Int, to end: Int, mapCommas: Bool) -> (dollar: Int, commas: CommaMap?) {
        precondition(from >= 0 && from <= end && end <= line.count)
        guard let base = line.unsafeBytes.baseAddress, from < end else { return (-1, nil) }
        let mapped = mapCommas && end <= commaMapLength
        if !mapped {
            // Only the last `$`: searched for from the end (a sentence no fix needs, the most
            // common line of a log, is passed over once its type is known).
            return (Int(geotrigger_last_byte(base.assumingMemoryBound(to: UInt8.self), Int64(from), Int64(end),
                                             UInt8(ascii: "$"))), nil)
        }
        let r = geotrigger_scan_line(base.assumingMemoryBound(to: UInt8.self), Int64(from), Int64(end), mapped ? 1 : 0)
        return (Int(r.dollar), mapped ? CommaMap(low: r.low, high: r.high) : nil)
    }

    /// The XOR of `line[from..<to]`'s bytes (a sentence's checksum), sixteen at a time in C
    /// (`geotrigger_xor_bytes`), for the reason `scan` gives.
    static func xor(_ line: ByteView, from: Int, to end: Int) -> UInt8 {
        precondition(from >= 0 && from <= end && end <= line.count)
        guard let base = line.unsafeBytes.baseAddress, from < end else { return 0 }
        return geotrigger_xor_bytes(base.assumingMemoryBound(to: UInt8.self), Int64(from), Int64(end))
    }

    @inline(__always)
    static func isUpperAlphanumeric(_ b: UInt8) -> Bool {
        // Bit b of these 128 bits is set for 0-9 (48-57) and A-Z (65-90): one shift and test.
        let digits: UInt64 = 0x03FF_0000_0000_0000, letters: UInt64 = 0x07FF_FFFE
        return b < 64 ? (digits >> b) & 1 == 1 : b < 128 && (letters >> (b &- 64)) & 1 == 1
    }

    @inline(__always)
    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}

/// The sentences a fix is made of.
enum NMEASentenceType: Equatable {
    /// Recommended minimum: time, status A/V, position, speed, course, date.
    case rmc
    /// Fix data: time, position, quality, satellites used, HDOP, altitude.
    case gga
    /// Geographic position: position, time, status A/V.
    case gll
    /// Time and date.
    case zda

    @inline(__always)
    init?(_ a: UInt8, _ b: UInt8, _ c: UInt8) {
        switch (a, b, c) {
        case (UInt8(ascii: "R"), UInt8(ascii: "M"), UInt8(ascii: "C")): self = .rmc
        case (UInt8(ascii: "G"), UInt8(ascii: "G"), UInt8(ascii: "A")): self = .gga
        case (UInt8(ascii: "G"), UInt8(ascii: "L"), UInt8(ascii: "L")): self = .gll
        case (UInt8(ascii: "Z"), UInt8(ascii: "D"), UInt8(ascii: "A")): self = .zda
        default: return nil
        }
    }
}

/// Where a line's commas are (`NMEALine.scan`): bit i set where byte i of the line is one.
struct CommaMap {
    var low: UInt64
    var high: UInt64
}

/// A sentence's fields in order, each read once: `next()` is the text up to the next comma, with
/// the rest of the line and its padding after it.
struct NMEAFields {
    /// The sentence's line.
    let bytes: PaddedBytes
    /// The comma before the next field, or `end` when there is none.
    private var at: Int
    /// Where the fields end (the checksum's `*`, or the line's end).
    private let end: Int
    /// The line's commas from `at` on, those passed taken off (`NMEALine.scan`): the next
    /// field's end is the second lowest, not searched for byte by byte; unless `mapped` (a line
    /// too long to be mapped), when it is.
    private var low: UInt64, high: UInt64
    private let mapped: Bool

    /// The fields of `line[from..<to]`, which starts with the comma before the first field (or
    /// has none); `commas` maps none before `from`.
    init(_ line: PaddedBytes, from: Int, to end: Int, commas: CommaMap?) {
        bytes = line
        at = from < end && line[from] == UInt8(ascii: ",") ? from : end
        self.end = end
        low = commas?.low ?? 0
        high = commas?.high ?? 0
        mapped = commas != nil
    }

    /// The next field (empty when it is), or nil past the last one.
    @inline(__always)
    mutating func next() -> PaddedBytes? {
        guard at < end else { return nil }
        let start = at &+ 1
        let stop = mapped ? nextMappedComma() : Self.comma(from: start, to: end, in: bytes.bytes)
        at = stop
        // `start` <= `stop` <= `end` <= the line's count.
        return bytes.slice(start..<stop)
    }

    /// The comma after the one at `at` (the lowest in the map: off it comes, and the next is the
    /// field's end), or `end`.
    @inline(__always)
    private mutating func nextMappedComma() -> Int {
        if low != 0 { low &= low &- 1 } else { high &= high &- 1 }
        return min(low != 0 ? low.trailingZeroBitCount : high != 0 ? 64 &+ high.trailingZeroBitCount : end, end)
    }

    /// The first comma of `line[from..<end]`, or `end`: a line too long to be mapped.
    @inline(never)
    private static func comma(from: Int, to end: Int, in line: ByteView) -> Int {
        var i = from
        while i < end && line[i] != UInt8(ascii: ",") { i += 1 }
        return i
    }

    /// The next field read by `read`; nil past the last field or where `read` says nil.
    @inline(__always)
    mutating func next<T>(_ read: (PaddedBytes) -> T?) -> T? {
        guard let field = next() else { return nil }
        return read(field)
    }

    /// Passes over `n` fields (where the line's commas are mapped, by taking `n` of them off).
    @inline(__always)
    mutating func skip(_ n: Int) {
        guard mapped else {
            for _ in 0..<n { _ = next() }
            return
        }
        for _ in 0..<n where at < end { at = nextMappedComma() }
    }

    /// A decimal number (digits, at most one point, no sign), correctly rounded; nil if the field
    /// is empty or is not one.
    @inline(__always)
    static func decimal(_ f: PaddedBytes) -> Double? {
        guard let (whole, fraction, digits) = parts(f) else { return nil }
        return scaled(whole, fraction, digits)
    }

    /// The whole part, the fraction's digits as an integer and how many there are: a word at a
    /// time where the field is padded (`DecimalWords`), else a byte at a time.
    @inline(__always)
    static func parts(_ f: PaddedBytes) -> (whole: UInt64, fraction: UInt64, digits: Int)? {
        DecimalWords.fits(f) ? DecimalWords.parts(f) : parts(f.bytes)
    }

    /// `parts` a byte at a time.
    static func parts(_ f: ByteView) -> (whole: UInt64, fraction: UInt64, digits: Int)? {
        let n = f.count
        guard n > 0 && n <= 18 else { return nil }
        // Read without a check a byte: every index is below `n`.
        let p = f.unsafeBytes
        // Digits, then optionally a point and digits: at most 18 of them, so no overflow.
        var i = 0, whole: UInt64 = 0
        while i < n {
            let d = p[i] &- UInt8(ascii: "0")
            if d > 9 { break }
            whole = whole &* 10 &+ UInt64(d)
            i += 1
        }
        guard i < n else { return (whole, 0, 0) }
        guard p[i] == UInt8(ascii: ".") else { return nil }
        let point = i
        i += 1
        var fraction: UInt64 = 0
        while i < n {
            let d = p[i] &- UInt8(ascii: "0")
            guard d <= 9 else { return nil }
            fraction = fraction &* 10 &+ UInt64(d)
            i += 1
        }
        return n > 1 ? (whole, fraction, n - point - 1) : nil
    }

    /// `whole + fraction / 10^digits`, correctly rounded: both integers are exact below 2⁵³
    /// (at most 18 characters), and one division by an exact power of ten rounds once.
    static func scaled(_ whole: UInt64, _ fraction: UInt64, _ digits: Int) -> Double {
        if digits == 0 { return Double(whole) }
        let p = NumberParser.pow10Int(digits)
        return Double(whole * p + fraction) / Double(p)
    }

    /// `hhmmss[.sss]` as seconds of the day; nil unless it is one.
    static func timeOfDay(_ f: PaddedBytes) -> Double? {
        guard f.count >= 6, let (whole, fraction, digits) = parts(f),
              f[2] != UInt8(ascii: "."), f[4] != UInt8(ascii: "."), f.count == 6 || f[6] == UInt8(ascii: ".")
        else { return nil }
        let h = whole / 10_000, m = whole / 100 % 100, s = whole % 100
        guard h < 24, m < 60, s < 61 else { return nil }
        // Up to nine decimals, the seconds of the day as one quotient of integers exact in a
        // Double (`angle` says why).
        if digits <= 9 {
            let p = NumberParser.pow10Int(digits)
            // (Converted as signed integers, exact below 2⁵³: one instruction, where an
            // unsigned one takes several.)
            return Double(Int64(bitPattern: (h * 3600 + m * 60 + s) * p + fraction)) / Double(Int64(bitPattern: p))
        }
        return Double(h * 3600 + m * 60) + scaled(s, fraction, digits)
    }

    /// `ddmm.mmmm` (or `dddmm.mmmm`) and its hemisphere as signed degrees; nil unless they are,
    /// or beyond `limit` degrees.
    static func angle(_ f: PaddedBytes, _ hemisphere: PaddedBytes?, limit: Double) -> Double? {
        guard let hemisphere, hemisphere.count == 1, let (whole, fraction, digits) = parts(f)
        else { return nil }
        let degrees = whole / 100, wholeMinutes = whole % 100
        let value: Double
        if digits <= 9 && degrees <= 180 {
            // Degrees plus minutes ÷ 60 as one quotient of two integers, both exact in a Double
            // (below 2⁵³): one division, correctly rounded, so the double nearest the angle
            // written (what the same angle in decimal degrees reads as), not two roundings away.
            guard wholeMinutes < 60 else { return nil }
            let p = NumberParser.pow10Int(digits)
            value = Double(Int64(bitPattern: (degrees * 60 + wholeMinutes) * p + fraction))
                / Double(Int64(bitPattern: 60 * p))
        } else {
            let minutes = scaled(wholeMinutes, fraction, digits)
            guard minutes < 60 else { return nil }
            value = Double(degrees) + minutes / 60
        }
        guard value <= limit else { return nil }
        switch hemisphere[0] {
        case UInt8(ascii: "N"), UInt8(ascii: "E"): return value
        case UInt8(ascii: "S"), UInt8(ascii: "W"): return -value
        default: return nil
        }
    }

    /// A field of 1 to 4 digits as an integer; nil otherwise.
    @inline(__always)
    static func smallInteger(_ f: PaddedBytes) -> Int? {
        DecimalWords.fits(f) ? DecimalWords.smallInteger(f) : smallInteger(f.bytes)
    }

    /// `smallInteger` a byte at a time.
    static func smallInteger(_ f: ByteView) -> Int? {
        guard f.count >= 1 && f.count <= 4 else { return nil }
        var v = 0
        for b in f {
            guard b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") else { return nil }
            v = v * 10 + Int(b - UInt8(ascii: "0"))
        }
        return v
    }

    /// A one-character status field's character; nil when empty or longer.
    static func flag(_ f: PaddedBytes?) -> UInt8? {
        guard let f, f.count == 1 else { return nil }
        return f[0]
    }
}

/// The sentences of one receiver cycle made into one fix (SPEC §3).
///
/// A receiver sends, once a cycle (a second, or a tenth of one), a burst of sentences that share
/// a time of day. A cycle ends when a sentence of another time arrives (`take(_:)`), or at the end
/// of the input, or when the input would block (`finish()`), whichever comes first; its fix is:
/// - **time**: the date last given (RMC with status A, or ZDA) and the time of day of the
///   sentence that gave the position. Two
///   times within `sameCycle` are one cycle (a receiver that writes GLL's time with milliseconds
///   and RMC's with hundredths writes 200621.297 and 200621.30 for one).
/// - **position**: GGA's if its quality says it is a fix, else RMC's with status A, else GLL's
///   with status A (GGA carries the most digits where they differ). A GGA that used no satellite
///   is no fix, whatever its quality says.
/// - **accuracy**: GGA's HDOP × `userRangeError`; NaN without an HDOP.
/// - a cycle whose sentences all call their position void (RMC or GLL status V, GGA quality 0,
///   7 manual or 8 simulated) is a void fix; one before any date is rejected for that.
struct NMEACycles {
    /// Times of day closer than this are one cycle: half the period of the fastest common
    /// receivers (20 Hz).
    static let sameCycle = 0.025
    /// The user equivalent range error, metres (1σ): the error budget of a single-frequency GPS
    /// range (ephemeris, clocks, atmosphere, noise, multipath) in Hoffmann-Wellenhof et al.,
    /// "GPS: Theory and Practice", which gpsd's error model also uses. Accuracy = HDOP × this.
    static let userRangeError = 8.0

    enum Outcome: Equatable {
        case fix(t: Double, latitude: Double, longitude: Double, accuracy: Double)
        /// The receiver had no valid position this cycle.
        case void
        /// A valid position before any date.
        case noDate
    }

    /// Days since 1970-01-01 of the last date given; nil before any.
    private(set) var day: Int?
    /// The cycle being read: its time of day, nil before the first sentence with one.
    private(set) var timeOfDay: Double?
    private var latitude = Double.nan, longitude = Double.nan
    /// The time of day of the sentence that gave the position.
    private var fixTime = 0.0
    /// Which sentence gave the position: 1 GGA, 2 RMC, 3 GLL, 4 none.
    private var source = 4
    private var hdop = Double.nan
    /// Whether a sentence of the cycle gave a position and called it void.
    private var sawVoid = false
    /// Whether the cycle ended early (`finish()`) and later sentences of its time are to be
    /// passed over.
    private var finished = false
    /// Counts the cycles begun (a sentence of a new time of day), so a reader can tell where one
    /// begins.
    private(set) var cycleNumber = 0
    /// Whether the last sentence taken gave the cycle's position (so far).
    private(set) var tookPosition = false
    /// The last time of day and the last date read (`RepeatedField`).
    private var times = RepeatedField<Double>()
    private var dates = RepeatedField<Int>()

    /// Takes one checked sentence. Returns the previous cycle's outcome when this sentence starts
    /// a new cycle (nil otherwise, or when it had nothing to say).
    mutating func take(_ type: NMEASentenceType, _ fields: NMEAFields) -> Outcome? {
        var f = fields
        var ended: Outcome? = nil
        tookPosition = false
        switch type {
        case .rmc:
            // time, status, lat, N/S, lon, E/W, speed, course, date
            let t = time(f.next())
            let status = NMEAFields.flag(f.next())
            let lat = f.next(), ns = f.next(), lon = f.next(), ew = f.next()
            f.skip(2)
            let date = f.next()
            // The date is this cycle's: taken once the previous cycle has ended.
            var inCycle = false
            if let t { inCycle = at(t, ending: &ended) }
            if status == UInt8(ascii: "A"), let date, let d = dates.value(of: date, Self.day(ddmmyy:)) { day = d }
            guard inCycle, let t else { break }
            take(valid: status == UInt8(ascii: "A"), lat, ns, lon, ew, from: 2, at: t)
        case .gga:
            // time, lat, N/S, lon, E/W, quality, satellites used, HDOP
            let t = time(f.next())
            let lat = f.next(), ns = f.next(), lon = f.next(), ew = f.next()
            let quality = f.next(NMEAFields.smallInteger) ?? 0
            let used = f.next(NMEAFields.smallInteger)
            let h = f.next(NMEAFields.decimal)
            guard let t, at(t, ending: &ended) else { break }
            if take(valid: (1...6).contains(quality) && used != 0, lat, ns, lon, ew, from: 1, at: t), let h { hdop = h }
        case .gll:
            // lat, N/S, lon, E/W, time, status
            let lat = f.next(), ns = f.next(), lon = f.next(), ew = f.next()
            let t = time(f.next())
            let status = NMEAFields.flag(f.next())
            guard let t, at(t, ending: &ended) else { break }
            take(valid: status == UInt8(ascii: "A"), lat, ns, lon, ew, from: 3, at: t)
        case .zda:
            // time, day, month, year (4 digits)
            let t = time(f.next())
            let dd = f.next(NMEAFields.smallInteger)
            let mm = f.next(NMEAFields.smallInteger)
            let yyyy = f.next(NMEAFields.smallInteger)
            if let t { _ = at(t, ending: &ended) }
            if let dd, let mm, let yyyy, yyyy >= 1980, (1...12).contains(mm),
               (1...RFC3339.daysInMonth(year: yyyy, month: mm)).contains(dd) {
                day = RFC3339.daysFromCivil(year: yyyy, month: mm, day: dd)
            }
        }
        return ended
    }

    /// A time-of-day field read (`RepeatedField`): nil when there is none or it is no time.
    @inline(__always)
    private mutating func time(_ field: PaddedBytes?) -> Double? {
        guard let field else { return nil }
        return times.value(of: field, NMEAFields.timeOfDay)
    }

    /// Whether a sentence of time of day `t` belongs to the cycle being read (false when that
    /// cycle has ended early: `finish()`); one of another time begins the next cycle, and the
    /// outcome of the one it ends goes to `ended`. (A method, not a function nested in `take`:
    /// the nested one's captures were checked for exclusive access at run time, on every call.)
    @inline(__always)
    private mutating func at(_ t: Double, ending ended: inout Outcome?) -> Bool {
        if let current = timeOfDay, abs(current - t) < Self.sameCycle || abs(current - t) > 86_400 - Self.sameCycle {
            return !finished
        }
        ended = finish()
        timeOfDay = t
        finished = false
        cycleNumber += 1
        return true
    }

    /// Ends the cycle being read (the input ended, or would block): its outcome, if it has one.
    /// Sentences that come later with its time are passed over.
    mutating func finish() -> Outcome? {
        guard timeOfDay != nil, !finished else { return nil }
        finished = true
        defer {
            source = 4
            sawVoid = false
            hdop = .nan
        }
        guard source < 4 else { return sawVoid ? .void : nil }
        guard var day else { return .noDate }
        // A cycle read across midnight: its sentence of 23:59:59.99 takes the day before.
        if let tod = timeOfDay, fixTime - tod > 43_200 { day -= 1 }
        return .fix(t: Double(day) * 86_400 + fixTime, latitude: latitude, longitude: longitude,
                    accuracy: hdop * Self.userRangeError)
    }

    /// A sentence's position fields, which the receiver calls `valid` or not: kept when valid and
    /// from a sentence that ranks before the one that gave the position so far (`source`);
    /// returns whether they were. A position called void marks the cycle void.
    @discardableResult
    private mutating func take(valid: Bool, _ lat: PaddedBytes?, _ ns: PaddedBytes?, _ lon: PaddedBytes?, _ ew: PaddedBytes?,
                               from s: Int, at t: Double) -> Bool {
        guard valid else {
            if let lat, lat.count > 0 { sawVoid = true }
            return false
        }
        guard s <= source, let lat, let la = NMEAFields.angle(lat, ns, limit: 90),
              let lon, let lo = NMEAFields.angle(lon, ew, limit: 180) else { return false }
        fixTime = t
        latitude = la
        longitude = lo
        source = s
        tookPosition = true
        return true
    }

    /// `ddmmyy` as days since 1970-01-01: years 80–99 are 1980–1999, 00–79 are 2000–2079 (GPS
    /// began in 1980).
    static func day(ddmmyy f: PaddedBytes) -> Int? {
        guard f.count == 6, let v = NMEAFields.parts(f), v.digits == 0 else { return nil }
        let d = Int(v.whole / 10_000), m = Int(v.whole / 100 % 100), y = Int(v.whole % 100)
        let year = y >= 80 ? 1900 + y : 2000 + y
        guard (1...12).contains(m), (1...RFC3339.daysInMonth(year: year, month: m)).contains(d) else { return nil }
        return RFC3339.daysFromCivil(year: year, month: m, day: d)
    }
}

/// The last field of one kind read and what it read as: a receiver repeats its time of day in
/// every sentence of a cycle and its date all day, and reading them again cost more than the
/// rest of the sentence. A field of up to 15 bytes is kept packed in two words and compared as
/// them. Not part of a snapshot: a restored receiver reads its next field afresh.
struct RepeatedField<Value> {
    private var key: (UInt64, UInt64) = (0, 0)
    private var value: Value?
    private var kept = false

    @inline(__always)
    mutating func value(of f: PaddedBytes, _ read: (PaddedBytes) -> Value?) -> Value? {
        let n = f.count
        guard n >= 1 && n <= 15 else { return read(f) }
        // The count goes in the top byte, so that a field is never taken for a shorter one
        // ending in zero bytes. Two words where the field is padded, else a byte at a time
        // (every index below `n`).
        var low: UInt64 = 0, high = UInt64(n) << 56
        if DecimalWords.fits(f) {
            low = f.word(at: 0) & DecimalWords.below(n)
            if n > 8 { high |= f.word(at: 8) & DecimalWords.below(n &- 8) }
        } else {
            let p = f.bytes.unsafeBytes
            for i in 0..<min(n, 8) { low |= UInt64(p[i]) << (8 &* i) }
            if n > 8 { for i in 8..<n { high |= UInt64(p[i]) << (8 &* (i &- 8)) } }
        }
        if kept && key.0 == low && key.1 == high { return value }
        value = read(f)
        key = (low, high)
        kept = true
        return value
    }
}

extension NMEACycles {
    /// The state between two sentences (a receiver's date and the cycle being read), for a
    /// partition snapshot of `consume --format nmea`: a cycle open at the snapshot goes on where
    /// the snapshot is restored.
    func writeSnapshot(to w: inout SnapshotWriter) {
        w.tag("nmea-cycles")
        w.optional(day) { w, d in w.zigzag(Int64(d)) }
        w.optional(timeOfDay) { w, t in w.f64(t) }
        w.f64(latitude)
        w.f64(longitude)
        w.f64(fixTime)
        w.u8(UInt8(source))
        w.f64(hdop)
        w.bool(sawVoid)
        w.bool(finished)
        w.zigzag(Int64(cycleNumber))
        w.bool(tookPosition)
    }

    static func readSnapshot(from r: inout SnapshotReader) throws(SnapshotError) -> NMEACycles {
        try r.expect("nmea-cycles")
        var c = NMEACycles()
        c.day = try r.optional { r throws(SnapshotError) in Int(try r.zigzag()) }
        c.timeOfDay = try r.optional { r throws(SnapshotError) in try r.f64() }
        c.latitude = try r.f64()
        c.longitude = try r.f64()
        c.fixTime = try r.f64()
        c.source = Int(try r.u8())
        guard (1...4).contains(c.source) else { throw SnapshotError("an NMEA cycle's position source \(c.source)") }
        c.hdop = try r.f64()
        c.sawVoid = try r.bool()
        c.finished = try r.bool()
        c.cycleNumber = Int(try r.zigzag())
        c.tookPosition = try r.bool()
        if let d = c.day, abs(d) > 4_000_000 { throw SnapshotError("an NMEA date \(d) days from 1970") }
        return c
    }
}

/// One receiver's lines made into fixes: each line classified (`NMEALine`), its checked RMC,
/// GGA, GLL and ZDA sentences taken into cycles (`NMEACycles`), and the line that stands for each
/// cycle (the sentence that gave its position, else its first) kept with its place (a line
/// number, a message offset: the caller's). What `NMEADecoder` does for a file, and
/// `ReceiverMessages` for each device of a Kafka partition.
struct NMEAReceiver: ~Copyable {
    /// What one line was.
    enum Line {
        /// Blank: nothing to count.
        case blank
        /// Passed over, counted by this kind: `comment`, `not a sentence`.
        case passedOver(String)
        /// A sentence no fix needs, passed over and counted by its type.
        case otherSentence(ShortKind)
        /// A fix sentence whose checksum does not match.
        case badChecksum
        /// A fix sentence that did not end a cycle.
        case taken
        /// A fix sentence that began a new cycle: the outcome of the one it ended, which `line`
        /// (at `place`) stands for.
        case ended(NMEACycles.Outcome, line: ByteView, place: Int64)
    }

    private(set) var cycles = NMEACycles()
    /// The last sentence no fix needs, to know its next ones without classifying them again.
    private var repeated = RepeatedSentence()
    private var seenCycle = 0
    /// Whether the lines read stay valid as long as the receiver (a mapped file's): the line
    /// standing for a cycle is then kept where it is, not copied, and stays valid after the
    /// receiver reads on (`Lookahead` keeps fixes read ahead with their lines).
    var linesStay = false
    /// Two buffers, so the cycle that just ended keeps its line while the next one's is kept.
    private var lineA = PaddedBuffer(capacity: 128)
    private var lineB = PaddedBuffer(capacity: 128)
    private var inA = true
    /// The line standing for the cycle being read, and its place.
    private(set) var line = ByteView.empty
    private(set) var place: Int64 = -1

    init() {}

    /// Reads one line (without its line end), found at `place`; `frame`, what
    /// `NMEALine.frame` found of it, if it was framed so.
    mutating func read(_ text: ByteView, place: Int64) -> Line { read(PaddedBytes(text), place: place, framed: nil) }

    /// `read(_:place:)` of a line that may be padded (`NMEALine.classify`).
    @inline(__always)
    mutating func read(_ padded: PaddedBytes, place: Int64, framed frame: NMEALine.Frame?) -> Line {
        let text = padded.bytes
        if let kind = repeated.kind(of: text, framed: frame) { return .otherSentence(kind) }
        switch NMEALine.classify(padded, framed: frame) {
        case .blank:
            return .blank
        case .comment:
            return .passedOver("comment")
        case .noise:
            return .passedOver("not a sentence")
        case .otherSentence(let type):
            repeated.note(text, type)
            return .otherSentence(type)
        case .badChecksum:
            return .badChecksum
        case .fixSentence(let type, let fields):
            let o = cycles.take(type, fields)
            // The cycle that ended keeps its line; this sentence's begins the next.
            let previous = (line, self.place)
            if cycles.cycleNumber != seenCycle {
                seenCycle = cycles.cycleNumber
                inA.toggle()
                keep(text, place: place)
            } else if cycles.tookPosition {
                keep(text, place: place)
            }
            guard let o else { return .taken }
            return .ended(o, line: previous.0, place: previous.1)
        }
    }

    /// Ends the cycle being read (`NMEACycles.finish`): its outcome, if it has one; `line` and
    /// `place` stand for it.
    mutating func finish() -> NMEACycles.Outcome? { cycles.finish() }

    private mutating func keep(_ text: ByteView, place: Int64, copying: Bool = false) {
        line = linesStay && !copying ? text : inA ? lineA.hold(text).bytes : lineB.hold(text).bytes
        self.place = place
    }

    /// The state between two lines (the cycles, and the line standing for the open cycle), for a
    /// partition snapshot of `consume --format nmea`.
    func writeSnapshot(to w: inout SnapshotWriter) {
        cycles.writeSnapshot(to: &w)
        w.zigzag(Int64(seenCycle))
        w.raw(line)
        w.zigzag(place)
    }

    /// Restores `writeSnapshot`'s state into this new receiver.
    mutating func restoreSnapshot(from r: inout SnapshotReader) throws(SnapshotError) {
        cycles = try NMEACycles.readSnapshot(from: &r)
        seenCycle = Int(try r.zigzag())
        let text = try r.raw()
        // Held in lineA: the next cycle's line goes to lineB.
        inA = true
        let place = try r.zigzag()
        text.withUnsafeBytes { keep(ByteView(unsafe: $0), place: place, copying: true) }
    }
}

/// The address of the last sentence no fix needs that began its line (`$GPGSA,`…), and its type:
/// a receiver sends the same few every cycle, and classifying each again (its last `$`, its
/// address's characters, its type) cost more than the fix sentences' fields. A line that begins
/// with the same seven bytes (the `$`, the address, and its comma or `*`) and holds no later `$`
/// is that sentence again, as `NMEALine.classify` would find.
struct RepeatedSentence {
    /// The line's first seven bytes, packed, and the sentence's type; nil before any.
    private var noted: (prefix: UInt64, type: ShortKind)?

    /// The type of `text` when it is the noted sentence again; nil otherwise. `frame`: what
    /// `NMEALine.frame` found of it (its last `$`), if it was framed so.
    @inline(__always)
    func kind(of text: ByteView, framed frame: NMEALine.Frame? = nil) -> ShortKind? {
        guard let noted, text.count >= 8, text.word(at: 0) & 0x00FF_FFFF_FFFF_FFFF == noted.prefix else { return nil }
        if let frame { return frame.dollar == 0 ? noted.type : nil }
        return Self.hasNoDollarAfterFirst(text) ? noted.type : nil
    }

    /// Whether no `$` follows the line's first byte.
    @inline(__always)
    private static func hasNoDollarAfterFirst(_ text: ByteView) -> Bool {
        geotrigger_last_byte(text.unsafeBytes.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self), 1,
                             Int64(text.count), UInt8(ascii: "$")) < 0
    }

    /// `text` was classified as a sentence of `type` no fix needs: noted when its `$` begins the
    /// line and its address is followed by a comma or the checksum's `*` (a letter or digit would
    /// lengthen the type, a space may be the end of the line).
    mutating func note(_ text: ByteView, _ type: ShortKind) {
        guard text.count >= 8, text[0] == UInt8(ascii: "$"), text[6] == UInt8(ascii: ",") || text[6] == UInt8(ascii: "*"),
              Self.hasNoDollarAfterFirst(text) else { return }
        noted = (text.word(at: 0) & 0x00FF_FFFF_FFFF_FFFF, type)
    }
}
