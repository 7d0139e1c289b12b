#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore
import GeotriggerRuntime

/// Decodes NDJSON readings (one flat JSON object per line) from a file descriptor.
///
/// Each line is parsed in one pass over its bytes: known keys are decoded in place, unknown keys and
/// nested values are skipped (but validated), and the whole line must be exactly one JSON object.
/// Nothing is allocated per line: strings with escapes are resolved into a scratch buffer reused
/// for every line. Blank lines are skipped and counted in `blankLines`.
public final class NDJSONDecoder: ReadingDecoder {
    public let sourceName: String
    private let framing: LineFraming

    /// Lines that were empty or held only JSON whitespace (skipped, not rejected).
    public var blankLines: Int { framing.blankLines }
    public var lineNumber: Int { framing.lineNumber }
    public func whenIdle(_ body: @escaping () -> Void) { framing.whenIdle(body) }
    public var current: Reading { framing.reading }
    public var cacheHint: CacheHint { framing.cacheHint }
    public var rejectedLine: ByteView { framing.line }
    public var bytesRead: Int { framing.bytesRead }
    public var ioError: String? { framing.ioError }
    public var position: InputPosition { InputPosition(offset: framing.consumed, line: framing.lineNumber) }

    public func resume(at position: InputPosition) -> Bool {
        framing.skip(to: position.offset, lines: position.line)
    }

    /// - Parameters:
    ///   - fd: the descriptor to read (a file or a pipe).
    ///   - ownsDescriptor: close `fd` when the decoder is released.
    ///   - sourceName: the name used in `FILE:LINE: reason` messages.
    ///   - defaultDevice: the device for records that have no `device` field (nil: they are rejected).
    ///   - bufferSize: read buffer size; `maxLineLength`: longer lines are rejected as `lineTooLong`.
    ///   - mapsFile: a regular file is mapped rather than read (`LineReader`).
    public init(
        fd: Int32, ownsDescriptor: Bool = false, sourceName: String, defaultDevice: String? = nil,
        bufferSize: Int = 1 << 20, maxLineLength: Int = 1 << 20, mapsFile: Bool = false
    ) {
        self.sourceName = sourceName
        self.framing = LineFraming(
            fd: fd, ownsDescriptor: ownsDescriptor, defaultDevice: defaultDevice,
            bufferSize: bufferSize, maxLineLength: maxLineLength, mapsFile: mapsFile)
    }

    /// A decoder of the lines of `reader`, which has returned none yet (the format was told by
    /// its content: `ReadingInput`).
    init(reader: LineReader, sourceName: String, defaultDevice: String?) {
        self.sourceName = sourceName
        self.framing = LineFraming(reader: reader, defaultDevice: defaultDevice)
    }

    /// A decoder of records that arrive one at a time in memory (`decode(record:)`), not from a
    /// descriptor: Kafka messages, one NDJSON record each.
    public convenience init(recordsNamed sourceName: String, defaultDevice: String? = nil, maxRecordLength: Int = 1 << 20) {
        self.init(fd: -1, sourceName: sourceName, defaultDevice: defaultDevice, bufferSize: 4096,
                  maxLineLength: maxRecordLength)
        self.maxRecordLength = maxRecordLength
    }

    private var maxRecordLength = 1 << 20

    /// Decodes one record held in memory (a trailing newline allowed), which counts as the next
    /// line: `.reading` (then `current`), `.rejected` (then `rejectedLine`), or `.end` for a blank
    /// record (counted in `blankLines`). The bytes are copied to a buffer of the decoder's
    /// (the caller's may end at the record's last byte), so `current` and `rejectedLine` stay
    /// valid until the next call; nothing is allocated once the longest record so far fits.
    package func decode(record: ByteView) -> DecodeStep {
        framing.decode(record, maxLength: maxRecordLength) { p in
            switch parse(p, p.count) {
            case 0: .reading
            case 1: .blank
            case let code: .rejected(rejectReason(code))
            }
        }
    }

    public func next() -> DecodeStep {
        @inline(__always) func outcome(_ p: PaddedBytes) -> LineFraming.Outcome {
            switch parse(p, p.count) {
            case 0: .reading
            case 1: .blank
            case let code: .rejected(rejectReason(code))
            }
        }
        // While records are plain fixes, the next line is taken straight from the buffer, its end
        // found by the plain-line parser itself; any other line, or any line after a record that
        // was not one, goes through the line reader's newline search and `parse` (which tries
        // the plain grammar first too, so a stream of other records is not parsed twice).
        if lastWasPlain { return framing.next(whole: { p in plainFixLine(p, p.count) }, outcome) }
        return framing.next(outcome)
    }

    /// Whether the last line `plainFix` or `plainFixLine` saw was a plain fix.
    private var lastWasPlain = true
    /// The plain-fix grammar, and the last time it read.
    @exclusivity(unchecked) private var plain = NDJSONPlainFix()

    /// The reason of the last `parse` that returned 2.
    private var validationReason: RejectReason = .malformed

    /// Maps `parse` result codes (other than 0 reading, 1 blank) to reasons.
    private func rejectReason(_ code: Int) -> RejectReason {
        switch code {
        case JSONScan.invalidUTF8: return .invalidUTF8
        case JSONScan.malformed: return .malformed
        default: return validationReason
        }
    }

    /// Reads a string value at `p[i]` (the opening quote). Returns the index after it and its
    /// bytes (escapes resolved into the scratch buffer at `scratchUsed`), or a negative error code.
    @inline(__always)
    private func stringValue(
        _ p: PaddedBytes, _ i: Int, _ n: Int, _ scratchUsed: inout Int, _ out: inout ByteView
    ) -> Int {
        var esc = false
        let e = JSONScan.scanString(p, i + 1, n, &esc)
        if e < 0 { return e }
        if !esc {
            out = p.view(from: i + 1, count: e - i - 1)
        } else {
            let dst = framing.scratch(from: scratchUsed)
            let written = JSONScan.unescape(p, i + 1, e, dst)
            if written < 0 { return written }
            scratchUsed += written
            out = dst.bytes(count: written).bytes
        }
        return e + 1
    }

    /// Decodes a line that is exactly `{"t":T,"device":"D","lat":Y,"lon":X}` or the same with
    /// `,"accuracy":A` before the brace (the order fleet feeds and `geotrigger scenario` write),
    /// with no whitespace, D printable ASCII without escapes and at most
    /// `InputLimits.identifierBytes` long, and every value one the general path would accept: a
    /// time in the years 0001–9999, coordinates in range, accuracy not negative. Returns
    /// false, having changed nothing, for any other line; the general path then decides it, so
    /// this path only saves work and never decides differently.
    @inline(__always)
    private func plainFix(_ p: PaddedBytes, _ n: Int) -> Bool {
        var fix = PlainFix()
        lastWasPlain = plain.brace(p, n, &fix) == n - 1
        guard lastWasPlain else { return false }
        accept(fix, p)
        return true
    }

    /// `plainFix` on bytes that run on past the line (the reader's buffer): the length of the
    /// line if it is a plain fix whose brace is followed by a newline or CR LF within `available`
    /// bytes, else -1 with nothing decided (a line cut short by the buffer's end, any other).
    @inline(__always)
    private func plainFixLine(_ p: PaddedBytes, _ available: Int) -> Int {
        var fix = PlainFix()
        let length = plain.lineLength(p, available, &fix)
        if length >= 0 { accept(fix, p) }
        return length
    }

    /// Hands the plain fixes that follow in the read buffer to `body`, one per line, while it
    /// returns true: the replay loop's fast lane. Each is the reading `next()` would return, and
    /// its line counts as read (`lineNumber` and `rejectedLine` name it) before `body` sees it;
    /// `current` is left as it was. Stops, leaving the line to `next()`, at the first line that
    /// is not a plain fix or is not wholly buffered yet; does nothing unless the last line
    /// `next()` decided was a plain fix (so a stream of other records is not tried twice). The
    /// device's bytes are valid only during the call.
    public func drainPlainFixes(_ body: (_ t: Double, _ device: ByteView, _ latitude: Double,
                                         _ longitude: Double, _ accuracy: Double) -> Bool) {
        guard lastWasPlain else { return }
        framing.drainFixes({ p, fix in plain.lineLength(p, p.count, &fix) }, body)
    }

    @inline(__always)
    private func accept(_ fix: PlainFix, _ p: PaddedBytes) {
        framing.acceptFix(t: fix.t, device: p.view(from: fix.deviceStart, count: fix.deviceCount),
                          latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy)
    }

    /// Parses one line. Returns 0 for a reading (in the framing's `reading`), 1 for a blank line, 2 for a
    /// record rejected by validation (`validationReason`), or a negative `JSONScan` error code.
    private func parse(_ p: PaddedBytes, _ n: Int) -> Int {
        if plainFix(p, n) { return 0 }
        var i = JSONScan.skipWhitespace(p, 0, n)
        if i == n { return 1 }
        guard p[i] == UInt8(ascii: "{") else { return JSONScan.malformed }
        var f = RecordFields()
        var scratchUsed = 0
        i = JSONScan.skipWhitespace(p, i + 1, n)
        if i < n && p[i] == UInt8(ascii: "}") {
            i += 1
        } else {
            while true {
                // Key: a fix's usual keys, written plainly, in one comparison; any other the long way.
                guard i < n, p[i] == UInt8(ascii: "\"") else { return JSONScan.malformed }
                let field: FieldName
                if let plain = FieldName.matchPlainKey(p, i + 1, n) {
                    field = plain.field
                    i = plain.end
                } else {
                    var key = ByteView.empty
                    var keyScratch = scratchUsed
                    i = stringValue(p, i, n, &keyScratch, &key)  // key bytes need not outlive the match
                    if i < 0 { return i }
                    field = FieldName.match(key)
                    i = JSONScan.skipWhitespace(p, i, n)
                    guard i < n, p[i] == UInt8(ascii: ":") else { return JSONScan.malformed }
                    i += 1
                }
                i = JSONScan.skipWhitespace(p, i, n)
                guard i < n else { return JSONScan.malformed }
                let c = p[i]

                // Value.
                switch field {
                case .t, .lat, .lon, .accuracy, .speed, .course, .altitude, .major, .minor, .rssi, .tx:
                    var v = 0.0
                    let e = NumberParser.parse(p, i, n, &v)
                    if e > i {
                        f.setNumber(field, v)
                        i = e
                    } else if c == UInt8(ascii: "\"") {
                        var s = ByteView.empty
                        var tmp = scratchUsed
                        i = stringValue(p, i, n, &tmp, &s)
                        if i < 0 { return i }
                        if field == .t {
                            if let t = RFC3339.parse(s) {
                                f.t = t
                                f.timeState = .ok
                            } else {
                                f.timeState = .bad
                            }
                        } else if field == .major || field == .minor {
                            f.beaconWrongType = true
                        } else {
                            f.wrongType = true
                        }
                    } else if c == UInt8(ascii: "n") {
                        i = JSONScan.literal(p, i, n, "null")
                        if i < 0 { return i }
                        if field == .t { f.timeState = .missing }
                    } else if let w = NumberParser.nonFiniteWord(p, i, n) {
                        f.setNumber(field, w.value)
                        i = w.end
                    } else {
                        i = JSONScan.skipValue(p, i, n)
                        if i < 0 { return i }
                        switch field {
                        case .t: f.timeState = .bad
                        case .major, .minor: f.beaconWrongType = true
                        default: f.wrongType = true
                        }
                    }
                case .device, .uuid, .op, .id:
                    if c == UInt8(ascii: "\"") {
                        var s = ByteView.empty
                        i = stringValue(p, i, n, &scratchUsed, &s)
                        if i < 0 { return i }
                        switch field {
                        case .device: f.device = s; f.deviceWrongType = false
                        case .uuid: f.uuid = s; f.beaconWrongType = false
                        case .op: f.op = s; f.opWrongType = false
                        default:
                            f.hasIDString = true
                            if !InputLimits.identifierFits(byteCount: s.count) { f.idTooLong = true }
                        }
                    } else if c == UInt8(ascii: "n") {
                        i = JSONScan.literal(p, i, n, "null")
                        if i < 0 { return i }
                    } else {
                        i = JSONScan.skipValue(p, i, n)
                        if i < 0 { return i }
                        switch field {
                        case .device: f.deviceWrongType = true
                        case .uuid: f.beaconWrongType = true
                        case .op: f.opWrongType = true
                        default: break
                        }
                    }
                case .request:
                    f.hasRequestObject = c == UInt8(ascii: "{")
                    i = JSONScan.skipValue(p, i, n)
                    if i < 0 { return i }
                case .region:
                    f.hasRegionObject = c == UInt8(ascii: "{")
                    i = JSONScan.skipValue(p, i, n)
                    if i < 0 { return i }
                case .ids:
                    f.hasIDsArray = c == UInt8(ascii: "[")
                    i = JSONScan.skipValue(p, i, n)
                    if i < 0 { return i }
                case .content, .unknown:
                    i = JSONScan.skipValue(p, i, n)
                    if i < 0 { return i }
                }

                i = JSONScan.skipWhitespace(p, i, n)
                guard i < n else { return JSONScan.malformed }
                if p[i] == UInt8(ascii: ",") {
                    i = JSONScan.skipWhitespace(p, i + 1, n)
                    continue
                }
                guard p[i] == UInt8(ascii: "}") else { return JSONScan.malformed }
                i += 1
                break
            }
        }
        if JSONScan.skipWhitespace(p, i, n) != n { return JSONScan.malformed }
        if f.device != nil, !f.deviceWrongType, f.device!.count == 0 { f.device = nil }
        // A control record's nested ids (rare records: read by the JSON parser the scheduler uses).
        if f.op != nil && !f.idTooLong {
            f.idTooLong = controlIDsTooLong(p.view(from: 0, count: n))
        }
        if let reason = framing.accept(f) {
            validationReason = reason
            return 2
        }
        return 0
    }
}

extension NDJSONDecoder: DecodesAhead {
    package func decodeAhead(on spare: SpareWork, chunkBytes: Int, ring: Int) {
        framing.decodeAhead(with: NDJSONPlainFix(), on: spare, chunkBytes: chunkBytes, ring: ring)
    }

    package var decodedAhead: (decoded: Int, lookedUp: Int) { framing.decodedAhead }
}
