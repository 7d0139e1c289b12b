import GeotriggerCore
import Testing
@testable import GeotriggerScheduling

// Every expected instant below is worked out by hand from the zone's published offsets and written
// as an RFC 3339 string with the local offset; the comment says how. Offsets used:
//   Europe/Vienna       CET +01:00, CEST +02:00. 2024: spring forward 2024-03-31 02:00→03:00
//                       (at 01:00Z), fall back 2024-10-27 03:00→02:00 (at 01:00Z).
//   America/New_York    EST −05:00, EDT −04:00. 2024: 2024-03-10 02:00→03:00 (07:00Z),
//                       2024-11-03 02:00→01:00 (06:00Z).
//   Australia/Sydney    AEST +10:00, AEDT +11:00. 2024: DST ends 2024-04-07 03:00→02:00
//                       (2024-04-06T16:00Z), starts 2024-10-06 02:00→03:00 (2024-10-05T16:00Z).
//   Australia/Lord_Howe +10:30 standard, +11:00 summer (a 30-minute shift). 2024: 2024-04-07
//                       02:00→01:30 (2024-04-06T15:00Z), 2024-10-06 02:00→02:30 (2024-10-05T15:30Z).
//   Pacific/Apia        skipped 2011-12-30 entirely: 2011-12-29 24:00 −10:00 → 2011-12-31 00:00
//                       +14:00 (at 2011-12-30T10:00Z).
//   Europe/Volgograd    2020-12-27 02:00 +04:00 → 01:00 +03:00 (at 2020-12-26T22:00Z), a change
//                       of standard offset, not a DST one.
// Weekdays: 2024-01-01 was a Monday; 2024-05-01 a Wednesday, so 2024-05-10 is a Friday.

private func at(_ s: String) -> Double {
    guard let t = RFC3339.parse(s) else { fatalError("bad test time stamp \(s)") }
    return t
}

struct CalendarCase: Sendable, CustomTestStringConvertible {
    let zone: String
    let components: CalendarComponents
    let after: String
    let expected: String?
    let why: String

    init(_ zone: String, _ components: CalendarComponents, after: String, _ expected: String?, _ why: String) {
        self.zone = zone
        self.components = components
        self.after = after
        self.expected = expected
        self.why = why
    }

    var testDescription: String { "\(zone) after \(after): \(why)" }
}

private typealias C = CalendarComponents

@Suite struct CalendarScheduleTests {
    static let utcCases: [CalendarCase] = [
        // hour only: minute and second are 0; day, month, year match anything.
        CalendarCase("UTC", C(hour: 8), after: "2024-05-10T07:00:00Z", "2024-05-10T08:00:00Z",
                     "daily 08:00, asked before 8 → the same day"),
        CalendarCase("UTC", C(hour: 8), after: "2024-05-10T09:00:00Z", "2024-05-11T08:00:00Z",
                     "daily 08:00, asked after 8 → the next day"),
        CalendarCase("UTC", C(hour: 8), after: "2024-05-10T08:00:00Z", "2024-05-11T08:00:00Z",
                     "strictly after: exactly at a match → the next one"),
        CalendarCase("UTC", C(hour: 8), after: "2024-05-10T07:59:59.5Z", "2024-05-10T08:00:00Z",
                     "half a second before → 08:00:00 the same day"),
        CalendarCase("UTC", C(hour: 8), after: "2024-05-10T08:00:00.250Z", "2024-05-11T08:00:00Z",
                     "a quarter second after → next day"),
        CalendarCase("UTC", C(hour: 8), after: "2024-12-31T09:00:00Z", "2025-01-01T08:00:00Z",
                     "rolls over the year"),
        CalendarCase("UTC", C(hour: 8), after: "1969-12-31T09:00:00Z", "1970-01-01T08:00:00Z",
                     "before the epoch (negative t)"),
        // minute only: every hour at :15:00.
        CalendarCase("UTC", C(minute: 15), after: "2024-05-10T10:20:00Z", "2024-05-10T11:15:00Z",
                     "every hour at :15, past :15 → next hour"),
        CalendarCase("UTC", C(minute: 15), after: "2024-05-10T10:14:59Z", "2024-05-10T10:15:00Z",
                     "every hour at :15, one second before"),
        CalendarCase("UTC", C(minute: 15), after: "2024-05-10T10:15:00Z", "2024-05-10T11:15:00Z",
                     "every hour at :15, exactly at one → next hour"),
        CalendarCase("UTC", C(minute: 15), after: "2024-05-10T23:20:00Z", "2024-05-11T00:15:00Z",
                     "every hour at :15, over midnight"),
        // second only: every minute at :30.
        CalendarCase("UTC", C(second: 30), after: "2024-05-10T10:20:10Z", "2024-05-10T10:20:30Z",
                     "every minute at :30, same minute"),
        CalendarCase("UTC", C(second: 30), after: "2024-05-10T10:20:30Z", "2024-05-10T10:21:30Z",
                     "every minute at :30, exactly at one → next minute"),
        CalendarCase("UTC", C(second: 30), after: "2024-05-10T23:59:45Z", "2024-05-11T00:00:30Z",
                     "every minute at :30, over midnight"),
        CalendarCase("UTC", C(minute: 0, second: 0), after: "2024-05-10T10:00:00Z", "2024-05-10T11:00:00Z",
                     "minute 0 second 0: hourly"),
        // day 31: only 31-day months.
        CalendarCase("UTC", C(day: 31), after: "2024-04-01T00:00:00Z", "2024-05-31T00:00:00Z",
                     "April has 30 days → May 31 at 00:00"),
        CalendarCase("UTC", C(day: 31), after: "2024-05-31T00:00:00Z", "2024-07-31T00:00:00Z",
                     "strictly after May 31 00:00 → June has 30 → July 31"),
        CalendarCase("UTC", C(day: 31), after: "2024-01-31T00:00:01Z", "2024-03-31T00:00:00Z",
                     "after Jan 31 → February skipped → March 31"),
        CalendarCase("UTC", C(day: 31, hour: 12), after: "2024-08-31T13:00:00Z", "2024-10-31T12:00:00Z",
                     "after Aug 31 12:00 → September has 30 → October 31"),
        // February 29: leap years only (2100 is not one, 2000 was).
        CalendarCase("UTC", C(month: 2, day: 29), after: "2024-03-01T00:00:00Z", "2028-02-29T00:00:00Z",
                     "Feb 29 after 2024's → 2028"),
        CalendarCase("UTC", C(month: 2, day: 29), after: "2024-02-29T00:00:00Z", "2028-02-29T00:00:00Z",
                     "exactly at Feb 29 2024 00:00 → 2028"),
        CalendarCase("UTC", C(month: 2, day: 29), after: "2024-02-28T23:59:59Z", "2024-02-29T00:00:00Z",
                     "one second before Feb 29 2024"),
        CalendarCase("UTC", C(month: 2, day: 29), after: "2096-03-01T00:00:00Z", "2104-02-29T00:00:00Z",
                     "2100 is not leap (divisible by 100, not 400) → 2104"),
        CalendarCase("UTC", C(month: 2, day: 29), after: "1997-01-01T00:00:00Z", "2000-02-29T00:00:00Z",
                     "2000 is leap (divisible by 400)"),
        CalendarCase("UTC", C(month: 2, day: 29), after: "1958-06-01T00:00:00Z", "1960-02-29T00:00:00Z",
                     "before the epoch: 1960 is leap"),
        // weekday: 1 = Sunday … 7 = Saturday; 2024-05-10 is a Friday.
        CalendarCase("UTC", C(weekday: 2), after: "2024-05-10T12:00:00Z", "2024-05-13T00:00:00Z",
                     "weekday 2 alone: Mondays at 00:00 → Monday 2024-05-13"),
        CalendarCase("UTC", C(weekday: 1), after: "2024-05-10T12:00:00Z", "2024-05-12T00:00:00Z",
                     "weekday 1 = Sunday 2024-05-12"),
        CalendarCase("UTC", C(weekday: 7), after: "2024-05-10T12:00:00Z", "2024-05-11T00:00:00Z",
                     "weekday 7 = Saturday 2024-05-11"),
        CalendarCase("UTC", C(weekday: 6), after: "2024-05-10T12:00:00Z", "2024-05-17T00:00:00Z",
                     "weekday 6 = Friday, today's 00:00 is past → next Friday"),
        CalendarCase("UTC", C(hour: 9, weekday: 2), after: "2024-05-10T12:00:00Z", "2024-05-13T09:00:00Z",
                     "Mondays 09:00 from a Friday"),
        CalendarCase("UTC", C(hour: 9, weekday: 2), after: "2024-05-13T08:59:59Z", "2024-05-13T09:00:00Z",
                     "Mondays 09:00, a second before"),
        CalendarCase("UTC", C(hour: 9, weekday: 2), after: "2024-05-13T09:00:00Z", "2024-05-20T09:00:00Z",
                     "Mondays 09:00, exactly at one → a week later"),
        CalendarCase("UTC", C(hour: 9, weekday: 4), after: "2024-05-30T12:00:00Z", "2024-06-05T09:00:00Z",
                     "Wednesdays 09:00 across a month end (May 30 is a Thursday, June 5 a Wednesday)"),
        CalendarCase("UTC", C(day: 13, weekday: 6), after: "2024-05-10T00:00:00Z", "2024-09-13T00:00:00Z",
                     "Friday the 13th: June 13 Thu, July 13 Sat, Aug 13 Tue, Sep 13 Fri"),
        // month and day: yearly.
        CalendarCase("UTC", C(month: 12, day: 25), after: "2024-05-10T00:00:00Z", "2024-12-25T00:00:00Z",
                     "Dec 25 yearly"),
        CalendarCase("UTC", C(month: 12, day: 25), after: "2024-12-25T00:00:00Z", "2025-12-25T00:00:00Z",
                     "Dec 25 yearly, exactly at one → next year"),
        CalendarCase("UTC", C(month: 6), after: "2024-05-10T00:00:00Z", "2024-06-01T00:00:00Z",
                     "month only: June 1 00:00"),
        CalendarCase("UTC", C(month: 6), after: "2024-06-01T00:00:00Z", "2025-06-01T00:00:00Z",
                     "month only, at one → next year's June 1"),
        // year.
        CalendarCase("UTC", C(year: 2023), after: "2024-05-10T00:00:00Z", nil, "year already past"),
        CalendarCase("UTC", C(year: 2024, month: 3, day: 1), after: "2024-05-10T00:00:00Z", nil,
                     "this year, but the date is past"),
        CalendarCase("UTC", C(year: 2025), after: "2024-05-10T00:00:00Z", "2025-01-01T00:00:00Z",
                     "year only: its first second"),
        CalendarCase("UTC", C(year: 2024, month: 12, day: 31, hour: 23, minute: 59, second: 59),
                     after: "2024-12-31T23:59:58Z", "2024-12-31T23:59:59Z", "a full date-time, a second before"),
        CalendarCase("UTC", C(year: 2024, month: 12, day: 31, hour: 23, minute: 59, second: 59),
                     after: "2024-12-31T23:59:59Z", nil, "a full date-time, exactly at it → none left"),
        CalendarCase("UTC", C(year: 2030, hour: 8, weekday: 2), after: "2024-05-10T00:00:00Z",
                     "2030-01-07T08:00:00Z",
                     "first Monday of 2030: 2030-01-01 is a Tuesday (2024-01-01 Mon + 6·365 + 2 leap days = +2192 d ≡ +1)"),
        CalendarCase("UTC", C(year: 9999, month: 12, day: 31), after: "2024-05-10T00:00:00Z", "9999-12-31T00:00:00Z",
                     "a year far beyond the 400-year search window is still found (the search starts at that year)"),
        // never.
        CalendarCase("UTC", C(month: 2, day: 30), after: "2024-01-01T00:00:00Z", nil, "Feb 30 never exists"),
    ]

    static let dstCases: [CalendarCase] = [
        // --- Europe/Vienna, spring forward 2024-03-31 02:00 CET → 03:00 CEST (01:00Z).
        CalendarCase("Europe/Vienna", C(hour: 8), after: "2024-03-30T12:00:00+01:00", "2024-03-31T08:00:00+02:00",
                     "daily 08:00 over the change: now CEST, 06:00Z"),
        CalendarCase("Europe/Vienna", C(hour: 2, minute: 30), after: "2024-03-30T12:00:00+01:00",
                     "2024-03-31T03:30:00+02:00",
                     "GAP: 02:30 does not exist; with the CET offset before the jump 02:30+01:00 = 01:30Z = 03:30 CEST"),
        CalendarCase("Europe/Vienna", C(hour: 2, minute: 30), after: "2024-03-31T03:30:00+02:00",
                     "2024-04-01T02:30:00+02:00", "after the moved firing → next day's 02:30 CEST (00:30Z)"),
        CalendarCase("Europe/Vienna", C(hour: 2), after: "2024-03-30T12:00:00+01:00", "2024-03-31T03:00:00+02:00",
                     "GAP start: 02:00+01:00 = 01:00Z = 03:00 CEST"),
        CalendarCase("Europe/Vienna", C(hour: 3), after: "2024-03-30T12:00:00+01:00", "2024-03-31T03:00:00+02:00",
                     "03:00 is the first wall time after the gap: 01:00Z"),
        CalendarCase("Europe/Vienna", C(minute: 15), after: "2024-03-31T01:20:00+01:00", "2024-03-31T03:15:00+02:00",
                     "hourly :15: 02:15 is in the gap → 02:15+01:00 = 01:15Z, the same instant as 03:15 CEST"),
        CalendarCase("Europe/Vienna", C(minute: 15), after: "2024-03-31T03:15:00+02:00", "2024-03-31T04:15:00+02:00",
                     "hourly :15: the moved 02:15 and the real 03:15 fire once → then 04:15 CEST (02:15Z)"),
        CalendarCase("Europe/Vienna", C(second: 0), after: "2024-03-31T01:59:30+01:00", "2024-03-31T03:00:00+02:00",
                     "every minute: 02:00…02:59 are moved by 1 h; the first after 00:59:30Z is 01:00Z"),
        CalendarCase("Europe/Vienna", C(second: 0), after: "2024-03-31T03:00:00+02:00", "2024-03-31T03:01:00+02:00",
                     "every minute: after 01:00Z comes 01:01Z (moved 02:01 = real 03:01), not a later gap minute"),
        CalendarCase("Europe/Vienna", C(day: 31, hour: 9), after: "2024-03-31T09:00:00+02:00",
                     "2024-05-31T09:00:00+02:00", "day 31 09:00 in Vienna: April skipped"),
        // --- Europe/Vienna, fall back 2024-10-27 03:00 CEST → 02:00 CET (01:00Z): 02:00–02:59 twice.
        CalendarCase("Europe/Vienna", C(hour: 2, minute: 30), after: "2024-10-26T12:00:00+02:00",
                     "2024-10-27T02:30:00+02:00", "OVERLAP: first occurrence, with CEST: 00:30Z"),
        CalendarCase("Europe/Vienna", C(hour: 2, minute: 30), after: "2024-10-27T02:30:00+02:00",
                     "2024-10-28T02:30:00+01:00",
                     "repeating after the first occurrence: not the second one (01:30Z) but the next day, 01:30Z on 10-28"),
        CalendarCase("Europe/Vienna", C(hour: 2, minute: 30), after: "2024-10-27T02:10:00+01:00",
                     "2024-10-28T02:30:00+01:00", "asked during the repeated hour (01:10Z): the second 02:30 does not match"),
        CalendarCase("Europe/Vienna", C(hour: 2), after: "2024-10-26T12:00:00+02:00", "2024-10-27T02:00:00+02:00",
                     "02:00 on the fall-back day: first occurrence 00:00Z"),
        CalendarCase("Europe/Vienna", C(hour: 3), after: "2024-10-26T12:00:00+02:00", "2024-10-27T03:00:00+01:00",
                     "03:00 CEST never shows (the clock turns back at it); 03:00 CET = 02:00Z"),
        CalendarCase("Europe/Vienna", C(minute: 15), after: "2024-10-27T01:20:00+02:00", "2024-10-27T02:15:00+02:00",
                     "hourly :15 into the overlap: 02:15 CEST = 00:15Z"),
        CalendarCase("Europe/Vienna", C(minute: 15), after: "2024-10-27T02:15:00+02:00", "2024-10-27T03:15:00+01:00",
                     "hourly :15: 02:15 CET (01:15Z) is a second occurrence → 03:15 CET = 02:15Z"),
        CalendarCase("Europe/Vienna", C(hour: 8), after: "2024-10-26T08:00:00+02:00", "2024-10-27T08:00:00+01:00",
                     "daily 08:00 over the change: 07:00Z, 25 h after the previous"),
        CalendarCase("Europe/Vienna", C(year: 2025), after: "2024-05-10T00:00:00+02:00", "2025-01-01T00:00:00+01:00",
                     "year only, local midnight: 2024-12-31T23:00Z"),
        CalendarCase("Europe/Vienna", C(month: 2, day: 29, weekday: 2), after: "2024-05-10T00:00:00+02:00",
                     "2044-02-29T00:00:00+01:00",
                     "Feb 29 on a Monday: 2016 Mon; each 4 years +1461 d ≡ +5: 2020 Sat, 2024 Thu, 2028 Tue, 2032 Sun, 2036 Fri, 2040 Wed, 2044 Mon"),
        CalendarCase("Europe/Vienna", C(year: 2400, month: 2, day: 29, hour: 2, minute: 30), after: "2024-05-10T00:00:00+02:00",
                     "2400-02-29T02:30:00+01:00", "2400 is leap (divisible by 400); February is CET: 01:30Z"),
        // --- America/New_York, 2024-03-10 02:00 EST → 03:00 EDT (07:00Z).
        CalendarCase("America/New_York", C(hour: 2, minute: 30), after: "2024-03-09T12:00:00-05:00",
                     "2024-03-10T03:30:00-04:00", "GAP: 02:30−05:00 = 07:30Z = 03:30 EDT"),
        CalendarCase("America/New_York", C(hour: 2, minute: 30, weekday: 1), after: "2024-03-08T12:00:00-05:00",
                     "2024-03-10T03:30:00-04:00", "Sundays 02:30: Sunday 2024-03-10 is the change day → moved to 03:30 EDT"),
        CalendarCase("America/New_York", C(hour: 9, weekday: 2), after: "2024-03-08T12:00:00-05:00",
                     "2024-03-11T09:00:00-04:00", "Mondays 09:00 from Friday 03-08: Monday 03-11, now EDT = 13:00Z"),
        // --- America/New_York, 2024-11-03 02:00 EDT → 01:00 EST (06:00Z): 01:00–01:59 twice.
        CalendarCase("America/New_York", C(hour: 1, minute: 30), after: "2024-11-02T12:00:00-04:00",
                     "2024-11-03T01:30:00-04:00", "OVERLAP: first occurrence, EDT: 05:30Z"),
        CalendarCase("America/New_York", C(hour: 1, minute: 30), after: "2024-11-03T01:30:00-04:00",
                     "2024-11-04T01:30:00-05:00", "after the first: not 06:30Z the same day but 06:30Z on 11-04"),
        CalendarCase("America/New_York", C(hour: 0), after: "2024-11-02T12:00:00-04:00", "2024-11-03T00:00:00-04:00",
                     "midnight before the change: 04:00Z"),
        CalendarCase("America/New_York", C(hour: 0), after: "2024-11-03T00:00:00-04:00", "2024-11-04T00:00:00-05:00",
                     "next midnight, EST: 05:00Z (25 h later)"),
        // --- Australia/Sydney (southern hemisphere): DST ends 2024-04-07 03:00 AEDT → 02:00 AEST.
        CalendarCase("Australia/Sydney", C(hour: 2, minute: 30), after: "2024-04-06T12:00:00+11:00",
                     "2024-04-07T02:30:00+11:00", "OVERLAP: first occurrence, AEDT: 2024-04-06T15:30Z"),
        CalendarCase("Australia/Sydney", C(hour: 2, minute: 30), after: "2024-04-07T02:30:00+11:00",
                     "2024-04-08T02:30:00+10:00", "not the second 02:30 (16:30Z) → next day, 2024-04-07T16:30Z"),
        // --- Australia/Sydney: DST starts 2024-10-06 02:00 AEST → 03:00 AEDT.
        CalendarCase("Australia/Sydney", C(hour: 2, minute: 30), after: "2024-10-05T12:00:00+10:00",
                     "2024-10-06T03:30:00+11:00", "GAP: 02:30+10:00 = 2024-10-05T16:30Z = 03:30 AEDT"),
        CalendarCase("Australia/Sydney", C(hour: 8), after: "2024-10-05T09:00:00+10:00", "2024-10-06T08:00:00+11:00",
                     "daily 08:00 over the change: 2024-10-05T21:00Z"),
        CalendarCase("Australia/Sydney", C(month: 1, day: 1), after: "2024-06-01T00:00:00+10:00",
                     "2025-01-01T00:00:00+11:00", "New Year in summer time: 2024-12-31T13:00Z"),
        // --- Australia/Lord_Howe, +10:30 / +11:00.
        CalendarCase("Australia/Lord_Howe", C(minute: 0), after: "2024-05-10T00:10:00Z", "2024-05-10T11:00:00+10:30",
                     "hourly on a half-hour offset: 00:10Z is 10:40 local → 11:00 local = 00:30Z"),
        CalendarCase("Australia/Lord_Howe", C(hour: 2, minute: 15), after: "2024-10-05T12:00:00+10:30",
                     "2024-10-06T02:45:00+11:00",
                     "GAP of 30 min (02:00–02:29): 02:15+10:30 = 2024-10-05T15:45Z = 02:45+11:00"),
        CalendarCase("Australia/Lord_Howe", C(hour: 2, minute: 15), after: "2024-10-06T02:45:00+11:00",
                     "2024-10-07T02:15:00+11:00", "after the moved one → next day 02:15+11:00 = 2024-10-06T15:15Z"),
        CalendarCase("Australia/Lord_Howe", C(hour: 2), after: "2024-10-05T12:00:00+10:30", "2024-10-06T02:30:00+11:00",
                     "GAP start: 02:00+10:30 = 15:30Z = 02:30+11:00"),
        CalendarCase("Australia/Lord_Howe", C(hour: 1, minute: 45), after: "2024-04-06T12:00:00+11:00",
                     "2024-04-07T01:45:00+11:00", "OVERLAP of 30 min (01:30–01:59 twice): first, +11:00 = 2024-04-06T14:45Z"),
        CalendarCase("Australia/Lord_Howe", C(hour: 1, minute: 45), after: "2024-04-07T01:45:00+11:00",
                     "2024-04-08T01:45:00+10:30", "not the second 01:45 (15:15Z) → next day, 2024-04-07T15:15Z"),
        CalendarCase("Australia/Lord_Howe", C(hour: 2), after: "2024-04-06T12:00:00+11:00", "2024-04-07T02:00:00+10:30",
                     "02:00 right after the overlap occurs once, at +10:30: 15:30Z"),
        // --- A skipped day and a change of standard offset.
        CalendarCase("Pacific/Apia", C(hour: 12), after: "2011-12-29T13:00:00-10:00", "2011-12-31T12:00:00+14:00",
                     "2011-12-30 never existed: its 12:00 moves by the 24 h gap to 12:00−10:00 = 2011-12-30T22:00Z, which is also Dec 31 12:00+14:00"),
        CalendarCase("Pacific/Apia", C(hour: 12), after: "2011-12-31T12:00:00+14:00", "2012-01-01T12:00:00+14:00",
                     "the moved and the real 12:00 fire once → Jan 1 12:00+14:00 = 2011-12-31T22:00Z"),
        CalendarCase("Europe/Volgograd", C(hour: 1, minute: 30), after: "2020-12-26T12:00:00+04:00",
                     "2020-12-27T01:30:00+04:00", "standard-offset change back by 1 h: first 01:30 (+04:00) = 2020-12-26T21:30Z"),
        CalendarCase("Europe/Volgograd", C(hour: 1, minute: 30), after: "2020-12-27T01:30:00+04:00",
                     "2020-12-28T01:30:00+03:00", "not the second 01:30 (22:30Z) → next day, 2020-12-27T22:30Z"),
    ]

    @Test(arguments: utcCases + dstCases)
    func nextDate(_ c: CalendarCase) throws {
        let cal = try ZonedCalendar(timeZoneIdentifier: c.zone)
        let got = cal.nextDate(after: at(c.after), matching: c.components)
        let want = c.expected.map(at)
        #expect(got == want, "\(c.why): got \(got.map(RFC3339.format) ?? "nil"), want \(want.map(RFC3339.format) ?? "nil")")
    }

    // Whole-year walks: counts worked out by hand, and firings must strictly increase.

    @Test func hourlyThroughViennaYearFiresOncePerDistinctInstant() throws {
        // 2024 has 366 days × 24 on-the-hour wall times = 8784. On 03-31 the moved 02:00 is the same
        // instant as 03:00 (one fewer); on 10-27 the repeated 02:00 fires only the first time (no
        // change). So 8783 firings in [2024-01-01T00:00+01:00, 2025-01-01T00:00+01:00).
        let cal = try ZonedCalendar(timeZoneIdentifier: "Europe/Vienna")
        var t = at("2024-01-01T00:00:00+01:00") - 1
        let end = at("2025-01-01T00:00:00+01:00")
        var count = 0
        while let next = cal.nextDate(after: t, matching: C(minute: 0)), next < end, count < 10_000 {
            guard next > t else { Issue.record("not strictly after \(RFC3339.format(t))"); break }
            #expect(next.truncatingRemainder(dividingBy: 3600) == 0)  // whole hours in UTC too (offsets are whole hours)
            t = next
            count += 1
        }
        #expect(count == 8783)
    }

    @Test func dailyThroughSydneyYearFiresEveryDay() throws {
        // One 02:30 per local day of 2024 (366), the gap day's moved to 03:30, the overlap day's once.
        let cal = try ZonedCalendar(timeZoneIdentifier: "Australia/Sydney")
        var t = at("2024-01-01T00:00:00+11:00")
        let end = at("2025-01-01T00:00:00+11:00")
        var count = 0
        while let next = cal.nextDate(after: t, matching: C(hour: 2, minute: 30)), next < end, count < 1_000 {
            guard next > t else { Issue.record("not strictly after \(RFC3339.format(t))"); break }
            #expect(next - t >= 23 * 3600 && next - t <= 25 * 3600 || count == 0)
            t = next
            count += 1
        }
        #expect(count == 366)
    }

    // Zones.

    @Test func defaultZoneIsUTC() throws {
        let cal = try ZonedCalendar()
        #expect(cal.timeZoneIdentifier == "UTC")
        #expect(cal.nextDate(after: at("2024-05-10T07:00:00Z"), matching: C(hour: 8)) == at("2024-05-10T08:00:00Z"))
    }

    @Test(arguments: ["Nowhere/Land", "", "Europe/Vienn"])
    func unknownZoneThrows(_ id: String) {
        #expect(throws: CalendarScheduleError.unknownTimeZone(id)) { try ZonedCalendar(timeZoneIdentifier: id) }
        #expect(CalendarScheduleError.unknownTimeZone(id).description == "unknown time zone \"\(id)\"")
    }

    @Test func nonFiniteTimeHasNoNextDate() throws {
        let cal = try ZonedCalendar()
        #expect(cal.nextDate(after: .nan, matching: C(hour: 8)) == nil)
        #expect(cal.nextDate(after: .infinity, matching: C(hour: 8)) == nil)
    }

    // Validation.

    static let invalid: [(CalendarComponents, String)] = [
        (C(), "calendar trigger needs at least one component"),
        (C(month: 13), "month 13 is out of range 1...12"),
        (C(month: 0), "month 0 is out of range 1...12"),
        (C(day: 0), "day 0 is out of range 1...31"),
        (C(day: 32), "day 32 is out of range 1...31"),
        (C(hour: 24), "hour 24 is out of range 0...23"),
        (C(hour: -1), "hour -1 is out of range 0...23"),
        (C(minute: 60), "minute 60 is out of range 0...59"),
        (C(minute: -5), "minute -5 is out of range 0...59"),
        (C(second: 60), "second 60 is out of range 0...59"),
        (C(weekday: 0), "weekday 0 is out of range 1...7 (1 = Sunday … 7 = Saturday)"),
        (C(weekday: 8), "weekday 8 is out of range 1...7 (1 = Sunday … 7 = Saturday)"),
        (C(year: 0), "year 0 is out of range 1...9999"),
        (C(year: -2024), "year -2024 is out of range 1...9999"),
        (C(month: 2, day: 30), "day 30 never occurs in month 2"),
        (C(month: 4, day: 31), "day 31 never occurs in month 4"),
        (C(year: 2023, month: 2, day: 29), "day 29 does not exist in month 2 of 2023"),
        (C(year: 2100, month: 2, day: 29), "day 29 does not exist in month 2 of 2100"),
        // 2024-03-31 is a Sunday: 2024-03-01 is a Friday (Jan 31 + Feb 29 = 60 days after Monday Jan 1).
        (C(year: 2024, month: 3, day: 31, weekday: 2), "2024-03-31 is a Sunday (weekday 1), not weekday 2"),
    ]

    @Test(arguments: invalid)
    func invalidComponentsAreRefused(_ c: CalendarComponents, _ reason: String) throws {
        #expect(ZonedCalendar.validate(c) == reason)
        #expect(try ZonedCalendar().nextDate(after: at("2024-01-01T00:00:00Z"), matching: c) == nil)
    }

    @Test(arguments: [
        C(month: 2, day: 29), C(weekday: 7), C(hour: 0, weekday: 1), C(second: 59), C(minute: 0),
        C(year: 2024, month: 2, day: 29), C(year: 2000, month: 2, day: 29), C(year: 2100, month: 2, day: 28),
        C(year: 2024, month: 3, day: 31, weekday: 1), C(year: 1), C(year: 9999, month: 12, day: 31),
        C(month: 4, day: 30), C(hour: 23, minute: 59, second: 59),
    ])
    func validComponentsPass(_ c: CalendarComponents) {
        #expect(ZonedCalendar.validate(c) == nil)
    }
}
