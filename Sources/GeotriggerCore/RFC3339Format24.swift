/// RFC 3339 time stamps written straight into an output buffer: the event writers' hot path.
///
/// The trick: `format24` writes the 24 bytes of `YYYY-MM-DDTHH:MM:SS.mmmZ` at a pointer into the
/// writer's own buffer (`JSONWriting`, `RecordBuffer`), with no intermediate array, and a writer
/// whose times mostly fall on one day keeps that day's date (`DayCache`) and stores it as one 8-
/// and one 2-byte word instead of doing the calendar arithmetic again. The caller guarantees the
/// 24 bytes of room.
extension RFC3339 {
    /// Writes `t` (Unix seconds) as `YYYY-MM-DDTHH:MM:SS.mmmZ` at `out` (24 bytes) and returns 24,
    /// or writes nothing and returns 0 when `t` is not finite or its year is outside 0…9999
    /// (`format(_:into:)` spells those out). For writers that format into their own buffer.
    package static func format24(_ t: Double, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var days = DayCache()
        return format24(t, to: out, days: &days)
    }

    /// The date part (`YYYY-MM-DD`) of the day last formatted by `format24(_:to:days:)`: a writer
    /// whose times mostly fall on one day keeps one and skips the calendar arithmetic.
    public struct DayCache {
        var day = Int.min
        var date: (UInt64, UInt16) = (0, 0)
        public init() {}
    }

    /// `format24(_:to:)`, taking the date from `days` when `t` falls on its day (and leaving the
    /// day's date there otherwise).
    @inline(__always)
    package static func format24(_ t: Double, to out: UnsafeMutablePointer<UInt8>, days cache: inout DayCache) -> Int {
        guard let (days, sod, ms) = split(t) else { return 0 }
        // Digits by unsigned arithmetic: every value here is in 0…99 (the year in halves).
        @inline(__always) func put2(_ k: Int, _ v: Int) {
            let u = UInt(bitPattern: v), tens = u / 10
            out[k] = UInt8(truncatingIfNeeded: 48 &+ tens)
            out[k + 1] = UInt8(truncatingIfNeeded: 48 &+ u &- 10 &* tens)
        }
        if days != cache.day {
            let (year, month, day) = civilFromDays(days)
            guard year >= 0 && year <= 9999 else { return 0 }
            put2(0, year / 100)
            put2(2, year % 100)
            out[4] = UInt8(ascii: "-")
            put2(5, month)
            out[7] = UInt8(ascii: "-")
            put2(8, day)
            let raw = UnsafeRawPointer(out)
            cache.date = (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
            cache.day = days
        } else {
            let raw = UnsafeMutableRawPointer(out)
            raw.storeBytes(of: cache.date.0, as: UInt64.self)
            raw.storeBytes(of: cache.date.1, toByteOffset: 8, as: UInt16.self)
        }
        let u = UInt(bitPattern: sod), minutes = u / 60
        out[10] = UInt8(ascii: "T")
        put2(11, Int(bitPattern: minutes / 60))
        out[13] = UInt8(ascii: ":")
        put2(14, Int(bitPattern: minutes % 60))
        out[16] = UInt8(ascii: ":")
        put2(17, Int(bitPattern: u &- 60 &* minutes))
        out[19] = UInt8(ascii: ".")
        let hundreds = UInt(bitPattern: ms) / 100
        out[20] = UInt8(truncatingIfNeeded: 48 &+ hundreds)
        put2(21, ms &- 100 &* Int(bitPattern: hundreds))
        out[23] = UInt8(ascii: "Z")
        return 24
    }

    /// Appends `t` formatted by `format24` (a year in 0…9999) to `out`.
    static func append24(_ t: Double, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { b in
            out.append(contentsOf: UnsafeBufferPointer(start: b.baseAddress!, count: format24(t, to: b.baseAddress!)))
        }
    }
}
