import GeotriggerCore

/// gpsd's JSON reports, one object a line, as `gpspipe -w` prints them (SPEC §3, "Real
/// receivers"): each `TPV` report with `mode` ≥ 2 and `lat`/`lon` is a fix at its `time`, with
/// `eph` as its accuracy (or the combined `epx`/`epy`). The device is `--device`, else the
/// report's `device`, else the file name without its extension (`stdin` for standard input).
///
/// A TPV without a fix (`mode` 0 or 1) is rejected as a void fix, one with a fix but no `time`
/// (gpsd's reports before it knows the date) as a fix before any date; a TPV that repeats the
/// one before it exactly (gpsd reports a cycle again as more of its sentences come) and every
/// other class (`VERSION`, `DEVICES`, `WATCH`, `SKY`, …) are passed over and counted by kind.
public final class GPSDDecoder: ReadingDecoder {
    public let sourceName: String
    private let reader: LineReader
    private var reading = Reading()
    /// `--device` or the file's name, when given or when a report has no `device`.
    private let fallback: InputDevice
    /// Where a `device` with escapes is unescaped.
    private var scratch = PaddedBuffer(capacity: 256)
    /// The last fix, to pass over gpsd's exact repeats of it.
    private var last: (t: Double, latitude: Double, longitude: Double) = (.nan, .nan, .nan)
    private var lastDevice: [UInt8] = []

    public private(set) var rejectedLine = ByteView.empty
    public private(set) var lineNumber = 0
    public private(set) var position = InputPosition.start
    public var passedOver: [String: Int] { passed.dictionary }
    private var passed = PassedOverCounts()

    /// `mapsFile`: a regular file is mapped rather than read (`LineReader`).
    public convenience init(fd: Int32, ownsDescriptor: Bool = false, sourceName: String, device: String? = nil,
                            bufferSize: Int = 1 << 20, maxLineLength: Int = 1 << 20, mapsFile: Bool = false) {
        self.init(reader: LineReader(fd: fd, ownsDescriptor: ownsDescriptor, bufferSize: bufferSize,
                                     maxLineLength: maxLineLength, mapsFile: mapsFile),
                  sourceName: sourceName, device: device)
    }

    init(reader: LineReader, sourceName: String, device: String?) {
        self.sourceName = sourceName
        self.reader = reader
        fallback = InputDevice(device, sourceName: sourceName)
    }

    public func whenIdle(_ body: @escaping () -> Void) { reader.whenIdle = body }

    public var current: Reading { reading }
    public var bytesRead: Int { reader.bytesRead }
    public var ioError: String? { reader.ioError }

    public func next() -> DecodeStep {
        while true {
            switch reader.next() {
            case .idle:
                continue
            case .end:
                position = InputPosition(offset: reader.consumed, line: reader.lineNumber)
                return .end
            case .tooLong(let prefix):
                lineNumber = reader.lineNumber
                position = InputPosition(offset: reader.consumed, line: reader.lineNumber)
                rejectedLine = prefix
                return .rejected(.lineTooLong)
            case .line(let line):
                lineNumber = reader.lineNumber
                position = InputPosition(offset: reader.consumed, line: reader.lineNumber)
                rejectedLine = line.bytes
                switch report(line) {
                case .blank: continue
                case .passedOver(let kind): passed.add(kind)
                case .rejected(let reason): return .rejected(reason)
                case .fix: return .reading
                }
            }
        }
    }

    private enum Report {
        case blank
        case passedOver(String)
        case rejected(RejectReason)
        case fix
    }

    /// What one line is: a TPV fix (in `reading`), a rejection, or a report passed over.
    private func report(_ p: PaddedBytes) -> Report {
        switch Self.parse(p, scratch: &scratch) {
        case .blank: return .blank
        case .passedOver(let kind): return .passedOver(kind)
        case .rejected(let reason): return .rejected(reason)
        case .fix(let fix):
            let name = fallback.given ? fallback.bytes : fix.device ?? fallback.bytes
            // A file's name can leave none either (`.gpsd` without a stem).
            guard !name.isEmpty else { return .rejected(.missingDevice) }
            guard InputLimits.identifierFits(byteCount: name.count) else { return .rejected(.idTooLong) }
            // gpsd's exact repeat of the report before.
            if fix.t == last.t && fix.latitude == last.latitude && fix.longitude == last.longitude
                && name.elementsEqual(lastDevice) {
                return .passedOver("TPV repeat")
            }
            last = (fix.t, fix.latitude, fix.longitude)
            lastDevice.removeAll(keepingCapacity: true)
            lastDevice.append(contentsOf: name)
            reading = fix.reading(device: name, line: p.bytes)
            return .fix
        }
    }

    /// A TPV report's fix, before its device is decided and before the repeat check.
    struct Fix {
        var t: Double
        var latitude: Double
        var longitude: Double
        /// NaN when the report has none.
        var accuracy: Double
        /// The report's `device` (unescaped into the caller's scratch), if it has one.
        var device: ByteView?

        func reading(device name: ByteView, line: ByteView) -> Reading {
            .fix(t: t, device: name, latitude: latitude, longitude: longitude, accuracy: accuracy, line: line)
        }
    }

    enum Parsed {
        case blank
        case passedOver(String)
        case rejected(RejectReason)
        case fix(Fix)
    }

    /// One gpsd report (a line, without its newline, in a padded buffer): a TPV fix, a rejection,
    /// or a report passed over. What `GPSDDecoder` and `consume --format gpsd` share; the device
    /// and the repeat check are the caller's.
    static func parse(_ p: PaddedBytes, scratch: inout PaddedBuffer) -> Parsed {
        let n = p.count
        var i = JSONScan.skipWhitespace(p, 0, n)
        if i == n { return .blank }
        guard p[i] == UInt8(ascii: "{") else { return .rejected(.malformed) }
        var kind: ByteView?
        var device: ByteView?
        var mode = 0.0, t = Double.nan, latitude = Double.nan, longitude = Double.nan
        var eph = Double.nan, epx = Double.nan, epy = Double.nan
        var hasTime = false, badTime = false
        i = JSONScan.skipWhitespace(p, i + 1, n)
        if i < n && p[i] == UInt8(ascii: "}") { return .passedOver("no class") }
        while true {
            guard i < n, p[i] == UInt8(ascii: "\"") else { return .rejected(.malformed) }
            var escaped = false
            let keyEnd = JSONScan.scanString(p, i + 1, n, &escaped)
            if keyEnd == JSONScan.invalidUTF8 { return .rejected(.invalidUTF8) }
            if keyEnd < 0 { return .rejected(.malformed) }
            let key = p.view((i + 1)..<keyEnd)
            i = JSONScan.skipWhitespace(p, keyEnd + 1, n)
            guard i < n, p[i] == UInt8(ascii: ":") else { return .rejected(.malformed) }
            i = JSONScan.skipWhitespace(p, i + 1, n)
            let valueStart = i
            let end = JSONScan.skipValue(p, i, n)
            if end == JSONScan.invalidUTF8 { return .rejected(.invalidUTF8) }
            if end < 0 { return .rejected(.malformed) }
            let isString = p[valueStart] == UInt8(ascii: "\"")
            func number() -> Double {
                var v = Double.nan
                return NumberParser.parse(p, valueStart, end, &v) == end ? v : .nan
            }
            if !escaped {
                switch Self.field(key) {
                case .class: if isString { kind = p.view((valueStart + 1)..<(end - 1)) }
                case .device:
                    if isString {
                        var hasEscape = false
                        _ = JSONScan.scanString(p, valueStart + 1, end, &hasEscape)
                        if hasEscape {
                            // Unescaping never lengthens text.
                            if end - valueStart > scratch.capacity { scratch.grow(to: end - valueStart) }
                            let count = JSONScan.unescape(p, valueStart + 1, end - 1, scratch.writer(from: 0))
                            device = count >= 0 ? scratch.view(from: 0, count: count) : nil
                        } else {
                            device = p.view((valueStart + 1)..<(end - 1))
                        }
                        // `"device":""` names no device: as if the report had none.
                        if device?.isEmpty == true { device = nil }
                    }
                case .mode: mode = number()
                case .time:
                    hasTime = true
                    if isString, let v = RFC3339.parse(p.view((valueStart + 1)..<(end - 1))) { t = v } else { badTime = true }
                case .lat: latitude = number()
                case .lon: longitude = number()
                case .eph: eph = number()
                case .epx: epx = number()
                case .epy: epy = number()
                case .other: break
                }
            }
            i = JSONScan.skipWhitespace(p, end, n)
            guard i < n else { return .rejected(.malformed) }
            if p[i] == UInt8(ascii: "}") { break }
            guard p[i] == UInt8(ascii: ",") else { return .rejected(.malformed) }
            i = JSONScan.skipWhitespace(p, i + 1, n)
        }
        guard JSONScan.skipWhitespace(p, i + 1, n) == n else { return .rejected(.malformed) }
        guard let kind else { return .passedOver("no class") }
        guard kind.elementsEqual("TPV".utf8) else { return .passedOver(kind.string) }
        guard mode >= 2 else { return .rejected(.voidFix) }
        guard !latitude.isNaN, !longitude.isNaN else { return .rejected(.missingCoordinate) }
        guard hasTime else { return .rejected(.noDate) }
        guard !badTime else { return .rejected(.badTime) }
        guard latitude.isFinite, longitude.isFinite else { return .rejected(.nonFinite) }
        guard abs(latitude) <= 90 else { return .rejected(.latitudeOutOfRange) }
        guard abs(longitude) <= 180 else { return .rejected(.longitudeOutOfRange) }
        guard InputLimits.timeIsWritable(t) else { return .rejected(.timeOutOfRange) }
        var accuracy = eph
        if accuracy.isNaN && !epx.isNaN && !epy.isNaN { accuracy = (epx * epx + epy * epy).squareRoot() }
        if !(accuracy >= 0) || !accuracy.isFinite { accuracy = .nan }
        return .fix(Fix(t: t, latitude: latitude, longitude: longitude, accuracy: accuracy, device: device))
    }

    private enum Field { case `class`, device, mode, time, lat, lon, eph, epx, epy, other }

    private static func field(_ key: ByteView) -> Field {
        switch key.count {
        case 3:
            if key.elementsEqual("lat".utf8) { return .lat }
            if key.elementsEqual("lon".utf8) { return .lon }
            if key.elementsEqual("eph".utf8) { return .eph }
            if key.elementsEqual("epx".utf8) { return .epx }
            if key.elementsEqual("epy".utf8) { return .epy }
        case 4:
            if key.elementsEqual("mode".utf8) { return .mode }
            if key.elementsEqual("time".utf8) { return .time }
        case 5:
            if key.elementsEqual("class".utf8) { return .class }
        case 6:
            if key.elementsEqual("device".utf8) { return .device }
        default: break
        }
        return .other
    }

    /// Decodes again up to `position` (the repeat check and the counts rebuilt), returning nothing.
    public func resume(at position: InputPosition) -> Bool { decodeAgain(upTo: position) }
}
