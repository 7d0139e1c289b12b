import Foundation
import Geotrigger
@testable import GeotriggerReplay
import Testing

/// The summary's `peak memory` line: the replay's own high-water mark, which the bench reports.
@Suite("peak memory in the replay summary")
struct PeakMemoryTests {
    @Test("VmHWM is read from a /proc status text, in bytes")
    func parsesStatus() {
        let status = "Name:\tgeotrigger\nVmPeak:\t  312000 kB\nVmHWM:\t    2028 kB\nVmRSS:\t    1900 kB\n"
        #expect(vmHighWaterMark(in: status) == 2028 * 1024)
        #expect(vmHighWaterMark(in: "Name:\tgeotrigger\nVmRSS:\t 1900 kB\n") == nil)
        #expect(vmHighWaterMark(in: "VmHWM:\t 12 MB\n") == nil)
    }

    @Test("the figure covers memory this process has touched")
    func coversTouchedMemory() throws {
        let size = 64 << 20
        let held = Held(bytes: size)
        let peak = try #require(peakResidentBytes())
        #expect(peak >= size)
        #expect(held.touchedPages == size / 4096)
    }

    @Test("a replay reports its own peak, not that of the process that started it")
    func replayReportsItsOwnPeak() throws {
        // On Linux a child started with posix_spawn (as Process does) would get at least this
        // process's high-water mark as its ru_maxrss; the summary must not.
        let held = Held(bytes: 400 << 20)
        let dir = try CLI.temporaryDirectory()
        let regions = dir.appendingPathComponent("regions.csv")
        try "id,lat,lon,radius\nhome,48.2,16.37,100\n".write(to: regions, atomically: true, encoding: .utf8)
        let r = try CLI.run(["replay", "--regions", regions.path],
                            stdin: Data(#"{"t":0,"device":"d1","lat":48.2,"lon":16.37}"#.utf8 + [0x0A]))
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n")
        // Just before the closing `elapsed` line.
        let line = try #require(lines.dropLast().last)
        #expect(line.hasPrefix("geotrigger: peak memory ") && line.hasSuffix(" MiB"), "\(r.stderr)")
        let number = String(line.split(separator: " ")[3].filter { $0 != "," })
        let mebibytes = try #require(Double(number))
        #expect(mebibytes > 1 && mebibytes < 200, "\(line)")
        #expect(held.touchedPages == (400 << 20) / 4096)
    }
}

/// Memory held and touched (one byte a page) until this is released.
private final class Held {
    let base: UnsafeMutableRawPointer
    let bytes: Int

    init(bytes: Int) {
        self.bytes = bytes
        base = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 4096)
        for offset in stride(from: 0, to: bytes, by: 4096) { base.storeBytes(of: 1, toByteOffset: offset, as: UInt8.self) }
    }

    /// Reads every page back, so the memory is in use until here.
    var touchedPages: Int {
        var sum = 0
        for offset in stride(from: 0, to: bytes, by: 4096) { sum += Int(base.load(fromByteOffset: offset, as: UInt8.self)) }
        return sum
    }

    deinit { base.deallocate() }
}
