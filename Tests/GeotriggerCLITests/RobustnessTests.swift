import Foundation
import GeotriggerCore
import Testing

/// Bad input never crashes the tool and is never silently lost: thousands of corrupted records
/// (bytes flipped, dropped, duplicated, truncated, junk spliced in) from valid fixes, sightings and
/// control records go through the real binary; every non-blank line must come out either as a
/// counted record or as a reported rejection, and every output line must be a JSON event.
@Suite("Robustness: corrupted input")
struct RobustnessTests {
    static let seeds = [
        #"{"t":100,"device":"d1","lat":48.2,"lon":16.37,"accuracy":5}"#,
        #"{"t":"1970-01-01T00:01:41.5Z","device":"d2","lat":48.2001,"lon":16.3701}"#,
        #"{"t":102,"device":"d1","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":7,"rssi":-61,"tx":-59}"#,
        #"{"t":103,"device":"d3","op":"add","request":{"id":"x","content":{"title":"Hi"},"trigger":{"type":"timeInterval","seconds":5}}}"#,
        #"{"t":104,"device":"d3","op":"push","id":"news","content":{"title":"N"}}"#,
        #"{"t":105,"device":"d1","op":"removePending","ids":["x","y"]}"#,
    ]
    static let junk: [[UInt8]] = [
        Array("\u{0}".utf8), [0xFF, 0xFE], [0xC3], Array("1e999".utf8), Array("NaN".utf8), Array("-".utf8),
        Array("\"".utf8), Array("\\u12".utf8), Array("}".utf8), Array("{".utf8), Array("[".utf8),
        [0xED, 0xA0, 0x80], Array("\\uD800".utf8), Array("😀".utf8), Array(repeating: UInt8(ascii: "9"), count: 400),
    ]

    @Test("every corrupted record is counted or rejected; the run never crashes", arguments: [UInt64(7), 8, 9])
    func mutations(seed: UInt64) throws {
        var g = SplitMix64(seed: seed)
        var lines: [[UInt8]] = []
        for i in 0..<3000 {
            var line = Array(Self.seeds[g.below(Self.seeds.count)].utf8)
            // Keep time moving so valid records stay in order for their device.
            if let r = line.firstRange(of: Array("100".utf8)) { line.replaceSubrange(r, with: Array("\(1000 + i)".utf8)) }
            for _ in 0..<(1 + g.below(3)) {
                guard !line.isEmpty else { break }
                let at = g.below(line.count)
                switch g.below(5) {
                case 0: line[at] = UInt8(truncatingIfNeeded: g.next())
                case 1: line.remove(at: at)
                case 2: line.insert(contentsOf: Self.junk[g.below(Self.junk.count)], at: at)
                case 3: line = Array(line[..<at])
                default: line.insert(line[at], at: at)
                }
            }
            line.removeAll { $0 == 0x0A || $0 == 0x0D }   // one record a line
            lines.append(line)
        }
        let nonBlank = lines.filter { !$0.allSatisfy { $0 == 0x20 || $0 == 0x09 } }.count
        let dir = try CLI.temporaryDirectory()
        let input = dir.appendingPathComponent("corrupt.ndjson")
        var bytes: [UInt8] = []
        for l in lines { bytes += l + [0x0A] }
        try Data(bytes).write(to: input)
        let regions = dir.appendingPathComponent("regions.geojson")
        try """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"home","geometry":{"type":"Point","coordinates":[16.37,48.2]},"properties":{"radius":100}},
              {"type":"Feature","id":"lobby","geometry":{"type":"Point","coordinates":[16.37,48.2]},"properties":{"beacon":{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"},"proximity":"near"}}
            ]}
            """.write(to: regions, atomically: true, encoding: .utf8)
        let rejects = dir.appendingPathComponent("rejects.tsv")
        let r = try CLI.run(["replay", "--regions", regions.path, "--dwell", "30", "--rejects", rejects.path,
                             "--state-out", dir.appendingPathComponent("state.json").path, input.path])
        #expect(r.status == 0, "\(r.stderr.suffix(500))")
        // Every non-blank line is accounted for: the summary's record count covers them all.
        let summary = r.stderr.split(separator: "\n").first { $0.contains(" records from 1 input") }
        let counted = summary.flatMap { Int($0.split(separator: " ")[1].replacingOccurrences(of: ",", with: "")) }
        #expect(counted == nonBlank, "\(summary ?? "no summary")")
        // Verbatim records: the rejects file holds the invalid UTF-8 too, so count bytes, not text.
        let rejectedLines = try Data(contentsOf: rejects).filter { $0 == 0x0A }.count
        #expect(rejectedLines > 100, "mutations should produce many rejections, got \(rejectedLines)")
        // The summary's rejected count is the rejects file's line count (summary groups thousands).
        #expect(r.stderr.replacingOccurrences(of: ",", with: "").contains("\(rejectedLines) rejected"))
        for line in r.lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["event"] != nil, "not an event: \(line)")
        }
        let state = try Data(contentsOf: dir.appendingPathComponent("state.json"))
        #expect((try? JSONSerialization.jsonObject(with: state)) != nil, "--state-out is valid JSON")
    }
}
