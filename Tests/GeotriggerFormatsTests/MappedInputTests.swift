import Foundation
import GeotriggerCore
import Testing
@testable import GeotriggerFormats

/// A file mapped into memory (`LineReader`'s `mapsFile`, for runs of many inputs) gives what the
/// same file read gives: the same lines, line numbers, places, over-long lines and resumed runs,
/// with the padding after every line (the last included) still readable.
@Suite struct MappedInputTests {
    /// Everything a reader hands out, copied: each line's bytes, its number and where the next
    /// one begins.
    static func lines(of bytes: [UInt8], mapped: Bool, maxLineLength: Int = 1 << 20, skipTo: (Int, Int)? = nil) -> [String] {
        let file = TempFile(bytes)
        let reader = LineReader(fd: file.openFD(), ownsDescriptor: true, bufferSize: 4096,
                                maxLineLength: maxLineLength, mapsFile: mapped)
        var out: [String] = []
        if let (offset, line) = skipTo {
            guard reader.skip(to: offset, lines: line) else { return ["ends before \(offset)"] }
        }
        while true {
            switch reader.next() {
            case .line(let l):
                // The padding past the line is there to be read, even after a file's last byte.
                #expect(l.padding >= PaddedBuffer.slack)
                _ = l.word(at: l.count)
                out.append("\(reader.lineNumber) \(reader.consumed) [\(l.bytes.string)]")
            case .tooLong(let prefix):
                out.append("\(reader.lineNumber) \(reader.consumed) too long [\(prefix.string)]")
            case .idle:
                out.append("idle")
            case .end:
                out.append("end \(reader.consumed) \(reader.bytesRead)")
                return out
            }
        }
    }

    static var contents: [[UInt8]] {
        var all: [[UInt8]] = [[], Array("a".utf8), Array("a\n".utf8), Array("a\r\nb\r\n\nc".utf8),
                              [0xEF, 0xBB, 0xBF] + Array("bom\nsecond".utf8)]
        // Files that end at a page's end, with and without a last newline: past their last
        // byte is the mapping's reserved page.
        for size in [4096, 8192] {
            var page = Array(repeating: UInt8(ascii: "x"), count: size)
            for k in stride(from: 99, to: size, by: 100) { page[k] = 0x0A }
            all.append(page)
            page[size - 1] = 0x0A
            all.append(page)
        }
        // An over-long line in the middle and at the end.
        let long = String(repeating: "y", count: 300)
        all.append(Array("short\n\(long)\nafter\n\(long)".utf8))
        var generator = SplitMix64(seed: 11)
        for _ in 0..<20 {
            let n = Int.random(in: 0..<3000, using: &generator)
            all.append((0..<n).map { _ in
                let r = Int.random(in: 0..<20, using: &generator)
                return r == 0 ? 0x0A : r == 1 ? 0x0D : UInt8.random(in: 0x20...0x7E, using: &generator)
            })
        }
        return all
    }

    @Test func aMappedFileGivesTheLinesOfTheFileRead() {
        for bytes in Self.contents {
            let read = Self.lines(of: bytes, mapped: false, maxLineLength: 256)
            let mapped = Self.lines(of: bytes, mapped: true, maxLineLength: 256)
            #expect(mapped == read, "\(bytes.count) bytes")
        }
    }

    /// A resumed run (a checkpoint's offset and line) goes on where the read one does.
    @Test func aMappedFileResumesAtAPlace() {
        let bytes = Array((0..<200).map { "line \($0)\n" }.joined().utf8)
        let all = Self.lines(of: bytes, mapped: false)
        for k in [0, 1, 57, 199] {
            let parts = all[k].split(separator: " ")
            let place = (Int(parts[1])!, Int(parts[0])!)
            #expect(Self.lines(of: bytes, mapped: true, skipTo: place) == Self.lines(of: bytes, mapped: false, skipTo: place))
            #expect(Self.lines(of: bytes, mapped: true, skipTo: place).count == 200 - k)
        }
        #expect(Self.lines(of: bytes, mapped: true, skipTo: (bytes.count + 5, 300)) == ["ends before \(bytes.count + 5)"])
    }

    /// Progress counts a mapped file's bytes as its lines are taken, not all at once.
    @Test func aMappedFileCountsItsBytesAsTheyAreTaken() {
        let file = TempFile("one\ntwo\nthree\n")
        let reader = LineReader(fd: file.openFD(), ownsDescriptor: true, mapsFile: true)
        #expect(reader.bytesRead == 0)
        _ = reader.next()
        #expect(reader.bytesRead == 4)
        while case .line = reader.next() {}
        #expect(reader.bytesRead == 14)
    }

    /// A receiver's log: `cycles` cycles of GGA, GSA and RMC a second apart, moving, CR LF line
    /// ends, a comment, and now and then a damaged sentence (its checksum no longer matching).
    static func nmeaLog(cycles: Int, seed: UInt64, start: Int = 0) -> String {
        var generator = SplitMix64(seed: seed)
        var log = "# a receiver\r\n"
        for k in 0..<cycles {
            let second = start + k
            let time = String(format: "%02d%02d%02d.00", 12, second / 60 % 60, second % 60)
            let lat = String(format: "48%02d.%07d", 10 + k % 40, Int.random(in: 0..<10_000_000, using: &generator))
            let lon = String(format: "016%02d.%07d", 20 + k % 30, Int.random(in: 0..<10_000_000, using: &generator))
            var gga = NMEASentencesTests.sentence("GPGGA,\(time),\(lat),N,\(lon),E,1,08,1.2,212.4,M,45.3,M,,")
            if Int.random(in: 0..<15, using: &generator) == 0 { gga = gga.replacingOccurrences(of: ",1.2,", with: ",1.3,") }
            log += gga + "\r\n"
            log += NMEASentencesTests.sentence("GPGSA,A,3,02,05,06,09,12,17,19,25,,,,,3.50,2.5,1.10") + "\r\n"
            log += NMEASentencesTests.sentence("GPRMC,\(time),A,\(lat),N,\(lon),E,0.000,0.00,141123,,,A") + "\r\n"
        }
        return log
    }

    /// The decoders opened on a mapped file decode what they decode from the file read.
    @Test func decodersOnAMappedFileDecodeTheSame() throws {
        let nmea = TempFile(Self.nmeaLog(cycles: 60, seed: 3), name: "log.nmea")
        let ndjson = TempFile((0..<50).map { #"{"t":\#($0),"device":"d","lat":1.5,"lon":2}"# + "\n" }.joined() + "garbage\n", name: "r.ndjson")
        for path in [nmea.path, ndjson.path] {
            let read = drain(try ReadingInput.open(path: path))
            let mapped = drain(try ReadingInput.open(path: path, mapsFile: true))
            #expect(mapped == read, "\(path)")
            #expect(read.count > 10)
        }
    }
}
