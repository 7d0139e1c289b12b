import Foundation
import GeotriggerCore
import GeotriggerRuntime
import Testing
@testable import GeotriggerFormats

/// `replay --jobs` has its jobs decode the input ahead of the reading thread (`DecodeAhead`),
/// which then looks each plain line's fix up. Whatever the helpers did, whenever they did it,
/// the reader must see exactly the records it sees without them: the same readings, line
/// numbers, rejected lines and places.
@Suite struct DecodeAheadTests {
    /// `first`, then `count` lines, each `line(kind, k, t, device, lat, lon)` for a kind drawn
    /// from 0..<`kinds` (0 to 10 the odd ones, the rest the usual line): three lines a second,
    /// one of 40 devices, anywhere on Earth.
    static func text(_ count: Int, seed: UInt64, first: String, kinds: Int,
                     _ line: (_ kind: Int, _ k: Int, _ t: Int, _ device: String, _ lat: Double, _ lon: Double) -> String)
        -> String {
        var g = SplitMix64(seed: seed)
        var text = first
        for k in 0..<count {
            let device = "dev\(Int.random(in: 0..<40, using: &g))"
            let lat = Double(Int.random(in: -89_999_999...89_999_999, using: &g)) / 1e6
            let lon = Double(Int.random(in: -179_999_999...179_999_999, using: &g)) / 1e6
            text += line(Int.random(in: 0..<kinds, using: &g), k, 1_700_000_000 + k / 3, device, lat, lon)
        }
        return text
    }

    /// NDJSON lines of every kind the plain lane meets or declines: compact and spaced fixes,
    /// with and without accuracy, CR LF, blank and space-only lines, sightings, control
    /// records, values out of range, broken JSON, an over-long line, and no newline at the end.
    static func ndjson(lines: Int, seed: UInt64) -> [UInt8] {
        let body = text(lines, seed: seed, first: "\u{FEFF}", kinds: 40) { kind, k, t, d, lat, lon in
            switch kind {
            case 0: "\n"
            case 1: "   \n"
            case 2: #"{"t":\#(t),"device":"\#(d)","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"rssi":-60}"# + "\n"
            case 3: #"{"t":\#(t),"device":"\#(d)","lat":91,"lon":\#(lon)}"# + "\n"
            case 4: #"{"t":\#(t),"device":"\#(d)","lat":\#(lat),"lon":"# + "\n"
            case 5: #"{"t": \#(t), "device": "\#(d)", "lat": \#(lat), "lon": \#(lon), "accuracy": 7}"# + "\n"
            case 6: #"{"t":\#(t),"device":"\#(d)","lat":\#(lat),"lon":\#(lon)}"# + "\r\n"
            case 7: #"{"t":\#(t),"device":"\#(String(repeating: "x", count: 300))","lat":1,"lon":2}"# + "\n"
            case 8: #"{"t":\#(t),"device":"\#(d)","lat":\#(lat),"lon":\#(lon),"speed":3}"# + "\n"
            case 9: #"{"t":\#(t),"op":"remove","id":"r\#(k)"}"# + "\n"
            case 10: #"{"t":\#(t),"device":"\#(d)","lat":\#(lat),"lon":\#(lon),"accuracy":-1}"# + "\n"
            default: #"{"t":\#(t),"device":"\#(d)","lat":\#(lat),"lon":\#(lon),"accuracy":\#(k % 50)}"# + "\n"
            }
        }
        return Array((body + #"{"t":1800000000,"device":"last","lat":1.5,"lon":2.5}"#).utf8)
    }

    /// CSV rows as `ndjson` mixes lines: plain rows, quoted and spaced fields, extra fields,
    /// bad numbers, CR LF, blank lines, an over-long row.
    static func csv(rows: Int, seed: UInt64) -> [UInt8] {
        Array(text(rows, seed: seed, first: "t,device,lat,lon,accuracy\n", kinds: 30) { kind, k, t, d, lat, lon in
            switch kind {
            case 0: "\n"
            case 1: "\(t),\"\(d)\",\(lat),\(lon),5\n"
            case 2: "\(t), \(d) ,\(lat),\(lon),5\n"
            case 3: "\(t),\(d),\(lat),\(lon),5,9\n"
            case 4: "\(t),\(d),9\(lat),\(lon),5\n"
            case 5: "\(t),\(d),\(lat),\(lon),5\r\n"
            case 6: "\(t),\(String(repeating: "y", count: 300)),1,2,3\n"
            case 7: "\(t),\(d),\(lat),\(lon),\n"
            default: "\(t),\(d),\(lat),\(lon),\(k % 50)\n"
            }
        }.utf8)
    }

    /// Reads `d` as the replay loop reads it (`drainWithFastLane`), the lane stopping every
    /// `pause` lines; at each stop `help` runs (the helpers' turn).
    static func read(_ d: some FastLaneDecoder, pause: Int, help: () -> Void) -> [Seen] {
        drainWithFastLane(d, pause: pause, help: help).seen
    }

    enum Format: String, CaseIterable { case ndjson, csv }

    static func decoder(_ format: Format, _ file: TempFile, mapped: Bool) -> any FastLaneDecoder & DecodesAhead {
        switch format {
        case .ndjson:
            return NDJSONDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path, bufferSize: 4096,
                                 maxLineLength: 200, mapsFile: mapped)
        case .csv:
            return CSVDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path, bufferSize: 4096,
                              maxLineLength: 200, mapsFile: mapped)
        }
    }

    static func file(_ format: Format, lines: Int, seed: UInt64) -> TempFile {
        switch format {
        case .ndjson: return TempFile(ndjson(lines: lines, seed: seed))
        case .csv: return TempFile(csv(rows: lines, seed: seed), name: "readings.csv")
        }
    }

    /// Small chunks (lines cross their ends, a line is longer than one), small and large rings,
    /// and helpers that never run, always run until they can go no further, or run a few
    /// chunks at random points: the records are those of the file read without them.
    @Test(arguments: Format.allCases, [(7, 2), (64, 2), (301, 4), (4096, 16)])
    func helpersChangeNothing(_ format: Format, _ sizes: (chunkBytes: Int, ring: Int)) {
        let file = Self.file(format, lines: 3000, seed: 5)
        let reference = Self.read(Self.decoder(format, file, mapped: false), pause: 1 << 30) {}
        #expect(reference.count > 2700)
        var generator = SplitMix64(seed: 3)
        for pattern in ["never", "always", "random"] {
            let d = Self.decoder(format, file, mapped: true)
            let spare = SpareWork()
            d.decodeAhead(on: spare, chunkBytes: sizes.chunkBytes, ring: sizes.ring)
            let seen = Self.read(d, pause: 97) {
                switch pattern {
                case "never": break
                case "always": while spare.run() {}
                default: for _ in 0..<Int.random(in: 0..<3, using: &generator) { _ = spare.run() }
                }
            }
            #expect(seen == reference, "\(format) \(sizes) \(pattern)")
            let (decoded, lookedUp) = d.decodedAhead
            if pattern == "never" {
                #expect(decoded == 0 && lookedUp == 0)
            } else {
                #expect(decoded >= lookedUp)
                // The helpers did work, and the reader used it (with chunks shorter than a
                // line, the next line seldom begins in the one chunk a helper may decode).
                if sizes.chunkBytes >= 64 { #expect(lookedUp > 0, "\(format) \(sizes) \(pattern)") }
            }
            if pattern == "always" && sizes.chunkBytes * (sizes.ring - 1) >= 16384 {
                // Helpers far enough ahead at every stop (97 lines): most plain lines are looked up.
                let lane = reference.filter { $0.step == .reading && $0.kind == .fix }.count
                #expect(lookedUp * 2 > lane, "\(format) \(sizes): \(lookedUp) of \(lane)")
            }
        }
    }

    /// A helper on its own thread, decoding while the reader reads (as the jobs do): the same
    /// records. (Under ThreadSanitizer, the hand-over between them is checked too.)
    @Test(arguments: Format.allCases)
    func aHelperThreadChangesNothing(_ format: Format) {
        let file = Self.file(format, lines: 40_000, seed: 9)
        let reference = Self.read(Self.decoder(format, file, mapped: false), pause: 1 << 30) {}
        let d = Self.decoder(format, file, mapped: true)
        let spare = SpareWork()
        d.decodeAhead(on: spare, chunkBytes: 1024, ring: 8)
        let stop = JobQueue<Bool>()
        let helper = JobThread {
            while stop.popIfAny() == nil {
                if !spare.run() { sched_yield() }
            }
        }
        let seen = Self.read(d, pause: 500) {}
        stop.push(true)
        helper.join()
        #expect(seen == reference)
    }

    /// A run resumed from a checkpoint starts decoding ahead at its place in the file.
    @Test(arguments: Format.allCases)
    func aResumedReaderLooksUpFromItsPlace(_ format: Format) {
        let file = Self.file(format, lines: 2000, seed: 13)
        let first = Self.decoder(format, file, mapped: false)
        var count = 0
        while count < 700, first.next() != .end { count += 1 }
        let position = first.position
        let reference = Self.decoder(format, file, mapped: false)
        #expect(reference.resume(at: position))
        let expected = Self.read(reference, pause: 1 << 30) {}
        let d = Self.decoder(format, file, mapped: true)
        #expect(d.resume(at: position))
        let spare = SpareWork()
        d.decodeAhead(on: spare, chunkBytes: 512, ring: 4)
        let seen = Self.read(d, pause: 50) { while spare.run() {} }
        #expect(seen == expected)
        #expect(d.decodedAhead.lookedUp > 0)
    }

    /// An input that is read, not mapped (a pipe, standard input): nothing is decoded ahead,
    /// and the helpers find no work.
    @Test func anInputThatIsReadIsNotDecodedAhead() {
        let bytes = Self.ndjson(lines: 500, seed: 1)
        let d = NDJSONDecoder(fd: pipeFeeding(bytes), ownsDescriptor: true, sourceName: "-")
        let spare = SpareWork()
        d.decodeAhead(on: spare)
        #expect(!spare.run())
        let file = TempFile(bytes)
        let reference = Self.read(Self.decoder(.ndjson, file, mapped: false), pause: 1 << 30) {}
        let seen = Self.read(d, pause: 1 << 30) {}
        #expect(seen.count == reference.count)
        #expect(d.decodedAhead == (0, 0))
    }
}
