import GeotriggerCore
import GeotriggerFormats
import GeotriggerRuntime

/// The readings decoders (SPEC §2): NDJSON, CSV and GPX, as `replay` reads them from a file or
/// standard input, and NDJSON as `consume` reads a Kafka message.
enum ReadingsTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget(
            name: "ndjson-readings",
            about: "NDJSON readings: the replay loop's plain-fix lane (on the file read, mapped, and decoded ahead), next() alone with a buffer of one line, "
                + "each line lent as a Kafka message, and each record with a CR after its brace (the general "
                + "reader, never the plain lane) decide every line the same; every reading is valid; a resumed "
                + "decoder reads on the same",
            check: { ndjson($0) }),
        FuzzTarget(
            name: "csv-readings",
            about: "CSV readings: the replay loop's plain-row lane (on the file read, and mapped and decoded ahead) "
                + "and next() alone with a buffer of one line decide every row the same; every reading is valid; a resumed decoder reads on the same",
            check: { csv($0) }),
        FuzzTarget(
            name: "gpx",
            about: "GPX tracks: every point is a valid fix or a rejection with a line; a resumed decoder reads "
                + "on the same",
            check: { gpx($0) }),
        FuzzTarget(
            name: "nmea-readings",
            about: "NMEA 0183 sentences: a roomy buffer, a one-line buffer and the file mapped decide every line and cycle the "
                + "same; every fix is valid; a resumed decoder reads on the same; the content tells NMEA wherever "
                + "the first line that is no comment or noise is a sentence",
            check: { nmea($0) }),
        FuzzTarget(
            name: "gpsd-reports",
            about: "gpsd's JSON reports: a roomy buffer and a one-line buffer decide every line the same; every "
                + "fix is valid; a resumed decoder reads on the same",
            check: { gpsd($0) }),
        FuzzTarget(
            name: "kafka-receiver-messages",
            about: "consume --format nmea|gpsd (first byte: even NMEA, odd gpsd; then messages split at 0x1E, "
                + "key before a 0x1F): each device's readings and rejections are those of the file decoder with "
                + "--device KEY on that device's messages one after another; every reading is valid; a partition "
                + "snapshot taken halfway and restored reads on the same and encodes again to the same bytes",
            check: { kafkaReceivers($0) }),
    ]

    /// Lines longer than this are rejected in every way of decoding here, so over-long lines are
    /// reached by inputs of a few hundred bytes.
    static let maxLine = 200
    /// A buffer that holds any input `scripts/fuzz` gives (-max_len=4096) at once; the other way
    /// of decoding holds one line and compacts for every line. (The default, 1 MiB, costs a
    /// megabyte's initialization per decoder and input.)
    static let roomy = 1 << 13

    static let ndjsonFile = ScratchFile(name: "ndjson")
    static let csvFile = ScratchFile(name: "csv")
    static let gpxFile = ScratchFile(name: "gpx")
    static let nmeaFile = ScratchFile(name: "nmea")
    static let gpsdFile = ScratchFile(name: "gpsd")

    // MARK: NDJSON

    static func ndjson(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var findings = Findings()
        let lane = ndjsonFile.withDescriptor(bytes) { fd in
            drain(NDJSONDecoder(fd: fd, sourceName: "lane", defaultDevice: "default", bufferSize: roomy,
                                maxLineLength: maxLine), lane: true)
        }
        let tight = ndjsonFile.withDescriptor(bytes) { fd in
            drain(NDJSONDecoder(fd: fd, sourceName: "tight", defaultDevice: "default", bufferSize: 0,
                                maxLineLength: maxLine), lane: false)
        }
        compare(lane, "the plain-fix lane with a roomy buffer", tight, "next() with a one-line buffer", &findings)
        let mapped = ndjsonFile.withDescriptor(bytes) { fd in
            drain(NDJSONDecoder(fd: fd, sourceName: "mapped", defaultDevice: "default", maxLineLength: maxLine,
                                mapsFile: true), lane: true)
        }
        compare(lane, "the plain-fix lane with a roomy buffer", mapped, "the plain-fix lane, the file mapped", &findings)
        let ahead = ndjsonFile.withDescriptor(bytes) { fd in
            decodedAhead(NDJSONDecoder(fd: fd, sourceName: "ahead", defaultDevice: "default", maxLineLength: maxLine,
                                       mapsFile: true), bytes)
        }
        compare(lane, "the plain-fix lane with a roomy buffer", ahead, "the plain-fix lane, decoded ahead", &findings)
        validate(lane, &findings)

        // Each line lent as a Kafka message would be (the caller's bytes end at the record's last byte).
        let records = NDJSONDecoder(recordsNamed: "records", defaultDevice: "default", maxRecordLength: maxLine)
        var lent: [Step] = []
        let general = NDJSONDecoder(recordsNamed: "general", defaultDevice: "default", maxRecordLength: maxLine + 1)
        for (k, line) in lines(of: bytes).enumerated() {
            let step = line.withUnsafeBytes { exact -> DecodeStep in
                // A copy of exactly the line's length, so a read past it is the sanitizer's to see.
                let own = UnsafeMutableRawBufferPointer.allocate(byteCount: exact.count, alignment: 1)
                defer { own.deallocate() }
                if exact.count > 0 { own.copyMemory(from: exact) }
                return records.decode(record: ByteView(unsafe: UnsafeRawBufferPointer(own)))
            }
            if step != .end { lent.append(Step(records, step)) }
            // The plain lanes skip only spaces and tabs between members; a CR after the brace (JSON
            // whitespace too) sends the same record through the general reader, which must read
            // the same reading.
            if step == .reading, line.first == UInt8(ascii: "{"), line.count < maxLine {
                var spaced = line
                spaced.insert(0x0D, at: 1)
                let again = spaced.withByteView { general.decode(record: $0) }
                let a = Step(records, step), b = Step(general, again)
                findings.expect(again == .reading && a.reading == b.reading,
                                "line \(k + 1) `\(quoted(line))`: the plain lane read \(a.reading), the general reader \(b)")
            }
        }
        compare(tight, "the stream", lent, "each line lent as a message", &findings)
        resume(lane, bytes, ndjsonFile, &findings) { fd in
            NDJSONDecoder(fd: fd, sourceName: "resumed", defaultDevice: "default", bufferSize: roomy, maxLineLength: maxLine)
        }
        return findings.problems
    }

    /// The input's lines as `LineReader` splits them: at each newline, a byte order mark at the
    /// input's start taken off; a last line with no newline counts. A CR before the newline is
    /// left on: a message's trailing CR is the record decoder's to take off.
    static func lines(of bytes: UnsafeRawBufferPointer) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var start = 0
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }
        var i = start
        while i < bytes.count {
            if bytes[i] == 0x0A {
                out.append(Array(bytes[start..<i]))
                start = i + 1
            }
            i += 1
        }
        if start < bytes.count { out.append(Array(bytes[start...])) }
        return out
    }

    // MARK: CSV

    static func csv(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var findings = Findings()
        let lane = csvFile.withDescriptor(bytes) { fd in
            drain(CSVDecoder(fd: fd, sourceName: "lane", defaultDevice: "default", bufferSize: roomy, maxLineLength: maxLine),
                  lane: true)
        }
        let tight = csvFile.withDescriptor(bytes) { fd in
            drain(CSVDecoder(fd: fd, sourceName: "tight", defaultDevice: "default", bufferSize: 0, maxLineLength: maxLine),
                  lane: false)
        }
        compare(lane, "the plain-row lane with a roomy buffer", tight, "next() with a one-line buffer", &findings)
        let ahead = csvFile.withDescriptor(bytes) { fd in
            decodedAhead(CSVDecoder(fd: fd, sourceName: "ahead", defaultDevice: "default", maxLineLength: maxLine,
                                    mapsFile: true), bytes)
        }
        compare(lane, "the plain-row lane with a roomy buffer", ahead, "the plain-row lane, decoded ahead", &findings)
        validate(lane, &findings)
        resume(lane, bytes, csvFile, &findings) { fd in
            CSVDecoder(fd: fd, sourceName: "resumed", defaultDevice: "default", bufferSize: roomy, maxLineLength: maxLine)
        }
        return findings.problems
    }

    // MARK: GPX

    static func gpx(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var findings = Findings()
        let all = gpxFile.withDescriptor(bytes) { fd in drain(GPXDecoder(fd: fd, sourceName: "gpx", device: "walker"), lane: true) }
        validate(all, &findings, sharingLines: true)
        for s in all where s.kind != "reading" {
            findings.expect(s.line > 0, "a rejection with no line: \(s)")
        }
        resume(all, bytes, gpxFile, &findings) { fd in GPXDecoder(fd: fd, sourceName: "resumed", device: "walker") }
        return findings.problems
    }

    // MARK: NMEA

    static func nmea(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var findings = Findings()
        let roomy = nmeaFile.withDescriptor(bytes) { fd in
            drain(NMEADecoder(fd: fd, sourceName: "roomy", device: "receiver", bufferSize: Self.roomy, maxLineLength: maxLine),
                  lane: true)
        }
        let tight = nmeaFile.withDescriptor(bytes) { fd in
            drain(NMEADecoder(fd: fd, sourceName: "tight", device: "receiver", bufferSize: 0, maxLineLength: maxLine),
                  lane: false)
        }
        compare(roomy, "a roomy buffer", tight, "a one-line buffer", &findings)
        let mapped = nmeaFile.withDescriptor(bytes) { fd in
            drain(NMEADecoder(fd: fd, sourceName: "mapped", device: "receiver", maxLineLength: maxLine, mapsFile: true),
                  lane: false)
        }
        compare(roomy, "a roomy buffer", mapped, "the file mapped", &findings)
        // A cycle is reported at the line that gave its position, which a rejected line after it
        // may precede: line numbers need not increase.
        validate(roomy, &findings, ordered: false)
        resume(roomy, bytes, nmeaFile, &findings) { fd in
            NMEADecoder(fd: fd, sourceName: "resumed", device: "receiver", bufferSize: Self.roomy, maxLineLength: maxLine)
        }
        return findings.problems
    }

    // MARK: gpsd

    static func gpsd(_ bytes: UnsafeRawBufferPointer) -> [String] {
        // One source name for the three: a report without a device is the file name's.
        var findings = Findings()
        let roomy = gpsdFile.withDescriptor(bytes) { fd in
            drain(GPSDDecoder(fd: fd, sourceName: "gpsd.log", bufferSize: Self.roomy, maxLineLength: maxLine), lane: true)
        }
        let tight = gpsdFile.withDescriptor(bytes) { fd in
            drain(GPSDDecoder(fd: fd, sourceName: "gpsd.log", bufferSize: 0, maxLineLength: maxLine), lane: false)
        }
        compare(roomy, "a roomy buffer", tight, "a one-line buffer", &findings)
        validate(roomy, &findings)
        resume(roomy, bytes, gpsdFile, &findings) { fd in
            GPSDDecoder(fd: fd, sourceName: "gpsd.log", bufferSize: Self.roomy, maxLineLength: maxLine)
        }
        return findings.problems
    }

    // MARK: consume --format nmea|gpsd

    static let receiversFile = ScratchFile(name: "receivers")

    static func kafkaReceivers(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var findings = Findings()
        guard let first = bytes.first else { return [] }
        let kind: ReceiverMessages.Kind = first & 1 == 0 ? .nmea : .gpsd
        var messages: [(key: [UInt8], value: [UInt8])] = []
        for m in bytes.dropFirst().split(separator: 0x1E, omittingEmptySubsequences: false) {
            if let k = m.firstIndex(of: 0x1F) {
                messages.append((Array(m[..<k]), Array(m[(k + 1)...])))
            } else {
                messages.append(([], Array(m)))
            }
        }
        // Lines never too long here (the file decoders count a CR in a line's length, messages not).
        let longest = 1 << 13
        /// Each step with its message's key (a cycle `finish` ended: its device's): "reading …" or
        /// "rejected(reason)".
        func run(_ r: ReceiverMessages, _ range: Range<Int>, finishing: Bool) -> [(device: [UInt8], step: String)] {
            var out: [(device: [UInt8], step: String)] = []
            func record(_ step: ReceiverMessages.Step, _ device: [UInt8]) {
                switch step {
                case .reading:
                    let c = r.current
                    if let problem = problem(kind: c.kind, t: c.t, device: c.device.count, latitude: c.latitude,
                                             longitude: c.longitude, accuracy: c.accuracy, rssi: c.rssi, op: c.op) {
                        findings.add("an invalid reading passed: \(problem)")
                    }
                    out.append((device, "reading " + describe(c.kind, t: c.t, device: Array(c.device),
                        latitude: c.latitude, longitude: c.longitude, accuracy: c.accuracy, beacon: c.beacon,
                        rssi: c.rssi, tx: c.tx, op: c.op)))
                case .rejected(let reason, _):
                    out.append((device, "rejected(\(reason.rawValue))"))
                }
            }
            for k in range {
                let (key, value) = messages[k]
                key.withUnsafeBytes { kb in
                    value.withUnsafeBytes { vb in
                        r.decode(key: ByteView(unsafe: kb), value: ByteView(unsafe: vb), offset: Int64(k)) { record($0, key) }
                    }
                }
            }
            if finishing { r.finish { record($0, Array(r.finishedDevice)) } }
            return out
        }
        let whole = ReceiverMessages(kind: kind, maxLineLength: longest)
        let steps = run(whole, 0..<messages.count, finishing: true)

        // Halfway, through a snapshot.
        let half = messages.count / 2
        let a = ReceiverMessages(kind: kind, maxLineLength: longest)
        let before = run(a, 0..<half, finishing: false)
        var w = SnapshotWriter()
        a.writeSnapshot(to: &w)
        let b = ReceiverMessages(kind: kind, maxLineLength: longest)
        var r = SnapshotReader(w.bytes)
        do {
            try b.restoreSnapshot(from: &r)
            findings.expect(r.isAtEnd, "bytes left after the receivers' snapshot")
            var again = SnapshotWriter()
            b.writeSnapshot(to: &again)
            findings.expect(again.bytes == w.bytes, "the restored receivers' snapshot encodes to other bytes")
            let after = run(b, half..<messages.count, finishing: true)
            let resumed = (before + after).map { "\(quoted($0.device)) \($0.step)" }
            let straight = steps.map { "\(quoted($0.device)) \($0.step)" }
            if resumed != straight {
                let k = firstDifference(resumed, straight)
                findings.add("resumed at message \(half) from a snapshot, step \(k) differs: "
                             + "\(resumed.dropFirst(k).first ?? "none") vs \(straight.dropFirst(k).first ?? "none")")
            }
        } catch {
            findings.add("the receivers' own snapshot cannot be restored: \(error)")
        }

        // Each keyed device against the file decoder given that device (`replay --device KEY`).
        var keys: [[UInt8]] = []
        // A keyless gpsd report names its device in the report, whose previous fix it then is
        // (the repeat check): with one, the keyed devices are not each a file's alone.
        let keyless = kind == .gpsd && messages.contains { $0.key.isEmpty && !$0.value.isEmpty }
        for m in messages where !keyless && !m.key.isEmpty && m.key.count <= InputLimits.identifierBytes && !keys.contains(m.key) {
            keys.append(m.key)
        }
        for key in keys.prefix(4) {
            // A newline first: a file's byte order mark is the file decoder's to skip, not a message's.
            var file: [UInt8] = [0x0A]
            for m in messages where m.key == key { file += m.value + [0x0A] }
            let name = String(decoding: key, as: UTF8.self)
            // A key that is not UTF-8 cannot be a --device (a String); those are left out.
            guard Array(name.utf8) == key else { continue }
            let expected = file.withUnsafeBytes { fb in
                receiversFile.withDescriptor(fb) { fd -> [String] in
                    let d: any ReadingDecoder = kind == .nmea
                        ? NMEADecoder(fd: fd, sourceName: "r.log", device: name, bufferSize: Self.roomy, maxLineLength: longest)
                        : GPSDDecoder(fd: fd, sourceName: "r.log", device: name, bufferSize: Self.roomy, maxLineLength: longest)
                    return drain(d, lane: false).map { $0.kind == "reading" ? "reading " + $0.reading : $0.kind }
                }
            }
            let got = steps.filter { $0.device == key }.map(\.step)
            if got != expected {
                let k = firstDifference(got, expected)
                findings.add("device `\(quoted(key))`: step \(k) is \(got.dropFirst(k).first ?? "none"), "
                             + "the file decoder's \(expected.dropFirst(k).first ?? "none")")
            }
        }
        return findings.problems
    }

    static func firstDifference(_ a: [String], _ b: [String]) -> Int {
        (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
    }

    // MARK: What every decoder keeps

    /// One step of a decoder as a test sees it: copied out of the decoder's buffers.
    struct Step: Equatable, CustomStringConvertible {
        var kind: String
        var line: Int
        var reading = ""
        var text: [UInt8]
        var position = InputPosition(offset: 0, line: 0)
        var valid: String?

        init(_ d: any ReadingDecoder, _ step: DecodeStep) {
            line = d.lineNumber
            text = Array(d.rejectedLine)
            position = d.position
            switch step {
            case .reading:
                kind = "reading"
                let r = d.current
                reading = describe(r.kind, t: r.t, device: Array(r.device), latitude: r.latitude, longitude: r.longitude,
                                   accuracy: r.accuracy, beacon: r.beacon, rssi: r.rssi, tx: r.tx, op: r.op)
                valid = problem(kind: r.kind, t: r.t, device: r.device.count, latitude: r.latitude,
                                longitude: r.longitude, accuracy: r.accuracy, rssi: r.rssi, op: r.op)
            case .rejected(let reason): kind = "rejected(\(reason.rawValue))"
            case .end: kind = "end"
            }
        }

        /// A fix the replay loop's fast lane handed over (`drainPlainFixes`).
        init(lane d: any ReadingDecoder, t: Double, device: ByteView, latitude: Double, longitude: Double,
             accuracy: Double) {
            kind = "reading"
            line = d.lineNumber
            text = Array(d.rejectedLine)
            position = d.position
            reading = describe(.fix, t: t, device: Array(device), latitude: latitude, longitude: longitude,
                               accuracy: accuracy, beacon: BeaconID(), rssi: .nan, tx: .nan, op: .add)
            valid = problem(kind: .fix, t: t, device: device.count, latitude: latitude, longitude: longitude,
                            accuracy: accuracy, rssi: .nan, op: .add)
        }

        var description: String { "line \(line) \(kind) \(reading) `\(quoted(text))`" }

        static func == (a: Step, b: Step) -> Bool {
            a.kind == b.kind && a.line == b.line && a.reading == b.reading && a.text == b.text
        }
    }

    /// Every step until the end, as the replay loop reads (`lane`: the fast lane's fixes first,
    /// then one `next()`, again and again) or by `next()` alone. Stops after 100,000 steps.
    static func drain(_ d: any ReadingDecoder, lane: Bool) -> [Step] {
        var out: [Step] = []
        while out.count < 100_000 {
            if lane {
                d.drainPlainFixes { t, device, latitude, longitude, accuracy in
                    out.append(Step(lane: d, t: t, device: device, latitude: latitude, longitude: longitude,
                                    accuracy: accuracy))
                    return true
                }
            }
            let step = d.next()
            if step == .end { break }
            out.append(Step(d, step))
        }
        return out
    }

    /// `drain` with the lane's lines decoded ahead (`replay --jobs`' jobs do it, `DecodeAhead`):
    /// chunks of 1 to 256 bytes, 2 to 5 of them held (the input's first two bytes choose), the
    /// lane stopping every 1 to 8 lines and the helpers then decoding 0 to 3 chunks (the bytes
    /// of the input in turn choose).
    static func decodedAhead(_ d: any ReadingDecoder & DecodesAhead, _ bytes: UnsafeRawBufferPointer) -> [Step] {
        let spare = SpareWork()
        let chunkBytes = bytes.count > 0 ? Int(bytes[0]) + 1 : 64
        let ring = bytes.count > 1 ? Int(bytes[1]) % 4 + 2 : 2
        d.decodeAhead(on: spare, chunkBytes: chunkBytes, ring: ring)
        var out: [Step] = []
        var turn = 0
        @inline(__always) func choice() -> Int {
            turn += 1
            return bytes.isEmpty ? turn : Int(bytes[turn % bytes.count])
        }
        while out.count < 100_000 {
            for _ in 0..<(choice() & 3) { _ = spare.run() }
            var left = choice() & 7 + 1
            d.drainPlainFixes { t, device, latitude, longitude, accuracy in
                out.append(Step(lane: d, t: t, device: device, latitude: latitude, longitude: longitude, accuracy: accuracy))
                left -= 1
                return left > 0
            }
            let step = d.next()
            if step == .end { break }
            out.append(Step(d, step))
        }
        return out
    }

    /// Two ways of decoding the same bytes, step by step. Of an over-long line each keeps what it
    /// had buffered of it when it gave up (up to 1 KiB), so one's text need only begin the other's.
    static func compare(_ a: [Step], _ aName: String, _ b: [Step], _ bName: String, _ findings: inout Findings) {
        for (x, y) in zip(a, b) {
            var same = x == y
            if !same && x.kind == y.kind && x.kind == "rejected(line-too-long)" && x.line == y.line {
                same = x.text.starts(with: y.text) || y.text.starts(with: x.text)
            }
            if !same {
                findings.add("\(aName) gave \(x), \(bName) \(y)")
                return
            }
        }
        findings.expect(a.count == b.count, "\(aName) gave \(a.count) steps, \(bName) \(b.count)")
    }

    /// Every reading is one the engine can take: SPEC §2's ranges, a device, a writable time.
    /// Line numbers increase from record to record (`sharingLines`: a GPX line may hold several points).
    static func validate(_ steps: [Step], _ findings: inout Findings, sharingLines: Bool = false, ordered: Bool = true) {
        var previous = 0
        for s in steps {
            if let problem = s.valid { findings.add("an invalid reading passed: \(problem): \(s)") }
            findings.expect(!ordered || s.line > previous || sharingLines && s.line == previous,
                            "line numbers do not increase: \(s) after line \(previous)")
            previous = s.line
        }
    }

    /// A new decoder moved on to the position after each of a few steps reads on exactly as the
    /// first did (a checkpointed run resumed).
    static func resume(_ all: [Step], _ bytes: UnsafeRawBufferPointer, _ file: ScratchFile, _ findings: inout Findings,
                       _ make: (Int32) -> any ReadingDecoder) {
        guard !all.isEmpty else { return }
        for k in Set([0, all.count / 2, all.count - 1]).sorted() {
            let at = all[k].position
            let rest = file.withDescriptor(bytes) { fd -> [Step]? in
                let d = make(fd)
                guard d.resume(at: at) else { return nil }
                return drain(d, lane: true)
            }
            guard let rest else {
                findings.add("cannot resume at \(at) (after \(all[k]))")
                continue
            }
            compare(Array(all[(k + 1)...]), "the whole input after step \(k + 1)", rest, "a decoder resumed at \(at)",
                    &findings)
        }
    }
}

private func describe(_ kind: Reading.Kind, t: Double, device: [UInt8], latitude: Double, longitude: Double,
                      accuracy: Double, beacon: BeaconID, rssi: Double, tx: Double, op: ControlOp) -> String {
    func bits(_ x: Double) -> String { x.isNaN ? "nan" : "\(x)[\(String(x.bitPattern, radix: 16))]" }
    let head = "\(kind) t=\(bits(t)) device=`\(quoted(device))`"
    switch kind {
    case .fix: return head + " \(bits(latitude)),\(bits(longitude)) ±\(bits(accuracy))"
    case .sighting: return head + " \(beacon) rssi=\(bits(rssi)) tx=\(bits(tx))"
    case .control: return head + " op=\(op)"
    }
}

/// Why a reading the decoders passed could not be applied, or nil.
private func problem(kind: Reading.Kind, t: Double, device: Int, latitude: Double, longitude: Double, accuracy: Double,
                     rssi: Double, op: ControlOp) -> String? {
    if !InputLimits.timeIsWritable(t) { return "time \(t) cannot be written" }
    switch kind {
    case .fix:
        if device == 0 { return "a fix with no device" }
        if !(latitude >= -90 && latitude <= 90) { return "latitude \(latitude)" }
        if !(longitude >= -180 && longitude <= 180) { return "longitude \(longitude)" }
        if !(accuracy.isNaN || (accuracy >= 0 && accuracy.isFinite)) { return "accuracy \(accuracy)" }
    case .sighting:
        if device == 0 { return "a sighting with no device" }
        if !rssi.isFinite { return "rssi \(rssi)" }
    case .control:
        if op.isRegionChange != (device == 0) { return "a \(op) record with device bytes \(device)" }
    }
    if !InputLimits.identifierFits(byteCount: device) { return "a device of \(device) bytes" }
    return nil
}
