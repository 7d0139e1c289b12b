import Foundation
import GeotriggerCore
import Testing
@testable import GeotriggerScheduling

private func at(_ s: String) -> Int {
    guard let t = RFC3339.parse(s) else { fatalError("bad test time stamp \(s)") }
    return Int(t)
}

private func rule(_ s: String) throws -> PosixZoneRule {
    let bytes = Array(s.utf8)
    return try bytes.withUnsafeBytes { b throws(ZoneDataError) in try PosixZoneRule(b) }
}

private func zone(_ bytes: [UInt8]) -> Result<ZoneRules, ZoneDataError> {
    bytes.withUnsafeBytes { b in Result { () throws(ZoneDataError) in try ZoneRules(tzif: b) } }
}

/// A TZif file of version 2 written by hand: `times` with the type index of each, the types'
/// offsets, and the footer.
private func tzif(times: [Int64], types: [UInt8], offsets: [Int32], footer: String, leap: Bool = false) -> [UInt8] {
    func be32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32($0))) } }
    func be64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) } }
    func header(_ timecnt: Int) -> [UInt8] {
        Array("TZif2".utf8) + [UInt8](repeating: 0, count: 15)
            + [0, 0, leap ? 1 : 0, timecnt, offsets.count, 4].flatMap { be32(UInt32($0)) }
    }
    // Version 1's block is empty of transitions (a reader of version 2 skips it).
    var v1 = header(0)
    for o in offsets { v1 += be32(UInt32(bitPattern: o)) + [0, 0] }
    v1 += Array("ABC\0".utf8) + (leap ? [0, 0, 0, 0, 0, 0, 0, 1] : [])
    var v2 = header(times.count)
    for t in times { v2 += be64(UInt64(bitPattern: t)) }
    v2 += types
    for o in offsets { v2 += be32(UInt32(bitPattern: o)) + [0, 0] }
    v2 += Array("ABC\0".utf8) + (leap ? [UInt8](repeating: 0, count: 11) + [1] : [])
    return v1 + v2 + Array("\n\(footer)\n".utf8)
}

@Suite struct ZoneRulesTests {
    // MARK: Footer rules, worked out by hand

    @Test func viennaRuleChangesOnTheLastSundays() throws {
        // CET +01:00, CEST +02:00 from the last Sunday of March 02:00 CET to the last Sunday of
        // October 03:00 CEST: 2024-03-31T01:00Z and 2024-10-27T01:00Z.
        let r = try rule("CET-1CEST,M3.5.0,M10.5.0/3")
        #expect(r.offset(at: at("2024-03-31T00:59:59Z")) == 3600)
        #expect(r.offset(at: at("2024-03-31T01:00:00Z")) == 7200)
        #expect(r.offset(at: at("2024-10-27T00:59:59Z")) == 7200)
        #expect(r.offset(at: at("2024-10-27T01:00:00Z")) == 3600)
        #expect(r.nextChange(after: at("2024-01-01T00:00:00Z")) == at("2024-03-31T01:00:00Z"))
        #expect(r.nextChange(after: at("2024-03-31T01:00:00Z")) == at("2024-10-27T01:00:00Z"))
        #expect(r.nextChange(after: at("2024-10-27T01:00:00Z")) == at("2025-03-30T01:00:00Z"))
    }

    @Test func southernHemisphereAndHalfHourShift() throws {
        // Lord Howe: +10:30, +11:00 from the first Sunday of October 02:00 (+10:30) to the first
        // Sunday of April 02:00 (+11:00): 2024-04-06T15:00Z and 2024-10-05T15:30Z.
        let r = try rule("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0")
        #expect(r.offset(at: at("2024-01-15T00:00:00Z")) == 39600)
        #expect(r.nextChange(after: at("2024-01-15T00:00:00Z")) == at("2024-04-06T15:00:00Z"))
        #expect(r.offset(at: at("2024-04-06T15:00:00Z")) == 37800)
        #expect(r.nextChange(after: at("2024-04-06T15:00:00Z")) == at("2024-10-05T15:30:00Z"))
        #expect(r.offset(at: at("2024-10-05T15:30:00Z")) == 39600)
    }

    @Test func negativeDaylightSavingAndNegativeTimes() throws {
        // Dublin as tzdata writes it: IST (+01:00) is the standard time, GMT the winter one, from
        // the last Sunday of October 02:00 IST to the last Sunday of March 01:00 GMT.
        let dublin = try rule("IST-1GMT0,M10.5.0,M3.5.0/1")
        #expect(dublin.offset(at: at("2024-07-01T00:00:00Z")) == 3600)
        #expect(dublin.offset(at: at("2024-12-01T00:00:00Z")) == 0)
        #expect(dublin.nextChange(after: at("2024-07-01T00:00:00Z")) == at("2024-10-27T01:00:00Z"))
        #expect(dublin.nextChange(after: at("2024-10-27T01:00:00Z")) == at("2025-03-30T01:00:00Z"))
        // Nuuk: −02:00, −01:00 from the last Sunday of March at −01:00 local (2024-03-31 is that
        // Sunday: the Saturday's 23:00 −02:00 = 2024-03-31T01:00Z) to the last Sunday of October
        // at 00:00 −01:00 (2024-10-27T01:00Z).
        let nuuk = try rule("<-02>2<-01>,M3.5.0/-1,M10.5.0/0")
        #expect(nuuk.nextChange(after: at("2024-01-01T00:00:00Z")) == at("2024-03-31T01:00:00Z"))
        #expect(nuuk.nextChange(after: at("2024-03-31T01:00:00Z")) == at("2024-10-27T01:00:00Z"))
    }

    @Test func daylightSavingAllYearChangesNothing() throws {
        // From January 1 00:00 to December 31 25:00, i.e. the next January 1 01:00 (−02:00),
        // the instant the next year's begins: always −02:00.
        let r = try rule("<-03>3<-02>,0/0,J365/25")
        for s in ["2024-01-01T02:59:59Z", "2024-01-01T03:00:00Z", "2024-07-01T00:00:00Z", "2024-12-31T23:59:59Z",
                  "2025-01-01T03:00:00Z"] {
            #expect(r.offset(at: at(s)) == -7200, "\(s)")
        }
        #expect(r.nextChange(after: at("2024-06-01T00:00:00Z")) == nil)
    }

    @Test func julianDays() throws {
        // J60 is March 1 in every year (February 29 never counted); 59 counted from 0 is March 1
        // in a common year and February 29 in a leap one.
        let j = try rule("AAA0BBB,J60/0,J300/0")
        #expect(j.nextChange(after: at("2024-01-01T00:00:00Z")) == at("2024-03-01T00:00:00Z"))
        #expect(j.nextChange(after: at("2023-01-01T00:00:00Z")) == at("2023-03-01T00:00:00Z"))
        let n = try rule("AAA0BBB,59/0,300/0")
        #expect(n.nextChange(after: at("2024-01-01T00:00:00Z")) == at("2024-02-29T00:00:00Z"))
        #expect(n.nextChange(after: at("2023-01-01T00:00:00Z")) == at("2023-03-01T00:00:00Z"))
    }

    @Test func fixedOffsetRules() throws {
        #expect(try rule("JST-9").offset(at: 0) == 32400)
        #expect(try rule("JST-9").nextChange(after: 0) == nil)
        #expect(try rule("<-0330>3:30").offset(at: 0) == -12600)
        #expect(try rule("UTC0") == rule("<UTC>+0"))
    }

    @Test(arguments: ["", "X0", "CET", "CET-1CEST,M3.5.0", "CET-1CEST,M13.5.0,M10.5.0", "CET-1CEST,M3.6.0,M10.5.0",
                      "CET-1CEST,M3.5.7,M10.5.0", "CET-1CEST,J0,J5", "CET-1CEST,366,5", "CET-25", "<AB>1",
                      "CET-1CEST,M3.5.0/168,M10.5.0", "CET-1CEST,M3.5.0,M10.5.0x", "CET-1CEST-30"])
    func malformedRulesAreRefused(_ s: String) {
        #expect(throws: ZoneDataError.self) { try rule(s) }
    }

    // MARK: TZif files

    @Test func handWrittenFileUsesItsTransitionsThenItsFooter() throws {
        // −05:00 until 2000-01-01T00:00Z, +01:00 until 2010-01-01T00:00Z, then the footer's Vienna rule.
        let bytes = tzif(times: [946_684_800, 1_262_304_000], types: [1, 2], offsets: [-18000, 3600, 3600],
                         footer: "CET-1CEST,M3.5.0,M10.5.0/3")
        let z = try zone(bytes).get()
        #expect(z.secondsFromUTC(at: 0) == -18000)
        #expect(z.secondsFromUTC(at: 946_684_799) == -18000)
        #expect(z.secondsFromUTC(at: 946_684_800) == 3600)
        // The transition in 2010 changes no offset: the next change is the footer's first.
        #expect(z.nextChange(after: 0) == 946_684_800)
        #expect(z.nextChange(after: 946_684_800) == at("2010-03-28T01:00:00Z"))
        #expect(z.secondsFromUTC(at: at("2010-07-01T00:00:00Z")) == 7200)
    }

    @Test func malformedFilesAreRefusedWithAReason() {
        let good = tzif(times: [100], types: [1], offsets: [0, 3600], footer: "AAA-1")
        #expect(throws: Never.self) { try zone(good).get() }
        var cases: [(String, [UInt8])] = [
            ("not a TZif file", Array("TZjf".utf8) + good.dropFirst(4)),
            ("leap seconds", tzif(times: [100], types: [1], offsets: [0, 3600], footer: "AAA-1", leap: true)),
            ("out of order", tzif(times: [200, 100], types: [1, 0], offsets: [0, 3600], footer: "AAA-1")),
            ("type 2 of 2", tzif(times: [100], types: [2], offsets: [0, 3600], footer: "AAA-1")),
            ("offset", tzif(times: [100], types: [1], offsets: [0, 100_000], footer: "AAA-1")),
            ("footer", tzif(times: [100], types: [1], offsets: [0, 3600], footer: "A")),
        ]
        for cut in [10, 44, 60, good.count - 1] { cases.append(("cut short", Array(good.prefix(cut)))) }
        for (what, bytes) in cases {
            switch zone(bytes) {
            case .success: Issue.record("\(what): read")
            case .failure(let e): #expect(!e.description.isEmpty, "\(what)")
            }
        }
    }

    @Test(arguments: ["../etc/passwd", "/etc/passwd", "Europe/../UTC", "Europe//Vienna", "Europe/", "-x", "Europe/Vi enna",
                      "right/Europe/Vienna", "zone.tab", "Europe"])
    func identifiersThatAreNoZoneAreUnknown(_ id: String) {
        #expect(throws: CalendarScheduleError.unknownTimeZone(id)) { try ZonedCalendar(timeZoneIdentifier: id) }
    }

    @Test func aDatabaseOfItsOwnIsReadAndAMissingOneIsSaidSo() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("zones-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("Test"), withIntermediateDirectories: true)
        let bytes = tzif(times: [946_684_800], types: [1], offsets: [-18000, 3600], footer: "AAA-1")
        try Data(bytes).write(to: dir.appendingPathComponent("Test/Zone"))
        let cal = try ZonedCalendar(timeZoneIdentifier: "Test/Zone", database: dir.path)
        #expect(cal.secondsFromUTC(at: 0) == -18000)
        #expect(cal.secondsFromUTC(at: 946_684_800) == 3600)
        #expect(throws: CalendarScheduleError.unknownTimeZone("Test/None")) {
            try ZonedCalendar(timeZoneIdentifier: "Test/None", database: dir.path)
        }
        let missing = dir.appendingPathComponent("absent").path
        let error = CalendarScheduleError.noTimeZoneDatabase("Europe/Vienna", directory: missing)
        #expect(throws: error) { try ZonedCalendar(timeZoneIdentifier: "Europe/Vienna", database: missing) }
        #expect(error.description == "unknown time zone \"Europe/Vienna\": no time zone database in \(missing) (install tzdata, or set TZDIR)")
        // UTC needs no database.
        #expect(try ZonedCalendar(timeZoneIdentifier: "UTC", database: missing).secondsFromUTC(at: 0) == 0)
    }

    // MARK: The system's database against zdump

    /// zdump's lines `ZONE  Sun Mar 31 00:59:59 2024 UT = … isdst=0 gmtoff=3600`: the instant
    /// and its offset, per zone.
    static func zdump(_ zones: [String], from: Int, to: Int) throws -> [String: [(t: Int, offset: Int)]] {
        let path = ["/usr/bin/zdump", "/usr/sbin/zdump"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let path else {
            throw TestFailure("zdump is missing (Debian's libc-bin has it): it is the reference these tests compare with")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = ["-v", "-c", "\(from),\(to)"] + zones
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var result: [String: [(t: Int, offset: Int)]] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard f.count >= 7, f[6] == "UT", let offsetField = f.last, offsetField.hasPrefix("gmtoff="),
                  let offset = Int(offsetField.dropFirst(7)), let month = months.firstIndex(of: String(f[2])),
                  let day = Int(f[3]), let year = Int(f[5]) else { continue }
            let hms = f[4].split(separator: ":").compactMap { Int($0) }
            guard hms.count == 3 else { continue }
            let t = RFC3339.daysFromCivil(year: year, month: month + 1, day: day) * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2]
            result[String(f[0]), default: []].append((t, offset))
        }
        return result
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    /// Every zone the system's database has (not its "right/" and "posix/" copies).
    static func systemZones() throws -> [String] {
        let root = ZoneRules.directory
        guard let walk = FileManager.default.enumerator(atPath: root) else {
            throw TestFailure("no time zone database at \(root): install tzdata (scripts/bootstrap does)")
        }
        var zones: [String] = []
        while let name = walk.nextObject() as? String {
            if name.hasPrefix("right") || name.hasPrefix("posix") || name == "localtime" { continue }
            var directory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &directory), !directory.boolValue,
                  let data = try? Data(contentsOf: URL(fileURLWithPath: root + "/" + name)) else { continue }
            if data.prefix(4) == Data("TZif".utf8) { zones.append(name) }
        }
        return zones.sorted()
    }

    /// Our offsets and changes over `from..<to` (years) against zdump's: every instant zdump
    /// prints has its offset, and the changes (where the offset differs from the second
    /// before) are exactly ours, one after another.
    static func compare(_ zones: [String], from: Int, to: Int) throws {
        let reference = try zdump(zones, from: from, to: to)
        let start = RFC3339.daysFromCivil(year: from, month: 1, day: 1) * 86_400
        let end = RFC3339.daysFromCivil(year: to, month: 1, day: 1) * 86_400
        for id in zones {
            let z = try ZoneRules.named(id).get()
            let lines = reference[id] ?? []
            var changes: [Int] = []
            for (k, line) in lines.enumerated() {
                #expect(z.secondsFromUTC(at: line.t) == line.offset,
                        "\(id) at \(RFC3339.format(Double(line.t))): \(z.secondsFromUTC(at: line.t)), zdump \(line.offset)")
                if k > 0, lines[k - 1].t == line.t - 1, lines[k - 1].offset != line.offset { changes.append(line.t) }
            }
            var ours: [Int] = []
            var t = start
            while let next = z.nextChange(after: t), next < end, ours.count < 10_000 {
                ours.append(next)
                t = next
            }
            let differing = zip(ours, changes).first { $0 != $1 }.map { RFC3339.format(Double($0.0)) } ?? "the end"
            #expect(ours == changes, "\(id): \(ours.count) changes, zdump \(changes.count); first differing at \(differing)")
        }
    }

    @Test func everySystemZoneAgreesWithZdump() throws {
        let zones = try Self.systemZones()
        #expect(zones.count > 300, "only \(zones.count) zones in \(ZoneRules.directory)")
        // Transitions from the files (to 2037) and from their footers' rules after that.
        try Self.compare(zones, from: 1990, to: 2060)
    }

    @Test func zonesWithOddHistoriesAgreeWithZdumpFrom1800To2200() throws {
        try Self.compare(["Europe/Vienna", "Australia/Lord_Howe", "Pacific/Apia", "Europe/Volgograd", "America/New_York",
                          "Europe/Dublin", "America/Nuuk", "Africa/Casablanca", "Asia/Kolkata", "America/Sao_Paulo",
                          "Antarctica/Troll", "Pacific/Chatham"], from: 1800, to: 2200)
    }
}
