/// Why a document is not JSON, and where: 1-based line and column (column counts characters).
public struct JSONParseError: Error, Equatable, CustomStringConvertible, Sendable {
    public enum Kind: Equatable, Sendable {
        /// The document ended inside a value (or was empty).
        case unexpectedEndOfInput
        /// A byte that cannot start or continue a value here; `expected` names what could.
        case unexpectedCharacter(found: String, expected: String)
        /// A `,` directly before `]` or `}`.
        case trailingComma
        /// A literal that starts like `true`, `false` or `null` but is not one.
        case invalidLiteral
        /// A number that breaks the RFC 8259 grammar (leading zero, `+`, lone `-`, `1.`, `.5`, `1e`).
        case invalidNumber
        /// A number whose magnitude does not fit in a Double.
        case numberOutOfRange
        /// A backslash escape that RFC 8259 does not define, or `\u` without four hex digits.
        case invalidEscape
        /// A `\uD800`–`\uDFFF` escape that is not part of a high-low surrogate pair.
        case unpairedSurrogate
        /// An unescaped control character (U+0000–U+001F) inside a string.
        case controlCharacterInString
        /// A byte sequence that is not well-formed UTF-8.
        case invalidUTF8
        /// An object with the same key twice.
        case duplicateKey(String)
        /// Arrays and objects nested deeper than the limit.
        case tooDeep(limit: Int)
        /// Something other than whitespace after the top-level value.
        case trailingContent
    }

    public var kind: Kind
    /// 1-based line number (lines end at LF).
    public var line: Int
    /// 1-based column, in Unicode scalars from the start of the line.
    public var column: Int
    /// 0-based byte offset in the document.
    public var offset: Int

    public init(kind: Kind, line: Int, column: Int, offset: Int) {
        self.kind = kind
        self.line = line
        self.column = column
        self.offset = offset
    }

    /// What is wrong, without the position.
    public var reason: String {
        switch kind {
        case .unexpectedEndOfInput: "unexpected end of input"
        case .unexpectedCharacter(let found, let expected): "unexpected \(found), expected \(expected)"
        case .trailingComma: "trailing comma"
        case .invalidLiteral: "invalid literal (expected true, false or null)"
        case .invalidNumber: "invalid number"
        case .numberOutOfRange: "number out of range"
        case .invalidEscape: "invalid escape sequence"
        case .unpairedSurrogate: "unpaired UTF-16 surrogate in \\u escape"
        case .controlCharacterInString: "unescaped control character in string"
        case .invalidUTF8: "invalid UTF-8"
        case .duplicateKey(let key): "duplicate key \"\(key)\""
        case .tooDeep(let limit): "nesting deeper than \(limit) levels"
        case .trailingContent: "unexpected content after the JSON value"
        }
    }

    public var description: String { "line \(line), column \(column): \(reason)" }
}

extension JSONValue {
    /// The default limit on nested arrays and objects: deep enough for any real document,
    /// shallow enough that recursion cannot exhaust the stack.
    public static let defaultMaxDepth = 512

    /// Parses one JSON document, strictly per RFC 8259.
    ///
    /// Rejects trailing commas, comments, single quotes, leading zeros, `NaN`/`Infinity`, unescaped
    /// control characters, invalid escapes, unpaired surrogates, ill-formed UTF-8, duplicate object
    /// keys, numbers beyond Double's range and nesting deeper than `maxDepth`. A leading UTF-8
    /// byte order mark is skipped (RFC 8259 §8.1 allows ignoring it). Numbers become Doubles
    /// (correctly rounded).
    public static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        let array = Array(bytes)
        let result: Result<JSONValue, JSONParseError> = array.withPaddedBytes { buffer in
            var parser = JSONParser(buffer, maxDepth: maxDepth)
            do throws(JSONParseError) {
                return .success(try parser.parseDocument())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses one JSON document from the UTF-8 of `text`.
    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}

/// A recursive-descent parser over a byte buffer. Positions become line/column only on error.
package struct JSONParser {
    /// The document (no padding is read: every read checks `count` first).
    package let bytes: PaddedBytes
    package var index = 0
    private let maxDepth: Int
    package var depth = 0
    /// Reused for strings that contain escapes.
    private var scratch: [UInt8] = []

    package init(_ bytes: PaddedBytes, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count { throw error(.trailingContent) }
        return value
    }

    // MARK: Values

    package mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw error(.unexpectedEndOfInput) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw unexpected(expected: "a value")
        }
    }

    mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            guard index < bytes.count else { throw error(.unexpectedEndOfInput) }
            guard bytes[index] == UInt8(ascii: "\"") else { throw unexpected(expected: "a string key") }
            let keyStart = index
            let key = try parseString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':'")
            skipWhitespace()
            let value = try parseValue()
            if members.updateValue(value, forKey: key) != nil {
                throw error(.duplicateKey(key), at: keyStart)
            }
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEndOfInput) }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return .object(members)
            }
            guard bytes[index] == UInt8(ascii: ",") else { throw unexpected(expected: "',' or '}'") }
            let commaAt = index
            index += 1
            skipWhitespace()
            if peek(UInt8(ascii: "}")) { throw error(.trailingComma, at: commaAt) }
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEndOfInput) }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return .array(elements)
            }
            guard bytes[index] == UInt8(ascii: ",") else { throw unexpected(expected: "',' or ']'") }
            let commaAt = index
            index += 1
            skipWhitespace()
            if peek(UInt8(ascii: "]")) { throw error(.trailingComma, at: commaAt) }
        }
    }

    private mutating func enterContainer() throws(JSONParseError) {
        if depth >= maxDepth { throw error(.tooDeep(limit: maxDepth)) }
        depth += 1
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = index
        for k in 0..<literal.utf8CodeUnitCount {
            let expected = literal.utf8Start[k]
            guard index < bytes.count else { throw error(.unexpectedEndOfInput) }
            guard bytes[index] == expected else { throw error(.invalidLiteral, at: start) }
            index += 1
        }
        // "trueish" or "nullx": the literal must end here.
        if index < bytes.count, isIdentifierByte(bytes[index]) { throw error(.invalidLiteral, at: start) }
    }

    // MARK: Numbers

    package mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error(.invalidNumber, at: start) }
        // Digits of integer and fraction part, as long as they fit; `digitCount` counts them all.
        var significand: UInt64 = 0
        var digitCount = 0
        var fractionDigits = 0
        var exponent = 0
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error(.invalidNumber, at: start) }
        } else {
            while index < bytes.count, isDigit(bytes[index]) {
                significand = significand &* 10 &+ UInt64(bytes[index] &- UInt8(ascii: "0"))
                digitCount += 1
                index += 1
            }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error(.invalidNumber, at: start) }
            while index < bytes.count, isDigit(bytes[index]) {
                significand = significand &* 10 &+ UInt64(bytes[index] &- UInt8(ascii: "0"))
                digitCount += 1
                fractionDigits += 1
                index += 1
            }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            var exponentNegative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error(.invalidNumber, at: start) }
            while index < bytes.count, isDigit(bytes[index]) {
                if exponent < 100_000 { exponent = exponent * 10 + Int(bytes[index] - UInt8(ascii: "0")) }
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        // "12abc" or "1.5.2": a number must be followed by a delimiter.
        if index < bytes.count, isIdentifierByte(bytes[index]) || bytes[index] == UInt8(ascii: ".") {
            throw error(.invalidNumber, at: start)
        }
        // Clinger's fast path: a significand of at most 15 digits and a power of ten up to 10^22 are
        // both exact Doubles, so one correctly rounded multiply or divide gives the correct result.
        let scale = exponent - fractionDigits
        if digitCount <= 15, scale >= -22, scale <= 22 {
            var magnitude = Double(significand)
            if scale < 0 {
                magnitude /= Self.powersOfTen[-scale]
            } else if scale > 0 {
                magnitude *= Self.powersOfTen[scale]
            }
            return negative ? -magnitude : magnitude
        }
        let text = bytes.string(start..<index)
        guard let value = Double(text) else { throw error(.invalidNumber, at: start) }
        guard value.isFinite else { throw error(.numberOutOfRange, at: start) }
        return value
    }

    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    // MARK: Strings

    /// Parses the string starting at the opening quote at `index`.
    package mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes. Validate as we scan; copy once at the end.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = bytes.string(start..<index)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error(.controlCharacterInString) }
            if byte < 0x80 {
                index += 1
            } else {
                index += try validateUTF8Sequence(at: index)
            }
        }
        guard index < bytes.count else { throw error(.unexpectedEndOfInput) }
        // Slow path: an escape. Continue in the scratch buffer.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: bytes.view(start..<index))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") {
                try parseEscape()
            } else if byte < 0x20 {
                throw error(.controlCharacterInString)
            } else if byte < 0x80 {
                scratch.append(byte)
                index += 1
            } else {
                let length = try validateUTF8Sequence(at: index)
                scratch.append(contentsOf: bytes.view(from: index, count: length))
                index += length
            }
        }
        throw error(.unexpectedEndOfInput)
    }

    /// Decodes the escape at `index` (a backslash) into `scratch`.
    private mutating func parseEscape() throws(JSONParseError) {
        let escapeStart = index
        index += 1
        guard index < bytes.count else { throw error(.unexpectedEndOfInput) }
        let letter = bytes[index]
        index += 1
        switch letter {
        case UInt8(ascii: "\""): scratch.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): scratch.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHex4(escapeStart: escapeStart)
            var scalarValue = UInt32(unit)
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate must be followed immediately by an escaped low surrogate.
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw error(.unpairedSurrogate, at: escapeStart) }
                let lowStart = index
                index += 2
                let low = try parseHex4(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else { throw error(.unpairedSurrogate, at: escapeStart) }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw error(.unpairedSurrogate, at: escapeStart)
            }
            // Cannot fail: surrogates were excluded above and the value is at most 0x10FFFF.
            let scalar = Unicode.Scalar(scalarValue)!
            scratch.append(contentsOf: UTF8.encode(scalar)!)
        default:
            throw error(.invalidEscape, at: escapeStart)
        }
    }

    private mutating func parseHex4(escapeStart: Int) throws(JSONParseError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard index < bytes.count else { throw error(.unexpectedEndOfInput) }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidEscape, at: escapeStart)
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// Checks the multi-byte UTF-8 sequence at `position` (Unicode Table 3-7) and returns its length.
    private func validateUTF8Sequence(at position: Int) throws(JSONParseError) -> Int {
        let lead = bytes[position]
        let length: Int
        var lowerBound: UInt8 = 0x80
        var upperBound: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lowerBound = 0xA0  // no overlong forms
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upperBound = 0x9F  // no surrogates
        case 0xF0: length = 4; lowerBound = 0x90  // no overlong forms
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upperBound = 0x8F  // nothing above U+10FFFF
        default: throw error(.invalidUTF8, at: position)
        }
        guard position + length <= bytes.count else {
            // A truncated sequence at the very end is ill-formed, not merely unfinished.
            throw error(.invalidUTF8, at: position)
        }
        let second = bytes[position + 1]
        guard second >= lowerBound, second <= upperBound else { throw error(.invalidUTF8, at: position) }
        for offset in 2..<max(2, length) where bytes[position + offset] & 0xC0 != 0x80 {
            throw error(.invalidUTF8, at: position)
        }
        return length
    }

    // MARK: Helpers

    package mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    package func peek(_ byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
    }

    mutating func expect(_ byte: UInt8, _ name: String) throws(JSONParseError) {
        guard index < bytes.count else { throw error(.unexpectedEndOfInput) }
        guard bytes[index] == byte else { throw unexpected(expected: name) }
        index += 1
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private func isIdentifierByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")) || byte == UInt8(ascii: "_")
    }

    private func unexpected(expected: String) -> JSONParseError {
        guard index < bytes.count else { return error(.unexpectedEndOfInput) }
        let byte = bytes[index]
        if byte >= 0x80 {
            // Not valid anywhere outside a string; say whether it is even UTF-8.
            if (try? validateUTF8Sequence(at: index)) == nil { return error(.invalidUTF8) }
            return error(.unexpectedCharacter(found: "non-ASCII character", expected: expected))
        }
        let found: String
        switch byte {
        case 0x20...0x7E: found = "'\(Character(Unicode.Scalar(byte)))'"
        default: found = "control character U+\(hex4(byte))"
        }
        return error(.unexpectedCharacter(found: found, expected: expected))
    }

    private func hex4(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    private func error(_ kind: JSONParseError.Kind) -> JSONParseError {
        error(kind, at: index)
    }

    /// Builds the error, turning the byte offset into a line and a column in Unicode scalars.
    private func error(_ kind: JSONParseError.Kind, at offset: Int) -> JSONParseError {
        let offset = min(offset, bytes.count)
        var line = 1
        var column = 1
        for byte in bytes.view(0..<offset) {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {  // count lead bytes, not continuation bytes
                column += 1
            }
        }
        return JSONParseError(kind: kind, line: line, column: column, offset: offset)
    }
}
