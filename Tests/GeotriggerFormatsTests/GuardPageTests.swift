#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore
import Testing
@testable import GeotriggerFormats

/// Bytes that end exactly at a page the process may not read: a load past the last byte
/// faults (SIGSEGV) instead of reading whatever follows, as a Kafka message's payload, which
/// ends at librdkafka's buffer's last byte, does on a page edge.
final class GuardedBytes {
    private let base: UnsafeMutableRawPointer
    private let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    private let span: Int

    /// Room for `capacity` bytes before the guard page.
    init(capacity: Int = 8192) {
        let pages = (capacity + pageSize - 1) / pageSize
        span = (pages + 1) * pageSize
        let p = mmap(nil, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        precondition(p != MAP_FAILED, "mmap failed")
        base = p!
        precondition(mprotect(base + pages * pageSize, pageSize, PROT_NONE) == 0, "mprotect failed")
    }

    deinit { munmap(base, span) }

    /// `bytes` copied to end at the guard page; the buffer lent to `body` is exactly their length.
    func withBytes<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let guardStart = span - pageSize
        precondition(bytes.count <= guardStart)
        let start = base + guardStart - bytes.count
        bytes.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return body(UnsafeRawBufferPointer(start: start, count: bytes.count))
    }
}

@Suite("Decoders on lent bytes that end at their last byte (a guard page after them)")
struct GuardPageTests {
    /// Records of every kind and length the decoder's fast lanes and the general reader take,
    /// each also cut short at every length, and with CR LF / LF endings.
    static let records: [String] = [
        #"{"t":1635501603,"device":"d1","lat":48.2,"lon":16.37}"#,
        #"{"t":1635501603.25,"device":"bus-0042","lat":-33.865143,"lon":151.2099,"accuracy":12.5}"#,
        #"{"t":1635501603,"device":"a-rather-long-device-name-0001","lat":48.20123456,"lon":16.37123456,"accuracy":5}"#,
        #"{"t":"2021-10-29T10:00:03.125Z","device":"d1","lat":48.2,"lon":16.37}"#,
        #"{"t":7,"device":"d\u00e9","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":7,"rssi":-71,"tx":-59}"#,
        #"{"t":9,"op":"removePending","device":"d1","ids":["welcome","lake"]}"#,
        #"{"t":9,"op":"addRegion","region":{"type":"Feature","id":"r1","geometry":{"type":"Point","coordinates":[16.4,48.3]},"properties":{"radius":150}}}"#,
        #"{ "t" : 12 , "lat" : 1e1 , "lon" : -0.5 , "device" : "x" }"#,
        #"{"t":1,"device":"d","lat":12.345678901234567,"lon":0.12345678901234567}"#,
    ]

    @Test("every record and every prefix of it decodes the same lent at a guard page as copied with room after it")
    func ndjsonRecordsAtAPageEdge() {
        let guarded = GuardedBytes()
        let lent = NDJSONDecoder(recordsNamed: "guarded", defaultDevice: "default")
        let roomy = NDJSONDecoder(recordsNamed: "roomy", defaultDevice: "default")
        var decoded = 0
        for record in Self.records {
            let bytes = Array(record.utf8)
            for ending in [[], [0x0A], [0x0D, 0x0A]] as [[UInt8]] {
                for length in 0...bytes.count {
                    let input = Array(bytes[0..<length]) + ending
                    let step = guarded.withBytes(input) { lent.decode(record: ByteView(unsafe: $0)) }
                    let got = snapshot(lent, step)
                    // The same bytes followed by more room than any word load needs.
                    let padded = input + [UInt8](repeating: UInt8(ascii: "9"), count: 64)
                    let expected = padded.withUnsafeBytes {
                        snapshot(roomy, roomy.decode(record: ByteView(unsafe: UnsafeRawBufferPointer(rebasing: $0[0..<input.count]))))
                    }
                    #expect(got == expected,
                            "\(String(decoding: input, as: UTF8.self))")
                    if step == .reading { decoded += 1 }
                }
            }
        }
        // Whole records with each ending decode; no prefix is a record (they are rejected, or blank).
        #expect(decoded == 3 * Self.records.count)
    }

    @Test("a record's reading stays valid after the lent bytes are overwritten")
    func readingOutlivesTheLentBytes() {
        let decoder = NDJSONDecoder(recordsNamed: "lent")
        var bytes = Array(#"{"t":1635501603,"device":"bus-7","lat":48.2,"lon":16.37}"#.utf8)
        let step = bytes.withByteView { decoder.decode(record: $0) }
        for i in bytes.indices { bytes[i] = 0 }
        #expect(step == .reading)
        #expect(decoder.current.deviceString == "bus-7")
        #expect(String(decoding: decoder.current.line, as: UTF8.self).hasPrefix(#"{"t":1635501603"#))
    }
}
