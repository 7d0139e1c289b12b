import GeotriggerCore

/// Byte-level JSON pieces for output written on the hot path (no `String` building per event).
extension OutputFile {
    /// Appends `bytes` (UTF-8) as a JSON string literal, escaping per RFC 8259.
    public func appendJSONString(_ bytes: UnsafeRawBufferPointer) {
        let hex: StaticString = "0123456789abcdef"
        append(UInt8(ascii: "\""))
        // Most ids need no escaping: copy them whole.
        if !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            append(bytes)
            append(UInt8(ascii: "\""))
            return
        }
        for b in bytes {
            switch b {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0..<0x20:
                append("\\u00")
                hex.withUTF8Buffer { h in
                    append(h[Int(b >> 4)])
                    append(h[Int(b & 0xF)])
                }
            default: append(b)
            }
        }
        append(UInt8(ascii: "\""))
    }

    public func appendJSONString(_ s: borrowing String) {
        // Native and small strings lend their bytes without a copy of the String.
        if let done: Void = s.utf8.withContiguousStorageIfAvailable({ appendJSONString(UnsafeRawBufferPointer($0)) }) {
            return done
        }
        var copy = copy s
        copy.withUTF8 { appendJSONString(UnsafeRawBufferPointer($0)) }
    }

    /// Appends an RFC 3339 UTC time with milliseconds, quoted.
    public func appendTime(_ t: Double) {
        append(UInt8(ascii: "\""))
        if t == times.0 {
            newerTime = 0
        } else if t == times.1 {
            newerTime = 1
        } else {
            // Replace the slot used less recently.
            let slot = 1 - newerTime
            let bytes = timeBytes + 32 * slot
            var n = RFC3339.format24(t, to: bytes)
            if n == 0 {
                // Not finite, or a year beyond 0…9999: at most 29 bytes.
                var spelled: [UInt8] = []
                RFC3339.format(t, into: &spelled)
                n = min(32, spelled.count)
                for k in 0..<n { bytes[k] = spelled[k] }
            }
            if slot == 0 {
                times.0 = t
                timeLengths.0 = n
            } else {
                times.1 = t
                timeLengths.1 = n
            }
            newerTime = slot
        }
        append(UnsafeRawBufferPointer(start: timeBytes + 32 * newerTime,
                                      count: newerTime == 0 ? timeLengths.0 : timeLengths.1))
        append(UInt8(ascii: "\""))
    }

    /// Appends a finite number with two decimals (centimetres for distances).
    /// The same as `appendFixed(x, decimals: 2)`, without the general loops (every event with a
    /// distance writes one).
    public func appendFixed2(_ x: Double) {
        let scaled = abs(x) * 100
        guard x.isFinite, scaled < 9e18 else {
            append("null")
            return
        }
        let v = Int64(scaled.rounded())
        if x < 0 && v != 0 { append(UInt8(ascii: "-")) }
        appendInteger(v / 100)
        let cents = Int(v % 100)
        appendDirect(maximum: 3) { out in
            out[0] = UInt8(ascii: ".")
            out[1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: cents / 10)
            out[2] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: cents % 10)
            return 3
        }
    }

    /// Appends a finite number rounded to `decimals` (0…9) places; `null` if not finite or huge.
    public func appendFixed(_ x: Double, decimals: Int) {
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        guard x.isFinite, abs(x) * Double(scale) < 9e18 else {
            append("null")
            return
        }
        let v = Int64((abs(x) * Double(scale)).rounded())
        if x < 0 && v != 0 { append(UInt8(ascii: "-")) }
        appendInteger(v / scale)
        guard decimals > 0 else { return }
        // The point and the fraction's digits, least significant written first.
        appendDirect(maximum: decimals + 1) { out in
            out[0] = UInt8(ascii: ".")
            var fraction = v % scale
            for k in stride(from: decimals, to: 0, by: -1) {
                out[k] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction % 10)
                fraction /= 10
            }
            return decimals + 1
        }
    }

    /// Appends a decimal integer, written straight into the buffer (this runs for every event's
    /// distance).
    public func appendInteger(_ value: Int64) {
        appendDirect(maximum: 20) { out in
            var n = 0
            if value < 0 {
                out[0] = UInt8(ascii: "-")
                n = 1
            }
            var v = value.magnitude
            var digits = 1
            var t = v
            while t >= 10 {
                t /= 10
                digits += 1
            }
            var k = n + digits
            repeat {
                k -= 1
                out[k] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
                v /= 10
            } while v > 0
            return n + digits
        }
    }

    /// Appends `{"uuid":"…","major":…,"minor":…}` for a concrete beacon.
    public func appendBeacon(_ b: BeaconID) {
        append("{\"uuid\":\"")
        append(string: b.uuidString)
        append("\",\"major\":")
        appendInteger(Int64(b.major))
        append(",\"minor\":")
        appendInteger(Int64(b.minor))
        append("}")
    }
}
