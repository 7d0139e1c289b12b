import BenchSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Both Python peers of one scenario: each nil with a note when it was not run.
struct PeerRuns {
    var described: Results.Peer?
    var describedNote: String?
    var tuned: Results.Peer?
    var tunedNote: String?

    init(note: String? = nil) {
        describedNote = note
        tunedNote = note
    }
}

/// The one JSON line a peer prints: `{"fixes": …, "events": …, "seconds": …, "fixes_per_s": …,
/// "load_seconds": …}` (the last such line of its standard output).
struct PeerSummary {
    var fixes: Int
    var events: Int?
    var seconds: Double
    var fixesPerSecond: Double
    var loadSeconds: Double?

    init?(_ stdout: String) {
        guard let line = stdout.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
              let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let fixes = (object["fixes"] as? NSNumber)?.intValue,
              let seconds = (object["seconds"] as? NSNumber)?.doubleValue, seconds > 0
        else { return nil }
        self.fixes = fixes
        self.seconds = seconds
        // Recomputed from fixes and seconds: the printed fixes_per_s is the same figure, rounded.
        fixesPerSecond = Double(fixes) / seconds
        events = (object["events"] as? NSNumber)?.intValue
        loadSeconds = (object["load_seconds"] as? NSNumber)?.doubleValue
    }
}

/// NDJSON readings to CSV (`t,device,lat,lon,accuracy`, header row), field text copied as is, so
/// both files hold the same numbers. Handles the flat objects `geotrigger scenario` writes (and
/// any flat object whose values are numbers, strings without escapes, or null); other keys are
/// dropped, absent or null values become empty fields, and records with neither lat nor lon
/// (beacon sightings, control records) are left out.
enum ReadingsCSV {
    static let columns = ["t", "device", "lat", "lon", "accuracy"]

    /// Returns how many records were left out.
    static func convert(_ source: String, to destination: String) throws -> Int {
        guard let out = fopen(destination, "wb") else { throw ValidationFailure("cannot write \(destination)") }
        defer { fclose(out) }
        var buffer = Array("t,device,lat,lon,accuracy\n".utf8)
        var pending: [UInt8] = []
        var skipped = 0
        var lineNumber = 0
        func flush(_ force: Bool) {
            if force || buffer.count >= 1 << 20 {
                fwrite(buffer, 1, buffer.count, out)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        func line(_ bytes: UnsafeBufferPointer<UInt8>) throws {
            lineNumber += 1
            guard let fields = try fieldsOf(bytes) else { return }  // blank
            guard fields[2] != nil || fields[3] != nil else {
                skipped += 1
                return
            }
            for (i, field) in fields.enumerated() {
                if i > 0 { buffer.append(UInt8(ascii: ",")) }
                if let field { appendCSV(field, to: &buffer) }
            }
            buffer.append(UInt8(ascii: "\n"))
            flush(false)
        }
        do {
            try FileChunks.forEach(source) { raw in
                let chunk = raw.assumingMemoryBound(to: UInt8.self)
                var start = 0
                for i in 0..<chunk.count where chunk[i] == UInt8(ascii: "\n") {
                    if pending.isEmpty {
                        try line(UnsafeBufferPointer(rebasing: chunk[start..<i]))
                    } else {
                        pending.append(contentsOf: chunk[start..<i])
                        try pending.withUnsafeBufferPointer { try line($0) }
                        pending.removeAll(keepingCapacity: true)
                    }
                    start = i + 1
                }
                pending.append(contentsOf: chunk[start...])
                return true
            }
            if !pending.isEmpty { try pending.withUnsafeBufferPointer { try line($0) } }
        } catch let error as ValidationFailure {
            throw ValidationFailure("\(source):\(lineNumber): \(error.description)")
        }
        flush(true)
        return skipped
    }

    /// The raw text of t, device, lat, lon and accuracy in one flat JSON object (nil: absent or
    /// null); nil for a blank line.
    static func fieldsOf(_ s: UnsafeBufferPointer<UInt8>) throws -> [ArraySlice<UInt8>?]? {
        var i = 0
        func skipSpace() { while i < s.count, s[i] == 0x20 || s[i] == 0x09 || s[i] == 0x0d { i += 1 } }
        func string() throws -> Range<Int> {
            guard i < s.count, s[i] == UInt8(ascii: "\"") else { throw ValidationFailure("expected a string") }
            let start = i + 1
            i += 1
            while i < s.count, s[i] != UInt8(ascii: "\"") {
                if s[i] == UInt8(ascii: "\\") { throw ValidationFailure("escapes in strings are not supported here") }
                i += 1
            }
            guard i < s.count else { throw ValidationFailure("unterminated string") }
            i += 1
            return start..<(i - 1)
        }
        skipSpace()
        if i == s.count { return nil }
        guard s[i] == UInt8(ascii: "{") else { throw ValidationFailure("not a JSON object") }
        i += 1
        var fields = [ArraySlice<UInt8>?](repeating: nil, count: columns.count)
        let all = Array(s)
        skipSpace()
        if i < s.count, s[i] == UInt8(ascii: "}") { return fields }
        while true {
            skipSpace()
            let key = try string()
            skipSpace()
            guard i < s.count, s[i] == UInt8(ascii: ":") else { throw ValidationFailure("expected ':'") }
            i += 1
            skipSpace()
            let value: Range<Int>
            if i < s.count, s[i] == UInt8(ascii: "\"") {
                value = try string()
            } else {
                let start = i
                while i < s.count, s[i] != UInt8(ascii: ","), s[i] != UInt8(ascii: "}") {
                    if s[i] == UInt8(ascii: "{") || s[i] == UInt8(ascii: "[") {
                        throw ValidationFailure("nested values are not supported here")
                    }
                    i += 1
                }
                var end = i
                while end > start, all[end - 1] == 0x20 || all[end - 1] == 0x09 { end -= 1 }
                value = start..<end
            }
            let name = String(decoding: all[key], as: UTF8.self)
            if let column = columns.firstIndex(of: name), all[value] != ArraySlice("null".utf8) {
                fields[column] = all[value]
            }
            skipSpace()
            guard i < s.count else { throw ValidationFailure("unterminated object") }
            if s[i] == UInt8(ascii: "}") { return fields }
            guard s[i] == UInt8(ascii: ",") else { throw ValidationFailure("expected ',' or '}'") }
            i += 1
        }
    }

    /// A CSV field: quoted (with doubled quotes) when it holds a comma, a quote or edge spaces.
    static func appendCSV(_ field: ArraySlice<UInt8>, to buffer: inout [UInt8]) {
        let special = field.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") }
            || field.first == 0x20 || field.last == 0x20 || field.first == 0x09 || field.last == 0x09
        guard special else {
            buffer.append(contentsOf: field)
            return
        }
        buffer.append(UInt8(ascii: "\""))
        for b in field {
            if b == UInt8(ascii: "\"") { buffer.append(b) }
            buffer.append(b)
        }
        buffer.append(UInt8(ascii: "\""))
    }
}
