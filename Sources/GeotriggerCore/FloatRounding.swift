/// Rounding a Double to a Float in a chosen direction, for compact copies of bounds that must
/// stay bounds: a lower bound rounds down, an upper bound up.
extension Float {
    /// The largest Float not above `x`.
    @inlinable public static func below(_ x: Double) -> Float {
        let f = Float(x)
        return Double(f) > x ? f.nextDown : f
    }

    /// The smallest Float not below `x`.
    @inlinable public static func above(_ x: Double) -> Float {
        let f = Float(x)
        return Double(f) < x ? f.nextUp : f
    }

    /// `below(x)` for x ≥ 0 (or NaN): the largest Float not above it, by one step down of the
    /// bits where the conversion rounded up. No branch at all: whether a conversion rounds up is
    /// a coin toss no predictor learns, and the retests convert a clearance each (written as a
    /// select, the step was compiled to a branch).
    @inlinable @inline(__always) public static func belowNonNegative(_ x: Double) -> Float {
        let f = Float(x)
        return Float(bitPattern: f.bitPattern &- UInt32(Double(f) > x ? 1 : 0))
    }
}
