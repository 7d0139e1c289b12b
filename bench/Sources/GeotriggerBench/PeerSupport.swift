import BenchSupport
import Geotrigger
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

/// NDJSON readings to CSV (`t,device,lat,lon,accuracy`, header row), read with geotrigger's own
/// NDJSON decoder. Numbers are written as their shortest round-trip text, so both files hold the
/// same doubles; a missing accuracy becomes an empty field. Records that are not fixes (beacon
/// sightings, control records) are left out and counted; a line the decoder rejects stops the
/// conversion, so nothing is lost silently.
enum ReadingsCSV {
    /// Returns how many records were left out.
    static func convert(_ source: String, to destination: String) throws -> Int {
        let decoder = try ReadingInput.open(path: source, format: .ndjson)
        let out = try RecordBuffer(path: destination)
        out.append("t,device,lat,lon,accuracy\n")
        var skipped = 0
        reading: while true {
            switch decoder.next() {
            case .end:
                break reading
            case .rejected(let why):
                throw ValidationFailure("\(source):\(decoder.lineNumber): \(why.message)")
            case .reading:
                let r = decoder.current
                guard r.kind == .fix else {
                    skipped += 1
                    continue
                }
                out.append(string: r.t.description)
                out.append(",")
                appendCSV(ArraySlice(r.deviceString.utf8), to: out)
                out.append(string: ",\(r.latitude),\(r.longitude),")
                if !r.accuracy.isNaN { out.append(string: r.accuracy.description) }
                out.append("\n")
                try out.endRecord()
            }
        }
        if let error = decoder.ioError { throw ValidationFailure("\(source): \(error)") }
        try out.flush()
        return skipped
    }

    /// A CSV field: quoted (with doubled quotes) when it holds a comma, a quote or edge spaces.
    static func appendCSV(_ field: ArraySlice<UInt8>, to out: RecordBuffer) {
        let special = field.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") }
            || field.first == 0x20 || field.last == 0x20 || field.first == 0x09 || field.last == 0x09
        guard special else {
            out.append(Array(field))
            return
        }
        out.append(UInt8(ascii: "\""))
        for b in field {
            if b == UInt8(ascii: "\"") { out.append(b) }
            out.append(b)
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// `geotrigger replay`'s peak resident memory (bytes), from its summary's `peak memory 52.4 MiB`
/// line; nil when there is none.
///
/// The bench takes this rather than `wait4`'s `ru_maxrss`: a child started with `posix_spawn`
/// shares this process's address space until it executes, and Linux then counts that space's
/// high-water mark as the child's. Once the bench has held a scenario's readings in memory,
/// every later child would report at least that (world and beacons read 582 and 629 MiB so).
func reportedPeakMemory(_ stderr: String) -> Int? {
    guard let line = stderr.split(separator: "\n").last(where: { $0.contains("peak memory ") }) else { return nil }
    let words = line.split(separator: " ")
    guard let i = words.firstIndex(of: "memory"), i + 2 < words.count, words[i + 2] == "MiB",
          let mebibytes = Double(String(words[i + 1].filter { $0 != "," }))
    else { return nil }
    return Int((mebibytes * 1_048_576).rounded())
}

/// The reading thread's CPU seconds from a `replay --jobs N` summary:
/// `cpu 0.218 s, 0.102 s of it on the reading thread and 0.117 s on 2 jobs`.
func readerCPUSeconds(_ stderr: String) -> Double? {
    guard let line = stderr.split(separator: "\n").last(where: { $0.contains("of it on the reading thread") }) else { return nil }
    let words = line.split(separator: " ")
    guard let i = words.firstIndex(of: "of"), i >= 2, words[i - 1] == "s" else { return nil }
    return Double(words[i - 2])
}

/// The phases of a `geotrigger replay` run, from its summary's last line:
/// `elapsed 0.812 s, 1,231,527 records/s (100,000 regions loaded and indexed in 0.162 s)`.
struct ReplayPhases {
    var elapsed: Double
    var loadSeconds: Double
    /// Readings in → events out: the span the peers report.
    var replaySeconds: Double { elapsed - loadSeconds }

    init?(_ stderr: String) {
        guard let line = stderr.split(separator: "\n").last(where: { $0.contains("elapsed ") }) else { return nil }
        let words = line.split(separator: " ")
        guard let e = words.firstIndex(of: "elapsed"), e + 1 < words.count, let elapsed = Double(words[e + 1]),
              let i = words.lastIndex(of: "in"), i + 1 < words.count, let load = Double(words[i + 1]),
              elapsed > load
        else { return nil }
        self.elapsed = elapsed
        self.loadSeconds = load
    }
}
