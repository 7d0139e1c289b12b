#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore

/// Splits a file descriptor into lines through one large reusable buffer.
///
/// Lines are views into the buffer, valid until the next call. A line longer than
/// `maxLineLength` is never buffered whole: its first bytes are kept, the rest is skipped up to
/// its newline, and it comes back as `.tooLong`. CRLF endings lose their CR; a last line without a
/// newline is still a line. A UTF-8 byte order mark at the start of the input is dropped.
final class LineReader {
    enum Line {
        case line(PaddedBytes)
        case tooLong(prefix: ByteView)
        /// The input would block (`yieldsIdle`): nothing more is there now.
        case idle
        case end
    }

    /// Called once the input would block (a pipe, a terminal, a socket with nothing more to read
    /// yet), before waiting for it: a live run writes out everything decided so far (SPEC §2,
    /// "Live input"). Never called for a regular file, which never blocks.
    var whenIdle: (() -> Void)?
    /// Whether `next()` returns `.idle` once when the input would block, before `whenIdle` and the
    /// wait: for a decoder whose record ends only when the next one begins (an NMEA cycle), which
    /// then ends it early.
    var yieldsIdle = false
    /// Whether reading may block (not a regular file).
    private let mayBlock: Bool
    /// `.idle` was returned, and no byte has come since.
    private var idled = false

    /// How many leading bytes of an over-long line are kept for reports.
    static let tooLongPrefixLength = 1024
    /// Every `.line` is followed by at least this many readable bytes of the buffer (what comes
    /// next in the input, or zeros, or bytes of earlier lines), so a parser may load 8 bytes at
    /// a time near the line's end, as long as it decides nothing from bytes past it: the
    /// `padding` of the `PaddedBytes` it is handed.
    static let slack = PaddedBuffer.slack
    /// Bytes asked of one `read(2)`. Far less than the buffer (which must hold a maximal line),
    /// so the part of it in use stays in the core's L2 cache beside the engine's state, instead
    /// of each read sweeping a whole mebibyte through it.
    static let readChunk = 64 << 10

    let fd: Int32
    let ownsDescriptor: Bool
    let maxLineLength: Int
    private let buffer: PaddedBuffer
    private let capacity: Int
    private var start = 0
    private var end = 0
    /// Where the search for the next newline resumes (everything in start..<scanned has none).
    private var scanned = 0
    private var eof = false
    private var atInputStart = true
    private let prefix: PaddedBuffer

    /// A stop signal came while waiting for input (`fill`): the input ends at the last whole line.
    private(set) var interrupted = false
    /// One-based number of the line last returned.
    private(set) var lineNumber = 0
    /// Bytes brought into the buffer (all of a mapped file's at once).
    private var readCount = 0
    /// Whether the input is a mapped file (`mapsFile`): its lines then stay where they are, and
    /// valid, for as long as the reader.
    private(set) var mapped = false
    /// The whole input, when it is a mapped file (`DecodeAhead` reads it too): valid while the
    /// reader is.
    var mappedFile: (bytes: PaddedBytes, base: UnsafeRawPointer)? {
        mapped ? (buffer.bytes(from: 0, count: capacity), buffer.address(of: 0)) : nil
    }
    /// Bytes of the input taken so far, for progress: those read, or a mapped file's up to the
    /// next line.
    var bytesRead: Int { mapped ? consumed : readCount }
    private(set) var ioError: String?

    /// `mapsFile`: a regular file is mapped into memory whole (`PaddedBuffer(mapping:size:)`)
    /// instead of read into the buffer, when it can be. For a run of many inputs (one file per
    /// receiver, thousands of them): read, every file's bytes were copied into fresh pages of
    /// its reader's own, a page fault for every four kilobytes of input, and had left the cache
    /// again before their turn came; mapped, they are the kernel's cached pages, never copied.
    init(fd: Int32, ownsDescriptor: Bool, bufferSize: Int = 1 << 20, maxLineLength: Int = 1 << 20,
         mapsFile: Bool = false) {
        self.fd = fd
        self.ownsDescriptor = ownsDescriptor
        self.maxLineLength = max(1, maxLineLength)
        self.prefix = PaddedBuffer(capacity: LineReader.tooLongPrefixLength)
        var st = stat()
        let regular = fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
        mayBlock = fd >= 0 && !regular
        if mapsFile, regular, lseek(fd, 0, SEEK_CUR) == 0, let file = PaddedBuffer(mapping: fd, size: Int(st.st_size)) {
            // The whole input is in the buffer, and nothing more is to be read.
            capacity = file.capacity
            buffer = file
            end = capacity
            readCount = capacity
            eof = true
            mapped = true
        } else {
            // Room for a whole maximal line plus its CR LF (and, first, a byte order mark), so
            // compaction always makes progress.
            capacity = max(bufferSize, self.maxLineLength + 2 + 3)
            buffer = PaddedBuffer(capacity: capacity)
        }
    }

    /// Whether a read would return at once (bytes, the end of the input, or an error).
    private func readable() -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) != 0
    }

    deinit {
        if ownsDescriptor { close(fd) }
    }

    /// Reads more bytes after `end`; returns false at end of input or on error.
    private func fill() -> Bool { fill(yielding: false) == .more }

    private enum Fill { case more, idle, end }

    /// Reads more bytes after `end`, first (where the input would block) returning `.idle` once if
    /// `yielding`, else calling `whenIdle` before waiting.
    private func fill(yielding: Bool) -> Fill {
        if eof { return .end }
        if mayBlock && (whenIdle != nil || yielding) && !readable() {
            if yielding && !idled {
                idled = true
                return .idle
            }
            whenIdle?()
        }
        if start > 0 {
            let live = end - start
            buffer.move(from: start, count: live, to: 0)
            scanned -= start
            end = live
            start = 0
        }
        while true {
            // Within the first chunk's bytes while lines are short, so that a reader touches
            // no more of its buffer than that (thousands of readers, one per file, stay small).
            let room = min(capacity - end, end < LineReader.readChunk ? LineReader.readChunk - end : LineReader.readChunk)
            if room == 0 { return .end }
            let got = buffer.read(fd, at: end, count: room)
            if got > 0 {
                end += got
                readCount += got
                idled = false
                return .more
            }
            if got == 0 {
                eof = true
                return .end
            }
            if errno == EINTR {
                // A stop signal (`StopSignals`) ends the wait for more input, without taking a
                // partial line as the last one: the run checkpoints and stops at the last whole line.
                if StopSignals.requested {
                    interrupted = true
                    return .end
                }
                continue
            }
            ioError = String(cString: strerror(errno))
            eof = true
            return .end
        }
    }

    /// What is read and not yet returned, reading on until it holds `lines` whole lines or the
    /// input ends (or the buffer is full): for telling a format by its content before any line is
    /// taken. Nothing is consumed.
    func peek(lines wanted: Int) -> PaddedBytes {
        while true {
            var found = 0, at = start
            while found < wanted, let nl = buffer.firstIndex(of: 0x0A, in: at..<end) {
                found += 1
                at = nl + 1
            }
            if found >= wanted || end - start >= capacity || !fill() { break }
        }
        return buffer.bytes(from: start, count: end - start)
    }

    /// Where the next line's bytes are in the buffer (a hint for the cache: `CacheHint`).
    var nextBytes: UnsafeRawPointer { buffer.address(of: start) }

    /// Bytes of the input up to the end of the last line returned: where the next one begins.
    var consumed: Int { readCount - (end - start) }

    /// Moves on to `offset` bytes into the input (not before `consumed`), counting `lines` lines
    /// read by then, for a run resumed from a checkpoint: a file is seeked, a stream read and
    /// dropped. Returns false if the input ends before `offset`.
    func skip(to offset: Int, lines: Int) -> Bool {
        precondition(offset >= consumed, "skip(to:) cannot go back")
        let buffered = end - start
        if offset - consumed <= buffered {
            start += offset - consumed
        } else {
            var rest = offset - consumed - buffered
            start = 0
            end = 0
            if lseek(fd, off_t(offset), SEEK_SET) == off_t(offset) {
                readCount = offset
            } else {
                while rest > 0 {
                    let got = buffer.read(fd, at: 0, count: min(rest, capacity))
                    if got < 0 && errno == EINTR && !StopSignals.requested { continue }
                    if got <= 0 { return false }
                    rest -= got
                    readCount += got
                }
            }
            var st = stat()
            if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && Int(st.st_size) < offset { return false }
        }
        scanned = start
        lineNumber = lines
        if offset > 0 { atInputStart = false }
        return true
    }

    func next() -> Line {
        while true {
            if scanned < end, let nlIndex = buffer.firstIndex(of: 0x0A, in: scanned..<end) {
                return emit(upTo: nlIndex, consumed: nlIndex + 1)
            }
            scanned = end
            // +1: a CR before the newline does not count towards the length, nor a byte order mark.
            if end - start - byteOrderMark > maxLineLength + 1 {
                return skipLongLine()
            }
            let filled = fill(yielding: yieldsIdle)
            if filled == .idle { return .idle }
            if filled == .end {
                if start < end && !interrupted {
                    let e = end
                    return emit(upTo: e, consumed: e)
                }
                return .end
            }
        }
    }

    /// The length of a UTF-8 byte order mark at the input's start, still before the first line:
    /// 3 or 0. Not part of the line, as `emit` takes it off, so not counted in its length either.
    private var byteOrderMark: Int {
        atInputStart && end - start >= 3 && buffer[start] == 0xEF && buffer[start + 1] == 0xBB
            && buffer[start + 2] == 0xBF ? 3 : 0
    }

    @inline(__always)
    private func emit(upTo lineEnd: Int, consumed: Int) -> Line {
        var s = start
        var e = lineEnd
        if e > s && buffer[e - 1] == 0x0D { e -= 1 }
        if atInputStart {
            atInputStart = false
            if e - s >= 3 && buffer[s] == 0xEF && buffer[s + 1] == 0xBB && buffer[s + 2] == 0xBF { s += 3 }
        }
        start = consumed
        scanned = consumed
        lineNumber += 1
        if e - s > maxLineLength {
            let kept = min(e - s, LineReader.tooLongPrefixLength)
            prefix.copy(buffer.view(from: s, count: kept), to: 0)
            return .tooLong(prefix: prefix.view(from: 0, count: kept))
        }
        return .line(buffer.bytes(from: s, count: e - s))
    }

    /// The bytes buffered after the last line returned: the next lines, the last one perhaps cut
    /// short by the end of the buffer. For a parser that finds a line's end as it goes and then
    /// takes the line with `takeLine`, instead of searching for the newline first. Followed by
    /// `slack` readable bytes, like a line. Nil before the first line (whose byte order mark
    /// `next` removes).
    @inline(__always)
    var buffered: PaddedBytes? {
        atInputStart ? nil : buffer.bytes(from: start, count: end - start)
    }

    /// Returns the next line, which the caller has found in `buffered`: `length` bytes (at most
    /// `maxLineLength`), then its end, a newline or CR LF (the CR is not part of the line, as with
    /// `next`).
    @inline(__always)
    func takeLine(length: Int) -> ByteView {
        guard let line = takeLineIfWhole(length: length) else { preconditionFailure("takeLine needs a whole line of the buffer") }
        return line
    }

    /// `takeLine(length:)` for a line found by someone else (`DecodeAhead`): nil, taking
    /// nothing, unless the buffered bytes (`buffered`) hold `length` bytes, at most
    /// `maxLineLength`, and then a newline or CR LF.
    @inline(__always)
    func takeLineIfWhole(length: Int) -> ByteView? {
        guard length >= 0 && length <= maxLineLength && !atInputStart else { return nil }
        let e = start + length
        let terminator = e < end && buffer[e] == 0x0A ? 1
            : e + 1 < end && buffer[e] == 0x0D && buffer[e + 1] == 0x0A ? 2 : 0
        guard terminator > 0 else { return nil }
        let s = start
        start = e + terminator
        scanned = start
        lineNumber += 1
        return buffer.view(from: s, count: length)
    }

    /// Keeps the first bytes of the current (over-long) line and discards input up to its newline.
    private func skipLongLine() -> Line {
        let s = start + byteOrderMark
        atInputStart = false
        let kept = min(end - s, LineReader.tooLongPrefixLength)
        prefix.copy(buffer.view(from: s, count: kept), to: 0)
        lineNumber += 1
        start = 0
        end = 0
        scanned = 0
        while fill() {
            if let nlIndex = buffer.firstIndex(of: 0x0A, in: 0..<end) {
                start = nlIndex + 1
                scanned = start
                break
            }
            end = 0
        }
        if eof && start == 0 { end = 0 }
        return .tooLong(prefix: prefix.view(from: 0, count: kept))
    }
}
