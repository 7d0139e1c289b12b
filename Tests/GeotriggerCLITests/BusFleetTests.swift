import Foundation
import Testing

/// The Liverpool bus fleet: 8 buses on route 14 outbound, 1,533 real AVL fixes (UK Bus Open Data
/// Service, Open Government Licence v3.0). The data is not in the repository: it is read from
/// `../shared/datasets/liverpool_bus_route14/` beside the repository root, and these tests are
/// skipped, saying so, when that folder is absent. The regions (`Fixtures/bus-fleet.regions.geojson`)
/// and the oracle's exact-mode events (`Fixtures/bus-fleet.expected.ndjson`) come from
/// `tools/oracle/bus_fleet.py`; this file converts the CSV exactly as that script does.
@Suite("Liverpool bus fleet (BusFleet): real buses stopping at real stops",
       .enabled(if: BusFleet.isAvailable,
                "../shared/datasets/liverpool_bus_route14/route14_outbound.csv is absent: the bus fleet (OGL v3) is not shipped with the repository"))
struct BusFleetTests {
    @Test("exact mode on the whole fleet (standard input) equals the geodesic oracle, line by line")
    func exactModeEqualsOracle() throws {
        let fixes = try BusFleet.convert()
        // The script recorded what its conversion produced; ours must be byte-identical.
        let recorded = try BusFleet.recordedConversion()
        #expect(fixes.count == recorded.fixes, "fixes converted")
        #expect(fixes.text.utf8.count == recorded.bytes, "bytes of NDJSON")
        #expect(BusFleet.fnv1a64(fixes.text) == recorded.digest, "NDJSON differs from tools/oracle/bus_fleet.py's")

        let r = try CLI.run(["replay", "--regions", BusFleet.regions] + BusFleet.exact, stdin: Data(fixes.text.utf8))
        #expect(r.status == 0, "\(r.stderr)")
        let expectedText = try String(contentsOf: BusFleet.expected, encoding: .utf8)
        let expected = expectedText.split(separator: "\n").compactMap { EventKey(line: String($0)) }
        let got = r.lines.compactMap(EventKey.init(line:))
        #expect(got.count == r.lines.count, "every output line is an event")
        #expect(expected.count >= 100, "the fixture has hundreds of events")
        #expect(Set(expected.map(\.device)).count >= 5, "events across several buses")
        #expect(got.count == expected.count)
        for (i, (g, e)) in zip(got, expected).enumerated() where g != e {
            Issue.record("line \(i + 1): got \(g), oracle says \(e)")
            break
        }
    }

    @Test("default settings: hysteresis only removes events; visits alternate; enteredAt and --dwell 60 are right")
    func defaultSettings() throws {
        let fixes = try BusFleet.convert()
        let input = Data(fixes.text.utf8)
        let regions = ["replay", "--regions", BusFleet.regions]
        let exactRun = try CLI.run(regions + BusFleet.exact, stdin: input)
        let plainRun = try CLI.run(regions, stdin: input)
        let dwellRun = try CLI.run(regions + ["--dwell", "60"], stdin: input)
        for (name, run) in [("exact", exactRun), ("default", plainRun), ("--dwell 60", dwellRun)] {
            #expect(run.status == 0, "\(name): \(run.stderr)")
        }
        let exact = try BusFleet.events(exactRun), plain = try BusFleet.events(plainRun),
            dwell = try BusFleet.events(dwellRun)
        #expect(exact.count >= 100, "exact mode finds the visits")

        // The default hysteresis (max(20 m, 0.1 r)) can only merge visits, never add them: every
        // enter needs distance ≤ r in both modes, and a visit with hysteresis contains an exact one.
        #expect(plain.count <= exact.count, "default: \(plain.count) events, exact mode: \(exact.count)")
        let exactEnters = Set(exact.filter { $0.key.event == "enter" }.map(\.key))
        let strayEnters = plain.filter { $0.key.event == "enter" && !exactEnters.contains($0.key) }
        #expect(strayEnters.isEmpty, "enters with hysteresis that exact mode does not have: \(strayEnters.prefix(3).map(\.key))")
        #expect(!plain.contains { $0.key.event == "dwell" }, "no dwell without --dwell")

        // Enter/exit alternate per (device, region), starting with enter; exit.enteredAt = enter.t.
        let plainCheck = BusFleet.checkVisits(plain, dwell: nil, endMs: fixes.lastMs)
        #expect(plainCheck.problems.isEmpty, "\(plainCheck.problems.prefix(5))")
        #expect(plainCheck.closed > 50, "many complete visits")
        #expect(Set(plain.map(\.key.device)).count >= 5, "several buses")

        // --dwell changes nothing about enter and exit, and adds one dwell per visit of ≥ 60 s,
        // stamped enter + 60 s, before the visit's exit (or at the end of input).
        #expect(dwell.filter { $0.key.event != "dwell" }.map(\.key) == plain.map(\.key),
                "enter/exit with --dwell 60 equal those without")
        let dwellCheck = BusFleet.checkVisits(dwell, dwell: 60_000, endMs: fixes.lastMs)
        #expect(dwellCheck.problems.isEmpty, "\(dwellCheck.problems.prefix(5))")
        #expect(dwellCheck.dwells > 50, "the buses wait long enough to dwell")
        #expect(dwellCheck.shortVisits > 0, "some visits are too short to dwell (so their absence is checked)")

        // Output time never goes backwards.
        for (name, events) in [("exact", exact), ("default", plain), ("--dwell 60", dwell)] {
            let back = zip(events, events.dropFirst()).first { $0.ms > $1.ms }
            #expect(back == nil, "\(name): \(back.map { "\($0.0.line) before \($0.1.line)" } ?? "")")
        }
    }

    @Test("the visit checker rejects broken event sequences (so the checks above can fail)")
    func checkerCatchesMistakes() throws {
        let fixes = try BusFleet.convert()
        let good = try BusFleet.events(try CLI.run(["replay", "--regions", BusFleet.regions, "--dwell", "60"],
                                                   stdin: Data(fixes.text.utf8)))
        #expect(BusFleet.checkVisits(good, dwell: 60_000, endMs: fixes.lastMs).problems.isEmpty)
        let firstExit = try #require(good.firstIndex { $0.key.event == "exit" })
        let firstDwell = try #require(good.firstIndex { $0.key.event == "dwell" })
        let firstEnter = try #require(good.firstIndex { $0.key.event == "enter" })
        var mutants: [(String, [BusFleet.Event])] = []
        var e = good; e.remove(at: firstExit); mutants.append(("exit dropped", e))
        e = good; e.remove(at: firstEnter); mutants.append(("enter dropped", e))
        e = good; e.remove(at: firstDwell); mutants.append(("dwell dropped", e))
        e = good; e[firstExit].enteredAt = "2026-01-26T00:00:00.000Z"; mutants.append(("wrong enteredAt", e))
        e = good; e[firstDwell].ms += 1000; mutants.append(("dwell 1 s late", e))
        e = good; e.insert(good[firstDwell], at: firstDwell); mutants.append(("dwell twice", e))
        let exitOfDwelled = try #require(good[firstDwell...].firstIndex {
            $0.key.event == "exit" && $0.key.device == good[firstDwell].key.device && $0.key.region == good[firstDwell].key.region
        })
        e = good; e.insert(e.remove(at: firstDwell), at: exitOfDwelled); mutants.append(("dwell after its exit", e))
        for (name, events) in mutants {
            #expect(!BusFleet.checkVisits(events, dwell: 60_000, endMs: fixes.lastMs).problems.isEmpty, "\(name) not caught")
        }
        #expect(!BusFleet.checkVisits(good, dwell: nil, endMs: fixes.lastMs).problems.isEmpty, "dwell without --dwell not caught")
    }
}

/// Reading and converting the fleet; checking event sequences.
enum BusFleet {
    static let csv = CLI.shared.appendingPathComponent("liverpool_bus_route14/route14_outbound.csv")
    static var isAvailable: Bool { FileManager.default.fileExists(atPath: csv.path) }
    static let regions = "Tests/GeotriggerCLITests/Fixtures/bus-fleet.regions.geojson"
    static let expected = CLI.fixtures.appendingPathComponent("bus-fleet.expected.ndjson")
    static let exact = ["--hysteresis", "0", "--max-accuracy", "0", "--initial", "enter"]

    struct Failure: Error, CustomStringConvertible { var description: String }

    struct Converted {
        var text: String
        var count: Int
        /// Time of the last fix, Unix milliseconds (the clock at the end of input).
        var lastMs: Int64
    }

    /// The CSV as NDJSON fixes, exactly as `tools/oracle/bus_fleet.py` writes them: device =
    /// vehicle_id; t = the naive local timestamp as UTC (UK local time is GMT in January; checked);
    /// lat/lon copied verbatim; rows stably sorted by timestamp (the file is ordered by vehicle).
    static func convert() throws -> Converted {
        let text = try String(contentsOf: csv, encoding: .utf8)
        var lines = text.split(whereSeparator: \.isNewline).makeIterator()
        guard let header = lines.next().map(fields) else { throw Failure(description: "empty CSV") }
        func column(_ name: String) throws -> Int {
            guard let i = header.firstIndex(of: name) else { throw Failure(description: "no column \(name)") }
            return i
        }
        let (cv, ct, cla, clo) = (try column("vehicle_id"), try column("timestamp"), try column("latitude"),
                                  try column("longitude"))
        guard let london = TimeZone(identifier: "Europe/London") else { throw Failure(description: "no Europe/London time zone") }
        var rows: [(index: Int, stamp: String, seconds: Int64, line: String)] = []
        var n = 1
        while let raw = lines.next() {
            n += 1
            let f = fields(raw)
            guard f.count == header.count else { throw Failure(description: "line \(n): \(f.count) fields") }
            let (device, stamp, lat, lon) = (f[cv], f[ct], f[cla], f[clo])
            guard let seconds = naiveSeconds(stamp) else { throw Failure(description: "line \(n): bad timestamp \(stamp)") }
            guard london.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds))) == 0 else {
                throw Failure(description: "line \(n): \(stamp) is not GMT in Europe/London; local time ≠ UTC")
            }
            guard isDecimal(lat), isDecimal(lon) else { throw Failure(description: "line \(n): bad lat/lon \(lat),\(lon)") }
            guard !device.isEmpty, device.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            else { throw Failure(description: "line \(n): device \(device) would need JSON escaping") }
            let t = stamp.replacingOccurrences(of: " ", with: "T") + "Z"
            rows.append((rows.count, stamp, seconds,
                         #"{"t":"\#(t)","device":"\#(device)","lat":\#(lat),"lon":\#(lon)}"#))
        }
        // Stable: equal timestamps keep file order.
        rows.sort { ($0.stamp, $0.index) < ($1.stamp, $1.index) }
        return Converted(text: rows.map { $0.line + "\n" }.joined(), count: rows.count,
                         lastMs: (rows.last?.seconds ?? 0) * 1000)
    }

    /// One CSV record's fields (RFC 4180 quoting, as Python's csv module reads it).
    static func fields(_ line: Substring) -> [String] {
        var out: [String] = [], field = "", quoted = false
        let chars = Array(line)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if quoted {
                if c == "\"" {
                    if i + 1 < chars.count && chars[i + 1] == "\"" { field.append("\""); i += 1 } else { quoted = false }
                } else { field.append(c) }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                out.append(field)
                field = ""
            } else {
                field.append(c)
            }
            i += 1
        }
        out.append(field)
        return out
    }

    /// `-?D+.D+`, the only number shape the conversion copies verbatim (the script checks the same).
    static func isDecimal(_ s: String) -> Bool {
        let body = s.hasPrefix("-") ? s.dropFirst() : Substring(s)
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }

    /// "YYYY-MM-DD HH:MM:SS" read as UTC → Unix seconds.
    static func naiveSeconds(_ s: String) -> Int64? {
        let c = Array(s.utf8)
        guard c.count == 19, c[4] == UInt8(ascii: "-"), c[7] == UInt8(ascii: "-"), c[10] == UInt8(ascii: " "),
              c[13] == UInt8(ascii: ":"), c[16] == UInt8(ascii: ":") else { return nil }
        return civilSeconds(c)
    }

    /// "YYYY-MM-DDTHH:MM:SS.mmmZ" (the CLI's output format) → Unix milliseconds.
    static func outputMilliseconds(_ s: String) -> Int64? {
        let c = Array(s.utf8)
        guard c.count == 24, c[10] == UInt8(ascii: "T"), c[19] == UInt8(ascii: "."), c[23] == UInt8(ascii: "Z"),
              let seconds = civilSeconds(c), let ms = number(c[20..<23]) else { return nil }
        return seconds * 1000 + ms
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        var v: Int64 = 0
        for d in digits {
            guard d >= UInt8(ascii: "0"), d <= UInt8(ascii: "9") else { return nil }
            v = v * 10 + Int64(d - UInt8(ascii: "0"))
        }
        return v
    }

    /// Seconds since 1970 of the date and time in the first 19 bytes (days from civil, H. Hinnant).
    private static func civilSeconds(_ c: [UInt8]) -> Int64? {
        guard let y0 = number(c[0..<4]), let m = number(c[5..<7]), let d = number(c[8..<10]),
              let hh = number(c[11..<13]), let mm = number(c[14..<16]), let ss = number(c[17..<19]),
              (1...12).contains(m), (1...31).contains(d), hh < 24, mm < 60, ss < 61 else { return nil }
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1
        let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
        return days * 86_400 + hh * 3600 + mm * 60 + ss
    }

    static func fnv1a64(_ text: String) -> String {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// What the script recorded about its conversion (`properties.converted` of the regions file).
    static func recordedConversion() throws -> (fixes: Int, bytes: Int, digest: String) {
        let data = try Data(contentsOf: CLI.root.appendingPathComponent(regions))
        guard let fc = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let props = fc["properties"] as? [String: Any], let conv = props["converted"] as? [String: Any],
              let fixes = conv["fixes"] as? Int, let bytes = conv["bytes"] as? Int, let digest = conv["fnv1a64"] as? String
        else { throw Failure(description: "\(regions): no properties.converted") }
        return (fixes, bytes, digest)
    }

    // MARK: Events

    struct Event {
        var line: String
        var key: EventKey
        var ms: Int64
        var enteredAt: String?
    }

    static func events(_ run: CLI.Result) throws -> [Event] {
        try run.lines.map { line in
            guard let key = EventKey(line: line), let ms = outputMilliseconds(key.t),
                  let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            else { throw Failure(description: "not an event line: \(line)") }
            return Event(line: line, key: key, ms: ms, enteredAt: object["enteredAt"] as? String)
        }
    }

    struct VisitCheck {
        var problems: [String] = []
        var closed = 0
        var dwells = 0
        /// Visits that ended less than the dwell time after they began (no dwell allowed).
        var shortVisits = 0
    }

    /// Walks the events in output order. Per (device, region): enter, then exit, alternating,
    /// starting with enter; an exit's (and a dwell's) `enteredAt` is its enter's `t`. With `dwell`
    /// (ms): each dwell lies inside an open visit, at enter + dwell, at most one per visit, not after
    /// the exit; a visit that lasted longer than `dwell` has exactly one, a shorter one none, and so has
    /// one that lasted exactly `dwell` (docs/spec-differences.md: a reading at a dwell's due time is applied before the
    /// timer fires, so leaving then ends the visit first), and a visit still open at the end has one if and only
    /// if enter + dwell ≤ `endMs` (the clock at the end of input).
    static func checkVisits(_ events: [Event], dwell: Int64?, endMs: Int64) -> VisitCheck {
        struct Open { var enter: Event; var dwells: [Event] = [] }
        struct Pair: Hashable { var device: String; var region: String }
        var open: [Pair: Open] = [:]
        var check = VisitCheck()
        func dwellProblems(_ v: Open, until end: Int64, closedBy exit: Event?) {
            guard let s = dwell else { return }
            let lasted = end - v.enter.ms
            let want: ClosedRange<Int> = exit == nil ? (lasted >= s ? 1...1 : 0...0)
                : lasted > s ? 1...1 : 0...0
            if exit != nil && lasted < s { check.shortVisits += 1 }
            if !want.contains(v.dwells.count) {
                check.problems.append("\(v.dwells.count) dwell(s) for the visit from \(v.enter.line) lasting \(lasted) ms"
                                      + (exit.map { " until \($0.line)" } ?? " (open at the end)"))
            }
            for d in v.dwells where exit.map({ d.ms > $0.ms }) ?? (d.ms > endMs) {
                check.problems.append("dwell after the visit ended: \(d.line)")
            }
        }
        for e in events {
            let pair = Pair(device: e.key.device, region: e.key.region)
            switch e.key.event {
            case "enter":
                if open[pair] != nil { check.problems.append("enter while inside: \(e.line)") }
                open[pair] = Open(enter: e)
            case "exit":
                guard let v = open.removeValue(forKey: pair) else {
                    check.problems.append("exit without an enter: \(e.line)")
                    continue
                }
                if e.enteredAt != v.enter.key.t { check.problems.append("exit enteredAt ≠ \(v.enter.key.t): \(e.line)") }
                dwellProblems(v, until: e.ms, closedBy: e)
                check.closed += 1
            case "dwell":
                check.dwells += 1
                guard let s = dwell else { check.problems.append("dwell without --dwell: \(e.line)"); continue }
                guard open[pair] != nil else { check.problems.append("dwell outside a visit: \(e.line)"); continue }
                let enter = open[pair]!.enter
                if e.ms != enter.ms + s { check.problems.append("dwell not at enter + \(s) ms (\(enter.key.t)): \(e.line)") }
                if e.enteredAt != enter.key.t { check.problems.append("dwell enteredAt ≠ \(enter.key.t): \(e.line)") }
                open[pair]!.dwells.append(e)
            default:
                check.problems.append("unexpected event: \(e.line)")
            }
        }
        for v in open.values { dwellProblems(v, until: endMs, closedBy: nil) }
        return check
    }
}
