/// Turns a CSV of circles (header naming `id`, `lat`, `lon`, `radius`) into regions.
///
/// RFC 4180 fields: quoted fields may hold commas, quotes (doubled) and line breaks; lines end in
/// LF or CRLF; blank lines are skipped; columns may come in any order and extra columns are
/// ignored. Spaces and tabs around a value are ignored. Errors give the 1-based line of the row.
struct CSVRegionReader {
    let file: String

    private struct Record {
        var line: Int
        var fields: [String]
    }

    private static let requiredColumns = ["id", "lat", "lon", "radius"]

    func read(_ bytes: [UInt8]) throws(RegionFileError) -> [Region] {
        var records = try tokenize(bytes)[...]
        guard let header = records.popFirst() else {
            throw RegionFileError(file: file, reason: "empty file: expected a header row id,lat,lon,radius")
        }
        var columnByName: [String: Int] = [:]
        for (column, name) in header.fields.enumerated() {
            let name = trimmed(name)
            guard Self.requiredColumns.contains(name) else { continue }
            if columnByName.updateValue(column, forKey: name) != nil {
                throw fail("column \"\(name)\" appears twice in the header", line: header.line)
            }
        }
        let missing = Self.requiredColumns.filter { columnByName[$0] == nil }
        guard missing.isEmpty else {
            throw fail(
                "header must name the columns id, lat, lon and radius (missing: \(missing.joined(separator: ", ")))",
                line: header.line)
        }
        let (idColumn, latColumn, lonColumn, radiusColumn) =
            (columnByName["id"]!, columnByName["lat"]!, columnByName["lon"]!, columnByName["radius"]!)

        var regions: [Region] = []
        regions.reserveCapacity(records.count)
        var firstLineByID: [String: Int] = [:]
        for (rowIndex, record) in records.enumerated() {
            let line = record.line
            guard record.fields.count == header.fields.count else {
                throw fail(
                    "row has \(record.fields.count) fields, the header has \(header.fields.count)",
                    line: line, row: rowIndex)
            }
            let id = trimmed(record.fields[idColumn])
            guard !id.isEmpty else { throw fail("missing id", line: line, row: rowIndex) }
            func number(_ column: Int, _ name: String) throws(RegionFileError) -> Double {
                let text = trimmed(record.fields[column])
                guard let value = parseNumber(text) else {
                    let problem = text.isEmpty ? "\(name) is empty" : "\(name) \"\(text)\" is not a number"
                    throw fail(problem, line: line, row: rowIndex, id: id)
                }
                return value
            }
            let latitude = try number(latColumn, "lat")
            let longitude = try number(lonColumn, "lon")
            let radius = try number(radiusColumn, "radius")
            if let problem = coordinateProblem(latitude: latitude, longitude: longitude) ?? radiusProblem(radius) {
                throw fail(problem, line: line, row: rowIndex, id: id)
            }
            if let firstLine = firstLineByID.updateValue(line, forKey: id) {
                throw fail("duplicate id \"\(id)\" (first used on line \(firstLine))", line: line, row: rowIndex, id: id)
            }
            regions.append(
                Region(
                    id: id, shape: .circle(center: Coordinate(latitude: latitude, longitude: longitude), radius: radius),
                    featureIndex: rowIndex))
        }
        return regions
    }

    // MARK: Fields

    /// Splits the file into records of fields, skipping blank lines.
    private func tokenize(_ bytes: [UInt8]) throws(RegionFileError) -> [Record] {
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), cr: UInt8 = 0x0D, lf: UInt8 = 0x0A
        var records: [Record] = []
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 1

        /// True at a line break (LF or CRLF); consumes it.
        func atLineEnd(consuming: Bool) -> Bool {
            if bytes[index] == lf {
                if consuming { index += 1 }
                return true
            }
            if bytes[index] == cr, index + 1 < bytes.count, bytes[index + 1] == lf {
                if consuming { index += 2 }
                return true
            }
            return false
        }

        while index < bytes.count {
            let recordLine = line
            var fields: [String] = []
            var sawQuotedField = false
            record: while true {
                var field: [UInt8] = []
                if index < bytes.count, bytes[index] == quote {
                    sawQuotedField = true
                    index += 1
                    while true {
                        guard index < bytes.count else {
                            throw fail("quoted field never closed", line: recordLine)
                        }
                        if bytes[index] == quote {
                            if index + 1 < bytes.count, bytes[index + 1] == quote {
                                field.append(quote)
                                index += 2
                                continue
                            }
                            index += 1
                            break
                        }
                        if bytes[index] == lf { line += 1 }
                        field.append(bytes[index])
                        index += 1
                    }
                    guard index == bytes.count || bytes[index] == comma || atLineEnd(consuming: false) else {
                        throw fail("unexpected character after a closing quote", line: line)
                    }
                } else {
                    while index < bytes.count, bytes[index] != comma, !atLineEnd(consuming: false) {
                        if bytes[index] == quote {
                            throw fail("quote inside an unquoted field (quote the whole field)", line: line)
                        }
                        field.append(bytes[index])
                        index += 1
                    }
                }
                guard let text = String(validating: field, as: UTF8.self) else {
                    throw fail("not valid UTF-8", line: line)
                }
                fields.append(text)
                if index == bytes.count { break record }
                if bytes[index] == comma {
                    index += 1
                    continue record
                }
                _ = atLineEnd(consuming: true)
                line += 1
                break record
            }
            let isBlank = !sawQuotedField && fields.count == 1 && trimmed(fields[0]).isEmpty
            if !isBlank { records.append(Record(line: recordLine, fields: fields)) }
        }
        return records
    }

    private func trimmed(_ text: String) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = text.lastIndex(where: { !isSpace($0) })!
        return String(text[first...last])
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
