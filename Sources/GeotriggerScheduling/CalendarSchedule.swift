#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore

/// Why a `ZonedCalendar` could not be made.
public enum CalendarScheduleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The identifier is not an IANA time zone known to this system.
    case unknownTimeZone(String)
    /// The identifier could name a zone, but there is no time zone database to look it up in.
    case noTimeZoneDatabase(String, directory: String)

    public var description: String {
        switch self {
        case .unknownTimeZone(let id): return "unknown time zone \"\(id)\""
        case .noTimeZoneDatabase(let id, let directory):
            return "unknown time zone \"\(id)\": no time zone database in \(directory) (install tzdata, or set TZDIR)"
        }
    }
}

/// A proleptic Gregorian calendar in one IANA time zone, answering "when does this calendar
/// trigger fire next?" the way `UNCalendarNotificationTrigger.nextTriggerDate()` does.
///
/// The zone (`ZoneRules`, the system's IANA database) gives only UTC offsets and the instants at
/// which they change; every civil-date computation is done here with `RFC3339`'s day
/// arithmetic, so the rules below are the whole behaviour.
public struct ZonedCalendar: Sendable {
    /// The IANA identifier this calendar was made with, e.g. `"Europe/Vienna"`.
    public let timeZoneIdentifier: String
    private let zone: ZoneRules

    /// A calendar in the IANA zone `timeZoneIdentifier` (default `"UTC"`), read from the
    /// system's time zone database (`/usr/share/zoneinfo`, or `$TZDIR`: Debian's `tzdata`);
    /// `"UTC"` and `"GMT"` need none.
    /// - Throws: `CalendarScheduleError.unknownTimeZone` (`unknown time zone "X"`) when the
    ///   identifier is not known, `.noTimeZoneDatabase` when there is no database to look in.
    public init(timeZoneIdentifier: String = "UTC") throws {
        try self.init(timeZoneIdentifier: timeZoneIdentifier, database: ZoneRules.directory)
    }

    /// `database`: the folder of the zone files (tests give their own).
    package init(timeZoneIdentifier: String, database: String) throws {
        guard case .success(let zone) = ZoneRules.named(timeZoneIdentifier, in: database) else {
            if ZoneRules.isPlausible(timeZoneIdentifier) && access(database, F_OK) != 0 {
                throw CalendarScheduleError.noTimeZoneDatabase(timeZoneIdentifier, directory: database)
            }
            throw CalendarScheduleError.unknownTimeZone(timeZoneIdentifier)
        }
        self.timeZoneIdentifier = timeZoneIdentifier
        self.zone = zone
    }

    /// A calendar in a zone already read (the fuzz target's).
    package init(timeZoneIdentifier: String, zone: ZoneRules) {
        self.timeZoneIdentifier = timeZoneIdentifier
        self.zone = zone
    }

    /// The UTC offset in seconds in force at the Unix instant `t`.
    public func secondsFromUTC(at t: Int) -> Int {
        zone.secondsFromUTC(at: t)
    }

    /// Why `c` can never be a calendar trigger, or `nil` when it is a valid one.
    ///
    /// Refused: an empty set; a value out of range (year 1...9999, month 1...12, day 1...31,
    /// hour 0...23, minute 0...59, second 0...59, weekday 1...7); a month and day that never occur
    /// together (February 30, April 31); and a full year-month-day that does not exist or is not the
    /// given weekday. A year already past is not invalid: `nextDate` just returns `nil` for it.
    public static func validate(_ c: CalendarComponents) -> String? {
        if c.year == nil, c.month == nil, c.day == nil, c.hour == nil, c.minute == nil, c.second == nil,
           c.weekday == nil {
            return "calendar trigger needs at least one component"
        }
        let ranges: [(String, Int?, ClosedRange<Int>)] = [
            ("year", c.year, 1...9999), ("month", c.month, 1...12), ("day", c.day, 1...31),
            ("hour", c.hour, 0...23), ("minute", c.minute, 0...59), ("second", c.second, 0...59),
            ("weekday", c.weekday, 1...7),
        ]
        for (name, value, range) in ranges {
            if let v = value, !range.contains(v) {
                return "\(name) \(v) is out of range \(range.lowerBound)...\(range.upperBound)"
                    + (name == "weekday" ? " (1 = Sunday … 7 = Saturday)" : "")
            }
        }
        if let m = c.month, let d = c.day {
            if let y = c.year {
                if d > RFC3339.daysInMonth(year: y, month: m) {
                    return "day \(d) does not exist in month \(m) of \(y)"
                }
                if let w = c.weekday {
                    let actual = weekday(ofDay: RFC3339.daysFromCivil(year: y, month: m, day: d))
                    if actual != w {
                        let names = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
                        let date = RFC3339.format(Double(RFC3339.daysFromCivil(year: y, month: m, day: d) * 86_400))
                        return "\(date.prefix(10)) is a \(names[actual - 1]) (weekday \(actual)), not weekday \(w)"
                    }
                }
            } else if d > (m == 2 ? 29 : RFC3339.daysInMonth(year: 2001, month: m)) {
                return "day \(d) never occurs in month \(m)"
            }
        }
        return nil
    }

    /// The first instant strictly after `t` (Unix seconds) whose local civil time in this zone
    /// matches `c`, or `nil` when there is none (invalid components, a year already past, or no
    /// match within 400 years — one full Gregorian cycle — of `t`, or of the given year's start).
    ///
    /// Rules:
    /// - Components finer than the finest one given are 0 (`hour: 8` is 08:00:00); coarser ones
    ///   that are not given match anything. The order is year > month > day (and weekday) > hour >
    ///   minute > second. So `minute: 15` is every hour at :15:00, `second: 30` every minute at
    ///   :30, `month: 6` is June 1 at 00:00:00 and `year: 2030` is 2030-01-01T00:00:00.
    /// - `weekday` (1 = Sunday … 7 = Saturday) further constrains the day: `weekday: 2, hour: 9` is
    ///   Mondays at 09:00:00; with `day: 13, weekday: 6` only Fridays the 13th.
    /// - Days that do not exist are skipped, never moved: `day: 31` fires only in 31-day months,
    ///   February 29 only in leap years (proleptic Gregorian: 2100 is not one), and `month: 2,
    ///   day: 30` never fires (`nil`; `validate` says why).
    /// - Only whole seconds match; the result is always an integer number of seconds.
    /// - A local time in a daylight-saving **gap** (it never shows on the clock) moves forward by
    ///   the length of the gap: it is converted with the offset in force before the transition, as
    ///   java.time does. 02:30 on a spring-forward day with a 1 h gap fires at 03:30 new local time.
    ///   If the moved instant coincides with a real match (e.g. 02:15 and 03:15 for `minute: 15`),
    ///   it fires once.
    /// - A local time in an **overlap** (the clock goes back and shows it twice) matches only its
    ///   first occurrence, with the offset in force before the transition. The second occurrence
    ///   never matches, so a repeating trigger asking for the date after the first one gets the next
    ///   day's (for `hour: 2, minute: 30` daily, once on the fall-back day).
    ///
    /// The search walks the zone's offset periods (between transitions) and, within each, steps by
    /// year, month and day, jumping straight to the given month, day or weekday; it never steps
    /// second by second.
    public func nextDate(after t: Double, matching c: CalendarComponents) -> Double? {
        guard t.isFinite, abs(t) < 1e13, ZonedCalendar.validate(c) == nil else { return nil }
        let pattern = Pattern(c)
        let tMin = Int(t.rounded(.down)) + 1  // the first whole second strictly after t
        // Start a few days early so that a transition just before t (an overlap whose second
        // occurrence is still ahead, or a gap whose moved instants are) is seen.
        // With a year given, nothing before its local January 1 can match: start there (two days
        // early covers any UTC offset), so a far-off year is not walked to period by period.
        let margin = 3 * 86_400
        var searchFrom = tMin
        if let y = c.year {
            searchFrom = max(tMin, (RFC3339.daysFromCivil(year: y, month: 1, day: 1) - 2) * 86_400)
        }
        var segStart = searchFrom - margin
        var offset = secondsFromUTC(at: segStart)
        var previousOffset = offset
        var coveredWall = segStart + offset  // walls below this have already had their instant
        let horizon = searchFrom + 146_097 * 86_400  // 400 Gregorian years

        while segStart < horizon {
            let segEnd = min(zone.nextChange(after: segStart) ?? horizon, horizon)
            var best: Int?

            // Walls skipped by a forward jump at segStart: converted with the offset before it.
            if offset > previousOffset {
                let lo = max(segStart + previousOffset, tMin + previousOffset, coveredWall)
                let hi = segStart + offset
                switch pattern.firstMatch(from: lo, before: hi) {
                case .found(let w): best = w - previousOffset
                case .never: return nil
                case .none: break
                }
            }
            coveredWall = max(coveredWall, segStart + previousOffset)
            // Walls shown on the clock in this period, skipping those an earlier period showed.
            let lo = max(segStart + offset, tMin + offset, coveredWall)
            switch pattern.firstMatch(from: lo, before: segEnd + offset) {
            case .found(let w): best = min(best ?? .max, w - offset)
            case .never: if best == nil { return nil }
            case .none: break
            }
            if let best { return Double(best) }

            coveredWall = max(coveredWall, segEnd + offset)
            previousOffset = offset
            segStart = segEnd
            offset = secondsFromUTC(at: segStart)
        }
        return nil
    }

    /// The day number (days since 1970-01-01) holding the second `seconds` after its midnight,
    /// rounding down for instants before it.
    static func day(containing seconds: Int) -> Int {
        seconds >= 0 ? seconds / 86_400 : -((-seconds + 86_399) / 86_400)
    }

    /// 1 = Sunday … 7 = Saturday for a day number (days since 1970-01-01, a Thursday).
    static func weekday(ofDay day: Int) -> Int {
        let r = (day + 4) % 7
        return (r < 0 ? r + 7 : r) + 1
    }
}

/// Components with the defaulting rules applied: `nil` means "any".
private struct Pattern {
    let year: Int?, month: Int?, day: Int?, weekday: Int?
    let hour: Int?, minute: Int?, second: Int

    enum Match { case found(Int), none, never }

    init(_ c: CalendarComponents) {
        // Finest given component, by rank: year 0, month 1, day/weekday 2, hour 3, minute 4, second 5.
        let finest: Int
        if c.second != nil { finest = 5 }
        else if c.minute != nil { finest = 4 }
        else if c.hour != nil { finest = 3 }
        else if c.day != nil || c.weekday != nil { finest = 2 }
        else if c.month != nil { finest = 1 }
        else { finest = 0 }
        year = c.year
        month = c.month ?? (finest < 1 ? 1 : nil)
        day = c.day ?? (finest < 2 && c.weekday == nil ? 1 : nil)
        weekday = c.weekday
        hour = c.hour ?? (finest < 3 ? 0 : nil)
        minute = c.minute ?? (finest < 4 ? 0 : nil)
        second = c.second ?? 0
    }

    /// The smallest matching local wall time (seconds since 1970-01-01T00:00:00 local) in
    /// `[lo, hi)`; `.never` when none can exist at or after `lo` at all (the given year is past).
    func firstMatch(from lo: Int, before hi: Int) -> Match {
        guard lo < hi else { return .none }
        var dayNumber = ZonedCalendar.day(containing: lo)
        var sodMin = lo - dayNumber * 86_400
        var (y, m, d) = RFC3339.civilFromDays(dayNumber)

        func jump(_ year: Int, _ month: Int, _ day: Int) {
            var (yy, mm) = (year, month)
            if mm > 12 { yy += 1; mm -= 12 }
            dayNumber = RFC3339.daysFromCivil(year: yy, month: mm, day: day)
            (y, m, d) = (yy, mm, day)
            sodMin = 0
        }

        while dayNumber * 86_400 < hi {
            if let wantYear = year {
                if y > wantYear { return .never }
                if y < wantYear { jump(wantYear, 1, 1); continue }
            }
            if let wantMonth = month, m != wantMonth {
                jump(m < wantMonth ? y : y + 1, wantMonth, 1)
                continue
            }
            let monthLength = RFC3339.daysInMonth(year: y, month: m)
            if let wantDay = day, d != wantDay {
                if d < wantDay && wantDay <= monthLength { jump(y, m, wantDay) } else { jump(y, m + 1, 1) }
                continue
            }
            if let wantWeekday = weekday {
                let have = ZonedCalendar.weekday(ofDay: dayNumber)
                if have != wantWeekday {
                    if day != nil {
                        jump(y, m + 1, 1)  // the day is fixed: try the same day next month
                    } else {
                        let ahead = (wantWeekday - have + 7) % 7
                        if d + ahead <= monthLength { jump(y, m, d + ahead) } else { jump(y, m + 1, 1) }
                    }
                    continue
                }
            }
            if let sod = firstTime(atOrAfter: sodMin) {
                let wall = dayNumber * 86_400 + sod
                return wall < hi ? .found(wall) : .none
            }
            if d < monthLength { jump(y, m, d + 1) } else { jump(y, m + 1, 1) }
        }
        return .none
    }

    /// The first matching second of the day at or after `sodMin`, or `nil` if none is left today.
    private func firstTime(atOrAfter sodMin: Int) -> Int? {
        let hours = hour.map { $0...$0 } ?? 0...23
        let minutes = minute.map { $0...$0 } ?? 0...59
        for h in hours where (h + 1) * 3600 > sodMin {
            for mi in minutes {
                let sod = h * 3600 + mi * 60 + second
                if sod >= sodMin { return sod }
            }
        }
        return nil
    }
}
