#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore

/// Decodes the track points of a GPX file as fixes.
///
/// Every `<trkpt lat=".." lon="..">` with a `<time>` child is a fix for one device: the file name
/// without its extension, unless a device is given. A track point without a time is not a reading;
/// it is counted in `untimedPoints`. A track point with a bad time or coordinate is rejected;
/// `lineNumber` is the line where it starts and `rejectedLine` is the element's text.
/// Waypoints and route points are ignored.
///
/// The file is read whole (GPX files are small next to NDJSON streams) and scanned with a small tag
/// scanner that skips comments and CDATA sections; it is not a validating XML parser.
public final class GPXDecoder: ReadingDecoder {
    public let sourceName: String
    /// The whole file, read into `buffer`.
    private let data: PaddedBytes
    private let buffer: PaddedBuffer
    private var count = 0
    private var pos = 0
    private var countedTo = 0
    private var currentLine = 1
    /// The device's bytes, in `deviceCopy`.
    private let device: ByteView
    private let deviceCopy: PaddedBuffer
    private var reading = Reading()
    private var element = ByteView.empty

    public private(set) var lineNumber = 0
    public private(set) var ioError: String?
    /// Track points skipped because they have no `<time>`.
    public private(set) var untimedPoints = 0

    /// Reads all of `fd` (closing it if `ownsDescriptor`) and prepares to decode it.
    /// - Parameter device: the device id of every fix; by default the source name's last path
    ///   component without extension.
    public init(fd: Int32, ownsDescriptor: Bool = false, sourceName: String, device: String? = nil) {
        self.sourceName = sourceName
        let name = device ?? GPXDecoder.deviceName(fromPath: sourceName)
        let copy = PaddedBuffer(copying: name)
        self.device = copy.view(from: 0, count: name.utf8.count)
        self.deviceCopy = copy
        var buffer = PaddedBuffer(capacity: 1 << 16)
        var count = 0
        var ioError: String?
        while true {
            if count == buffer.capacity { buffer.grow(to: buffer.capacity * 2, keeping: count) }
            let got = buffer.read(fd, at: count, count: buffer.capacity - count)
            if got > 0 {
                count += got
            } else if got == 0 {
                break
            } else if errno != EINTR {
                ioError = String(cString: strerror(errno))
                break
            }
        }
        if ownsDescriptor { close(fd) }
        self.count = count
        self.ioError = ioError
        self.data = buffer.bytes(from: 0, count: count)
        self.buffer = buffer
    }

    /// `path`'s last component without its extension (`tracks/ride.gpx` → `ride`).
    public static func deviceName(fromPath path: String) -> String {
        let (name, dot) = PathName.lastComponent(of: path)
        if let dot, dot != name.startIndex { return String(name[..<dot]) }
        return name
    }

    public var current: Reading { reading }
    public var rejectedLine: ByteView { element }
    public var bytesRead: Int { pos }

    // MARK: Scanning

    private func find(_ needle: StaticString, from: Int, to: Int) -> Int? {
        let m = needle.utf8CodeUnitCount
        let first = needle.utf8Start[0]
        var i = from
        while i + m <= to {
            guard let h = data.firstIndex(of: first, in: i..<(to - m + 1)) else { return nil }
            if data.matches(needle, at: h) { return h }
            i = h + 1
        }
        return nil
    }

    @inline(__always)
    private func isNameEnd(_ i: Int) -> Bool {
        guard i < count else { return true }
        let c = data[i]
        return c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == UInt8(ascii: ">") || c == UInt8(ascii: "/")
    }

    private func advanceLineCount(to i: Int) {
        var k = countedTo
        while k < i, let nl = data.firstIndex(of: 0x0A, in: k..<i) {
            currentLine += 1
            k = nl + 1
        }
        countedTo = i
    }

    /// The end (index of `>`) of the tag starting at `lt`, honouring quoted attribute values.
    private func tagEnd(_ lt: Int) -> Int? {
        var i = lt + 1
        var quote: UInt8 = 0
        while i < count {
            let c = data[i]
            if quote != 0 {
                if c == quote { quote = 0 }
            } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                quote = c
            } else if c == UInt8(ascii: ">") {
                return i
            }
            i += 1
        }
        return nil
    }

    /// The value of attribute `name` in the tag `data[from..<to]`.
    private func attribute(_ name: StaticString, from: Int, to: Int) -> PaddedBytes? {
        var i = from
        let m = name.utf8CodeUnitCount
        while i < to {
            // Skip to the next attribute name.
            while i < to && (data[i] == 0x20 || data[i] == 0x09 || data[i] == 0x0A || data[i] == 0x0D) { i += 1 }
            let nameStart = i
            while i < to && data[i] != UInt8(ascii: "=") && data[i] != 0x20 && data[i] != 0x09
                && data[i] != 0x0A && data[i] != 0x0D && data[i] != UInt8(ascii: "/") { i += 1 }
            let nameEnd = i
            while i < to && (data[i] == 0x20 || data[i] == 0x09 || data[i] == 0x0A || data[i] == 0x0D) { i += 1 }
            guard i < to, data[i] == UInt8(ascii: "=") else {
                if i == nameStart { i += 1 }
                continue
            }
            i += 1
            while i < to && (data[i] == 0x20 || data[i] == 0x09 || data[i] == 0x0A || data[i] == 0x0D) { i += 1 }
            guard i < to, data[i] == UInt8(ascii: "\"") || data[i] == UInt8(ascii: "'") else { return nil }
            let q = data[i]
            let valueStart = i + 1
            var j = valueStart
            while j < to && data[j] != q { j += 1 }
            if nameEnd - nameStart == m && data.matches(name, at: nameStart) {
                return data.slice(valueStart..<j)
            }
            i = j + 1
        }
        return nil
    }

    private func trimmed(_ s: Int, _ e: Int) -> ByteView {
        var s = s
        var e = e
        while s < e && (data[s] == 0x20 || data[s] == 0x09 || data[s] == 0x0A || data[s] == 0x0D) { s += 1 }
        while e > s && (data[e - 1] == 0x20 || data[e - 1] == 0x09 || data[e - 1] == 0x0A || data[e - 1] == 0x0D) { e -= 1 }
        return data.view(s..<e)
    }

    public var position: InputPosition { InputPosition(offset: pos, line: lineNumber) }

    /// Decodes again up to `position` (the file is in memory), so the line count and the track
    /// points without a time are counted as before.
    public func resume(at position: InputPosition) -> Bool {
        while pos < position.offset {
            if next() == .end { break }
        }
        return pos == position.offset
    }

    public func next() -> DecodeStep {
        while pos < count {
            guard let lt = find("<", from: pos, to: count) else {
                pos = count
                break
            }
            if find("<!--", from: lt, to: min(lt + 4, count)) != nil {
                pos = (find("-->", from: lt + 4, to: count).map { $0 + 3 }) ?? count
                continue
            }
            if find("<![CDATA[", from: lt, to: min(lt + 9, count)) != nil {
                pos = (find("]]>", from: lt + 9, to: count).map { $0 + 3 }) ?? count
                continue
            }
            guard find("<trkpt", from: lt, to: min(lt + 6, count)) != nil, isNameEnd(lt + 6) else {
                pos = lt + 1
                continue
            }
            advanceLineCount(to: lt)
            lineNumber = currentLine
            guard let gt = tagEnd(lt) else {
                pos = count
                element = data.view(lt..<count)
                return .rejected(.malformed)
            }
            let selfClosing = data[gt - 1] == UInt8(ascii: "/")
            let attrEnd = selfClosing ? gt - 1 : gt
            var end = gt + 1
            var time: ByteView? = nil
            if !selfClosing {
                guard let close = find("</trkpt", from: gt + 1, to: count), let closeGT = find(">", from: close, to: count) else {
                    pos = count
                    element = data.view(lt..<count)
                    return .rejected(.malformed)
                }
                end = closeGT + 1
                var k = gt + 1
                while let ts = find("<time", from: k, to: close) {
                    // A `<time` whose `>` lies past the point's close is no time of this point.
                    if isNameEnd(ts + 5), let tgt = tagEnd(ts), tgt < close {
                        let te = find("</time", from: tgt + 1, to: close) ?? close
                        time = trimmed(tgt + 1, te)
                        break
                    }
                    k = ts + 1
                }
            }
            pos = end
            element = data.view(lt..<end)
            guard let time else {
                untimedPoints += 1
                continue
            }
            if let reason = fill(attrFrom: lt + 6, attrTo: attrEnd, time: time) {
                return .rejected(reason)
            }
            return .reading
        }
        element = .empty
        return .end
    }

    private func coordinate(_ b: PaddedBytes?, _ v: inout Double) -> RejectReason? {
        guard let p = b else { return .missingCoordinate }
        let t = p.count
        var s = 0
        var e = t
        while s < e && p[s] == 0x20 { s += 1 }
        while e > s && p[e - 1] == 0x20 { e -= 1 }
        guard NumberParser.parseWhole(p.slice(s..<e), e - s, &v) else { return .malformed }
        return v.isFinite ? nil : .nonFinite
    }

    private func fill(attrFrom: Int, attrTo: Int, time: ByteView) -> RejectReason? {
        var lat = 0.0
        var lon = 0.0
        if let r = coordinate(attribute("lat", from: attrFrom, to: attrTo), &lat) { return r }
        if let r = coordinate(attribute("lon", from: attrFrom, to: attrTo), &lon) { return r }
        guard let t = RFC3339.parse(time) else { return .badTime }
        guard InputLimits.timeIsWritable(t) else { return .timeOutOfRange }
        guard lat >= -90 && lat <= 90 else { return .latitudeOutOfRange }
        guard lon >= -180 && lon <= 180 else { return .longitudeOutOfRange }
        // The device (given, or the file name's): every point of the file is rejected if it is too long.
        guard InputLimits.identifierFits(byteCount: device.count) else { return .idTooLong }
        reading.kind = .fix
        reading.t = t
        reading.device = device
        reading.latitude = lat
        reading.longitude = lon
        reading.accuracy = .nan
        reading.beacon = BeaconID()
        reading.rssi = .nan
        reading.tx = .nan
        reading.line = element
        return nil
    }
}
