import GeotriggerCore
/// What a decoder produced on one call to `next()`.
public enum DecodeStep: Equatable, Sendable {
    /// `current` holds a valid reading.
    case reading
    /// The record at `lineNumber` was rejected; `rejectedLine` holds it verbatim.
    case rejected(RejectReason)
    /// No more input.
    case end
}

/// A pull decoder over one input (a file or standard input).
///
/// Decoders reuse their buffers: the `Reading` in `current` and `rejectedLine` are views that stay
/// valid only until the next call to `next()`.
public protocol ReadingDecoder: AnyObject {
    /// Name used in `FILE:LINE: reason` messages (`-` for standard input).
    var sourceName: String { get }
    /// Advances to the next record.
    func next() -> DecodeStep
    /// The reading produced by the last `next()` that returned `.reading`.
    var current: Reading { get }
    /// The verbatim record of the last `next()` (reading or rejected), without its line terminator.
    var rejectedLine: ByteView { get }
    /// One-based line number of the last record returned.
    var lineNumber: Int { get }
    /// Bytes consumed so far, for progress reporting.
    var bytesRead: Int { get }
    /// An I/O error that ended the input early, if any (reported with exit status 74).
    var ioError: String? { get }
    /// The fast lane for runs of plain fixes (`t`, `device`, `lat`, `lon`, optional `accuracy`):
    /// hands the ones that follow in the read buffer straight to `body` while it returns true,
    /// each counted as read first, without filling `current`. A decoder without such a lane
    /// hands none; the records then come through `next()`.
    func drainPlainFixes(_ body: (_ t: Double, _ device: ByteView, _ latitude: Double,
                                  _ longitude: Double, _ accuracy: Double) -> Bool)
    /// Where the input stands, for a checkpoint: the byte after the last record returned, and
    /// that record's line.
    var position: InputPosition { get }
    /// Moves a new decoder (nothing read yet) on to `position`, as if every record before it had
    /// been read, for a run resumed from a checkpoint. False if the input ends before it.
    func resume(at position: InputPosition) -> Bool
    /// Records skipped without a reading and without a rejection, as the format allows (GPX track
    /// points without a time), for the summary.
    var untimedPoints: Int { get }
    /// Lines passed over that are neither a record nor a rejected one, by kind, as the format
    /// allows (NMEA: other sentences by type, comment lines, binary bytes), for the summary.
    var passedOver: [String: Int] { get }
    /// Has `body` called whenever the input would block, before waiting for it (a live pipe),
    /// so the run writes out everything decided so far; never for a regular file. A decoder that
    /// reads its input whole (GPX) never calls it.
    func whenIdle(_ body: @escaping () -> Void)
    /// Where the next record will be read from, for a merge to have the cache load it first
    /// (`CacheHint`); none by default.
    var cacheHint: CacheHint { get }
}

extension ReadingDecoder {
    public func drainPlainFixes(_ body: (_ t: Double, _ device: ByteView, _ latitude: Double,
                                         _ longitude: Double, _ accuracy: Double) -> Bool) {}
    public var untimedPoints: Int { 0 }
    public var passedOver: [String: Int] { [:] }
    public func whenIdle(_ body: @escaping () -> Void) {}
    public var cacheHint: CacheHint { CacheHint() }
}

/// A place in an input, for checkpoints: `offset` bytes from its start (where the next record
/// begins), `line` lines read by then.
public struct InputPosition: Equatable, Sendable {
    public var offset: Int
    public var line: Int

    public init(offset: Int, line: Int) {
        self.offset = offset
        self.line = line
    }

    public static let start = InputPosition(offset: 0, line: 0)
}
