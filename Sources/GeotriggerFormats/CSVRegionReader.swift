import GeotriggerCore
/// Turns a CSV of circles (header naming `id`, `lat`, `lon`, `radius`) into regions.
///
/// RFC 4180 fields: quoted fields may hold commas, quotes (doubled) and line breaks; lines end in
/// LF or CRLF; blank lines are skipped; columns may come in any order and extra columns are
/// ignored. Spaces and tabs around a value are ignored. Errors give the 1-based line of the row.
///
/// Works on bytes: a record's fields are ranges into the file (a record with a quoted field is
/// decoded into a scratch buffer first), numbers go through `NumberParser`, and a String is made
/// only for the id. Anything unusual (non-ASCII, numbers outside the JSON grammar) takes the
/// String route the reader always had, so what is accepted and every message stay the same.
/// A malformed record anywhere wins over a bad value in an earlier row, as when the whole file
/// was split into records before any row was read.
package struct CSVRegionReader {
    let file: String
    /// Whether plain rows take `RecordScanner.plainRow`'s way (false: every row the general
    /// scan's, which the fuzz target `csv-regions` compares it with).
    let plainRows: Bool

    package init(file: String, plainRows: Bool = true) {
        self.file = file
        self.plainRows = plainRows
    }

    private static let requiredColumns = ["id", "lat", "lon", "radius"]

    package func read(_ bytes: [UInt8]) throws(RegionFileError) -> [Region] {
        let result: Result<[Region], RegionFileError> = bytes.withPaddedBytes { buffer in
            do throws(RegionFileError) {
                return .success(try read(buffer))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private func read(_ buffer: PaddedBytes) throws(RegionFileError) -> [Region] {
        var scanner = RecordScanner(buffer, file: file)
        var columns: (id: Int, lat: Int, lon: Int, radius: Int, count: Int)?
        var regions: [Region] = []
        var rowLines: [Int] = []
        // The first problem with a value; thrown once the rest of the file has been split into
        // records without a malformed one.
        var problem: RegionFileError?
        var rowIndex = 0
        while true {
            let row: (id: String, center: Coordinate, radius: Double)
            // Most rows are plain (see `plainRow`): read straight from the file, no field list.
            if plainRows, case .none = problem, let header = columns, let plain = scanner.plainRow(header) {
                row = (buffer.string(plain.id), plain.center, plain.radius)
            } else {
                guard try scanner.next() else { break }
                if problem != nil { continue }
                guard let header = columns else {
                    do throws(RegionFileError) {
                        columns = try readHeader(scanner)
                        var lines = 0
                        var from = 0
                        while let nl = buffer.firstIndex(of: 0x0A, in: from..<buffer.count) {
                            lines += 1
                            from = nl + 1
                        }
                        regions.reserveCapacity(lines)
                        rowLines.reserveCapacity(lines)
                    } catch {
                        problem = error
                    }
                    continue
                }
                do throws(RegionFileError) {
                    row = try readRow(scanner, header, rowIndex: rowIndex)
                } catch {
                    problem = error
                    continue
                }
            }
            defer { rowIndex += 1 }
            regions.append(Region(id: row.id, shape: .circle(center: row.center, radius: row.radius), featureIndex: rowIndex))
            rowLines.append(scanner.line)
        }
        var ids = RegionIDSlots(capacity: regions.count)
        if let (r, first) = ids.insertAll(regions) {
            let region = regions[Int(r)]
            problem = fail("duplicate id \"\(region.id)\" (first used on line \(rowLines[Int(first)]))",
                           line: rowLines[Int(r)], row: region.featureIndex, id: region.id)
        }
        if let problem { throw problem }
        guard columns != nil else {
            throw RegionFileError(file: file, reason: "empty file: expected a header row id,lat,lon,radius")
        }
        return regions
    }

    private func readHeader(_ record: RecordScanner) throws(RegionFileError) -> (id: Int, lat: Int, lon: Int, radius: Int, count: Int) {
        var columnByName: [String: Int] = [:]
        for column in 0..<record.count {
            let name = record.string(column)
            guard Self.requiredColumns.contains(name) else { continue }
            if columnByName.updateValue(column, forKey: name) != nil {
                throw fail("column \"\(name)\" appears twice in the header", line: record.line)
            }
        }
        let missing = Self.requiredColumns.filter { columnByName[$0] == nil }
        guard missing.isEmpty else {
            throw fail(
                "header must name the columns id, lat, lon and radius (missing: \(missing.joined(separator: ", ")))",
                line: record.line)
        }
        return (columnByName["id"]!, columnByName["lat"]!, columnByName["lon"]!, columnByName["radius"]!, record.count)
    }

    private func readRow(
        _ record: RecordScanner, _ header: (id: Int, lat: Int, lon: Int, radius: Int, count: Int), rowIndex: Int
    ) throws(RegionFileError) -> (id: String, center: Coordinate, radius: Double) {
        let line = record.line
        guard record.count == header.count else {
            throw fail("row has \(record.count) fields, the header has \(header.count)", line: line, row: rowIndex)
        }
        let id = record.string(header.id)
        guard !id.isEmpty else { throw fail("missing id", line: line, row: rowIndex) }
        guard InputLimits.identifierFits(id) else {
            throw fail(InputLimits.identifierTooLong("id", byteCount: id.utf8.count), line: line, row: rowIndex)
        }
        func number(_ column: Int, _ name: String) throws(RegionFileError) -> Double {
            if let value = record.number(column) { return value }
            let text = record.string(column)
            guard let value = parseNumber(text) else {
                let problem = text.isEmpty ? "\(name) is empty" : "\(name) \"\(text)\" is not a number"
                throw fail(problem, line: line, row: rowIndex, id: id)
            }
            return value
        }
        let latitude = try number(header.lat, "lat")
        let longitude = try number(header.lon, "lon")
        let radius = try number(header.radius, "radius")
        if let problem = coordinateProblem(latitude: latitude, longitude: longitude) ?? radiusProblem(radius) {
            throw fail(problem, line: line, row: rowIndex, id: id)
        }
        return (id, Coordinate(latitude: latitude, longitude: longitude), radius)
    }

    /// A finite decimal number (`12`, `-3.5`, `1e3`); no `nan`, `inf` or hex.
    private func parseNumber(_ text: String) -> Double? {
        guard !text.isEmpty,
            text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || "+-.eE".utf8.contains($0) }),
            let value = Double(text), value.isFinite
        else { return nil }
        return value
    }

    private func fail(_ reason: String, line: Int, row: Int? = nil, id: String? = nil) -> RegionFileError {
        RegionFileError(file: file, featureIndex: row, id: id, reason: reason, line: line)
    }
}

/// Splits a CSV file into records, one at a time, skipping blank lines; the current record's
/// fields are byte ranges, into the file or (for a record with a quoted field) into `scratch`.
private struct RecordScanner {
    let file: String
    /// The file (no padding: the scanner reads only within it).
    let bytes: PaddedBytes
    private var index: Int
    /// 1-based line where the current record starts.
    private(set) var line = 1
    private var nextLine = 1
    /// The current record's fields (the first `count`; the array only grows, so no record
    /// allocates). `nonASCII`: the field holds a byte ≥ 0x80, so it is trimmed as a String.
    private var fields: [(start: Int, end: Int, nonASCII: Bool)] = []
    private(set) var count = 0
    private var scratch: [UInt8] = []
    private var inScratch = false

    private static let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), cr: UInt8 = 0x0D, lf: UInt8 = 0x0A

    init(_ bytes: PaddedBytes, file: String) {
        self.bytes = bytes
        self.file = file
        index = bytes.count >= 3 && bytes.matches("\u{FEFF}", at: 0) ? 3 : 0
    }

    /// Moves to the next non-blank record; false at the end of the file.
    mutating func next() throws(RegionFileError) -> Bool {
        while index < bytes.count {
            let recordStart = index
            line = nextLine
            let quoted = try scanUnquoted()
            if quoted {
                index = recordStart
                nextLine = line
                try scanQuoted()
            }
            if quoted || count != 1 || !isBlank(0) { return true }
        }
        return false
    }

    /// The next record when it is a plain row, the form nearly every file's rows take: the
    /// header's four fields and no more, ASCII with no quote, space or tab, a non-empty id that
    /// fits, numbers in JSON's grammar with a valid latitude, longitude and radius, ending in LF,
    /// CRLF or the file's end. Such a row is consumed and returned, as `next()` then `readRow`
    /// would read it (the numbers by the same parser, from the same bytes); for any other record
    /// (or at the file's end) nil, with nothing consumed: `next()` reads it and reports what is
    /// wrong with it.
    mutating func plainRow(_ columns: (id: Int, lat: Int, lon: Int, radius: Int, count: Int))
        -> (id: Range<Int>, center: Coordinate, radius: Double)? {
        guard columns.count == 4 else { return nil }
        let n = bytes.count
        // `PlainLine.number` reads whole words below its limit: the file has no padding, so its
        // limit stops 8 bytes short of the end, and a number there takes `NumberParser.parse`.
        let wordLimit = n &- 8
        var i = index
        var id = 0..<0
        var latitude = 0.0, longitude = 0.0, radius = 0.0
        for column in 0..<4 {
            if column > 0 {
                guard i < n && bytes[i] == Self.comma else { return nil }
                i += 1
            }
            if column == columns.id {
                let start = i
                while i < n && bytes[i] != Self.comma {
                    let b = bytes[i]
                    // Printable ASCII but the quote: no trimming, quoting or UTF-8 to look at.
                    guard b > 0x20 && b < 0x7F && b != Self.quote else { return nil }
                    i += 1
                }
                guard i > start, InputLimits.identifierFits(byteCount: i - start) else { return nil }
                id = start..<i
            } else {
                var value = 0.0
                // The usual spelling (`PlainLine.number`: the same bits), else any.
                var end = i < wordLimit ? PlainLine.number(bytes, i, wordLimit, &value) : -1
                if end < 0 { end = NumberParser.parse(bytes, i, n, &value) }
                guard end > i, value.isFinite else { return nil }
                i = end
                if column == columns.lat { latitude = value } else if column == columns.lon { longitude = value } else { radius = value }
            }
        }
        if i < n {
            let lineBreak = lineBreakLength(at: i)
            guard lineBreak > 0 else { return nil }
            i += lineBreak
        }
        guard (-90...90).contains(latitude), (-180...180).contains(longitude), radius > 0 else { return nil }
        index = i
        line = nextLine
        nextLine += 1
        return (id, Coordinate(latitude: latitude, longitude: longitude), radius)
    }

    /// The field as the String the reader compares and reports, spaces and tabs trimmed.
    func string(_ field: Int) -> String {
        withField(field) { field, nonASCII in
            if nonASCII { return Self.trimmed(field.string(0..<field.count)) }
            let t = Self.trimmed(field)
            return t.string(0..<t.count)
        }
    }

    /// The field as a finite number when it is one in JSON's grammar (optionally `+`-signed);
    /// nil sends the caller to the String route.
    func number(_ field: Int) -> Double? {
        withField(field) { field, nonASCII in
            guard !nonASCII else { return nil }
            var t = Self.trimmed(field)
            if t.count > 1 && t[0] == UInt8(ascii: "+") && t[1] != UInt8(ascii: "-") {
                t = t.dropFirst(1)
            }
            guard t.count > 0 else { return nil }
            var value = 0.0
            // In the file, the parser may look past the field to the file's end (its 8-bytes-at-a-
            // time path needs the room; a field's `padding` is the rest of the file): what follows
            // a field (a comma, a line break, a space, a quote) cannot continue a number, so it
            // still must end exactly at the field's end.
            let room = inScratch ? t.count : t.count + t.padding
            guard NumberParser.parse(t, 0, room, &value) == t.count, value.isFinite else { return nil }
            return value
        }
    }

    @inline(__always)
    private func withField<R>(_ field: Int, _ body: (PaddedBytes, Bool) -> R) -> R {
        let f = fields[field]
        if inScratch {
            return scratch.withPaddedBytes { body($0.slice(f.start..<f.end), f.nonASCII) }
        }
        return body(bytes.slice(f.start..<f.end), f.nonASCII)
    }

    private func isBlank(_ field: Int) -> Bool {
        withField(field) { field, _ in field.bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 } }
    }

    @inline(__always)
    private static func trimmed(_ field: PaddedBytes) -> PaddedBytes {
        var s = 0, e = field.count
        while s < e, field[s] == 0x20 || field[s] == 0x09 { s += 1 }
        while e > s, field[e - 1] == 0x20 || field[e - 1] == 0x09 { e -= 1 }
        return field.slice(s..<e)
    }

    private static func trimmed(_ text: String) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = text.lastIndex(where: { !isSpace($0) })!
        return String(text[first...last])
    }

    /// Scans a record of unquoted fields as ranges into the file; returns true, with the record
    /// unfinished, at a field that starts with a quote.
    private mutating func scanUnquoted() throws(RegionFileError) -> Bool {
        startRecord(inScratch: false)
        let n = bytes.count
        while true {
            if index < n && bytes[index] == Self.quote { return true }
            let start = index
            var high: UInt8 = 0
            while index < n {
                let b = bytes[index]
                // Digits, letters, '.', '-' lie above ','; only bytes up to it need a closer look.
                if b <= Self.comma {
                    if b == Self.comma || b == Self.lf || (b == Self.cr && index + 1 < n && bytes[index + 1] == Self.lf) { break }
                    if b == Self.quote { throw fail("quote inside an unquoted field (quote the whole field)") }
                }
                high |= b
                index += 1
            }
            let valid = high < 0x80 || String(validating: bytes.view(start..<index), as: UTF8.self) != nil
            try appendField(start, index, nonASCII: high >= 0x80, valid: valid)
            if try endOfField() { return false }
        }
    }

    /// Scans the record again, decoding every field (quoted or not) into `scratch`.
    private mutating func scanQuoted() throws(RegionFileError) {
        startRecord(inScratch: true)
        let n = bytes.count
        while true {
            let start = scratch.count
            if index < n && bytes[index] == Self.quote {
                index += 1
                while true {
                    guard index < n else {
                        throw RegionFileError(file: file, reason: "quoted field never closed", line: line)
                    }
                    if bytes[index] == Self.quote {
                        if index + 1 < n && bytes[index + 1] == Self.quote {
                            scratch.append(Self.quote)
                            index += 2
                            continue
                        }
                        index += 1
                        break
                    }
                    if bytes[index] == Self.lf { nextLine += 1 }
                    scratch.append(bytes[index])
                    index += 1
                }
                guard index == n || bytes[index] == Self.comma || atLineEnd() else {
                    throw fail("unexpected character after a closing quote")
                }
            } else {
                while index < n && bytes[index] != Self.comma && !atLineEnd() {
                    if bytes[index] == Self.quote { throw fail("quote inside an unquoted field (quote the whole field)") }
                    scratch.append(bytes[index])
                    index += 1
                }
            }
            let high = scratch[start...].reduce(0, |)
            let valid = high < 0x80 || String(validating: scratch[start...], as: UTF8.self) != nil
            try appendField(start, scratch.count, nonASCII: high >= 0x80, valid: valid)
            if try endOfField() { return }
        }
    }

    private mutating func startRecord(inScratch: Bool) {
        count = 0
        if inScratch { scratch.removeAll(keepingCapacity: true) }
        self.inScratch = inScratch
    }

    private mutating func appendField(_ start: Int, _ end: Int, nonASCII: Bool, valid: Bool) throws(RegionFileError) {
        guard valid else { throw fail("not valid UTF-8") }
        if count < fields.count {
            fields[count] = (start, end, nonASCII)
        } else {
            fields.append((start, end, nonASCII))
        }
        count += 1
    }

    /// After a field: consumes a comma (false: another field follows) or the line break (true).
    private mutating func endOfField() throws(RegionFileError) -> Bool {
        if index == bytes.count { return true }
        if bytes[index] == Self.comma {
            index += 1
            return false
        }
        index += bytes[index] == Self.lf ? 1 : 2
        nextLine += 1
        return true
    }

    /// True at a line break (LF or CRLF).
    private func atLineEnd() -> Bool { lineBreakLength(at: index) > 0 }

    /// The length of the line break at `i` (within the file): 1 for LF, 2 for CRLF, else 0.
    private func lineBreakLength(at i: Int) -> Int {
        if bytes[i] == Self.lf { return 1 }
        return bytes[i] == Self.cr && i + 1 < bytes.count && bytes[i + 1] == Self.lf ? 2 : 0
    }

    /// An error at the line being scanned.
    private func fail(_ reason: String) -> RegionFileError {
        RegionFileError(file: file, reason: reason, line: nextLine)
    }
}
