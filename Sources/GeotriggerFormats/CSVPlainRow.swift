import GeotriggerCore

/// The plain-row grammar of CSV readings under a `t,device,lat,lon[,accuracy]` header
/// (`CSVDecoder`'s fast lane; `CSVDecoder.plainRow` says which rows). A value: its state is the
/// header's shape and the last time read (`times`), so a copy decodes the same rows to the same
/// fixes on another thread (`DecodeAhead`).
struct CSVPlainRow: PlainLineParser {
    /// The header has a fifth column, `accuracy`.
    var hasAccuracy = false
    /// The last plain row's time, reused by the next row of the same tick.
    private var times = PlainLine.RepeatedNumber()

    /// The plain-row grammar over `p[0..<n]`, the last number's end limited by `last` instead:
    /// the index just after the last number (where the row must end), or -1.
    @inline(__always)
    mutating func rowEnd(_ p: PaddedBytes, _ n: Int, last: Int, _ row: inout PlainFix) -> Int {
        let comma = UInt8(ascii: ",")
        var i = times.number(p, 0, n, &row.t)
        guard i > 0, p[i] == comma, InputLimits.timeIsWritable(row.t) else { return -1 }
        let deviceStart = i + 1
        i = PlainLine.nameEnd(p, from: deviceStart, n, also: comma)
        let space = UInt8(ascii: " ")
        guard i >= 0, p[i] == comma, i > deviceStart, p[deviceStart] != space, p[i - 1] != space,
              InputLimits.identifierFits(byteCount: i - deviceStart)
        else { return -1 }
        row.deviceStart = deviceStart
        row.deviceCount = i - deviceStart
        i = PlainLine.number(p, i + 1, n, &row.latitude)
        guard i > 0, p[i] == comma, row.latitude >= -90 && row.latitude <= 90 else { return -1 }
        i = PlainLine.number(p, i + 1, hasAccuracy ? n : last, &row.longitude)
        guard i > 0, row.longitude >= -180 && row.longitude <= 180 else { return -1 }
        if hasAccuracy {
            guard i < n, p[i] == comma else { return -1 }
            i = PlainLine.number(p, i + 1, last, &row.accuracy)
            guard i > 0, row.accuracy >= 0 else { return -1 }
        }
        return i
    }

    /// `rowEnd` on bytes that run on past the row (a read buffer, a mapped file): the row's length if it
    /// is plain and ends in a newline or CR LF within `available` bytes, else -1.
    @inline(__always)
    mutating func lineLength(_ p: PaddedBytes, _ available: Int, _ row: inout PlainFix) -> Int {
        let end = rowEnd(p, available, last: available, &row)
        guard end >= 0 else { return -1 }
        // A number ends before its limit, so p[end] is buffered.
        if p[end] == 0x0A { return end }
        return p[end] == 0x0D && end + 1 < available && p[end + 1] == 0x0A ? end : -1
    }
}
