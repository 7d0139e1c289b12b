import GeotriggerCore
import GeotriggerRuntime

/// Visits' entry times as 4-byte codes, decoded exactly: the `Double` read back is the one stored,
/// bit for bit.
///
/// A city device is inside about 20 circles at once, so a visit's size is most of a device's.
/// Reading times are nearly always whole seconds or milliseconds (SPEC's formats: Unix seconds or
/// RFC 3339 with a fraction), so a time is kept as an offset from one of two origins: whole
/// seconds within ±2²⁸ s (8.5 years) of it, or whole milliseconds within ±2²⁸ ms (3.1 days).
/// The first origin is the first time coded, rounded down to a second; the second is the first
/// later time that fits no offset of the first, so one stray time first (a fix stamped 1970 by a
/// receiver without a time lock, the 1901 times of one of the demo's tracks) does not push every
/// later time out. Any other time — finer than a millisecond, or farther from both — is kept
/// whole in a side table, its code the slot's number, and the slot is given back when the visit
/// ends (`release`). An offset is used only if decoding it gives the time back exactly, so no
/// time is ever rounded.
///
/// Bit 31 of a code marks a slot; otherwise bit 30 names the origin, bit 29 marks milliseconds,
/// and the low 29 bits are the offset plus 2²⁸.
struct EntryTimes {
    /// The origins of offsets, NaN until set (see above).
    private(set) var origins = (Double.nan, Double.nan)
    /// Times kept whole, by slot.
    private var exact = PodList<Double>()
    /// Slots given back, to be used again.
    private var unused = PodList<UInt32>()

    static let slotFlag: UInt32 = 1 << 31
    static let secondOriginFlag: UInt32 = 1 << 30
    static let millisecondsFlag: UInt32 = 1 << 29
    /// Offsets lie in −2²⁸ ..< 2²⁸ and are stored plus 2²⁸.
    static let bias: Int32 = 1 << 28

    init() {}

    /// The code of `t`; a slot is taken if `t` has no offset, to be given back with `release`.
    mutating func code(_ t: Double) -> UInt32 {
        if origins.0.isNaN && t.isFinite { origins.0 = t.rounded(.down) }
        if let code = Self.offset(t, from: origins.0) { return code }
        if origins.1.isNaN && t.isFinite, let code = Self.offset(t, from: t.rounded(.down)) {
            // The first time of whole seconds or milliseconds far from the first origin.
            origins.1 = t.rounded(.down)
            return Self.secondOriginFlag | code
        }
        if let code = Self.offset(t, from: origins.1) { return Self.secondOriginFlag | code }
        return slot(for: t)
    }

    /// The code of `t` as an offset from `origin` (without the origin's flag), or nil.
    @inline(__always)
    private static func offset(_ t: Double, from origin: Double) -> UInt32? {
        let d = t - origin
        guard abs(d) < Double(bias) else { return nil }
        let s = nearestWhole(d)
        if same(origin + s, t) { return UInt32(Int32(s) + bias) }
        let m = nearestWhole(d * 1000)
        if abs(m) < Double(bias) && same(origin + m / 1000, t) { return millisecondsFlag | UInt32(Int32(m) + bias) }
        return nil
    }

    /// A whole number nearest to `x` (|x| < 2²⁹ here), by adding and taking away 1.5·2⁵² (no libm
    /// call, which `rounded()` is on x86-64's baseline): ties may go either way, which is fine
    /// here, as the offset is kept only when it decodes to the time exactly.
    @inline(__always)
    private static func nearestWhole(_ x: Double) -> Double {
        let shifter = 6_755_399_441_055_744.0
        return (x + shifter) - shifter
    }

    /// The time coded as `code`.
    @inline(__always)
    func time(_ code: UInt32) -> Double {
        if code & Self.slotFlag != 0 { return exact[Int(code & ~Self.slotFlag)] }
        let origin = code & Self.secondOriginFlag != 0 ? origins.1 : origins.0
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
