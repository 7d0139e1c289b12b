import GeotriggerCore
import Foundation
@testable import GeotriggerFormats

/// What a test sees of one decoder step, copied out of the decoder's buffers.
struct Seen: Equatable, CustomStringConvertible {
    var step: DecodeStep
    var line: Int
    var text: String
    var kind: Reading.Kind = .fix
    var t: Double = .nan
    var device: String = ""
    var latitude: Double = .nan
    var longitude: Double = .nan
    var accuracy: Double = .nan
    var beacon = BeaconID()
    var rssi: Double = .nan
    var tx: Double = .nan
    var op: ControlOp = .add

    static func == (a: Seen, b: Seen) -> Bool { a.description == b.description }

    var description: String {
        "\(step)@\(line) \(kind) t=\(t) dev=\(device) \(latitude),\(longitude) acc=\(accuracy) rssi=\(rssi) tx=\(tx) \(beacon) \(op)"
    }
}

func snapshot(_ d: any ReadingDecoder, _ step: DecodeStep) -> Seen {
    var s = Seen(step: step, line: d.lineNumber, text: String(decoding: d.rejectedLine, as: UTF8.self))
    if step == .reading {
        let r = d.current
        s.kind = r.kind
        s.t = r.t
        s.device = r.deviceString
        s.latitude = r.latitude
        s.longitude = r.longitude
        s.accuracy = r.accuracy
        s.beacon = r.beacon
        s.rssi = r.rssi
        s.tx = r.tx
        s.op = r.op
        s.text = String(decoding: r.line, as: UTF8.self)
    }
    return s
}

func drain(_ d: any ReadingDecoder, limit: Int = 1_000_000) -> [Seen] {
    var out: [Seen] = []
    while out.count < limit {
        let step = d.next()
        if step == .end { break }
        out.append(snapshot(d, step))
    }
    return out
}

/// The decoders with a fast lane for plain fixes (`drainPlainFixes`).
protocol FastLaneDecoder: ReadingDecoder {
    func drainPlainFixes(_ body: (_ t: Double, _ device: ByteView, _ latitude: Double,
                                  _ longitude: Double, _ accuracy: Double) -> Bool)
}
extension NDJSONDecoder: FastLaneDecoder {}
extension CSVDecoder: FastLaneDecoder {}

/// `drain`, as the replay loop reads: the fast lane's fixes first, then one step of `next()`,
/// again and again. What the lane hands over is seen as `next()` shows a reading. The lane
/// stops every `pause` lines (as the replay's stops to send batches), and `help` runs before
/// each turn of the lane.
func drainWithFastLane(_ d: some FastLaneDecoder, limit: Int = 1_000_000, pause: Int = .max,
                       help: () -> Void = {}) -> (seen: [Seen], fromLane: Int) {
    var out: [Seen] = []
    var fromLane = 0
    while out.count < limit {
        help()
        d.drainPlainFixes { t, device, latitude, longitude, accuracy in
            var s = Seen(step: .reading, line: d.lineNumber, text: String(decoding: d.rejectedLine, as: UTF8.self))
            s.t = t
            s.device = String(decoding: device, as: UTF8.self)
            s.latitude = latitude
            s.longitude = longitude
            s.accuracy = accuracy
            out.append(s)
            fromLane += 1
            return out.count < limit && fromLane % pause != 0
        }
        let step = d.next()
        if step == .end { break }
        out.append(snapshot(d, step))
    }
    return (out, fromLane)
}

/// A temporary file holding `bytes`, removed when released.
final class TempFile {
    let path: String
    init(_ bytes: [UInt8], name: String = "readings.ndjson") {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("geotrigger-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        path = dir.appendingPathComponent(name).path
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }
    convenience init(_ text: String, name: String = "readings.ndjson") { self.init(Array(text.utf8), name: name) }
    deinit { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }

    func openFD() -> Int32 { open(path, O_RDONLY) }
}

func decodeNDJSON(_ bytes: [UInt8], bufferSize: Int = 1 << 20, maxLineLength: Int = 1 << 20) -> (NDJSONDecoder, [Seen]) {
    let file = TempFile(bytes)
    let d = NDJSONDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path,
                          bufferSize: bufferSize, maxLineLength: maxLineLength)
    return (d, drain(d))
}

func decodeNDJSON(_ text: String, bufferSize: Int = 1 << 20, maxLineLength: Int = 1 << 20) -> (NDJSONDecoder, [Seen]) {
    decodeNDJSON(Array(text.utf8), bufferSize: bufferSize, maxLineLength: maxLineLength)
}

func decodeCSV(_ text: String, plainRows: Bool = true) -> (CSVDecoder, [Seen]) {
    let file = TempFile(text, name: "readings.csv")
    let d = CSVDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path)
    d.plainRowsAllowed = plainRows
    return (d, drain(d))
}

/// `decodeCSV` read as the replay loop reads (`drainWithFastLane`).
func decodeCSVWithFastLane(_ text: String) -> (seen: [Seen], fromLane: Int) {
    let file = TempFile(text, name: "readings.csv")
    return drainWithFastLane(CSVDecoder(fd: file.openFD(), ownsDescriptor: true, sourceName: file.path))
}

/// The first step of decoding one NDJSON line.
func one(_ line: String) -> Seen {
    let (_, seen) = decodeNDJSON(line + "\n")
    return seen.first ?? Seen(step: .end, line: 0, text: "")
}

/// Writes `bytes` into a pipe from another thread, returning the read end.
func pipeFeeding(_ bytes: [UInt8], chunk: Int = 7777) -> Int32 {
    var fds: [Int32] = [0, 0]
    precondition(pipe(&fds) == 0)
    let writeFD = fds[1]
    let thread = Thread {
        var offset = 0
        bytes.withUnsafeBytes { buf in
            while offset < buf.count {
                let n = write(writeFD, buf.baseAddress! + offset, min(chunk, buf.count - offset))
                if n <= 0 { break }
                offset += n
            }
        }
        close(writeFD)
    }
    thread.start()
    return fds[0]
}
