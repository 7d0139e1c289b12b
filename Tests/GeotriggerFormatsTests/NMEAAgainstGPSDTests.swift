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

    /// The fixes of a log, as the cycle reader makes them.
    static func decode(_ data: Data) -> [Fix] {
        var cycles = NMEACycles()
        var fixes: [Fix] = []
        func keep(_ o: NMEACycles.Outcome?) {
            if case .fix(let t, let la, let lo, _) = o { fixes.append(Fix(t: t, latitude: la, longitude: lo)) }
        }
        for line in [UInt8](data).split(separator: 0x0A, omittingEmptySubsequences: false) {
            Array(line).withByteView { v in
                if case .fixSentence(let type, let fields) = NMEALine.classify(v) { keep(cycles.take(type, fields)) }
            }
        }
        keep(cycles.finish())
        return fixes
    }

    /// gpsd's fixes: TPV reports with mode ≥ 2 and a position; those with a time (one per time,
    /// gpsd repeating a cycle's report as its sentences come), and every position reported.
    static func reference(_ data: Data) -> (timed: [Double: [Fix]], positions: [(Double, Double)]) {
        var timed: [Double: [Fix]] = [:], positions: [(Double, Double)] = []
        for line in [UInt8](data).split(separator: 0x0A) where line.first == UInt8(ascii: "{") {
            guard let o = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                  o["class"] as? String == "TPV", (o["mode"] as? Int ?? 0) >= 2,
                  let la = o["lat"] as? Double, let lo = o["lon"] as? Double else { continue }
            positions.append((la, lo))
            if let time = o["time"] as? String, let t = RFC3339.parse(time) {
                timed[t, default: []].append(Fix(t: t, latitude: la, longitude: lo))
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
            let mine = Self.decode(try Data(contentsOf: Self.logs.appendingPathComponent(name)))
            let ref = Self.reference(try Data(contentsOf: Self.logs.appendingPathComponent(name + ".chk")))
            var used = Set<Int>()
            var hits = 0
            for (t, candidates) in ref.timed.sorted(by: { $0.key < $1.key }) {
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
