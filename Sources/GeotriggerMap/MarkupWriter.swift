import GeotriggerCore
/// Bytes of SVG, HTML or JSON text, built without Foundation: a map of a million fixes writes
/// millions of numbers, so they are formatted here (one decimal, or whole) rather than through
/// `String(format:)`.
struct MarkupWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 1 << 16) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ s: String) { bytes.append(contentsOf: s.utf8) }

    mutating func raw(_ other: MarkupWriter) { bytes.append(contentsOf: other.bytes) }

    /// `x` with one decimal ("12.3", "-0.5", "7"), as SVG coordinates need no more at 1 px.
    mutating func number(_ x: Double) {
        guard x.isFinite else {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var tenths = Int((abs(x) * 10).rounded())
        if x < 0 && tenths != 0 { bytes.append(UInt8(ascii: "-")) }
        let fraction = tenths % 10
        tenths /= 10
        integer(tenths)
        if fraction != 0 {
            bytes.append(UInt8(ascii: "."))
            bytes.append(UInt8(ascii: "0") + UInt8(fraction))
        }
    }

    /// A whole number.
    mutating func integer(_ n: Int) {
        if n < 0 {
            bytes.append(UInt8(ascii: "-"))
            integer(-n)
            return
        }
        if n >= 10 { integer(n / 10) }
        bytes.append(UInt8(ascii: "0") + UInt8(n % 10))
    }

    /// Text for an XML attribute or element: &, <, >, " and ' escaped, control characters dropped.
    mutating func escaped(_ s: String) {
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "&"): raw("&amp;")
            case UInt8(ascii: "<"): raw("&lt;")
            case UInt8(ascii: ">"): raw("&gt;")
            case UInt8(ascii: "\""): raw("&quot;")
            case UInt8(ascii: "'"): raw("&#39;")
            case 0..<0x20: continue
            default: bytes.append(b)
            }
        }
    }

    /// A JSON string literal, safe inside an HTML `<script>` element ("</" written as "<\/").
    mutating func jsonString(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        var previous: UInt8 = 0
        for b in s.utf8 {
            if JSONEscape.needed(b) {
                JSONEscape.write(b) { bytes.append($0) }
            } else if b == UInt8(ascii: "/") && previous == UInt8(ascii: "<") {
                // `</` would end the script element the data sits in.
                raw("\\/")
            } else {
                bytes.append(b)
            }
            previous = b
        }
        bytes.append(UInt8(ascii: "\""))
    }


    var string: String { String(decoding: bytes, as: UTF8.self) }
}
