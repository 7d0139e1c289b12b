#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore
import GeotriggerRuntime

/// A format's plain-line grammar as a value (`NDJSONPlainFix`, `CSVPlainRow`): the length of the
/// line at `p[0]` if it is a plain fix ending in a newline or CR LF within `available` bytes,
/// the fix in `fix`, else -1 with nothing decided. A copy decodes the same bytes to the same
/// fix, so other threads can decode lines ahead with copies of the reader's grammar.
protocol PlainLineParser {
    mutating func lineLength(_ p: PaddedBytes, _ available: Int, _ fix: inout PlainFix) -> Int
}

/// A decoder whose plain lane can look its lines up, decoded ahead by threads with nothing
/// else to do (`spare`), where its input is a mapped file (`DecodeAhead`). Records come out
/// exactly as without it.
package protocol DecodesAhead: AnyObject {
    /// `chunkBytes` and `ring` as `DecodeAhead` takes them (tests make them small).
    func decodeAhead(on spare: SpareWork, chunkBytes: Int, ring: Int)
    /// Lines decoded ahead so far, and those whose fix the lane took from there.
    var decodedAhead: (decoded: Int, lookedUp: Int) { get }
}

extension DecodesAhead {
    package func decodeAhead(on spare: SpareWork) { decodeAhead(on: spare, chunkBytes: 64 << 10, ring: 16) }
}

/// Plain fixes of a mapped input decoded ahead of its reader by threads that would otherwise
/// wait (`SpareWork`: the jobs of `replay --jobs`, between their batches), so that the one
/// thread that must see every record in order (it interns devices, orders and routes them)
/// only looks each line's fix up.
///
/// The input is cut into chunks of `chunkBytes`; a chunk holds the lines that begin in it (a
/// line begins after a newline, as `LineReader` splits them). A helper claims the next chunk
/// not yet claimed, fewer than `ring` chunks past the reader's, and decodes each of its lines
/// with its own copy of the grammar (`PlainLineParser.lineLength` over the rest of the file,
/// as the reader's own lane calls it over the rest of its buffer); a line it declines has no
/// entry. The reader, on coming to a chunk nobody has claimed, claims it itself and decodes
/// its lines the usual way; on one still being decoded, it takes the entries the helper has
/// published so far (every 256 lines) and decodes the usual way past them, and the helper,
/// overtaken, stops at its next publication. It never waits for a helper. So a fix looked up here is the one the reader's lane would have decoded from the
/// same bytes, and where there is none, it decodes.
///
/// Only a mapped file (`LineReader`'s `mapsFile`): its bytes are where both sides read them,
/// for as long as this object holds the mapping. `@unchecked Sendable`: the claim state is
/// touched only under `mutex`; a slot's entries are written by the one helper that claimed
/// its chunk (`busy`) and read by the reader only up to the count the helper has published
/// (`published`), both under the mutex. A slot is claimed again only once the reader has left
/// its chunk (a helper claims at most `ring` - 1 chunks past the reader's).
final class DecodeAhead: @unchecked Sendable {
    /// One plain line decoded ahead: where it begins in the input, its length (without its
    /// newline), where the device's bytes are in it, and the fix.
    struct Entry {
        var offset: Int
        var length: Int32
        var deviceStart: Int32
        var deviceCount: Int32
        var t, latitude, longitude, accuracy: Double
    }

    /// A chunk's entries, reused for each chunk that takes its place in the ring: raw memory
    /// with room for the most lines a chunk can begin (a plain line takes at least four bytes
    /// with its newline), never moved, so the reader can use the first entries while the helper
    /// writes the next ones, and its look-up per line retains nothing. Pages never written are
    /// never touched.
    final class Slot {
        let entries: UnsafeMutablePointer<Entry>
        let capacity: Int
        @exclusivity(unchecked) var count = 0

        init(chunkBytes: Int) {
            capacity = chunkBytes / 4 + 1
            entries = .allocate(capacity: capacity)
        }

        deinit { entries.deallocate() }

        @inline(__always)
        func append(_ e: Entry) {
            precondition(count < capacity, "DecodeAhead: more lines than a chunk holds")
            (entries + count).initialize(to: e)
            count += 1
        }
    }

    /// Bytes of input a chunk covers, and how many chunks' entries are held (at least 2): the
    /// reader's and those helpers may decode ahead of it.
    let chunkBytes: Int
    let ring: Int

    /// The mapped input, and its reader, which holds the mapping.
    private let file: PaddedBytes
    /// Where the mapping begins (page-aligned), for `giveBack`.
    private let base: UnsafeRawPointer
    private let owner: AnyObject
    private let chunks: Int
    private let maxLineLength: Int
    /// A chunk's lines decoded into a slot, with a fresh copy of the grammar.
    private let decodeChunk: (_ ahead: DecodeAhead, _ chunk: Int, _ into: Slot) -> Void

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Under `mutex`: the next chunk to claim, the reader's chunk, and per slot the chunk whose
    /// entries it holds (-1: none) and whether a helper is filling it.
    @exclusivity(unchecked) private var nextClaim: Int
    @exclusivity(unchecked) private var readerChunk: Int
    @exclusivity(unchecked) private var done: [Int]
    @exclusivity(unchecked) private var busy: [Bool]
    /// Per slot, how many of its entries the reader may use while its chunk is being decoded.
    @exclusivity(unchecked) private var published: [Int]
    /// Per slot, whether the reader has caught up with the helper decoding its chunk and reads
    /// on by itself: the helper then stops at its next publication, rather than decode lines
    /// the reader has passed.
    @exclusivity(unchecked) private var overtaken: [Bool]
    private let slots: [Slot]

    // The reader's side, its thread's alone.
    /// The chunk the reader is in and its byte range; its entries (nil: the reader claimed it),
    /// how many it may use, whether they are all there, and the next to look at.
    @exclusivity(unchecked) private var current = -1
    @exclusivity(unchecked) private var currentStart = 0, currentEnd = 0
    @exclusivity(unchecked) private var currentEntries: UnsafePointer<Entry>?
    @exclusivity(unchecked) private var currentCount = 0
    @exclusivity(unchecked) private var complete = true
    @exclusivity(unchecked) private var cursor = 0
    /// Lines until the reader looks again whether its chunk's helper has published more.
    @exclusivity(unchecked) private var untilCheck = 0

    /// Lines decoded by helpers (under `mutex`), and those the reader took (the reader's).
    private var linesDecoded = 0
    @exclusivity(unchecked) private(set) var linesLookedUp = 0

    /// `file`: the whole input, mapped by `owner` at `base`; the reader is at `offset`.
    init<Parser: PlainLineParser>(file: PaddedBytes, at base: UnsafeRawPointer, of owner: AnyObject, maxLineLength: Int,
                                  from offset: Int, parser: Parser, chunkBytes: Int = 64 << 10, ring: Int = 16) {
        self.base = base
        let chunkBytes = max(chunkBytes, 1), ring = max(ring, 2)
        self.chunkBytes = chunkBytes
        self.ring = ring
        self.file = file
        self.owner = owner
        chunks = (file.count + chunkBytes - 1) / chunkBytes
        self.maxLineLength = maxLineLength
        nextClaim = offset / chunkBytes
        readerChunk = nextClaim
        done = Array(repeating: -1, count: ring)
        busy = Array(repeating: false, count: ring)
        published = Array(repeating: 0, count: ring)
        overtaken = Array(repeating: false, count: ring)
        slots = (0..<ring).map { _ in Slot(chunkBytes: chunkBytes) }
        decodeChunk = { ahead, chunk, slot in
            var grammar = parser
            ahead.decode(chunk, into: slot, with: &grammar)
        }
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Lines decoded by helpers so far, and those whose fix the reader took from them (asked
    /// on the reader's thread).
    var counts: (decoded: Int, lookedUp: Int) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return (linesDecoded, linesLookedUp)
    }

    // MARK: Helpers

    /// Decodes the next chunk, if one may be claimed: true if it did.
    func work() -> Bool {
        pthread_mutex_lock(mutex)
        let chunk = nextClaim
        let s = chunk % ring
        guard chunk < chunks, chunk < readerChunk + ring, !busy[s] else {
            pthread_mutex_unlock(mutex)
            return false
        }
        nextClaim = chunk + 1
        busy[s] = true
        done[s] = -1
        published[s] = 0
        overtaken[s] = false
        pthread_mutex_unlock(mutex)
        decodeChunk(self, chunk, slots[s])
        pthread_mutex_lock(mutex)
        busy[s] = false
        done[s] = chunk
        published[s] = slots[s].count
        linesDecoded += slots[s].count
        pthread_mutex_unlock(mutex)
        return true
    }

    /// The entries written so far become the reader's to use: every 256 lines, so that a reader
    /// that comes to the chunk while it is being decoded need not decode the same lines. False
    /// when the reader has overtaken this helper: the rest of the chunk is the reader's.
    @inline(never)
    private func publish(_ slot: Slot, chunk: Int) -> Bool {
        pthread_mutex_lock(mutex)
        published[chunk % ring] = slot.count
        let goOn = !overtaken[chunk % ring]
        pthread_mutex_unlock(mutex)
        return goOn
    }

    /// The lines that begin in `chunk`, each offered to `grammar` over the rest of the file.
    @inline(__always)
    private func decode<Parser: PlainLineParser>(_ chunk: Int, into slot: Slot, with grammar: inout Parser) {
        slot.count = 0
        let chunkStart = chunk * chunkBytes
        let size = file.count
        let end = min(chunkStart + chunkBytes, size)
        var s = chunkStart
        if s > 0 {
            guard let newline = file.firstIndex(of: 0x0A, in: (s - 1)..<size) else { return }
            s = newline + 1
        }
        while s < end {
            let rest = file.dropFirst(s)
            var fix = PlainFix()
            let length = grammar.lineLength(rest, rest.count, &fix)
            if length >= 0 && length <= maxLineLength {
                slot.append(Entry(offset: s, length: Int32(length), deviceStart: Int32(fix.deviceStart),
                                          deviceCount: Int32(fix.deviceCount), t: fix.t, latitude: fix.latitude,
                                          longitude: fix.longitude, accuracy: fix.accuracy))
                s += length + rest.lineBreakLength(at: length)
                if slot.count & 255 == 0 && !publish(slot, chunk: chunk) { return }
            } else {
                guard let newline = file.firstIndex(of: 0x0A, in: s..<size) else { return }
                s = newline + 1
            }
        }
    }

    // MARK: The reader

    /// The fix of the line at `offset` (the next line of `rest`, the reader's buffered bytes
    /// from there on) if a helper decoded it: its length, the fix in `fix`; else -1, and the
    /// reader decodes the line itself. Not inlined: the reader's loop inlines the grammar,
    /// and the optimizer stops inlining into a function past a size.
    @inline(never)
    func fix(at offset: Int, in rest: PaddedBytes, _ fix: inout PlainFix) -> Int {
        if offset >= currentEnd || offset < currentStart { enter(offset) }
        guard let entries = currentEntries else { return -1 }
        while cursor < currentCount && entries[cursor].offset < offset { cursor += 1 }
        if cursor == currentCount {
            guard !complete && refresh() else { return -1 }
            while cursor < currentCount && entries[cursor].offset < offset { cursor += 1 }
            guard cursor < currentCount else { return -1 }
        }
        let e = entries[cursor]
        guard e.offset == offset else { return -1 }
        cursor += 1
        let length = Int(e.length)
        // The same bytes the helper read; checked all the same, as `takeLine` requires it.
        guard length < rest.count, rest.lineBreakLength(at: length) > 0 else { return -1 }
        fix.t = e.t
        fix.latitude = e.latitude
        fix.longitude = e.longitude
        fix.accuracy = e.accuracy
        fix.deviceStart = Int(e.deviceStart)
        fix.deviceCount = Int(e.deviceCount)
        linesLookedUp += 1
        return length
    }

    /// The entries of the lines from `offset` on, one after another, while the reader is in a
    /// chunk a helper decoded and the line at `offset` is the next entry: those published so
    /// far, for the reader to take in order without looking each up (`took`). Nil otherwise:
    /// the reader then goes line by line (`fix(at:in:_:)`), which also moves it into the next
    /// chunk and asks for entries published since. Valid until the reader leaves the chunk.
    @inline(__always)
    func run(at offset: Int) -> Run? {
        guard offset >= currentStart && offset < currentEnd, let entries = currentEntries, cursor < currentCount,
              entries[cursor].offset == offset else { return nil }
        return Run(entries: UnsafeBufferPointer(start: entries + cursor, count: currentCount - cursor))
    }

    /// Entries the reader takes in order (`run(at:)`), the raw memory kept in this file.
    struct Run: Sequence {
        fileprivate let entries: UnsafeBufferPointer<Entry>

        @inline(__always)
        func makeIterator() -> UnsafeBufferPointer<Entry>.Iterator { entries.makeIterator() }
    }

    /// The reader took the first `n` entries of the `run` it was given.
    @inline(__always)
    func took(_ n: Int) {
        cursor += n
        linesLookedUp += n
    }

    /// How far the file's pages have been given back (`giveBack`).
    @exclusivity(unchecked) private var givenBack = 0

    /// Gives back the pages of the file more than `keep` bytes behind the reader, every time it
    /// has gone `keep` further: mapped pages once read stay counted in the process's resident
    /// memory (a city's readings file, 80 MB, would be counted whole), though they are the
    /// kernel's cached pages. Given back, they are still the file's: read again, they come
    /// back from the kernel's cache.
    private func giveBack(behind offset: Int) {
        let keep = 1 << 20
        guard offset - givenBack >= 2 * keep else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let end = (offset - keep) / page * page
        guard end > givenBack else { return }
        // A hint: whatever it answers, the bytes stay readable.
        _ = madvise(UnsafeMutableRawPointer(mutating: base + givenBack), end - givenBack, MADV_DONTNEED)
        givenBack = end
    }

    /// The reader comes to the chunk holding `offset`: it claims it if nobody has (and decodes
    /// it itself), or takes its entries as the helper that claimed it publishes them.
    @inline(never)
    private func enter(_ offset: Int) {
        giveBack(behind: offset)
        let chunk = offset / chunkBytes
        current = chunk
        currentStart = chunk * chunkBytes
        currentEnd = currentStart + chunkBytes
        cursor = 0
        currentCount = 0
        untilCheck = 0
        pthread_mutex_lock(mutex)
        readerChunk = max(readerChunk, chunk)
        if nextClaim <= chunk {
            nextClaim = chunk + 1
            currentEntries = nil
        } else {
            let s = chunk % ring
            currentEntries = UnsafePointer(slots[s].entries)
            complete = done[s] == chunk
            // A helper claimed this chunk, so its slot is either done with it or being filled
            // with it (no helper may claim the slot again before the reader leaves the chunk);
            // anything else would be a slot holding none of its entries: none are used.
            currentCount = complete || busy[s] ? published[s] : 0
            if !complete && !busy[s] { complete = true }
        }
        pthread_mutex_unlock(mutex)
    }

    /// More of the reader's chunk's entries, when its helper has published more: looked at
    /// every 16 lines the reader decodes itself. True if there are more.
    @inline(never)
    private func refresh() -> Bool {
        guard untilCheck == 0 else {
            untilCheck -= 1
            return false
        }
        untilCheck = 16
        let before = currentCount
        pthread_mutex_lock(mutex)
        let s = current % ring
        complete = done[s] == current
        currentCount = published[s]
        // Nothing new: the helper is behind this reader, which reads on by itself.
        if currentCount == before && !complete { overtaken[s] = true }
        pthread_mutex_unlock(mutex)
        return currentCount > before
    }
}
