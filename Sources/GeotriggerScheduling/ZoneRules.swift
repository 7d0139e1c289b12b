#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore
import GeotriggerRuntime

/// Why a time zone file or rule could not be read.
package struct ZoneDataError: Error, Equatable, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

/// One IANA time zone's UTC offsets through time, read from a TZif file (RFC 8536) of the
/// system's time zone database: the transitions the file lists, and after the last of them the
/// rule of its footer (a POSIX TZ string, `PosixZoneRule`). This is all `ZonedCalendar` asks
/// of a zone: the offset at an instant, and the next instant the offset changes. Names and the
/// daylight-saving flag play no part, so a transition that changes only those is no change
/// here.
///
/// Read, not linked: the process carries no copy of the database (Foundation's `TimeZone`
/// brings ICU's, and some 3,000 protocol conformances the Swift runtime scans at every start).
/// The files are the Debian package `tzdata`'s, in `/usr/share/zoneinfo` or `$TZDIR`.
package final class ZoneRules: Sendable {
    /// Transition instants (Unix seconds, ascending), and the offset from each on.
    package let times: [Int]
    package let offsets: [Int]
    /// The offset before the first transition: the file's first local time type.
    package let initial: Int
    /// From the last transition on (for every instant, if there is none): the footer's rule.
    package let rule: PosixZoneRule?

    /// A zone of one fixed offset.
    package init(fixedOffset: Int) {
        times = []
        offsets = []
        initial = fixedOffset
        rule = nil
    }

    /// The largest offset accepted, in either direction: RFC 8536's recommended bounds are
    /// −89,999 and 93,599 s (about ±26 h). Larger ones are refused, so local times stay within a
    /// few days of UTC for the calendar's arithmetic.
    package static let maximumOffset = 93_599

    /// Reads a TZif file: version 1 (32-bit times) or 2 and later (64-bit times and a footer).
    /// Refused with a reason: a file that is not TZif or is cut short, counts that do not
    /// add up, times out of order, a type index or an offset out of range, a footer that is not
    /// a POSIX TZ string, and leap seconds (a "right/" zone counts them in its instants; the
    /// calendar's instants are POSIX seconds).
    package init(tzif bytes: UnsafeRawBufferPointer) throws(ZoneDataError) {
        var r = BigEndianReader(bytes)
        let v1 = try r.header()
        let wide = v1.version >= 2
        if wide {
            try r.skip(v1.dataLength(timeSize: 4))
            let v2 = try r.header()
            (times, offsets, initial) = try r.block(v2, timeSize: 8)
            rule = try r.footer()
        } else {
            (times, offsets, initial) = try r.block(v1, timeSize: 4)
            rule = nil
        }
    }

    /// Instants a file may name, and the span the rule is evaluated over: 2⁵⁹ s either side of
    /// 1970 (zic's earliest transition is −2⁵⁹), about 18 billion years. An instant asked about
    /// beyond 2⁶⁰ is taken as 2⁶⁰, so no sum below overflows.
    static let timeBound = 1 << 59

    /// The UTC offset in seconds in force at the Unix instant `t`.
    package func secondsFromUTC(at t: Int) -> Int {
        let t = Swift.min(Swift.max(t, -2 * Self.timeBound), 2 * Self.timeBound)
        if let rule, t >= times.last ?? t { return rule.offset(at: t) }
        let passed = transitions(through: t)
        return passed == 0 ? initial : offsets[passed - 1]
    }

    /// The first instant after `t` at which the offset changes, if there is one.
    package func nextChange(after t: Int) -> Int? {
        guard t < 2 * Self.timeBound else { return nil }
        let t = Swift.max(t, -2 * Self.timeBound)
        var current = secondsFromUTC(at: t)
        for i in transitions(through: t)..<times.count {
            // From the last transition on, the footer's rule says (`secondsFromUTC`).
            let offset = i == times.count - 1 ? rule?.offset(at: times[i]) ?? offsets[i] : offsets[i]
            if offset != current { return times[i] }
            current = offset
        }
        guard let rule else { return nil }
        return rule.nextChange(after: Swift.max(t, times.last ?? t))
    }

    /// How many transitions are at or before `t` (binary search).
    private func transitions(through t: Int) -> Int {
        var lo = 0, hi = times.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if times[mid] <= t { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    // MARK: The system's database

    /// The zone named `identifier` (`"Europe/Vienna"`), from the system's database, or why it
    /// cannot be read. `"UTC"` and `"GMT"` need no file. Read once per process, then shared.
    /// `directory`: the database's folder (tests give their own).
    package static func named(_ identifier: String, in directory: String = ZoneRules.directory)
        -> Result<ZoneRules, ZoneDataError> {
        if identifier == "UTC" || identifier == "GMT" { return .success(utc) }
        return cache.zone(directory + "\0" + identifier) { Self.load(identifier, from: directory) }
    }

    private static let utc = ZoneRules(fixedOffset: 0)
    private static let cache = ZoneCache()

    /// The folder of the system's TZif files: `$TZDIR`, else `/usr/share/zoneinfo`.
    package static var directory: String {
        if let d = getenv("TZDIR"), d.pointee != 0 { return String(cString: d) }
        return "/usr/share/zoneinfo"
    }

    /// Whether `identifier` can name a file below the database's folder and nothing else: path
    /// components of letters, digits, `_`, `+` and `-`, none empty or starting with `-`.
    static func isPlausible(_ identifier: String) -> Bool {
        let bytes = Array(identifier.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else { return false }
        var componentStart = true
        for b in bytes {
            switch b {
            case UInt8(ascii: "/"):
                if componentStart { return false }
                componentStart = true
                continue
            case UInt8(ascii: "-"):
                if componentStart { return false }
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "+"):
                break
            default:
                return false
            }
            componentStart = false
        }
        return !componentStart
    }

    private static func load(_ identifier: String, from directory: String) -> Result<ZoneRules, ZoneDataError> {
        guard isPlausible(identifier) else { return .failure(ZoneDataError("not a time zone identifier")) }
        let path = directory + "/" + identifier
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            return .failure(ZoneDataError(errno == ENOENT ? "no such zone in \(directory)" : "cannot open \(path)"))
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            return .failure(ZoneDataError("\(path) is not a file"))
        }
        // TZif files are a few kilobytes; anything far larger is not one.
        let limit = 1 << 20
        var bytes = [UInt8](repeating: 0, count: Swift.min(Int(st.st_size), limit))
        var filled = 0
        while filled < bytes.count {
            let n = SystemIO.read(fd, into: &bytes, filled..<bytes.count)
            guard n > 0 else { break }
            filled += n
        }
        bytes.removeSubrange(filled...)
        return bytes.withUnsafeBytes { b in Result { () throws(ZoneDataError) in try ZoneRules(tzif: b) } }
    }
}

/// Zones read so far, by identifier, for every thread: a zone file is read once per process.
/// Only zones that were read are kept, so the cache holds at most the database's files however
/// many unknown names a stream of requests brings.
private final class ZoneCache: @unchecked Sendable {
    // `zones` is touched only with `mutex` held.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var zones: [String: ZoneRules] = [:]

    init() { pthread_mutex_init(mutex, nil) }

    func zone(_ identifier: String, load: () -> Result<ZoneRules, ZoneDataError>) -> Result<ZoneRules, ZoneDataError> {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if let known = zones[identifier] { return .success(known) }
        let loaded = load()
        if case .success(let zone) = loaded { zones[identifier] = zone }
        return loaded
    }
}

/// A TZif file read front to back, every read checked against its end.
private struct BigEndianReader {
    let bytes: UnsafeRawBufferPointer
    var at = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    struct Header {
        var version: Int
        var isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt: Int

        func dataLength(timeSize: Int) -> Int {
            timecnt * timeSize + timecnt + typecnt * 6 + charcnt + leapcnt * (timeSize + 4) + isstdcnt + isutcnt
        }
    }

    mutating func need(_ n: Int) throws(ZoneDataError) {
        guard n >= 0, n <= bytes.count - at else { throw ZoneDataError("cut short at byte \(at)") }
    }

    mutating func skip(_ n: Int) throws(ZoneDataError) {
        try need(n)
        at += n
    }

    mutating func byte() throws(ZoneDataError) -> UInt8 {
        try need(1)
        defer { at += 1 }
        return bytes[at]
    }

    mutating func u32() throws(ZoneDataError) -> UInt32 {
        try need(4)
        var v: UInt32 = 0
        for k in 0..<4 { v = v << 8 | UInt32(bytes[at + k]) }
        at += 4
        return v
    }

    mutating func i64() throws(ZoneDataError) -> Int64 {
        try need(8)
        var v: UInt64 = 0
        for k in 0..<8 { v = v << 8 | UInt64(bytes[at + k]) }
        at += 8
        return Int64(bitPattern: v)
    }

    mutating func header() throws(ZoneDataError) -> Header {
        let start = at
        try need(44)
        guard bytes[at] == 0x54, bytes[at + 1] == 0x5A, bytes[at + 2] == 0x69, bytes[at + 3] == 0x66 else {
            throw ZoneDataError(start == 0 ? "not a TZif file" : "no second TZif header at byte \(start)")
        }
        let v = bytes[at + 4]
        // Version 1 is a zero byte; 2 and later are ASCII digits.
        guard v == 0 || (v >= UInt8(ascii: "2") && v <= UInt8(ascii: "9")) else {
            throw ZoneDataError("unknown TZif version byte \(v)")
        }
        at += 20
        var counts: [Int] = []
        for _ in 0..<6 {
            let c = Int(try u32())
            // A zone has at most a few thousand transitions and types.
            guard c <= 1 << 20 else { throw ZoneDataError("a count of \(c) in the header at byte \(start)") }
            counts.append(c)
        }
        let h = Header(version: v == 0 ? 1 : Int(v - UInt8(ascii: "0")), isutcnt: counts[0], isstdcnt: counts[1],
                       leapcnt: counts[2], timecnt: counts[3], typecnt: counts[4], charcnt: counts[5])
        guard h.typecnt > 0 else { throw ZoneDataError("no local time types") }
        guard h.isutcnt == 0 || h.isutcnt == h.typecnt, h.isstdcnt == 0 || h.isstdcnt == h.typecnt else {
            throw ZoneDataError("UT/local and standard/wall indicators do not match the local time types")
        }
        guard h.leapcnt == 0 else { throw ZoneDataError("leap seconds (a \"right/\" zone) are not supported") }
        return h
    }

    /// A data block: the transitions with the offset from each on, and the first type's offset.
    mutating func block(_ h: Header, timeSize: Int) throws(ZoneDataError) -> (times: [Int], offsets: [Int], initial: Int) {
        try need(h.dataLength(timeSize: timeSize))
        var times: [Int] = []
        times.reserveCapacity(h.timecnt)
        for _ in 0..<h.timecnt {
            let t = timeSize == 8 ? Int(try i64()) : Int(Int32(bitPattern: try u32()))
            guard t >= -ZoneRules.timeBound && t <= ZoneRules.timeBound else { throw ZoneDataError("transition \(times.count) at \(t) s, beyond ±2⁵⁹") }
            if let previous = times.last, t <= previous {
                throw ZoneDataError("transition times out of order at transition \(times.count)")
            }
            times.append(t)
        }
        var typeIndices: [Int] = []
        typeIndices.reserveCapacity(h.timecnt)
        for _ in 0..<h.timecnt {
            let i = Int(try byte())
            guard i < h.typecnt else { throw ZoneDataError("transition \(typeIndices.count) has type \(i) of \(h.typecnt)") }
            typeIndices.append(i)
        }
        var typeOffsets: [Int] = []
        for k in 0..<h.typecnt {
            let utoff = Int(Int32(bitPattern: try u32()))
            let isdst = try byte()
            let desigidx = Int(try byte())
            guard abs(utoff) <= ZoneRules.maximumOffset else { throw ZoneDataError("type \(k) has offset \(utoff) s") }
            guard isdst <= 1, desigidx < h.charcnt else { throw ZoneDataError("type \(k) is malformed") }
            typeOffsets.append(utoff)
        }
        // Names, leap seconds (none) and the indicators are not used.
        try skip(h.charcnt + h.isstdcnt + h.isutcnt)
        return (times, typeIndices.map { typeOffsets[$0] }, typeOffsets[0])
    }

    /// The footer of version 2 and later: a POSIX TZ string between newlines (empty: none).
    mutating func footer() throws(ZoneDataError) -> PosixZoneRule? {
        guard try byte() == 0x0A else { throw ZoneDataError("no footer after the data") }
        let start = at
        while true {
            let b = try byte()
            if b == 0x0A { break }
        }
        let text = UnsafeRawBufferPointer(rebasing: bytes[start..<(at - 1)])
        guard !text.isEmpty else { return nil }
        return try PosixZoneRule(text)
    }
}

/// A POSIX TZ string as a TZif footer holds it (RFC 8536 §3.3): a standard offset, and perhaps a
/// daylight-saving offset with the rule of when it begins and ends each year, e.g.
/// `CET-1CEST,M3.5.0,M10.5.0/3` (offsets are positive west of Greenwich; here they are kept as
/// seconds east, as everywhere else).
package struct PosixZoneRule: Sendable, Equatable {
    /// The standard offset, and the daylight-saving one (nil: no daylight-saving time).
    let standard: Int
    let daylight: Int?
    /// When daylight-saving time begins (in standard local time) and ends (in daylight-saving
    /// local time) each year: the day, and seconds after that day's midnight (−167 h to 167 h).
    let start: Day, startTime: Int
    let end: Day, endTime: Int

    enum Day: Sendable, Equatable {
        /// `Jn`: day n of the year, 1 to 365, February 29 never counted.
        case noLeapDay(Int)
        /// `n`: day n of the year counted from 0, up to 365 in a leap year.
        case zeroBased(Int)
        /// `Mm.w.d`: weekday d (0 = Sunday) of week w (1 to 5, 5 = the last) of month m.
        case weekday(month: Int, week: Int, weekday: Int)
    }

    init(_ text: UnsafeRawBufferPointer) throws(ZoneDataError) {
        var p = TZStringParser(text)
        try p.name()
        standard = -(try p.offset(maximumHours: 24))
        guard abs(standard) <= ZoneRules.maximumOffset else { throw ZoneDataError("footer: offset out of range") }
        if p.atEnd {
            daylight = nil
            (start, startTime, end, endTime) = (.zeroBased(0), 0, .zeroBased(0), 0)
            return
        }
        try p.name()
        if !p.atEnd && p.peek != UInt8(ascii: ",") {
            daylight = -(try p.offset(maximumHours: 24))
        } else {
            daylight = standard + 3600
        }
        guard abs(daylight!) <= ZoneRules.maximumOffset else { throw ZoneDataError("footer: offset out of range") }
        if p.atEnd {
            // No rule: the United States' since 2007, as the reference implementation takes it.
            (start, startTime, end, endTime) = (.weekday(month: 3, week: 2, weekday: 0), 7200,
                                                .weekday(month: 11, week: 1, weekday: 0), 7200)
            return
        }
        try p.expect(UInt8(ascii: ","))
        start = try p.day()
        startTime = try p.time()
        try p.expect(UInt8(ascii: ","))
        end = try p.day()
        endTime = try p.time()
        guard p.atEnd else { throw ZoneDataError("footer: unexpected text after the rule") }
    }

    /// The day number (days since 1970-01-01) of `day` in `year`.
    static func dayNumber(_ day: Day, year: Int) -> Int {
        let january1 = RFC3339.daysFromCivil(year: year, month: 1, day: 1)
        switch day {
        case .noLeapDay(let n):
            return january1 + n - 1 + (RFC3339.isLeapYear(year) && n >= 60 ? 1 : 0)
        case .zeroBased(let n):
            return january1 + n
        case .weekday(let month, let week, let weekday):
            let first = RFC3339.daysFromCivil(year: year, month: month, day: 1)
            // POSIX counts weekdays from 0 = Sunday, the calendar from 1.
            let firstWeekday = ZonedCalendar.weekday(ofDay: first) - 1
            var day = 1 + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let length = RFC3339.daysInMonth(year: year, month: month)
            while day > length { day -= 7 }
            return first + day - 1
        }
    }

    /// The instants daylight-saving time begins and ends in `year`.
    private func changes(in year: Int, daylight: Int) -> (start: Int, end: Int) {
        (Self.dayNumber(start, year: year) * 86_400 + startTime - standard,
         Self.dayNumber(end, year: year) * 86_400 + endTime - daylight)
    }

    /// The year of the instant `t` on the standard clock.
    private func year(of t: Int) -> Int {
        RFC3339.civilFromDays(ZonedCalendar.day(containing: t + standard)).year
    }

    func offset(at t: Int) -> Int {
        guard let daylight else { return standard }
        let y = year(of: t)
        // The last beginning or end at or before t decides; where one year's end and the next
        // year's beginning fall on the same instant (daylight-saving time all year), the
        // beginning is the later of the two.
        var latest = Int.min, inDaylight = false
        for year in (y - 2)...(y + 1) {
            let c = changes(in: year, daylight: daylight)
            if c.end <= t && c.end > latest { (latest, inDaylight) = (c.end, false) }
            if c.start <= t && c.start >= latest { (latest, inDaylight) = (c.start, true) }
        }
        return inDaylight ? daylight : standard
    }

    /// The first instant after `t` at which the offset changes, if the rule ever changes it.
    func nextChange(after t: Int) -> Int? {
        guard let daylight, daylight != standard else { return nil }
        let y = year(of: t)
        var candidates: [Int] = []
        for year in (y - 1)...(y + 2) {
            let c = changes(in: year, daylight: daylight)
            if c.start > t { candidates.append(c.start) }
            if c.end > t { candidates.append(c.end) }
        }
        candidates.sort()
        // A beginning and an end on the same instant change nothing.
        return candidates.first { offset(at: $0) != offset(at: $0 - 1) }
    }
}

/// The pieces of a POSIX TZ string, read left to right.
private struct TZStringParser {
    let text: UnsafeRawBufferPointer
    var at = 0

    init(_ text: UnsafeRawBufferPointer) { self.text = text }

    var atEnd: Bool { at >= text.count }
    var peek: UInt8 { text[at] }

    mutating func expect(_ b: UInt8) throws(ZoneDataError) {
        guard !atEnd, peek == b else { throw ZoneDataError("footer: expected \"\(Character(UnicodeScalar(b)))\" at \(at)") }
        at += 1
    }

    /// A zone abbreviation: three or more letters, or `<…>` around three or more letters, digits,
    /// `+` and `-`.
    mutating func name() throws(ZoneDataError) {
        let start = at
        if !atEnd && peek == UInt8(ascii: "<") {
            at += 1
            while !atEnd && peek != UInt8(ascii: ">") {
                let b = peek
                guard isLetter(b) || isDigit(b) || b == UInt8(ascii: "+") || b == UInt8(ascii: "-") else {
                    throw ZoneDataError("footer: bad character in a quoted name")
                }
                at += 1
            }
            guard at - start - 1 >= 3 else { throw ZoneDataError("footer: a name shorter than three characters") }
            try expect(UInt8(ascii: ">"))
        } else {
            while !atEnd && isLetter(peek) { at += 1 }
            guard at - start >= 3 else { throw ZoneDataError("footer: a name shorter than three letters") }
        }
    }

    /// `[+-]hh[:mm[:ss]]` in seconds, hours at most `maximumHours`.
    mutating func offset(maximumHours: Int) throws(ZoneDataError) -> Int {
        var sign = 1
        if !atEnd && (peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-")) {
            sign = peek == UInt8(ascii: "-") ? -1 : 1
            at += 1
        }
        let hours = try number(maximum: maximumHours)
        var seconds = hours * 3600
        if !atEnd && peek == UInt8(ascii: ":") {
            at += 1
            seconds += try number(maximum: 59) * 60
            if !atEnd && peek == UInt8(ascii: ":") {
                at += 1
                seconds += try number(maximum: 59)
            }
        }
        return sign * seconds
    }

    /// `/time` after a day (RFC 8536 allows −167 to 167 hours), else 02:00.
    mutating func time() throws(ZoneDataError) -> Int {
        guard !atEnd && peek == UInt8(ascii: "/") else { return 7200 }
        at += 1
        return try offset(maximumHours: 167)
    }

    mutating func day() throws(ZoneDataError) -> PosixZoneRule.Day {
        guard !atEnd else { throw ZoneDataError("footer: a rule without its day") }
        switch peek {
        case UInt8(ascii: "J"):
            at += 1
            let n = try number(maximum: 365)
            guard n >= 1 else { throw ZoneDataError("footer: J0 is not a day") }
            return .noLeapDay(n)
        case UInt8(ascii: "M"):
            at += 1
            let month = try number(maximum: 12)
            try expect(UInt8(ascii: "."))
            let week = try number(maximum: 5)
            try expect(UInt8(ascii: "."))
            let weekday = try number(maximum: 6)
            guard month >= 1, week >= 1 else { throw ZoneDataError("footer: month or week 0") }
            return .weekday(month: month, week: week, weekday: weekday)
        default:
            return .zeroBased(try number(maximum: 365))
        }
    }

    /// Decimal digits (at most three), at most `maximum`.
    mutating func number(maximum: Int) throws(ZoneDataError) -> Int {
        let start = at
        var v = 0
        while !atEnd && isDigit(peek) && at - start < 3 {
            v = v * 10 + Int(peek - UInt8(ascii: "0"))
            at += 1
        }
        guard at > start, v <= maximum else { throw ZoneDataError("footer: a number out of range at \(start)") }
        return v
    }

    private func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
    private func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
}
