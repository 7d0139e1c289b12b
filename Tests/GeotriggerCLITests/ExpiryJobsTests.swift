import Foundation
import Geotrigger
import GeotriggerScenarios
import Testing

/// `replay --expire S --jobs N`: for every N, events, `--rejects`, `--state-out`, exit status and
/// summary byte for byte those of `--jobs 1`. The reader forgets devices as the jobs' engines do
/// and counts the ranks (first-seen order) for the whole run; the inputs make devices go silent
/// and come back in each way a single engine tells apart: back after the clock passed last + S
/// (a new device, perhaps under a freed id), back by its own reading at exactly last + S (kept),
/// back at exactly last + S after another device's reading at that instant (expired first), back
/// by its own reading after last + S before anything else moved the clock there (expired in the
/// timers before that reading, then renewed under the same id); expiry times tied across jobs;
/// dwell timers and notification time triggers due at the same instants.
@Suite("geotrigger replay --jobs N --expire S")
struct ExpiryJobsTests {
    static let t0 = 1_700_000_000

    /// The city readings (`seconds` s, every device each second, in device order within a second)
    /// made to go silent and come back, over two files by device. Device k: every fourth keeps
    /// whole-second times (so their readings, and expiries, tie); the others a fraction of their own.
    /// Silences (S = 20): k % 5 == 1 stops for exactly S (back at last + S); k % 5 == 2 for 35 s;
    /// k % 5 == 3 for 21 s; k % 7 == 4 twice for 27 s. Every device is silent from +90 to +115, so
    /// the first reading after it renews its device (its expiry falls between the clock and it) and
    /// all others expire before it, tied in groups. Control records and an out-of-order fix too.
    static func silentInputs(from readings: String, in dir: URL, files count: Int = 2) throws -> [String] {
        var files = [String](repeating: "", count: count)
        var numbers: [String: Int] = [:]
        var added = false, removed = false
        func number(_ line: Substring, _ key: String) -> Substring {
            let rest = line[line.range(of: "\"\(key)\":")!.upperBound...]
            return rest.prefix { $0 != "," && $0 != "}" }
        }
        func lat(_ line: Substring) -> Substring { number(line, "lat") }
        func lon(_ line: Substring) -> Substring { number(line, "lon") }
        for (i, line) in try String(contentsOfFile: readings, encoding: .utf8).split(separator: "\n").enumerated() {
            let comma = line.firstIndex(of: ",")!
            let t = Int(line[line.index(line.startIndex, offsetBy: 5)..<comma])!
            let device = String(line.split(separator: "\"")[5])
            let k = numbers[device, default: numbers.count]
            numbers[device] = k
            let s = t - t0
            func silent(from a: Int, for n: Int) -> Bool { s > a && s < a + n }
            if s >= 90 && s < 115 { continue }
            if k % 5 == 1 && silent(from: 20 + k % 11, for: 20) { continue }
            if k % 5 == 2 && silent(from: 25 + k % 13, for: 35) { continue }
            if k % 5 == 3 && silent(from: 40 + k % 17, for: 21) { continue }
            if k % 7 == 4 && (silent(from: 10 + k % 5, for: 27) || silent(from: 120, for: 27)) { continue }
            let stamp = k % 4 == 0 ? "\(t)" : "\(t).\(String(format: "%03d", (k * 7) % 1000 + 1))"
            let f = k % count
            files[f] += "{\"t\":\(stamp)" + line[comma...] + "\n"
            // A region over the whole city, added and later removed: its "removed" exits are
            // every live device's at once, in first-seen (rank) order, ids reused or not.
            if s == 60 && !added {
                added = true
                files[0] += "{\"t\":\(t),\"op\":\"addRegion\",\"region\":{\"type\":\"Feature\",\"id\":\"city\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[\(lon(line)),\(lat(line))]},\"properties\":{\"radius\":200000}}}\n"
            }
            if s == 135 && !removed {
                removed = true
                files[0] += "{\"t\":\(t),\"op\":\"removeRegion\",\"id\":\"city\"}\n"
            }
            switch i % 613 {
            case 100: files[f] += "{\"t\":\(stamp),\"device\":\"\(device)\",\"op\":\"push\",\"id\":\"news\"}\n"
            case 200: files[f] += "{\"t\":\(stamp),\"device\":\"\(device)\",\"op\":\"push\",\"id\":\"only-d3\"}\n"
            case 300: files[f] += "{\"t\":\(t - 30),\"device\":\"\(device)\",\"lat\":48.2,\"lon\":16.3}\n"
            default: break
            }
        }
        let paths = (0..<count).map { dir.appendingPathComponent("silent-\($0).ndjson").path }
        for (path, text) in zip(paths, files) { try text.write(toFile: path, atomically: true, encoding: .utf8) }
        return paths
    }

    @Test("city devices going silent and coming back: every N the same bytes as one job")
    func silentAndBack() throws {
        let dir = try CLI.temporaryDirectory()
        let s = try JobsTests.scenario(.city, seed: 9, regions: 2000, devices: 120, seconds: 150, in: dir)
        let requests = dir.appendingPathComponent("requests.json").path
        try JobsTests.requests.write(toFile: requests, atomically: true, encoding: .utf8)
        let inputs = try Self.silentInputs(from: s.readings, in: dir)
        // With --until past every expiry, and without (live devices in --state-out).
        _ = try JobsTests.expectSameForEveryJobCount(["--regions", s.regions, "--requests", requests, "--dwell", "15",
                                                      "--expire", "20"] + inputs, in: dir)
        let one = try JobsTests.expectSameForEveryJobCount(["--regions", s.regions, "--requests", requests, "--dwell", "15",
                                                            "--expire", "20", "--until", "1700000400"] + inputs, in: dir)
        #expect(one.status == 0, "\(one)")
        for needed in ["\"reason\":\"expired\"", "\"reason\":\"removed\"", "\"dwell\"", "\"trigger\":\"timeInterval\"", "\"trigger\":\"push\""] {
            #expect(one.events.contains(needed), "no \(needed): the case tests less than it should")
        }
        #expect(one.rejects.contains("older-than-previous") && one.rejects.contains("bad-control-record"))
        // Devices that expire inside a region and come back: more expired exits than devices.
        #expect(one.events.components(separatedBy: "\"expired\"").count > 120)
    }

    @Test("--jobs 2 --expire killed with SIGKILL at random moments, then run again: the bytes of one uninterrupted job")
    func killAnywhere() throws {
        let dir = try CLI.temporaryDirectory()
        let s = try JobsTests.scenario(.city, seed: 9, regions: 2000, devices: 120, seconds: 150, in: dir)
        let requests = dir.appendingPathComponent("requests.json").path
        try JobsTests.requests.write(toFile: requests, atomically: true, encoding: .utf8)
        let inputs = try Self.silentInputs(from: s.readings, in: dir)
        let arguments = ["replay", "--regions", s.regions, "--requests", requests, "--dwell", "15", "--expire", "20"] + inputs
        // The reference: one job, never interrupted.
        let reference = CheckpointTests.Files(dir, "reference")
        let began = Date()
        let r = try CLI.run(arguments + ["--jobs", "1"] + reference.arguments)
        let duration = Date().timeIntervalSince(began)
        #expect(r.status == 0, "\(r.stderr)")
        let expected = reference.outcome(stderr: r.stderr)
        #expect(expected.events.contains("\"reason\":\"expired\"") && expected.state.contains("\"d"))

        let interrupted = CheckpointTests.Files(dir, "interrupted")
        let checkpoints = dir.appendingPathComponent("checkpoints")
        // Snapshots every 700 records: devices are expiring, freed, renewed and back around each.
        let stderr = try CheckpointTests.killUntilFinished(arguments + ["--jobs", "2"] + interrupted.arguments, checkpoints: checkpoints,
                                                           every: 700, duration: duration, seed: 77, in: dir)
        let got = interrupted.outcome(stderr: CheckpointTests.read(stderr))
        #expect(got.summary == expected.summary)
        #expect(got.rejects == expected.rejects)
        #expect(got.state == expected.state)
        #expect(got.events == expected.events, "events differ after the kills")
    }

    /// A stream read in stages (a live stream: each stage's run ends at the end of the input with a
    /// snapshot, the next reads on from it), cut where the reader's expiry state is busiest:
    /// during the silence every device shares (+90 to +115: all are timed, none expired yet),
    /// right after it (freed ids, renewals, names back), between silences.
    @Test("--jobs 2 --expire resumed at the end of a growing input, cut around expiries: the bytes of one uninterrupted job")
    func resumedInStages() throws {
        let dir = try CLI.temporaryDirectory()
        let s = try JobsTests.scenario(.city, seed: 9, regions: 2000, devices: 120, seconds: 150, in: dir)
        let requests = dir.appendingPathComponent("requests.json").path
        try JobsTests.requests.write(toFile: requests, atomically: true, encoding: .utf8)
        let whole = try Self.silentInputs(from: s.readings, in: dir, files: 1)[0]
        let lines = try String(contentsOfFile: whole, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let options = ["--regions", s.regions, "--requests", requests, "--dwell", "15", "--expire", "20"]
        // The reference reads the whole input under the name the stages give it (rejects name it).
        let growing = dir.appendingPathComponent("growing.ndjson").path
        try FileManager.default.copyItem(atPath: whole, toPath: growing)
        let reference = CheckpointTests.Files(dir, "reference")
        let r = try CLI.run(["replay"] + options + ["--jobs", "1", growing] + reference.arguments)
        #expect(r.status == 0, "\(r.stderr)")
        let expected = reference.outcome(stderr: r.stderr)
        try FileManager.default.removeItem(atPath: growing)

        let staged = CheckpointTests.Files(dir, "staged")
        let checkpoints = dir.appendingPathComponent("checkpoints").path
        // The first line at or after each cut time (seconds after t0) ends a stage.
        func firstLine(at second: Int) -> Int {
            lines.firstIndex { $0.hasPrefix("{\"t\":") && Int($0.dropFirst(5).prefix(10))! >= Self.t0 + second } ?? lines.count
        }
        var stages = [35, 50, 95, 114, 116, 117, 130, 141].map(firstLine) + [lines.count]
        stages = stages.enumerated().filter { $0.offset == 0 || $0.element > stages[$0.offset - 1] }.map(\.element)
        var last: CLI.Result?
        var written = 0
        for end in stages {
            let text = lines[written..<end].joined(separator: "\n") + (end < lines.count ? "\n" : "")
            if written == 0 {
                try text.write(toFile: growing, atomically: false, encoding: .utf8)
            } else {
                let h = try FileHandle(forWritingTo: URL(fileURLWithPath: growing))
                try h.seekToEnd()
                try h.write(contentsOf: Data(text.utf8))
                try h.close()
            }
            written = end
            last = try CLI.run(["replay"] + options + ["--jobs", "2", growing] + staged.arguments
                               + ["--checkpoint", checkpoints, "--checkpoint-every", "100000"])
            #expect(last?.status == 0, "\(last?.stderr ?? "")")
        }
        #expect(stages.count >= 8)
        let got = staged.outcome(stderr: last?.stderr ?? "")
        #expect(got.summary == expected.summary)
        #expect(got.rejects == expected.rejects)
        #expect(got.state == expected.state)
        #expect(got.events == expected.events, "events differ after the stages")
    }

    /// The three ways a device is forgotten and comes back, checked on one job's output (the
    /// other job counts must give the same bytes): kept at exactly last + S by its own reading,
    /// expired at last + S by another's, renewed by its own reading after last + S.
    @Test("the boundary cases, tied expiries across jobs, renewals and reused ids in a small stream")
    func boundaries() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = dir.appendingPathComponent("regions.csv").path
        try "id,lat,lon,radius\nhome,48.2,16.37,100\noffice,48.21,16.38,150\n".write(toFile: regions, atomically: true, encoding: .utf8)
        var lines: [String] = []
        func fix(_ t: Double, _ d: String, home: Bool = true) {
            lines.append("{\"t\":\(t),\"device\":\"\(d)\",\"lat\":\(home ? 48.2 : 48.21),\"lon\":\(home ? 16.37 : 16.38)}")
        }
        let t0 = Double(Self.t0)
        // Twelve devices (spread over the jobs) enter at +0: their expiries (S = 10) tie at +10.
        for k in 0..<12 { fix(t0, "p\(k)", home: k % 2 == 0) }
        // p0 by its own reading at exactly last + S: kept. p1's comes after q's at +10: expired first.
        fix(t0 + 10, "p0")
        fix(t0 + 10, "q")
        fix(t0 + 10, "p1")
        // p2..p11 expired at +10 (tied), after q; new devices take their ids.
        for k in 0..<6 { fix(t0 + 11, "n\(k)", home: k % 2 == 1) }
        // Six more, live when p0 comes back (expiring at +28).
        for k in 0..<6 { fix(t0 + 18, "v\(k)") }
        // p0 (last +10) heard next at +25, first past its +20: expired in the timers before its
        // reading (tied at +20 with q's and p1's expiries), then renewed by it: a rank after v0..v5.
        fix(t0 + 25, "p0")
        // Every visit of home ends, devices in first-seen order: v0..v5, then p0.
        lines.append("{\"t\":\(t0 + 26),\"op\":\"removeRegion\",\"id\":\"home\"}")
        // The others come back as new devices (p1 expired at +20, the n's at +21).
        for k in 1..<12 { fix(t0 + 26.5, "p\(k)", home: false) }
        fix(t0 + 27, "late")
        let path = dir.appendingPathComponent("small.ndjson").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        for until in [[], ["--until", "1700000100"]] {
            let one = try JobsTests.expectSameForEveryJobCount(["--regions", regions, "--hysteresis", "0", "--dwell", "5",
                                                                "--expire", "10"] + until + [path], in: dir)
            #expect(one.status == 0, "\(one)")
            let events = one.events.split(separator: "\n")
            // p0 kept at +10 (no expired exit then), expired at +20 before its reading at +25.
            let p0 = events.filter { $0.contains("\"device\":\"p0\"") && $0.contains("expired") }
            #expect(p0.count == 1 && p0[0].contains("22:13:40.000Z"), "\(p0)")  // its visit later removed
            #expect(one.events.contains("\"device\":\"p1\",\"region\":\"office\",\"reason\":\"expired\""))
            let removed = events.filter { $0.contains("\"removed\"") }.map { $0.split(separator: "\"")[11] }
            #expect(removed == ["v0", "v1", "v2", "v3", "v4", "v5", "p0"], "\(removed)")
            if until.isEmpty {
                // Live devices in first-seen order: v0..v5 (+18), p0 (renewed at +25), p1..p11, late.
                let names = one.state.split(separator: "\n").filter { $0.hasPrefix("\"") }.map { $0.split(separator: "\"")[0] }
                #expect(names == ["v0", "v1", "v2", "v3", "v4", "v5", "p0"] + (1..<12).map { "p\($0)" } + ["late"], "\(one.state)")
            }
        }
    }

    @Test("beacon sightings thinned so that devices go silent: beacon visits expire alike for every N")
    func beacons() throws {
        let dir = try CLI.temporaryDirectory()
        let s = try JobsTests.scenario(.beacons, seed: 5, regions: 300, devices: 60, seconds: 120, in: dir)
        let lines = try String(contentsOfFile: s.readings, encoding: .utf8).split(separator: "\n")
        // Half the sightings dropped, by a fixed pattern: devices fall silent for a second or more.
        let kept = lines.enumerated().filter { ($0.offset &* 7919) % 10 >= 5 }.map(\.element)
        let path = dir.appendingPathComponent("thin.ndjson").path
        try (kept.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        // Every visit entered at once (no minimum visit): more visits for the expiries to end.
        let one = try JobsTests.expectSameForEveryJobCount(["--regions", s.regions, "--beacon-exit", "5", "--dwell", "4",
                                                            "--beacon-min-visit", "0", "--expire", "1", path], in: dir)
        #expect(one.status == 0, "\(one)")
        #expect(one.events.components(separatedBy: "\"expired\"").count > 100, "too few expiries: the case tests less than it should")
    }

    /// Ever-new devices: device i reports five times, a second apart, then never again; a few
    /// names come back long after. Ids are reused all the time, in the reader and in every job.
    @Test("ever-new devices (ids reused): every N the same bytes as one job")
    func everNew() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = dir.appendingPathComponent("regions.csv").path
        var csv = "id,lat,lon,radius\n"
        for r in 0..<40 { csv += "r\(r),\(48.0 + Double(r % 8) * 0.002),\(16.0 + Double(r / 8) * 0.002),\(120 + r * 7)\n" }
        try csv.write(toFile: regions, atomically: true, encoding: .utf8)
        var text = ""
        for s in 0..<2500 {
            for i in max(0, s - 4)...s {
                let lat = 48.0 + Double(i % 8) * 0.002 + Double(s - i) * 0.0004
                let lon = 16.0 + Double((i / 8) % 5) * 0.002
                text += "{\"t\":\(Self.t0 + s),\"device\":\"dev-\(i)\",\"lat\":\(lat),\"lon\":\(lon)}\n"
            }
            // Some come back much later: new devices under old names.
            if s % 97 == 0 && s > 500 {
                text += "{\"t\":\(Self.t0 + s),\"device\":\"dev-\(s / 3)\",\"lat\":48.0,\"lon\":16.0}\n"
            }
        }
        let path = dir.appendingPathComponent("new.ndjson").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let requests = dir.appendingPathComponent("requests.json").path
        try #"[{"id":"tick","content":{"title":"tick"},"trigger":{"type":"timeInterval","seconds":3}}]"#
            .write(toFile: requests, atomically: true, encoding: .utf8)
        let one = try JobsTests.expectSameForEveryJobCount(["--regions", regions, "--requests", requests, "--dwell", "2",
                                                            "--expire", "3", path], in: dir)
        #expect(one.status == 0, "\(one)")
        #expect(one.events.components(separatedBy: "\"expired\"").count > 1000)
        #expect(one.events.contains("\"dwell\"") && one.events.contains("\"deliver\""))
    }
}
