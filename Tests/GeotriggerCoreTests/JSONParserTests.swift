import Testing

@testable import GeotriggerCore

@Suite("JSON parser")
struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONValue.parse(#" {"a": [1, -2.5, 3e2, true, false, null], "b": {"c": "d"}, "e": ""} "#)
        #expect(value == ["a": [1, -2.5, 300, true, false, nil], "b": ["c": "d"], "e": ""])
        #expect(value["a"]?[1]?.doubleValue == -2.5)
        #expect(value["a"]?[0]?.intValue == 1)
        #expect(value["b"]?["c"]?.stringValue == "d")
        #expect(value["a"]?[3]?.boolValue == true)
        #expect(value["a"]?[5]?.isNull == true)
        #expect(value["missing"] == nil)
        #expect(value["a"]?[9] == nil)
    }

    @Test(arguments: [
        ("0", 0.0), ("-0", -0.0), ("42", 42), ("-17", -17), ("1.5", 1.5), ("1e3", 1000), ("1E+3", 1000),
        ("2.5e-3", 0.0025), ("0.1", 0.1), ("123456789012345678901234567890", 1.2345678901234568e29),
        ("9007199254740993", 9007199254740992), ("1e-400", 0), ("48.2084", 48.2084), ("-16.3725", -16.3725),
        ("123.456e-5", 0.00123456), ("0.000001", 1e-6), ("1.7976931348623157e308", 1.7976931348623157e308),
        ("5e-324", 5e-324), ("0.1e1", 1), ("100e-2", 1),
    ])
    func parsesNumbers(text: String, expected: Double) throws {
        #expect(try JSONValue.parse(text) == .number(expected))
    }

    @Test(arguments: [
        (#""plain""#, "plain"),
        (#""a\"b\\c\/d""#, "a\"b\\c/d"),
        (#""\b\f\n\r\t""#, "\u{08}\u{0C}\n\r\t"),
        (#""\u0041\u00e9\u4e2d""#, "Aé中"),
        (#""\ud83d\ude00""#, "😀"),
        (#""\uD83D\uDE00 mixed case""#, "😀 mixed case"),
        ("\"raw UTF-8: Wien – Straße 😀\"", "raw UTF-8: Wien – Straße 😀"),
        (#""\u0000""#, "\u{0}"),
    ])
    func parsesStrings(text: String, expected: String) throws {
        #expect(try JSONValue.parse(text) == .string(expected))
    }

    @Test func shortDecimalsMatchTheStandardLibrary() throws {
        // The parser's fast path must round exactly like Double(String).
        for _ in 0..<2000 {
            let digits = String(UInt64.random(in: 0..<1_000_000_000_000_000))
            let exponent = Int.random(in: -30...30)
            let text = "\(digits)e\(exponent)"
            let fraction = digits.count > 1 ? "\(digits.prefix(1)).\(digits.dropFirst())" : digits
            for candidate in [text, fraction, "-" + fraction] {
                #expect(try JSONValue.parse(candidate).doubleValue == Double(candidate), "\(candidate)")
            }
        }
    }

    @Test func skipsByteOrderMark() throws {
        #expect(try JSONValue.parse([0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == [1])
    }

    @Test func acceptsNestingUpToTheLimit() throws {
        let text = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try JSONValue.parse(text) }
    }

    typealias Kind = JSONParseError.Kind

    @Test(arguments: [
        ("", Kind.unexpectedEndOfInput),
        ("   ", .unexpectedEndOfInput),
        (#"{"a": 1"#, .unexpectedEndOfInput),
        (#""abc"#, .unexpectedEndOfInput),
        ("[1 2]", .unexpectedCharacter(found: "'2'", expected: "',' or ']'")),
        (#"{"a" 1}"#, .unexpectedCharacter(found: "'1'", expected: "':'")),
        ("{a: 1}", .unexpectedCharacter(found: "'a'", expected: "a string key")),
        ("['x']", .unexpectedCharacter(found: "'''", expected: "a value")),
        ("// comment\n1", .unexpectedCharacter(found: "'/'", expected: "a value")),
        ("+1", .unexpectedCharacter(found: "'+'", expected: "a value")),
        ("NaN", .unexpectedCharacter(found: "'N'", expected: "a value")),
        ("[1,]", .trailingComma),
        (#"{"a": 1,}"#, .trailingComma),
        ("tru", .unexpectedEndOfInput),
        ("trux", .invalidLiteral),
        ("nullx", .invalidLiteral),
        ("01", .invalidNumber),
        ("-", .invalidNumber),
        ("1.", .invalidNumber),
        (".5", .unexpectedCharacter(found: "'.'", expected: "a value")),
        ("1e", .invalidNumber),
        ("1.5.2", .invalidNumber),
        ("12abc", .invalidNumber),
        ("1e400", .numberOutOfRange),
        (#""\x""#, .invalidEscape),
        (#""\u12G4""#, .invalidEscape),
        (#""\ud83d""#, .unpairedSurrogate),
        (#""\ud83d\u0041""#, .unpairedSurrogate),
        (#""\ude00""#, .unpairedSurrogate),
        ("\"a\tb\"", .controlCharacterInString),
        ("\"a\nb\"", .controlCharacterInString),
        (#"{"a": 1, "a": 2}"#, .duplicateKey("a")),
        ("[1] [2]", .trailingContent),
        ("{} x", .trailingContent),
    ] as [(String, Kind)])
    func rejectsInvalidDocuments(text: String, expected: Kind) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
        do {
            _ = try JSONValue.parse(text)
        } catch {
            #expect(error.kind == expected)
        }
    }

    @Test(arguments: [
        [0x22, 0xFF, 0x22],  // 0xFF never appears in UTF-8
        [0x22, 0xC3, 0x22],  // truncated two-byte sequence
        [0x22, 0xC0, 0xAF, 0x22],  // overlong '/'
        [0x22, 0xE0, 0x80, 0xAF, 0x22],  // overlong three-byte form
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate U+D800
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
        [0x22, 0x5C, 0x6E, 0xFF, 0x22],  // after an escape (slow path)
        [0xC3, 0xA9],  // non-ASCII outside a string, but not a value either
    ] as [[UInt8]])
    func rejectsInvalidUTF8(bytes: [UInt8]) {
        do {
            _ = try JSONValue.parse(bytes)
            Issue.record("accepted invalid UTF-8")
        } catch {
            if bytes == [0xC3, 0xA9] {
                #expect(error.kind == .unexpectedCharacter(found: "non-ASCII character", expected: "a value"))
            } else {
                #expect(error.kind == .invalidUTF8)
            }
        }
    }

    @Test func rejectsNestingBeyondTheLimit() {
        let text = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(throws: JSONParseError(kind: .tooDeep(limit: 512), line: 1, column: 513, offset: 512)) {
            try JSONValue.parse(text)
        }
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"a":{"b":1}}"#, maxDepth: 1) }
    }

    @Test func errorsCarryLineAndColumn() {
        // Line 3, after "  é": the column counts characters, not bytes.
        let text = "{\n  \"a\": 1,\n  é\n}"
        do {
            _ = try JSONValue.parse(text)
            Issue.record("accepted")
        } catch {
            #expect(error.line == 3)
            #expect(error.column == 3)
            #expect(error.description == "line 3, column 3: unexpected non-ASCII character, expected a string key")
        }
    }

    @Test func duplicateKeyErrorPointsAtTheSecondKey() {
        #expect(throws: JSONParseError(kind: .duplicateKey("id"), line: 2, column: 3, offset: 14)) {
            try JSONValue.parse("{\"id\": \"a\",\n  \"id\": \"b\"}")
        }
    }
}
