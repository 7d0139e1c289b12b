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
}

