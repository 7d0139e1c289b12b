import GeotriggerCore

/// The JSON pieces of a record, written through a `RecordCursor`'s stores: strings escaped per
/// RFC 8259, numbers without `String` building, the region-id slots of `IDSlots`.
extension RecordCursor {
    /// A slot of `IDSlots` (a literal of at most 15 bytes): its length. Stores 15 bytes whatever
    /// the length, as two overlapping words; the cursor moves on by the length.
    @inline(__always)
    mutating func putSlot(_ slot: IDSlot) {
        setWord((slot.low >> 8) | (slot.high << 56), at: 0)
        setWord(slot.high, at: 7)
        advance(slot.length)
    }

    /// `bytes` (UTF-8) as a JSON string literal, escaped per RFC 8259: at most 6n + 2 bytes.
    ///
    /// Names of 4 to 16 bytes, the usual ids, are checked and copied as two overlapping words
    /// (`PlainLine`'s byte tests); anything else, or anything needing an escape, takes the
    /// byte loop.
    @inline(__always)
    package mutating func putJSONString(_ bytes: ByteView) {
        let n = bytes.count
        if n >= 4 && n <= 16 {
            if n >= 8 ? putPlain(bytes, as: UInt64.self) : putPlain(bytes, as: UInt32.self) { return }
        }
        putJSONStringEscaping(bytes)
    }

    /// A String as a JSON string literal: native and small strings lend their bytes without a
    /// copy of the String, others are copied once. At most 6n + 2 bytes for n UTF-8 bytes.
    @inline(__always)
    public mutating func putJSONString(_ s: borrowing String) {
        RecordCursor.withBytes(of: s) { putJSONString($0) }
    }

    /// Writes `bytes` quoted, as two overlapping words of type `W` (their count is between its
    /// size and twice it), if none needs an escape; returns whether it did.
    @inline(__always)
    private mutating func putPlain<W: FixedWidthInteger & UnsignedInteger>(_ bytes: ByteView, as: W.Type) -> Bool {
        let n = bytes.count, size = MemoryLayout<W>.size
        let (a, c) = RecordCursor.edgeWords(of: bytes, as: W.self)
        let special = size == 8 ? Self.needsEscape(UInt64(a)) | Self.needsEscape(UInt64(c))
                                : Self.needsEscape(UInt64(a) | UInt64(c) << 32)
        guard special == 0 else { return false }
        set(UInt8(ascii: "\""), at: 0)
        setWord(a, at: 1)
        setWord(c, at: 1 + n - size)
        set(UInt8(ascii: "\""), at: n + 1)
        advance(n + 2)
        return true
    }

    /// Nonzero when a byte of `w` is a control byte, a quote or a backslash (the bytes JSON
    /// escapes); bytes from 0x80 up, the rest of UTF-8, pass. Exact as to whether any is.
    @inline(__always)
    static func needsEscape(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func zeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        return zeroByte(w ^ (ones &* 0x22)) | zeroByte(w ^ (ones &* 0x5C)) | ((w &- ones &* 0x20) & ~w & highs)
    }

    @inline(never)
    mutating func putJSONStringEscaping(_ bytes: ByteView) {
        put(UInt8(ascii: "\""))
        for b in bytes {
            if JSONEscape.needed(b) {
                JSONEscape.write(b) { put($0) }
            } else {
                put(b)
            }
        }
        put(UInt8(ascii: "\""))
    }

    /// A finite number with two decimals (centimetres for distances), `null` otherwise: at most
    /// 24 bytes. Rounds half away from zero, as `rounded()` does.
    @inline(__always)
    public mutating func putFixed2(_ x: Double) {
        let scaled = abs(x) * 100
        guard x.isFinite, scaled < 9e18 else {
            put("null")
            return
        }
        // Half away from zero without a libm call: below 2⁵² the truncation and the remainder
        // are exact; above, every double is a whole number.
        var v = UInt64(scaled)
        if scaled < 4_503_599_627_370_496 && scaled - Double(v) >= 0.5 { v += 1 }
        if x < 0 && v != 0 { put(UInt8(ascii: "-")) }
        putDecimal(v / 100)
        let cents = v % 100
        set(UInt8(ascii: "."), at: 0)
        set(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: cents / 10), at: 1)
        set(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: cents % 10), at: 2)
        advance(3)
    }

    /// A decimal integer: at most 20 bytes.
    @inline(__always)
    public mutating func putInteger(_ value: Int64) {
        if value < 0 { put(UInt8(ascii: "-")) }
        putDecimal(value.magnitude)
    }

    /// The digits of `v`: counted by comparison (no division), then written last first, two at a
    /// time (one division by 100 a pair instead of two by 10; a pair's digits by multiplication).
    @inline(__always)
    mutating func putDecimal(_ v: UInt64) {
        guard v < 100_000_000 else { return putDecimalLong(v) }
        let digits = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10_000 ? 4 : v < 100_000 ? 5
            : v < 1_000_000 ? 6 : v < 10_000_000 ? 7 : 8
        var rest = UInt32(truncatingIfNeeded: v)
        var k = digits
        while k >= 2 {
            let pair = rest % 100
            rest /= 100
            k -= 2
            set(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: pair / 10), at: k)
            set(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: pair % 10), at: k + 1)
        }
        if k == 1 { set(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest), at: 0) }
        advance(digits)
    }

    @inline(never)
    mutating func putDecimalLong(_ v: UInt64) {
        var digits = 1
        var limit: UInt64 = 10
        while digits < 20 && v >= limit {
            digits += 1
            limit = limit &* 10
        }
        var rest = v
        var k = digits
        repeat {
            k -= 1
            set(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10), at: k)
            rest /= 10
        } while k > 0
        advance(digits)
    }
}

/// Byte-level JSON pieces for output written on the hot path (no `String` building per event).
extension RecordBuffer {
    /// Appends a name or other bytes another object owns as a JSON string literal, escaping per
    /// RFC 8259.
    package func appendJSONString(_ bytes: ByteView) {
        appendRecord(maximum: 6 * bytes.count + 2) { $0.putJSONString(bytes) }
    }

    public func appendJSONString(_ s: borrowing String) {
        appendRecord(maximum: 6 * s.utf8.count + 2) { $0.putJSONString(s) }
    }

    /// Appends an RFC 3339 UTC time with milliseconds, quoted.
    public func appendTime(_ t: Double) {
        appendRecord(maximum: 34) { putTime(t, &$0) }
    }

    /// Appends a finite number with two decimals (centimetres for distances), `null` otherwise.
    public func appendFixed2(_ x: Double) {
        appendRecord(maximum: 24) { $0.putFixed2(x) }
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
        appendRecord(maximum: decimals + 1) { c in
            c.set(UInt8(ascii: "."), at: 0)
            var fraction = v % scale
            for k in stride(from: decimals, to: 0, by: -1) {
                c.set(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction % 10), at: k)
                fraction /= 10
            }
            c.advance(decimals + 1)
        }
    }

    /// Appends a decimal integer.
    public func appendInteger(_ value: Int64) {
        appendRecord(maximum: 20) { $0.putInteger(value) }
    }

    /// Appends `{"uuid":"…","major":…,"minor":…}` for a concrete beacon, the UUID's bytes
    /// written straight to the record rather than built as a String for every event.
    public func appendBeacon(_ b: BeaconID) {
        appendRecord(maximum: 128) { c in
            c.put("{\"uuid\":\"")
            b.forEachUUIDByte { c.put($0) }
            c.put("\",\"major\":")
            c.putInteger(Int64(b.major))
            c.put(",\"minor\":")
            c.putInteger(Int64(b.minor))
            c.put("}")
        }
    }
}
