import CPrefetch

/// Where a decoder's next record will be read from: its own fields, its line reader's and the
/// next bytes of its read buffer, for a merge to ask the cache for them before it reads the
/// record.
///
/// Why: a merge of one file per receiver takes a record from each of thousands of decoders in
/// turn, so every decoder it comes back to has left the cache since its last record, and reading
/// its state and its next line waited on memory at every step. The merge keeps each decoder's
/// hint from when it last read (when the addresses were at hand) and starts loading them a step
/// or two before that decoder's turn (`MergedReadings`). A hint is only ever prefetched, never
/// read through: a stale address is harmless.
public struct CacheHint {
    private var decoder: UnsafeRawPointer?
    private var reader: UnsafeRawPointer?
    private var bytes: UnsafeRawPointer?

    public init() {}

    /// `decoder` and `reader` (their first cache lines) and `bytes` (where the next record
    /// begins).
    init(decoder: AnyObject, reader: AnyObject, bytes: UnsafeRawPointer?) {
        self.decoder = UnsafeRawPointer(Unmanaged.passUnretained(decoder).toOpaque())
        self.reader = UnsafeRawPointer(Unmanaged.passUnretained(reader).toOpaque())
        self.bytes = bytes
    }

    /// Bytes of the input asked for when the decoder reads one record at its turn: an NMEA
    /// receiver's cycle, the lines of one turn, runs to a few hundred bytes.
    static let recordBytes = 512

    /// Starts loading the lines hinted at: the decoder's state (its first 512 bytes, where an
    /// NMEA decoder keeps the reading it made), its reader's first two lines, and `byteCount`
    /// bytes of its input; the caller goes on at once.
    @inline(__always)
    func prefetch(bytes byteCount: Int = CacheHint.recordBytes) {
        if let decoder {
            for line in 0..<8 { geotrigger_prefetch(decoder + 64 &* line) }
        }
        if let reader {
            geotrigger_prefetch(reader)
            geotrigger_prefetch(reader + 64)
        }
        if let bytes {
            var offset = 0
            while offset < byteCount {
                geotrigger_prefetch(bytes + offset)
                offset &+= 64
            }
        }
    }
}
