import GeotriggerCore

/// Fixes read ahead of a merge, a few per source, in one table laid out by turn
/// (`MergedReadings`).
///
/// Why: a merge of one log per receiver takes a fix from each of thousands of sources in turn, so
/// every fix had its source's state and next lines come back from memory, on pages the TLB had
/// long let go of. Read `depth` fixes at a time, a source's state and lines are fetched once for
/// several fixes; the merge then takes them from a table whose row j holds every source's j-th
/// fix ahead, so sources taken in turn (every receiver with a fix each second) read it in order.
///
/// Only fixes whose reading stays valid while its decoder reads on are kept: those of an NMEA
/// log mapped whole (its lines are the mapping's, its device the decoder's). A step that is not
/// a fix is left in its decoder, which reads no further until the fixes before it are taken.
///
/// A struct of pointers, not a class: the merge reaches it at every step, and a class reference
/// was retained and released there. Its owner frees it once (`deallocate()`).
struct Lookahead {
    /// A fix read ahead, and where its decoder stood after it: one cache line, the line's and
    /// the place's numbers kept narrow (a fix whose numbers do not fit is not read ahead,
    /// `init?`). The device is the source's, the same for all its fixes (`device(_:)`).
    struct Slot {
        var t: Double
        var latitude: Double
        var longitude: Double
        var accuracy: Double
        /// The reading's line, which is also the line a rejection of it reports.
        private var lineStart: UnsafeRawPointer?
        private var offset: Int
        var lineNumber: Int
        private var lineLength: UInt32
        /// The decoder's line count after the fix, less the fix's line number.
        private var linesAfter: UInt32

        init?(t: Double, latitude: Double, longitude: Double, accuracy: Double, line: ByteView, lineNumber: Int,
              position: InputPosition) {
            guard let length = UInt32(exactly: line.count),
                  let after = UInt32(exactly: position.line - lineNumber) else { return nil }
            self.t = t
            self.latitude = latitude
            self.longitude = longitude
            self.accuracy = accuracy
            lineStart = line.unsafeBytes.baseAddress
            offset = position.offset
            self.lineNumber = lineNumber
            lineLength = length
            linesAfter = after
        }

        var line: ByteView { ByteView(unsafe: UnsafeRawBufferPointer(start: lineStart, count: Int(lineLength))) }
        var position: InputPosition { InputPosition(offset: offset, line: lineNumber + Int(linesAfter)) }
    }

    /// Fixes read ahead per source at most: each time a source is read, its state, its reader's
    /// and its next lines come back from memory once for this many fixes, at the cost of a slot
    /// (64 bytes) each, 2 KiB a source (20 MiB for 10,000 logs).
    static let depth = 32
    /// Bytes of a source's log asked of the cache before it is read ahead: the first 3.5 KiB of
    /// the `depth` cycles read (16 cycles of a receiver that writes GGA, GSA and RMC, about 220
    /// bytes each). A cycle's lines were not enough: a merge reads a log faster than memory
    /// brings in the lines the processor's own prefetcher asks for after them. Asking for the
    /// whole 7 KiB at once waited on the cache's queue of misses instead.
    static let prefetchBytes = 56 * 64

    private let sources: Int
    /// Row j, column i: source i's fix ahead in row j (rows taken round, from `first[i]`).
    private let slots: UnsafeMutablePointer<Slot>
    private let devices: UnsafeMutablePointer<ByteView>
    private let first: UnsafeMutablePointer<Int32>
    private let counts: UnsafeMutablePointer<Int32>
    /// Per source, the step its decoder holds once its fixes ahead are taken (nil: none, the
    /// decoder is read again).
    private let held: UnsafeMutablePointer<DecodeStep?>

    init(sources: Int) {
        self.sources = sources
        slots = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<Slot>.stride * sources * Self.depth,
                                                 alignment: 64).bindMemory(to: Slot.self, capacity: sources * Self.depth)
        devices = .allocate(capacity: sources)
        first = .allocate(capacity: sources)
        first.initialize(repeating: 0, count: sources)
        counts = .allocate(capacity: sources)
        counts.initialize(repeating: 0, count: sources)
        held = .allocate(capacity: sources)
        held.initialize(repeating: nil, count: sources)
    }

    /// Frees the table (its owner's `deinit`). Slots and steps are trivial values: nothing to
    /// deinitialize.
    func deallocate() {
        slots.deallocate()
        devices.deallocate()
        first.deallocate()
        counts.deallocate()
        held.deallocate()
    }

    @inline(__always)
    private func index(_ i: Int, _ k: Int) -> Int {
        precondition(i >= 0 && i < sources && k >= 0 && k < Self.depth)
        let row = Int(first[i]) &+ k
        return (row < Self.depth ? row : row &- Self.depth) &* sources &+ i
    }

    /// How many fixes of source `i` are ahead.
    @inline(__always)
    func count(_ i: Int) -> Int { Int(counts[i]) }

    /// Source `i`'s first fix ahead (`count(i)` must not be 0).
    @inline(__always)
    func front(_ i: Int) -> Slot {
        precondition(counts[i] > 0)
        return slots[index(i, 0)]
    }

    /// Takes source `i`'s first fix ahead.
    @inline(__always)
    func dropFirst(_ i: Int) {
        precondition(counts[i] > 0)
        counts[i] &-= 1
        first[i] = first[i] &+ 1 == Int32(Self.depth) ? 0 : first[i] &+ 1
    }

    /// Adds a fix of source `i`, of `device`, after those ahead (fewer than `depth`).
    @inline(__always)
    func append(_ i: Int, _ slot: Slot, device: ByteView) {
        precondition(counts[i] < Int32(Self.depth))
        (slots + index(i, Int(counts[i]))).initialize(to: slot)
        counts[i] &+= 1
        devices[i] = device
    }

    /// Source `i`'s device: every fix of an NMEA log has its decoder's.
    @inline(__always)
    func device(_ i: Int) -> ByteView {
        precondition(i >= 0 && i < sources)
        return devices[i]
    }

    /// The step source `i`'s decoder holds, taken (nil if none).
    @inline(__always)
    func takeHeld(_ i: Int) -> DecodeStep? {
        precondition(i >= 0 && i < sources)
        guard let step = held[i] else { return nil }
        held[i] = nil
        return step
    }

    @inline(__always)
    func hold(_ i: Int, _ step: DecodeStep) {
        precondition(i >= 0 && i < sources)
        held[i] = step
    }
}
