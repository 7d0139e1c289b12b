import Foundation
import Testing
import GeotriggerCore
@testable import GeotriggerFormats

/// The NMEA decoder's fixes against gpsd's own reading of 45 receivers' logs
/// (../shared/datasets/gpsd_nmea_logs, BSD-2-Clause; not shipped with the project): each
/// `NAME.log.chk` holds gpsd's TPV reports for `NAME.log`.
enum GPSDLogs {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/datasets/gpsd_nmea_logs")
    static let isAvailable = FileManager.default.fileExists(atPath: folder.appendingPathComponent("SOURCE.txt").path)
}

@Suite(.enabled(if: GPSDLogs.isAvailable,
                "../shared/datasets/gpsd_nmea_logs is absent: gpsd's logs (BSD-2-Clause) are not shipped with the project"))
struct NMEAAgainstGPSDTests {
    static let logs = GPSDLogs.folder

    struct Fix { var t: Double; var latitude: Double; var longitude: Double }

    /// The fixes of a log as `replay` reads it: opened by name (a `.log`: the content decides).
    static func decode(_ path: String) throws -> [Fix] {
        let decoder = try ReadingInput.open(path: path)
        #expect(decoder is NMEADecoder, "\(path) is told to be NMEA by its content")
        var fixes: [Fix] = []
        while true {
            switch decoder.next() {
            case .end: return fixes
            case .rejected: continue
            case .reading:
                let r = decoder.current
                fixes.append(Fix(t: r.t, latitude: r.latitude, longitude: r.longitude))
            }
        }
    }

    /// gpsd's fixes: TPV reports with mode ≥ 2 and a position; those with a time (a fix per run
    /// of reports with one time: gpsd repeats a cycle's report as its sentences come, and a log
    /// that goes back in time meets a time again, another fix), and every position reported.
    static func reference(_ data: Data) -> (timed: [(t: Double, candidates: [Fix])], positions: [(Double, Double)]) {
        var timed: [(t: Double, candidates: [Fix])] = [], positions: [(Double, Double)] = []
        for line in [UInt8](data).split(separator: 0x0A) where line.first == UInt8(ascii: "{") {
            guard let o = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                  o["class"] as? String == "TPV", (o["mode"] as? Int ?? 0) >= 2,
                  let la = o["lat"] as? Double, let lo = o["lon"] as? Double else { continue }
            positions.append((la, lo))
            if let time = o["time"] as? String, let t = RFC3339.parse(time) {
                if timed.last?.t != t { timed.append((t, [])) }
                timed[timed.count - 1].candidates.append(Fix(t: t, latitude: la, longitude: lo))
            }
        }
        return (timed, positions)
    }

    @Test func fixesAgreeWithGPSDs() throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Self.logs.path))?.filter { $0.hasSuffix(".log") }.sorted() ?? []
        try #require(names.count >= 45, "\(Self.logs.path) holds \(names.count) logs, not gpsd's 45")
        var reference = 0, found = 0, extra = 0
        var report: [String] = []
        for name in names {
            let mine = try Self.decode(Self.logs.appendingPathComponent(name).path)
            let ref = Self.reference(try Data(contentsOf: Self.logs.appendingPathComponent(name + ".chk")))
            var used = Set<Int>()
            var hits = 0
            for (t, candidates) in ref.timed {
                // Time of day to 1 s (gpsd moves some receivers' dates by 1024 weeks), position to
                // 2·10⁻⁶°; the closest in time of those that match (a receiver standing still
                // reports one position for many seconds).
                func dt(_ k: Int) -> Double {
                    let d = abs((mine[k].t - t).truncatingRemainder(dividingBy: 86_400))
                    return min(d, 86_400 - d)
                }
                let k = mine.indices.filter { k in
                    !used.contains(k) && dt(k) <= 1 && candidates.contains {
                        abs($0.latitude - mine[k].latitude) <= 2e-6 && abs($0.longitude - mine[k].longitude) <= 2e-6
                    }
                }.min { dt($0) < dt($1) }
                if let k { used.insert(k); hits += 1 }
            }
            let extras = mine.indices.filter { k in
                !used.contains(k) && !ref.positions.contains { abs($0.0 - mine[k].latitude) <= 2e-6 && abs($0.1 - mine[k].longitude) <= 2e-6 }
            }.count
            reference += ref.timed.count
            found += hits
            extra += extras
            if hits < ref.timed.count || extras > 0 {
                report.append("\(name): gpsd \(ref.timed.count), found \(hits), extra \(extras)")
            }
        }
        print("NMEA against gpsd: \(found) of \(reference) fixes, \(extra) extra\n" + report.joined(separator: "\n"))
        #expect(Double(found) >= 0.99 * Double(reference))
        #expect(Double(extra) <= 0.02 * Double(reference))
    }
}

/// A run resumed at any record's position reads on exactly as the uninterrupted run.
@Suite(.enabled(if: GPSDLogs.isAvailable,
                "../shared/datasets/gpsd_nmea_logs is absent: gpsd's logs (BSD-2-Clause) are not shipped with the project"))
struct NMEAResumeTests {
    struct Step: Equatable {
        var step: DecodeStep
        var line: Int
        var t: Double
        var latitude: Double
        var record: [UInt8]
    }

    static func steps(_ d: any ReadingDecoder) -> [(Step, InputPosition)] {
        var out: [(Step, InputPosition)] = []
        while true {
            let s = d.next()
            if s == .end { return out }
            let r = d.current
            out.append((Step(step: s, line: d.lineNumber, t: s == .reading ? r.t : 0, latitude: s == .reading ? r.latitude : 0,
                             record: Array(s == .reading ? r.line : d.rejectedLine)), d.position))
        }
    }

    @Test(arguments: ["bt451.log", "skytraq-dgps.log", "hemi.log", "ublox-zed-f9p_hpg1.11.log"])
    func resumedAtEveryRecordReadsOnTheSame(_ name: String) throws {
        let path = GPSDLogs.folder.appendingPathComponent(name).path
        let all = Self.steps(try ReadingInput.open(path: path))
        #expect(all.contains { $0.0.step == .reading })
        for k in stride(from: 0, to: all.count, by: max(1, all.count / 40)) {
            let d = try ReadingInput.open(path: path)
            #expect(d.resume(at: all[k].1), "\(name): resume at record \(k)")
            let rest = Self.steps(d)
            #expect(rest.map(\.0) == all[(k + 1)...].map(\.0), "\(name): records after \(k)")
        }
    }
}

/// gpsd's JSON reports (what `gpspipe -w` prints for each receiver: the JSON lines of its
/// `.chk`) read as fixes: every timed TPV with a fix, to the millisecond, and nothing else.
@Suite(.enabled(if: GPSDLogs.isAvailable,
                "../shared/datasets/gpsd_nmea_logs is absent: gpsd's logs (BSD-2-Clause) are not shipped with the project"))
struct GPSDReportsTests {
    @Test func everyTimedFixOfEveryReceiver() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: GPSDLogs.folder.path).filter { $0.hasSuffix(".log.chk") }.sorted()
        try #require(names.count >= 45)
        var expected = 0, found = 0, extra = 0, told = 0
        for name in names {
            let lines = [UInt8](try Data(contentsOf: GPSDLogs.folder.appendingPathComponent(name)))
                .split(separator: 0x0A).filter { $0.first == UInt8(ascii: "{") }
            let json = lines.map { Array($0) + [0x0A] }.flatMap { $0 }
            // gpsd's fixes: timed TPVs with mode >= 2 and a position, each repeat once.
            var want: [(Double, Double, Double)] = []
            for line in lines {
                guard let o = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                      o["class"] as? String == "TPV", (o["mode"] as? Int ?? 0) >= 2,
                      let la = o["lat"] as? Double, let lo = o["lon"] as? Double,
                      let time = o["time"] as? String, let t = RFC3339.parse(time) else { continue }
                if let last = want.last, last == (t, la, lo) { continue }
                want.append((t, la, lo))
            }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("gpsd-\(UUID().uuidString).log")
            FileManager.default.createFile(atPath: file.path, contents: Data(json))
            defer { try? FileManager.default.removeItem(at: file) }
            let d = try ReadingInput.open(path: file.path)
            if d is GPSDDecoder || json.isEmpty { told += 1 }
            var got: [(Double, Double, Double)] = []
            while true {
                let step = d.next()
                if step == .end { break }
                if step == .reading { got.append((d.current.t, d.current.latitude, d.current.longitude)) }
            }
            expected += want.count
            var k = 0
            for g in got {
                // In order; time to 1 ms, position exactly as gpsd wrote it (read back).
                if k < want.count, abs(want[k].0 - g.0) < 0.0005, want[k].1 == g.1, want[k].2 == g.2 {
                    found += 1
                    k += 1
                } else {
                    extra += 1
                }
            }
        }
        print("gpsd JSON: \(found) of \(expected) timed fixes, \(extra) extra; \(told) of \(names.count) inputs told by content")
        #expect(found == expected)
        #expect(extra == 0)
        #expect(told == names.count)
    }
}
