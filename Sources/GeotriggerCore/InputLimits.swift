/// Limits on what input may hold (SPEC §3): what is outside them is rejected where it is read, so
/// that nothing downstream (events, `--state-out`, the scheduler) ever has to spell it.
///
/// Constants are computed `@inlinable` properties rather than stored `static let`s, so that a
/// check in another module (the decoders' plain-line paths) folds to a compare with a literal.
public enum InputLimits {
    /// The longest identifier, in bytes of UTF-8: device ids, region ids, request ids (and the
    /// category and action ids of the notification model).
    @inlinable public static var identifierBytes: Int { 256 }

    /// Whether an identifier of `byteCount` bytes of UTF-8 is within `identifierBytes`.
    @inlinable @inline(__always)
    public static func identifierFits(byteCount: Int) -> Bool { byteCount <= identifierBytes }

    /// Whether `id` is within `identifierBytes` (counted in UTF-8, not in characters).
    @inlinable
    public static func identifierFits(_ id: String) -> Bool { id.utf8.count <= identifierBytes }

    /// A reason naming the limit, for messages about an identifier that exceeds it.
    public static func identifierTooLong(_ what: String, byteCount: Int) -> String {
        "\(what) is \(byteCount) bytes long; identifiers are limited to \(identifierBytes) bytes of UTF-8"
    }

    /// The earliest time accepted, in Unix seconds: 0001-01-01T00:00:00Z, the first instant
    /// RFC 3339 can write.
    @inlinable public static var earliestTime: Double { -62_135_596_800 }

    /// The first time not accepted, in Unix seconds: the smallest `Double` that, rounded to the
    /// millisecond as events are written (`RFC3339.format`), reads 10000-01-01T00:00:00.000Z.
    /// It is 0.00048828125 s before 10000-01-01T00:00:00Z (253402300800): every `Double` below it
    /// is written as 9999-12-31T23:59:59.999Z at the latest (the one just below it is
    /// 253402300799.999481201171875, whose 999.48 ms round down).
    @inlinable public static var timeLimit: Double { 253_402_300_799.999_511_718_75 }

    /// Whether `t` (Unix seconds) is one RFC 3339 can write with milliseconds: its year, once
    /// rounded to the millisecond, is 0001…9999. False for NaN and the infinities. Two compares.
    @inlinable @inline(__always)
    public static func timeIsWritable(_ t: Double) -> Bool { t >= earliestTime && t < timeLimit }
}
