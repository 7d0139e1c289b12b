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

    /// `decoder` and `reader` (their first cache lines) and `bytes` (the next 512: an NMEA
    /// receiver's cycle, the lines of one turn, runs to a few hundred bytes).
    init(decoder: AnyObject, reader: AnyObject, bytes: UnsafeRawPointer?) {
        self.decoder = UnsafeRawPointer(Unmanaged.passUnretained(decoder).toOpaque())
        self.reader = UnsafeRawPointer(Unmanaged.passUnretained(reader).toOpaque())
        self.bytes = bytes
    }

    /// Starts loading the lines hinted at; the caller goes on at once.
    @inline(__always)
    func prefetch() {
        if let decoder {
            for line in 0..<4 { geotrigger_prefetch(decoder + 64 &* line) }
        }
        if let reader {
            geotrigger_prefetch(reader)
        }
        if let bytes {
            for line in 0..<8 { geotrigger_prefetch(bytes + 64 &* line) }
        }
    }
}
