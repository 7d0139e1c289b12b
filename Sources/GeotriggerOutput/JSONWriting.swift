import GeotriggerCore

/// A write position inside a span of an `RecordBuffer`'s buffer that `appendRecord(maximum:_:)` has
/// reserved: the pieces of a record are stored with no bounds check and no count update each.
/// Each `put` documents the most bytes it can store; the caller reserves their sum.
public struct RecordCursor {
    @usableFromInline var p: UnsafeMutablePointer<UInt8>

    @usableFromInline init(_ p: UnsafeMutablePointer<UInt8>) { self.p = p }

    /// A literal: its length.
    @inline(__always)
    public mutating func put(_ s: StaticString) {
        p.initialize(from: s.utf8Start, count: s.utf8CodeUnitCount)
        p += s.utf8CodeUnitCount
    }

    /// One byte.
    @inline(__always)
    public mutating func put(_ b: UInt8) {
        p.pointee = b
        p += 1
    }

    /// Raw bytes: their count.
    @inline(__always)
    package mutating func put(bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        p.initialize(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        p += bytes.count
    }

    /// A slot of `IDSlots` (a literal of at most 15 bytes): its length. Stores 15 bytes whatever
    /// the length, as two overlapping words; the cursor moves on by the length.
    @inline(__always)
    mutating func putSlot(_ slot: UnsafePointer<UInt8>) {
        let from = UnsafeRawPointer(slot), to = UnsafeMutableRawPointer(p)
        to.storeBytes(of: from.loadUnaligned(fromByteOffset: 1, as: UInt64.self), as: UInt64.self)
        to.storeBytes(of: from.loadUnaligned(fromByteOffset: 8, as: UInt64.self), toByteOffset: 7, as: UInt64.self)
        p += Int(slot.pointee)
    }

    /// `bytes` (UTF-8) as a JSON string literal, escaped per RFC 8259: at most 6n + 2 bytes.
    ///
    /// Names of 4 to 16 bytes, the usual ids, are checked and copied as two overlapping words
    /// (`PlainLine`'s byte tests); anything else, or anything needing an escape, takes the
    /// byte loop.
    @inline(__always)
    package mutating func putJSONString(_ bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        if n >= 4 && n <= 16, let b = bytes.baseAddress {
            if n >= 8 ? putPlain(b, n, as: UInt64.self) : putPlain(b, n, as: UInt32.self) { return }
        }
        putJSONStringEscaping(bytes)
    }

    /// A name or other bytes another object owns, as a JSON string literal: at most 6n + 2 bytes.
    @inline(__always)
    package mutating func putJSONString(_ bytes: ByteView) { putJSONString(bytes.unsafeBytes) }

    /// Bytes another object owns, as they are: their count.
    @inline(__always)
    package mutating func put(bytes: ByteView) { put(bytes: bytes.unsafeBytes) }

    /// A String as a JSON string literal: native and small strings lend their bytes without a
    /// copy of the String, others are copied once. At most 6n + 2 bytes for n UTF-8 bytes.
    @inline(__always)
    public mutating func putJSONString(_ s: borrowing String) {
        if let done: Void = s.utf8.withContiguousStorageIfAvailable({ putJSONString(UnsafeRawBufferPointer($0)) }) {
            return done
        }
        var copy = copy s
        copy.withUTF8 { putJSONString(UnsafeRawBufferPointer($0)) }
    }

    /// Writes the `n` bytes at `b` quoted, as two overlapping words of type `W` (n is between
    /// its size and twice it), if none needs an escape; returns whether it did.
    @inline(__always)
    private mutating func putPlain<W: FixedWidthInteger & UnsignedInteger>(_ b: UnsafeRawPointer, _ n: Int,
                                                                          as: W.Type) -> Bool {
        let size = MemoryLayout<W>.size
        let a = b.loadUnaligned(as: W.self), c = b.loadUnaligned(fromByteOffset: n - size, as: W.self)
        let special = size == 8 ? Self.needsEscape(UInt64(a)) | Self.needsEscape(UInt64(c))
                                : Self.needsEscape(UInt64(a) | UInt64(c) << 32)
        guard special == 0 else { return false }
        p[0] = UInt8(ascii: "\"")
        UnsafeMutableRawPointer(p + 1).storeBytes(of: a, as: W.self)
        UnsafeMutableRawPointer(p + 1 + n - size).storeBytes(of: c, as: W.self)
        p[n + 1] = UInt8(ascii: "\"")
        p += n + 2
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
    mutating func putJSONStringEscaping(_ bytes: UnsafeRawBufferPointer) {
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
        p[0] = UInt8(ascii: ".")
        p[1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: cents / 10)
        p[2] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: cents % 10)
        p += 3
    }

    /// A decimal integer: at most 20 bytes.
    @inline(__always)
    public mutating func putInteger(_ value: Int64) {
        if value < 0 { put(UInt8(ascii: "-")) }
        putDecimal(value.magnitude)
    }

    /// The digits of `v`: counted by comparison (no division), then written last first, two at a
    /// time from a table of "00" to "99" (one division by 100 a pair instead of two by 10).
    @inline(__always)
    mutating func putDecimal(_ v: UInt64) {
        guard v < 100_000_000 else { return putDecimalLong(v) }
        let digits = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10_000 ? 4 : v < 100_000 ? 5
            : v < 1_000_000 ? 6 : v < 10_000_000 ? 7 : 8
        var rest = UInt32(truncatingIfNeeded: v)
        var k = digits
        let pairs = RecordCursor.digitPairs.utf8Start
        while k >= 2 {
            let pair = Int(rest % 100)
            rest /= 100
            k -= 2
            p[k] = pairs[2 * pair]
            p[k + 1] = pairs[2 * pair + 1]
        }
        if k == 1 { p[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest) }
        p += digits
    }

    /// "00" to "99" back to back.
    static let digitPairs: StaticString = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

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
            p[k] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        } while k > 0
        p += digits
    }
}

/// Byte-level JSON pieces for output written on the hot path (no `String` building per event).
extension RecordBuffer {
    /// Writes one record of at most `maximum` bytes straight into the buffer through a cursor.
    @inline(__always)
    public func appendRecord(maximum: Int, _ body: (inout RecordCursor) -> Void) {
        appendDirect(maximum: maximum) { start in
            var cursor = RecordCursor(start)
            body(&cursor)
            return cursor.p - start
        }
    }

    /// Appends `bytes` (UTF-8) as a JSON string literal, escaping per RFC 8259.
    package func appendJSONString(_ bytes: UnsafeRawBufferPointer) {
        appendRecord(maximum: 6 * bytes.count + 2) { $0.putJSONString(bytes) }
    }

    /// Appends a name or other bytes another object owns as a JSON string literal.
    package func appendJSONString(_ bytes: ByteView) { appendJSONString(bytes.unsafeBytes) }

    public func appendJSONString(_ s: borrowing String) {
        appendRecord(maximum: 6 * s.utf8.count + 2) { $0.putJSONString(s) }
    }

    /// An RFC 3339 UTC time with milliseconds, quoted, at `cursor`: at most 34 bytes.
    @inline(__always)
    public func putTime(_ t: Double, _ cursor: inout RecordCursor) {
        let slot = Self.timeSlot(t)
        if !(timeKeys[slot] == t) { formatTime(t, slot) }
        let bytes = timeBytes + 32 * slot
        let n = Int(bytes[31])
        cursor.put(UInt8(ascii: "\""))
        if n == 24 {
            // The usual width, as three words.
            let from = UnsafeRawPointer(bytes), to = UnsafeMutableRawPointer(cursor.p)
            to.storeBytes(of: from.loadUnaligned(as: UInt64.self), as: UInt64.self)
            to.storeBytes(of: from.loadUnaligned(fromByteOffset: 8, as: UInt64.self), toByteOffset: 8, as: UInt64.self)
            to.storeBytes(of: from.loadUnaligned(fromByteOffset: 16, as: UInt64.self), toByteOffset: 16, as: UInt64.self)
            cursor.p += 24
        } else {
            cursor.put(bytes: UnsafeRawBufferPointer(start: bytes, count: n))
        }
        cursor.put(UInt8(ascii: "\""))
    }

    /// The cache slot of `t`: the top ten bits of its bit pattern times a large odd constant.
    /// Consecutive whole seconds near 2023's land about 440 slots apart, and 1,024 consecutive
    /// seconds fill 876 slots.
    @inline(__always)
    static func timeSlot(_ t: Double) -> Int {
        Int(truncatingIfNeeded: (t.bitPattern &* 0x9E37_79B9_7F4A_7C15) >> 54)
    }

    /// Formats `t` into `slot` (at most 29 bytes: 24 for years 0…9999).
    @inline(never)
    private func formatTime(_ t: Double, _ slot: Int) {
        let bytes = timeBytes + 32 * slot
        var n = RFC3339.format24(t, to: bytes, days: &dayCache)
        if n == 0 {
            // Not finite, or a year beyond 0…9999: at most 29 bytes. Defensive only: input times
            // are held to `InputLimits.timeIsWritable` (years 0001–9999 once rounded) where they
            // are read, and every time written derives from them without passing the clock.
            var spelled: [UInt8] = []
            RFC3339.format(t, into: &spelled)
            n = min(31, spelled.count)
            for k in 0..<n { bytes[k] = spelled[k] }
        }
        bytes[31] = UInt8(n)
        timeKeys[slot] = t
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
