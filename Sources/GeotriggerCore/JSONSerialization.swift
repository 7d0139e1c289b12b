extension JSONValue {
    /// Compact JSON with object keys sorted by their UTF-8 bytes, so equal values give equal text.
    ///
    /// Numbers that are exactly integral with magnitude below 2^53 print without a fraction
    /// (`3`, `-0`); other numbers print in Swift's shortest round-trip form (`0.1`, `1e+300`).
    /// JSON has no NaN or infinity: those print as `null`. Strings escape `"`, `\` and the
    /// control characters (`\n`, `\t`, … or `\u001f`); everything else is written as UTF-8.
    public func serialized() -> String {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the compact serialization (see ``serialized()``) to `output`.
    public func write(into output: inout [UInt8]) {
        switch self {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let value):
            output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let value):
            Self.writeNumber(value, into: &output)
        case .string(let value):
            Self.writeString(value, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                element.write(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            // Byte order, not String's Unicode ordering, so every platform sorts alike.
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (position, key) in keys.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                members[key]!.write(into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    package static func writeNumber(_ value: Double, into output: inout [UInt8]) {
        guard value.isFinite else {
            output.append(contentsOf: "null".utf8)
            return
        }
        if value.magnitude < 9_007_199_254_740_992, value.rounded(.towardZero) == value {
            if value == 0, value.sign == .minus {
                output.append(contentsOf: "-0".utf8)
            } else {
                output.append(contentsOf: String(Int64(value)).utf8)
            }
            return
        }
        // Swift's description is the shortest text that parses back to the same Double, and its
        // forms ("1.5", "1e-07", "1e+16") are all valid JSON numbers.
        output.append(contentsOf: value.description.utf8)
    }

    static func writeString(_ value: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            if JSONEscape.needed(byte) {
                JSONEscape.write(byte) { output.append($0) }
            } else {
                output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

}

/// How every JSON string Geotrigger writes is escaped (event lines, JSON values, the map's data),
/// as RFC 8259 allows and JavaScript's `JSON.stringify` does: `"` and `\` after a backslash,
/// the five control characters that have a short escape as `\b \f \n \r \t`, the other bytes
/// below 0x20 as `\u00xx`; every other byte (UTF-8) as it is.
public enum JSONEscape {
    /// Whether `byte` is written escaped.
    @inlinable @inline(__always)
    public static func needed(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C }

    /// Hands `put` the escape of `byte` (one that is `needed`), a byte at a time: at most 6.
    @inlinable
    public static func write(_ byte: UInt8, _ put: (UInt8) -> Void) {
        put(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: put(0x22)
        case 0x5C: put(0x5C)
        case 0x08: put(UInt8(ascii: "b"))
        case 0x0C: put(UInt8(ascii: "f"))
        case 0x0A: put(UInt8(ascii: "n"))
        case 0x0D: put(UInt8(ascii: "r"))
        case 0x09: put(UInt8(ascii: "t"))
        default:
            put(UInt8(ascii: "u"))
            put(UInt8(ascii: "0"))
            put(UInt8(ascii: "0"))
            let hex = (UInt8(ascii: "0"), UInt8(ascii: "a") - 10)
            let high = byte >> 4, low = byte & 0xF
            put(high + (high < 10 ? hex.0 : hex.1))
            put(low + (low < 10 ? hex.0 : hex.1))
        }
    }
}
