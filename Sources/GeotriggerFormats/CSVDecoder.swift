#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore
import GeotriggerRuntime

/// Decodes CSV readings: a header row naming the columns, then one record per row.
///
/// Column names are the NDJSON field names (`t,device,lat,lon,accuracy` or
/// `t,device,uuid,major,minor,rssi,tx`), in any order; unknown columns are ignored. Fields may be
/// quoted with `"` (a doubled `""` is a quote); unquoted fields are trimmed of spaces and tabs; an
/// empty field is an absent value. A row with a different number of fields than the header is
/// rejected as `badCSVRow`. Quoted fields cannot span lines. Validation is the NDJSON one.
public final class CSVDecoder: ReadingDecoder {
    public let sourceName: String
    private let framing: LineFraming
    /// The field of each header column; nil until the header has been read.
    private var columns: [FieldName]? = nil

    /// The header's column names, once read.
    public private(set) var header: [String] = []
    /// The header is `t,device,lat,lon` or `t,device,lat,lon,accuracy`: rows are first offered to
    /// `plainRow`. Tests turn it off to compare with the general path.
    var plainColumns = false
    var plainHasAccuracy: Bool {
        get { plain.hasAccuracy }
        set { plain.hasAccuracy = newValue }
    }
    var plainRowsAllowed = true
    public var lineNumber: Int { framing.lineNumber }
    public func whenIdle(_ body: @escaping () -> Void) { framing.whenIdle(body) }
    /// Lines that were empty or held only spaces and tabs (skipped, not rejected).
    public var blankLines: Int { framing.blankLines }
    public var current: Reading { framing.reading }
    public var rejectedLine: ByteView { framing.line }
    public var bytesRead: Int { framing.bytesRead }
    public var ioError: String? { framing.ioError }
    public var position: InputPosition { InputPosition(offset: framing.consumed, line: framing.lineNumber) }

    /// Reads the header again, if it comes before `position` (an over-long first line is
    /// rejected before it), then skips to `position`.
    public func resume(at position: InputPosition) -> Bool {
        guard position.offset > 0 else { return true }
        if let header = framing.nextNonBlankLine(before: position.offset) {
            readHeader(header, header.count)
        }
        return framing.skip(to: position.offset, lines: position.line)
    }

    public init(
        fd: Int32, ownsDescriptor: Bool = false, sourceName: String, defaultDevice: String? = nil,
        bufferSize: Int = 1 << 20, maxLineLength: Int = 1 << 20, mapsFile: Bool = false
    ) {
        self.sourceName = sourceName
        self.framing = LineFraming(
            fd: fd, ownsDescriptor: ownsDescriptor, defaultDevice: defaultDevice,
            bufferSize: bufferSize, maxLineLength: maxLineLength, mapsFile: mapsFile)
    }

    /// Whether the last row `next()` decided was a plain row: the fast lane
    /// (`drainPlainFixes`) tries rows only then, so a file of other rows is not parsed twice.
    private var lastWasPlain = false
    /// `decodeAhead(on:)` was asked for and waits for the first plain row.
    private var spareForAhead: (spare: SpareWork, chunkBytes: Int, ring: Int)?
    /// The plain-row grammar under the header read, and the last time it read.
    @exclusivity(unchecked) private var plain = CSVPlainRow()

    public func next() -> DecodeStep {
        framing.next { p in
            let n = p.count
            lastWasPlain = plainColumns && plainRow(p, n)
            if lastWasPlain { return .reading }
            if isBlank(p, n) { return .blank }
            guard let columns else {
                readHeader(p, n)
                return .consumed
            }
            if let reason = parseRow(p, n, columns) { return .rejected(reason) }
            return .reading
        }
    }

    private func isBlank(_ p: PaddedBytes, _ n: Int) -> Bool {
        for i in 0..<n where p[i] != 0x20 && p[i] != 0x09 { return false }
        return true
    }

    /// Splits a row into cells, calling `cell(index, bytes, quoted)` for each.
    /// Returns the number of cells, or -1 for a broken quote.
    @inline(__always)
    private func split(
        _ p: PaddedBytes, _ n: Int, _ cell: (Int, PaddedBytes, Bool) -> Void
    ) -> Int {
        var i = 0
        var index = 0
        var scratchUsed = 0
        while true {
            // Leading blanks before an opening quote are allowed.
            var k = i
            while k < n && (p[k] == 0x20 || p[k] == 0x09) { k += 1 }
            var next: Int
            if k < n && p[k] == UInt8(ascii: "\"") {
                var j = k + 1
                var doubled = false
                var close = -1
                while j < n {
                    guard let qi = p.firstIndex(of: UInt8(ascii: "\""), in: j..<n) else { break }
                    if qi + 1 < n && p[qi + 1] == UInt8(ascii: "\"") {
                        doubled = true
                        j = qi + 2
                        continue
                    }
                    close = qi
                    break
                }
                if close < 0 { return -1 }
                var bytes = p.slice((k + 1)..<close)
                if doubled {
                    let dst = framing.scratch(from: scratchUsed)
                    var o = 0
                    var s = k + 1
                    while s < close {
                        dst[o] = p[s]
                        o += 1
                        s += p[s] == UInt8(ascii: "\"") ? 2 : 1
                    }
                    scratchUsed += o
                    bytes = dst.bytes(count: o)
                }
                next = close + 1
                while next < n && (p[next] == 0x20 || p[next] == 0x09) { next += 1 }
                guard next == n || p[next] == UInt8(ascii: ",") else { return -1 }
                cell(index, bytes, true)
            } else {
                next = p.firstIndex(of: UInt8(ascii: ","), in: i..<n) ?? n
                var e = next
                while e > k && (p[e - 1] == 0x20 || p[e - 1] == 0x09) { e -= 1 }
                cell(index, p.slice(k..<e), false)
            }
            index += 1
            if next >= n { return index }
            i = next + 1
        }
    }

    private func readHeader(_ p: PaddedBytes, _ n: Int) {
        var names: [String] = []
        var fields: [FieldName] = []
        _ = split(p, n) { _, bytes, _ in
            names.append(bytes.bytes.string)
            fields.append(FieldName.match(bytes.bytes))
        }
        header = names
        columns = fields
        plainColumns = plainRowsAllowed
            && (fields == [.t, .device, .lat, .lon] || fields == [.t, .device, .lat, .lon, .accuracy])
        plainHasAccuracy = fields.count == 5
    }

    /// Decodes a row that is exactly `T,D,LAT,LON` or `T,D,LAT,LON,ACC` under the matching header,
    /// with numbers written the usual way (`PlainLine.number`), D printable ASCII without quotes,
    /// backslashes or commas, not starting or ending with a space and at most
    /// `InputLimits.identifierBytes` long, and every value one the general path would accept
    /// (a time in the years 0001–9999, coordinates in range, accuracy not negative).
    /// Returns false, having changed nothing, for any other row; the general path then decides
    /// it, so this path only saves work. The row's slack (at least 16 readable bytes past `n`)
    /// lets the last number read its terminator at `n`.
    @inline(__always)
    func plainRow(_ p: PaddedBytes, _ n: Int) -> Bool {
        var row = PlainFix()
        guard plain.rowEnd(p, n, last: n + 1, &row) == n else { return false }
        framing.acceptFix(t: row.t, device: p.view(from: row.deviceStart, count: row.deviceCount),
                          latitude: row.latitude, longitude: row.longitude, accuracy: row.accuracy)
        return true
    }

    /// Hands the plain rows that follow in the read buffer to `body` as fixes, while it returns
    /// true, as `NDJSONDecoder.drainPlainFixes` does: each is the reading `next()` would return,
    /// its line counted as read first; `current` is left as it was. Does nothing unless the last
    /// row `next()` decided was plain.
    public func drainPlainFixes(_ body: (_ t: Double, _ device: ByteView, _ latitude: Double,
                                         _ longitude: Double, _ accuracy: Double) -> Bool) {
        guard lastWasPlain else { return }
        if let (spare, chunkBytes, ring) = spareForAhead {
            // The grammar is the header's, known once a plain row has been read.
            spareForAhead = nil
            framing.decodeAhead(with: plain, on: spare, chunkBytes: chunkBytes, ring: ring)
        }
        framing.drainFixes({ p, row in plain.lineLength(p, p.count, &row) }, body)
    }

    /// Parses one data row into the framing's reading; returns why it is rejected, if it is.
    private func parseRow(_ p: PaddedBytes, _ n: Int, _ columns: [FieldName]) -> RejectReason? {
        var f = RecordFields()
        var badUTF8 = false
        let count = split(p, n) { index, bytes, _ in
            guard index < columns.count, bytes.count > 0 else { return }
            let field = columns[index]
            let b = bytes
            switch field {
            case .t, .lat, .lon, .accuracy, .speed, .course, .altitude, .major, .minor, .rssi, .tx:
                var v = 0.0
                if NumberParser.parseWhole(b, bytes.count, &v) {
                    f.setNumber(field, v)
                } else if field == .t {
                    if let t = RFC3339.parse(bytes.bytes) {
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
            case .device:
                if !isValidUTF8(b, 0, bytes.count) { badUTF8 = true }
                f.device = bytes.bytes
            case .uuid: f.uuid = bytes.bytes
            case .op: f.op = bytes.bytes
            case .id:
                f.hasIDString = true
                if !InputLimits.identifierFits(byteCount: bytes.count) { f.idTooLong = true }
            case .ids: f.hasIDsArray = b[0] == UInt8(ascii: "[")
            case .request: f.hasRequestObject = b[0] == UInt8(ascii: "{")
            case .content, .region, .unknown: break
            }
        }
        if count != columns.count { return .badCSVRow }
        if badUTF8 { return .invalidUTF8 }
        return framing.accept(f)
    }
}

extension CSVDecoder: DecodesAhead {
    /// From the first plain row on (the header decides the grammar).
    package func decodeAhead(on spare: SpareWork, chunkBytes: Int, ring: Int) {
        spareForAhead = (spare, chunkBytes, ring)
    }

    package var decodedAhead: (decoded: Int, lookedUp: Int) { framing.decodedAhead }
}
