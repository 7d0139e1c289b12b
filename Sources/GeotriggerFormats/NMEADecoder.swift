import GeotriggerCore

/// NMEA 0183 as a receiver or a logger writes it (SPEC §3, "Real receivers"): one fix per receiver
/// cycle (`NMEACycles`), for one device (`--device`, else the file name without its extension,
/// `stdin` for standard input).
///
/// A cycle's fix is known once a sentence of the next cycle arrives (or the input ends), so its
/// reading comes out then; it is reported at the line of the sentence that gave its position. A
/// sentence with a bad checksum, a void cycle and a fix before any date are rejected with their
/// own reasons; comment lines, other sentences and bytes that are no sentence are passed over and
/// counted by kind (`passedOver`).
public final class NMEADecoder: ReadingDecoder {
    public let sourceName: String
    private let reader: LineReader
    // Unchecked: mutated for every line, and only ever from `next()` (no overlapping access).
    @exclusivity(unchecked) private var receiver = NMEAReceiver()
    @exclusivity(unchecked) private var reading = Reading()
    private let device: InputDevice
    @exclusivity(unchecked) private var ended = false

    @exclusivity(unchecked) public private(set) var rejectedLine = ByteView.empty
    @exclusivity(unchecked) public private(set) var lineNumber = 0
    /// Where the input stands after the last record returned.
    @exclusivity(unchecked) public private(set) var position = InputPosition.start
    /// Lines passed over, by kind: a sentence's type (`GSV`, `PGRME`), `comment`, `not a sentence`.
    public var passedOver: [String: Int] { passed.dictionary }
    @exclusivity(unchecked) private var passed = PassedOverCounts()

    /// `device`: every fix's device; by default the source's file name without its extension.
    /// `mapsFile`: a regular file is mapped rather than read (`LineReader`).
    public convenience init(fd: Int32, ownsDescriptor: Bool = false, sourceName: String, device: String? = nil,
                            bufferSize: Int = 1 << 20, maxLineLength: Int = 1 << 20, mapsFile: Bool = false) {
        self.init(reader: LineReader(fd: fd, ownsDescriptor: ownsDescriptor, bufferSize: bufferSize,
                                     maxLineLength: maxLineLength, mapsFile: mapsFile),
                  sourceName: sourceName, device: device)
    }

    init(reader: LineReader, sourceName: String, device: String?) {
        self.sourceName = sourceName
        self.reader = reader
        self.device = InputDevice(device, sourceName: sourceName)
        reader.yieldsIdle = true
        receiver.linesStay = reader.mapped
    }

    /// Whether every reading's bytes (its line, its device) stay valid as long as the decoder,
    /// not only until the next `next()`: a mapped file's.
    var linesStay: Bool { reader.mapped }

    public func whenIdle(_ body: @escaping () -> Void) { reader.whenIdle = body }

    public var current: Reading { reading }
    public var cacheHint: CacheHint { CacheHint(decoder: self, reader: reader, bytes: reader.nextBytes) }
    public var bytesRead: Int { reader.bytesRead }
    public var ioError: String? { reader.ioError }

    public func next() -> DecodeStep {
        while true {
            // A whole line buffered, of at most 128 bytes (as a receiver's are): framed, its `$`,
            // commas and checksum found in the same pass (`NMEALine.frame`). Any other, and the
            // input's first (a byte order mark), as `LineReader.next` finds them.
            if let rest = reader.buffered, rest.count > 0, let frame = NMEALine.frame(rest),
               frame.length <= reader.maxLineLength {
                _ = reader.takeLine(length: frame.length)
                if let step = take(rest.slice(0..<frame.length), framed: frame) { return step }
                continue
            }
            switch reader.next() {
            case .idle:
                // Nothing more now (a live receiver between bursts): the cycle read so far ends
                // here, rather than when the next burst begins. Its late sentences are passed over.
                if let o = receiver.finish() {
                    position = InputPosition(offset: reader.consumed, line: reader.lineNumber + 1)
                    return outcome(o)
                }
                continue
            case .end:
                guard !ended else { return .end }
                ended = true
                if let o = receiver.finish() {
                    // The last cycle, ended by the input's end: positioned a line past the last,
                    // to be told from a record of the last line (a rejected sentence), which
                    // ends at the same byte.
                    position = InputPosition(offset: reader.consumed, line: reader.lineNumber + 1)
                    return outcome(o)
                }
                position = InputPosition(offset: reader.consumed, line: reader.lineNumber)
                return .end
            case .tooLong(let prefix):
                lineNumber = reader.lineNumber
                position = InputPosition(offset: reader.consumed, line: reader.lineNumber)
                rejectedLine = prefix
                return .rejected(.lineTooLong)
            case .line(let l):
                if let step = take(l, framed: nil) { return step }
            }
        }
    }

    /// Reads the line just taken from the reader: what `next()` returns for it, nil to go on.
    @inline(__always)
    private func take(_ padded: PaddedBytes, framed frame: NMEALine.Frame?) -> DecodeStep? {
        switch receiver.read(padded, place: Int64(reader.lineNumber), framed: frame) {
        case .blank, .taken:
            return nil
        case .passedOver(let kind):
            passed.add(kind)
            return nil
        case .otherSentence(let type):
            passed.add(type)
            return nil
        case .badChecksum:
            lineNumber = reader.lineNumber
            position = InputPosition(offset: reader.consumed, line: reader.lineNumber)
            rejectedLine = padded.bytes
            return .rejected(.badChecksum)
        case .ended(let o, let cycleLine, let number):
            // After this sentence, which began the next cycle: a run resumed here has read it
            // (`resume`), as this one has.
            position = InputPosition(offset: reader.consumed, line: reader.lineNumber)
            return outcome(o, line: cycleLine, number: Int(number))
        }
    }

    private func outcome(_ o: NMEACycles.Outcome) -> DecodeStep {
        outcome(o, line: receiver.line, number: Int(receiver.place))
    }

    private func outcome(_ o: NMEACycles.Outcome, line: ByteView, number: Int) -> DecodeStep {
        lineNumber = number
        rejectedLine = line
        switch o {
        case .void:
            return .rejected(.voidFix)
        case .noDate:
            return .rejected(.noDate)
        case .fix(let t, let latitude, let longitude, let accuracy):
            guard InputLimits.identifierFits(byteCount: device.bytes.count) else { return .rejected(.idTooLong) }
            guard InputLimits.timeIsWritable(t) else { return .rejected(.timeOutOfRange) }
            reading = .fix(t: t, device: device.bytes, latitude: latitude, longitude: longitude, accuracy: accuracy,
                           line: line)
            return .reading
        }
    }

    /// Decodes again up to `position`, returning nothing (the cycles' date, the cycle being read
    /// and the passed-over counts rebuilt as they were): every position is one `next()` returned,
    /// so the records before it come back exactly as they did.
    public func resume(at position: InputPosition) -> Bool { decodeAgain(upTo: position) }
}
