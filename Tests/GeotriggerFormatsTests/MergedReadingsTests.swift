import GeotriggerCore
import Testing
@testable import GeotriggerFormats

@Suite struct MergedReadingsTests {
    func ndjson(_ lines: [String], name: String) -> (TempFile, NDJSONDecoder) {
        let file = TempFile(lines.joined(separator: "\n") + "\n", name: name)
        return (file, NDJSONDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: name))
    }

    func fix(_ t: Double, _ dev: String) -> String { #"{"t":\#(t),"device":"\#(dev)","lat":1,"lon":2}"# }

    @Test func mergesByTimeTiesByInputOrderAndPassesRejectsThrough() {
        let (fa, a) = ndjson([fix(1, "a"), fix(3, "a"), fix(3, "a2"), "garbage", fix(7, "a")], name: "a.ndjson")
        let (fb, b) = ndjson([fix(0, "b"), fix(3, "b"), fix(4, "b"), fix(8, "b")], name: "b.ndjson")
        let (fc, c) = ndjson([], name: "c.ndjson")
        defer { _ = (fa, fb, fc) }
        let m = MergedReadings([a, b, c])
        var out: [String] = []
        while true {
            let s = m.next()
            if s.step == .end { break }
            switch s.step {
            case .reading: out.append("\(m.current.t):\(m.current.deviceString)@\(s.source)")
            case .rejected(let r): out.append("\(m.sourceName):\(m.lineNumber):\(r.rawValue):\(String(decoding: m.rejectedLine, as: UTF8.self))")
            case .end: break
            }
        }
        #expect(out == [
            // Equal times: the earlier input wins each tie, so both of a's t=3 readings go first.
            "0.0:b@1", "1.0:a@0", "3.0:a@0", "3.0:a2@0",
            // The reject surfaces as soon as `a` is advanced past a2, before b's t=3 reading.
            "a.ndjson:4:malformed:garbage",
            "3.0:b@1", "4.0:b@1", "7.0:a@0", "8.0:b@1",
        ])
        #expect(m.next().step == .end)
        #expect(m.ioErrors.isEmpty)
        #expect(m.bytesRead > 0)
    }

    /// Many inputs (the merge keeps their heads in a heap): readings come out as a stable sort by
    /// time of the inputs taken in order, ties to the earlier input, and a reject as it is read.
    @Test func manySourcesComeOutAsAStableSortByTime() {
        var generator = SplitMix64(seed: 37)  // the same inputs every run
        var inputs: [[(t: Double, device: String, line: String)]] = []
        for k in 0..<40 {
            var t = Double(Int.random(in: 0..<5, using: &generator))
            var lines: [(t: Double, device: String, line: String)] = []
            for n in 0..<Int.random(in: 0..<30, using: &generator) {
                t += Double(Int.random(in: 0..<3, using: &generator))  // many equal times, within and across inputs
                lines.append((t, "d\(k)-\(n)", fix(t, "d\(k)-\(n)")))
                if Int.random(in: 0..<25, using: &generator) == 0 { lines.append((.nan, "", "garbage")) }
            }
            inputs.append(lines)
        }
        let opened = inputs.enumerated().map { k, lines in ndjson(lines.map(\.line), name: "\(k).ndjson") }
        defer { _ = opened.map(\.0) }
        let m = MergedReadings(opened.map(\.1))
        var readings: [String] = [], rejects = 0
        while true {
            let s = m.next()
            if s.step == .end { break }
            if s.step == .reading { readings.append("\(m.current.t):\(m.current.deviceString)") } else { rejects += 1 }
        }
        let expected = inputs.enumerated()
            .flatMap { k, lines in lines.enumerated().filter { !$0.element.t.isNaN }.map { (t: $0.element.t, k: k, n: $0.offset, d: $0.element.device) } }
            .sorted { ($0.t, $0.k, $0.n) < ($1.t, $1.k, $1.n) }
            .map { "\($0.t):\($0.d)" }
        #expect(readings == expected)
        #expect(rejects == inputs.reduce(0) { $0 + $1.filter { $0.t.isNaN }.count })
    }

    @Test func singleSourcePassesThrough() {
        let (f, a) = ndjson([fix(5, "x"), fix(2, "x")], name: "one.ndjson")
        defer { _ = f }
        let m = MergedReadings([a])
        var ts: [Double] = []
        while m.next().step == .reading { ts.append(m.current.t) }
        #expect(ts == [5, 2])  // out-of-order detection is the monitor's job, not the merge's
    }

    @Test func noSources() {
        #expect(MergedReadings([]).next().step == .end)
    }

    /// Pulls `m` to its end as a replay does: with `lane`, a few plain fixes at a time through
    /// `drainPlainFixes`, then one step of `next()`; without, `next()` alone. Every reading and
    /// reject is written down with the merge's places after it.
    static func pull(_ m: MergedReadings, lane: Bool, seed: UInt64) -> [String] {
        var generator = SplitMix64(seed: seed)
        var out: [String] = []
        func fix(_ t: Double, _ device: String, _ lat: Double, _ lon: Double, _ acc: Double) -> String {
            "fix \(t) \(device) \(lat) \(lon) \(acc) \(m.sourceName):\(m.lineNumber) \(m.positions.map { "\($0.offset)/\($0.line)" })"
        }
        while true {
            if lane {
                var budget = Int.random(in: 0..<6, using: &generator)
                m.drainPlainFixes { t, device, lat, lon, acc in
                    out.append(fix(t, device.string, lat, lon, acc))
                    budget -= 1
                    return budget > 0
                }
            }
            let s = m.next()
            switch s.step {
            case .end:
                return out
            case .reading:
                let r = m.current
                out.append(r.kind == .fix ? fix(r.t, r.deviceString, r.latitude, r.longitude, r.accuracy)
                                          : "\(r.kind) \(r.t) \(r.deviceString) \(m.sourceName):\(m.lineNumber)")
            case .rejected(let reason):
                out.append("rejected \(reason) \(m.sourceName):\(m.lineNumber) [\(m.rejectedLine.string)]")
            }
        }
    }

    /// The merge's plain lane gives exactly what `next()` gives: the same fixes in the same
    /// order, the rejects and other readings between them where they were, the same places for
    /// a checkpoint. For sources all NDJSON or all NMEA (called directly) and a mix of the two.
    /// And mapped NMEA logs, whose fixes the merge reads ahead (`Lookahead`), give what the same
    /// logs read without mapping (nothing read ahead) give, step for step, places and lines
    /// included.
    @Test func thePlainLaneGivesWhatNextGives() throws {
        var generator = SplitMix64(seed: 38)
        var files: [TempFile] = []
        for k in 0..<30 {
            var lines: [String] = []
            var t = Double(Int.random(in: 0..<4, using: &generator))
            for n in 0..<Int.random(in: 0..<40, using: &generator) {
                t += Double(Int.random(in: 0..<2, using: &generator))
                switch Int.random(in: 0..<30, using: &generator) {
                case 0: lines.append("garbage")
                case 1: lines.append(#"{"t":\#(t),"device":"s\#(k)","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":\#(n),"rssi":-70}"#)
                case 2: lines.append(fix(t - 5, "late\(k)"))
                default: lines.append(fix(t, "d\(k)"))
                }
            }
            files.append(TempFile(lines.joined(separator: "\n") + "\n", name: "\(k).ndjson"))
        }
        for k in 0..<12 {
            files.append(TempFile(MappedInputTests.nmeaLog(cycles: Int.random(in: 0..<50, using: &generator), seed: UInt64(k),
                                                           start: Int.random(in: 0..<20, using: &generator)), name: "r\(k).nmea"))
        }
        let ndjson = files.filter { $0.path.hasSuffix(".ndjson") }.map(\.path)
        let nmea = files.filter { $0.path.hasSuffix(".nmea") }.map(\.path)
        for (name, paths) in [("ndjson", ndjson), ("nmea", nmea), ("mixed", ndjson + nmea)] {
            for seed: UInt64 in [1, 2] {
                func merge(mapped: Bool = true) throws -> MergedReadings {
                    MergedReadings(try paths.map { try ReadingInput.open(path: $0, mapsFile: mapped) })
                }
                #expect(try merge().readsAhead == (name == "nmea"), "\(name)")
                #expect(try !merge(mapped: false).readsAhead, "\(name)")
                let alone = Self.pull(try merge(), lane: false, seed: seed)
                let laned = Self.pull(try merge(), lane: true, seed: seed)
                let unmapped = Self.pull(try merge(mapped: false), lane: true, seed: seed)
                #expect(laned == alone, "\(name)")
                #expect(alone == unmapped, "\(name)")
                #expect(alone.count > 100, "\(name)")
                #expect(alone.contains { $0.hasPrefix("rejected") }, "\(name)")
            }
        }
    }
}
