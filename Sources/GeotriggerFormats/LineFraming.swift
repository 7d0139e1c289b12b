import GeotriggerCore
import GeotriggerRuntime
/// The line-by-line half of the NDJSON and CSV decoders, so both count lines, skip blanks, reject
/// over-long lines and keep the record's bytes in exactly the same way.
///
/// A final class rather than a base class: each decoder passes its parser to `next` as a
/// non-escaping closure, which is inlined and specialised, so a line costs no dynamic dispatch and
/// no allocation. It is a class rather than a struct so that the parser can read `scratch` and
/// write `reading` while `next` is running without overlapping an exclusive access.
final class LineFraming {
    /// What a format's parser made of one non-empty line.
    enum Outcome {
        /// `reading` holds a valid record.
        case reading
        /// The line holds only what the format counts as whitespace.
        case blank
        /// The format kept the line for itself (the CSV header): neither a record nor a blank.
        case consumed
        case rejected(RejectReason)
    }

    private let reader: LineReader
    private(set) var line = ByteView.empty
    /// Filled by `accept`; `line` is set here, once the parser has said it is a reading.
    @exclusivity(unchecked) private(set) var reading = Reading()
    private(set) var lineNumber = 0
    private(set) var blankLines = 0
    /// Room for unescaped field bytes. Unescaping never lengthens text, so a line always fits
    /// once the buffer is as long as the line.
    @exclusivity(unchecked) private var scratchBuffer = PaddedBuffer(capacity: 4096)
    /// The default device's bytes, in `deviceCopy`.
    private let defaultDevice: ByteView?
    private let deviceCopy: PaddedBuffer
    /// Where `decode(_:maxLength:_:)` keeps a record it was lent, so the parsers find slack past it.
    @exclusivity(unchecked) private var held = PaddedBuffer(capacity: 4096)

    convenience init(fd: Int32, ownsDescriptor: Bool, defaultDevice: String?, bufferSize: Int, maxLineLength: Int,
                     mapsFile: Bool = false) {
        self.init(reader: LineReader(fd: fd, ownsDescriptor: ownsDescriptor, bufferSize: bufferSize,
                                     maxLineLength: maxLineLength, mapsFile: mapsFile), defaultDevice: defaultDevice)
    }

    /// Lines of `reader`, which may have read ahead already (`LineReader.peek`) but returned none.
    /// `LineReader.whenIdle`.
    func whenIdle(_ body: @escaping () -> Void) { reader.whenIdle = body }

    init(reader: LineReader, defaultDevice: String?) {
        self.reader = reader
        let copy = PaddedBuffer(copying: defaultDevice ?? "")
        self.defaultDevice = defaultDevice.map { copy.view(from: 0, count: $0.utf8.count) }
        self.deviceCopy = copy
    }

    /// Where the parser writes unescaped bytes, from `start` in the scratch on (each line's
    /// parse starts again at 0); valid during the parse.
    @inline(__always)
    func scratch(from start: Int) -> ByteWriter { scratchBuffer.writer(from: start) }

    var bytesRead: Int { reader.bytesRead }
    /// Where the next line will be read from (`CacheHint`).
    var cacheHint: CacheHint { CacheHint(decoder: self, reader: reader, bytes: reader.nextBytes) }
    /// Where the next line begins (`LineReader.consumed`).
    var consumed: Int { reader.consumed }

    /// `LineReader.skip(to:lines:)`, for a resumed run.
    func skip(to offset: Int, lines: Int) -> Bool {
        guard reader.skip(to: offset, lines: lines) else { return false }
        lineNumber = lines
        return true
    }

    /// The next non-blank line as it is (no parsing, no record) that begins before `offset`: the
    /// CSV header of a run resumed at `offset`, nil if it comes later (or never). An over-long
    /// line is passed over, as `next` rejects it before any parser sees it.
    func nextNonBlankLine(before offset: Int) -> PaddedBytes? {
        while reader.consumed < offset {
            switch reader.next() {
            case .end: return nil
            case .tooLong, .idle: continue
            case .line(let l):
                lineNumber = reader.lineNumber
                if l.bytes.contains(where: { $0 != 0x20 && $0 != 0x09 }) { return l }
            }
        }
        return nil
    }
    var ioError: String? { reader.ioError }

    /// Advances to the next line that is a record, giving each non-empty line to `parse`.
    @inline(__always)
    func next(_ parse: (_ line: PaddedBytes) -> Outcome) -> DecodeStep {
        while true {
            switch reader.next() {
            case .idle:
                continue
            case .end:
                line = .empty
                return .end
            case .tooLong(let prefix):
                lineNumber = reader.lineNumber
                line = prefix
                return .rejected(.lineTooLong)
            case .line(let l):
                lineNumber = reader.lineNumber
                line = l.bytes
                let n = l.count
                guard n > 0 else {
                    blankLines += 1
                    continue
                }
                if n > scratchBuffer.capacity { growScratch(n) }
                switch parse(l) {
                case .reading:
                    reading.line = line
                    return .reading
                case .blank:
                    blankLines += 1
                case .consumed:
                    break
                case .rejected(let reason):
                    return .rejected(reason)
                }
            }
        }
    }

    /// One record held in memory (a Kafka message's payload), parsed as `next` parses a line and
    /// counted as the next line; a trailing newline (or CR LF) is not part of it. `.end` when it
    /// is blank (counted in `blankLines`, as a blank line is). The record's bytes are copied
    /// first (`PaddedBuffer.hold`): the caller's buffer may end at its last byte, and `line` and
    /// the reading's bytes then stay valid until the next call, whatever becomes of the caller's.
    @inline(__always)
    func decode(_ lent: ByteView, maxLength: Int, _ parse: (_ line: PaddedBytes) -> Outcome) -> DecodeStep {
        lineNumber += 1
        var n = lent.count
        if n > 0 && lent[n - 1] == 0x0A { n -= 1 }
        if n > 0 && lent[n - 1] == 0x0D { n -= 1 }
        if n > maxLength {
            line = held.hold(lent[0..<maxLength]).bytes
            return .rejected(.lineTooLong)
        }
        let l = held.hold(lent[0..<n])
        line = l.bytes
        guard n > 0 else {
            blankLines += 1
            return .end
        }
        if n > scratchBuffer.capacity { growScratch(n) }
        switch parse(l) {
        case .reading:
            reading.line = line
            return .reading
        case .blank, .consumed:
            blankLines += 1
            return .end
        case .rejected(let reason):
            return .rejected(reason)
        }
    }

    /// `next(parse)`, but first offers the buffered bytes to `whole`, a parser that finds its own
    /// line's end: it returns the length of a line it decoded as a reading into `reading` when
    /// that line ends in a newline or CR LF within the bytes it was given (-1 for anything else,
    /// having decided nothing), and the line is taken as it is, with no separate search for its end.
    /// Anything `whole` declines goes the usual way.
    @inline(__always)
    func next(whole: (_ buffered: PaddedBytes) -> Int, _ parse: (_ line: PaddedBytes) -> Outcome) -> DecodeStep {
        if let rest = reader.buffered, rest.count > 0 {
            let length = whole(rest)
            if length >= 0 && length <= reader.maxLineLength {
                let l = reader.takeLine(length: length)
                lineNumber = reader.lineNumber
                line = l
                reading.line = l
                return .reading
            }
        }
        return next(parse)
    }

    /// The decoders' fast lane (`drainPlainFixes`): while `whole` decodes the next buffered line
    /// as a plain fix (its length, as for `next(whole:_:)`, the fix in its third argument), the
    /// line counts as read (`reading` is not touched) and the fix goes to `body`; stops at the
    /// first line `whole` declines or when `body` returns false.
    @inline(__always)
    func drainFixes(_ whole: (_ buffered: PaddedBytes, _ fix: inout PlainFix) -> Int,
                    _ body: (_ t: Double, _ device: ByteView, _ latitude: Double,
                             _ longitude: Double, _ accuracy: Double) -> Bool) {
        // Held by `self` throughout; unretained, as the optimizer otherwise retains and releases
        // it for every line.
        let ahead = self.ahead.map { Unmanaged.passUnretained($0) }
        while let rest = reader.buffered, rest.count > 0 {
            // A run of lines a helper decoded (`takeRun`); the first line of a chunk, and any
            // line past the run, the way below.
            if let ahead, let run = ahead._withUnsafeGuaranteedRef({ $0.run(at: reader.consumed) }) {
                let (taken, going) = takeRun(run, of: ahead, body)
                if !going { return }
                if taken > 0 { continue }
            }
            // A fresh one for each line: a line without an accuracy leaves it NaN.
            var fix = PlainFix()
            var length = -1
            if let ahead {
                let offset = reader.consumed
                length = ahead._withUnsafeGuaranteedRef { $0.fix(at: offset, in: rest, &fix) }
            }
            if length < 0 { length = whole(rest, &fix) }
            guard length >= 0 && length <= reader.maxLineLength else { return }
            let l = reader.takeLine(length: length)
            lineNumber = reader.lineNumber
            line = l
            let device = rest.view(from: fix.deviceStart, count: fix.deviceCount)
            if !body(fix.t, device, fix.latitude, fix.longitude, fix.accuracy) { return }
        }
    }

    /// The lines of `run` (`DecodeAhead.run`), one after another as long as each is where the
    /// last one ended, each fix to `body`: how many were taken, and false if `body` said stop.
    /// Not inlined: `drainFixes` inlines the format's grammar, and the optimizer stops inlining
    /// into a function past a size.
    @inline(never)
    private func takeRun(_ run: DecodeAhead.Run, of ahead: Unmanaged<DecodeAhead>,
                         _ body: (_ t: Double, _ device: ByteView, _ latitude: Double,
                                  _ longitude: Double, _ accuracy: Double) -> Bool) -> (taken: Int, going: Bool) {
        var taken = 0
        var going = true
        for e in run {
            guard e.offset == reader.consumed, let l = reader.takeLineIfWhole(length: Int(e.length)) else { break }
            taken += 1
            lineNumber = reader.lineNumber
            line = l
            let start = Int(e.deviceStart)
            if !body(e.t, l[start..<(start + Int(e.deviceCount))], e.latitude, e.longitude, e.accuracy) {
                going = false
                break
            }
        }
        ahead._withUnsafeGuaranteedRef { $0.took(taken) }
        return (taken, going)
    }

    /// Plain fixes decoded ahead by other threads (`decodeAhead`), or nil.
    @exclusivity(unchecked) private var ahead: DecodeAhead?

    /// Has threads with nothing else to do (`spare`) decode plain lines ahead of this reader
    /// with copies of `grammar` (`DecodeAhead`), which `drainFixes` then looks up; only for a
    /// mapped file, and once.
    func decodeAhead<Parser: PlainLineParser>(with grammar: Parser, on spare: SpareWork,
                                              chunkBytes: Int = 64 << 10, ring: Int = 16) {
        guard ahead == nil, let file = reader.mappedFile else { return }
        let ahead = DecodeAhead(file: file.bytes, at: file.base, of: reader, maxLineLength: reader.maxLineLength, from: reader.consumed,
                                parser: grammar, chunkBytes: chunkBytes, ring: ring)
        self.ahead = ahead
        spare.post { ahead.work() }
    }

    /// Lines decoded ahead, and those whose fix the lane took from there (`DecodeAhead.counts`).
    var decodedAhead: (decoded: Int, lookedUp: Int) { ahead?.counts ?? (0, 0) }

    @inline(never)
    private func growScratch(_ n: Int) {
        scratchBuffer.grow(to: n)
    }

    /// Takes a fix the parser has already validated (`NDJSONDecoder`'s plain-line path).
    @inline(__always)
    func acceptFix(t: Double, device: ByteView, latitude: Double, longitude: Double, accuracy: Double) {
        reading.setFix(t: t, device: device, latitude: latitude, longitude: longitude, accuracy: accuracy)
    }

    /// Validates a record's fields into `reading`; returns why it is rejected, if it is.
    @inline(__always)
    func accept(_ f: RecordFields) -> RejectReason? {
        f.validate(into: &reading, defaultDevice: defaultDevice)
    }
}

/// What the decoders' plain-line parsers read: a fix whose device is `deviceCount` bytes at
/// `deviceStart` in the line.
struct PlainFix {
    var t = 0.0, latitude = 0.0, longitude = 0.0, accuracy = Double.nan
    var deviceStart = 0, deviceCount = 0
}
