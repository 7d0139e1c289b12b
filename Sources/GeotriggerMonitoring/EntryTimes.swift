import GeotriggerCore

/// Visits' entry times as 4-byte codes, decoded exactly: the `Double` read back is the one stored,
/// bit for bit.
///
/// A city device is inside about 20 circles at once, so a visit's size is most of a device's.
/// Reading times are nearly always whole seconds or milliseconds (SPEC's formats: Unix seconds or
/// RFC 3339 with a fraction), so a time is kept as an offset from one origin (the first time
/// coded, rounded down to a second): whole seconds within ±2²⁹ s (17 years) of it, or whole
/// milliseconds within ±2²⁹ ms (6.2 days). Any other time — finer than a millisecond, or farther
/// away — is kept whole in a side table, its code the slot's number, and the slot is given back
/// when the visit ends (`release`). An offset is used only if decoding it gives the time back
/// exactly, so no time is ever rounded.
///
/// Bit 31 of a code marks a slot; otherwise bit 30 marks milliseconds and the low 30 bits are
/// the offset plus 2²⁹.
struct EntryTimes {
    /// The origin of offsets: the first finite time coded, rounded down to a whole second; NaN
    /// before it.
    private(set) var origin = Double.nan
    /// Times kept whole, by slot.
    private var exact = PodList<Double>()
    /// Slots given back, to be used again.
    private var unused = PodList<UInt32>()

    static let slotFlag: UInt32 = 1 << 31
    static let millisecondsFlag: UInt32 = 1 << 30
    /// Offsets lie in −2²⁹ ..< 2²⁹ and are stored plus 2²⁹.
    static let bias: Int32 = 1 << 29

    init() {}

    /// The code of `t`; a slot is taken if `t` has no offset, to be given back with `release`.
    mutating func code(_ t: Double) -> UInt32 {
        if origin.isNaN && t.isFinite { origin = t.rounded(.down) }
        let d = t - origin
        if abs(d) < Double(Self.bias) {
            let s = d.rounded()
            if Self.same(origin + s, t) { return UInt32(Int32(s) + Self.bias) }
            let m = (d * 1000).rounded()
            if abs(m) < Double(Self.bias) && Self.same(origin + m / 1000, t) {
                return Self.millisecondsFlag | UInt32(Int32(m) + Self.bias)
            }
        }
        return slot(for: t)
    }

    /// The time coded as `code`.
    @inline(__always)
    func time(_ code: UInt32) -> Double {
        if code & Self.slotFlag != 0 { return exact[Int(code & ~Self.slotFlag)] }
        let offset = Double(Int32(bitPattern: code & (Self.millisecondsFlag - 1)) - Self.bias)
        return code & Self.millisecondsFlag != 0 ? origin + offset / 1000 : origin + offset
    }

    /// Gives back the slot of a code that is no longer held (nothing for an offset).
    @inline(__always)
    mutating func release(_ code: UInt32) {
        if code & Self.slotFlag != 0 { unused.append(code & ~Self.slotFlag) }
    }

    /// Slots in use: times held whole.
    var slotsInUse: Int { Int(exact.count) - Int(unused.count) }

    @inline(__always)
    private static func same(_ a: Double, _ b: Double) -> Bool { a.bitPattern == b.bitPattern }

    private mutating func slot(for t: Double) -> UInt32 {
        let i: UInt32
        if unused.count > 0 {
            i = unused.removeLast()
            exact[Int(i)] = t
        } else {
            precondition(exact.count < Int32.max, "too many entry times held whole")
            i = UInt32(exact.count)
            exact.append(t)
        }
        return Self.slotFlag | i
    }

    mutating func free() {
        exact.free()
        unused.free()
    }
}
