import GeotriggerCore
import GeotriggerRuntime
/// Merges several decoders into one stream in time order.
///
/// Each input is assumed to be in time order on its own; readings come out in order of `t`, ties
/// going to the earlier input. A rejected record is passed through as soon as it is read, with its
/// source's name and line. Like the decoders, the merge is pulled: `next()` advances it, and the
/// reading in `current` stays valid until the next call (it lives in its source's buffers).
public final class MergedReadings {
    /// One result of `next()`: what happened and the index (into `sources`) of the input it came
    /// from (meaningless for `.end`).
    public struct Step: Equatable, Sendable {
        public var step: DecodeStep
        public var source: Int
        public init(step: DecodeStep, source: Int) {
            self.step = step
            self.source = source
        }
    }

    public let sources: [any ReadingDecoder]
    /// The sources whose `current` holds a reading not yet returned, earliest first. (A `let`: a
    /// class held in a `var` is retained and released around each call made on it.)
    private let heads: SourceHeap
    /// Sources before this one have been asked for their first reading (in input order, before
    /// any reading is returned).
    @exclusivity(unchecked) private var polled = 0
    /// The reading returned last was `heads.top`'s; that source is advanced on the next call.
    @exclusivity(unchecked) private var consumed = false
    @exclusivity(unchecked) private var lastSource = 0
    /// Per source, where it stood when its last step was returned: a head read but not yet
    /// returned is read again by a resumed run.
    @exclusivity(unchecked) private var returned: [InputPosition]

    /// A source's rejected record met by the plain lane while advancing it, returned by the next
    /// `next()` (the source still without a head, asked again after that).
    @exclusivity(unchecked) private var pending: (reason: RejectReason, source: Int)?

    /// The source when there is only one: nothing to merge, so `next` passes its steps through.
    private let single: (any ReadingDecoder)?
    @exclusivity(unchecked) private var singleEnded = false

    /// The sources again, typed, when all are of one decoder type (one NMEA log per receiver, one
    /// NDJSON file per device): the plain lane then calls them directly, not through the protocol.
    private let typed: TypedSourceList

    /// Per source, where its next record will be read from (`CacheHint`), noted when it last read.
    @exclusivity(unchecked) private var hints: [CacheHint]

    /// Fixes read ahead of the merge (`Lookahead`), when every source is an NMEA log mapped whole
    /// (`readsAhead`): a source's head is then its first fix ahead, if it has one, else its
    /// decoder's step.
    private let ahead: Lookahead
    let readsAhead: Bool
    /// Bytes of a source's input read at its turn (`CacheHint.prefetch`): a record's, or, read
    /// ahead, `Lookahead.prefetchBytes`.
    private let turnBytes: Int

    public init(_ sources: [any ReadingDecoder]) {
        self.sources = sources
        typed = TypedSourceList(sources)
        hints = Array(repeating: CacheHint(), count: sources.count)
        single = sources.count == 1 ? sources[0] : nil
        heads = SourceHeap(sources: sources.count)
        returned = Array(repeating: .start, count: sources.count)
        let logs = sources.count > 1 ? sources as? [NMEADecoder] : nil
        readsAhead = logs?.allSatisfy(\.linesStay) ?? false
        ahead = Lookahead(sources: readsAhead ? sources.count : 0)
        turnBytes = readsAhead ? Lookahead.prefetchBytes : CacheHint.recordBytes
    }

    deinit { ahead.deallocate() }

    /// Moves source `i` on to its next step: its next fix ahead, if it has one; else its decoder's
    /// step, and when that is a fix, the fixes after it read ahead until `Lookahead.depth` or a
    /// step that is not one (left in the decoder, for its turn). When the decoder was read and
    /// gave a reading, notes where it will read next (`hints`): only then has that moved, and a
    /// fix taken from the table leaves the decoder, out of the cache by now, untouched.
    @inline(__always)
    private func advance<S: MergeSources>(_ i: Int, _ s: S) -> DecodeStep {
        if readsAhead, ahead.count(i) > 0 {
            ahead.dropFirst(i)
            if ahead.count(i) > 0 { return .reading }
            if let step = ahead.takeHeld(i) { return step }
        }
        let step = s.next(i)
        guard step == .reading else { return step }
        if readsAhead, s.current(i).kind == .fix, let first = slot(i, s) {
            ahead.append(i, first, device: s.current(i).device)
            while ahead.count(i) < Lookahead.depth {
                let next = s.next(i)
                guard next == .reading, s.current(i).kind == .fix, let fix = slot(i, s) else {
                    ahead.hold(i, next)
                    break
                }
                ahead.append(i, fix, device: s.current(i).device)
            }
        }
        hints[i] = s.cacheHint(i)
        return .reading
    }

    /// Source `i`'s fix, as its decoder has it, with where the decoder stands after it (nil if
    /// its numbers do not fit a slot: it is then taken from the decoder).
    @inline(__always)
    private func slot<S: MergeSources>(_ i: Int, _ s: S) -> Lookahead.Slot? {
        let r = s.current(i)
        return Lookahead.Slot(t: r.t, latitude: r.latitude, longitude: r.longitude, accuracy: r.accuracy,
                              line: r.line, lineNumber: s.lineNumber(i), position: s.position(i))
    }

    /// Source `i`'s first fix ahead, if it reads ahead and has one.
    @inline(__always)
    private func fixAhead(_ i: Int) -> Lookahead.Slot? {
        readsAhead && ahead.count(i) > 0 ? ahead.front(i) : nil
    }

    /// Source `i`'s head: its first fix ahead, else its decoder's reading.
    @inline(__always)
    private func head<S: MergeSources>(_ i: Int, _ s: S) -> Reading {
        guard let f = fixAhead(i) else { return s.current(i) }
        return .fix(t: f.t, device: ahead.device(i), latitude: f.latitude, longitude: f.longitude, accuracy: f.accuracy,
                    line: f.line)
    }

    /// Where source `i` stands after its head.
    @inline(__always)
    private func position<S: MergeSources>(_ i: Int, _ s: S) -> InputPosition {
        fixAhead(i)?.position ?? s.position(i)
    }

    /// Whether source `i`'s decoder is read at its next step (none of its fixes is ahead but its
    /// head): its state and lines are then worth loading into the cache before its turn.
    @inline(__always)
    private func readsNext(_ i: Int) -> Bool { !readsAhead || ahead.count(i) <= 1 }

    /// Moves the top source (whose reading was returned) on to its next: its new head into
    /// place, or out at its end; a rejected record is returned, the source then still without a
    /// head (`consumed` stays set, so it is asked again). With a new head, has the cache load what
    /// the sources after the top will read (their `hints`), a step or two before they do.
    @inline(__always)
    private func advanceTop<S: MergeSources>(_ s: S) -> RejectReason? {
        let i = heads.top
        switch advance(i, s) {
        case .reading:
            heads.replaceTop(at: head(i, s).t)
            let (a, b) = heads.following
            if a >= 0 && readsNext(a) { hints[a].prefetch(bytes: turnBytes) }
            if b >= 0 && readsNext(b) { hints[b].prefetch(bytes: turnBytes) }
        case .rejected(let reason):
            return reason
        case .end:
            heads.removeTop()
        }
        consumed = false
        return nil
    }

    public func next() -> Step {
        if let single {
            if singleEnded { return Step(step: .end, source: -1) }
            let step = single.next()
            if step == .end {
                singleEnded = true
                return Step(step: .end, source: -1)
            }
            return Step(step: step, source: 0)
        }
        if let p = pending {
            pending = nil
            return rejected(p.reason, from: p.source)
        }
        // Each source's first reading, in input order.
        if polled < sources.count {
            let step: Step?
            if let nmea = typed.nmea {
                step = poll(nmea)
            } else if let ndjson = typed.ndjson {
                step = poll(ndjson)
            } else {
                step = poll(MixedSources(all: sources))
            }
            if let step { return step }
        }
        // The source of the last reading returned moves on to its next.
        if consumed {
            let i = heads.top
            // Still without a head after a reject: asked again on the next call.
            if let reason = advanceTop(MixedSources(all: sources)) { return rejected(reason, from: i) }
        }
        guard !heads.isEmpty else { return Step(step: .end, source: -1) }
        let best = heads.top
        consumed = true
        lastSource = best
        returned[best] = position(best, MixedSources(all: sources))
        return Step(step: .reading, source: best)
    }

    /// Asks each source not yet asked for its first reading (`polled` on), in input order, and
    /// puts those that have one into `heads`; stops at a rejected record, returned. Sources of one
    /// decoder type are called directly: read ahead, a log's first fixes are many calls each, and
    /// through the protocol every call retained and released a decoder the cache had let go of.
    private func poll<S: MergeSources>(_ s: S) -> Step? {
        while polled < sources.count {
            let i = polled
            switch advance(i, s) {
            case .reading:
                heads.insert(i, at: head(i, s).t)
            case .rejected(let reason):
                return rejected(reason, from: i)
            case .end:
                break
            }
            polled += 1
        }
        return nil
    }

    /// A rejected record of source `i`, passed through as it is read.
    private func rejected(_ reason: RejectReason, from i: Int) -> Step {
        lastSource = i
        returned[i] = sources[i].position
        return Step(step: .rejected(reason), source: i)
    }

    /// The source of the last step (reading or rejected).
    /// (Its `lineNumber` may be past the last step's, read ahead: the merge's own says where that
    /// step was, and `place` both.)
    public var currentSource: any ReadingDecoder { sources[lastSource] }
    /// Where the last step was: `FILE:LINE`, as rejections are reported.
    public var place: String { "\(sourceName):\(lineNumber)" }
    /// The reading of the last `.reading` step.
    public var current: Reading { head(lastSource, MixedSources(all: sources)) }
    /// The line of the last step: a rejected record's, or the reading's (should the engine
    /// reject it).
    public var rejectedLine: ByteView { fixAhead(lastSource)?.line ?? sources[lastSource].rejectedLine }
    /// The line number of the last step, in its source.
    public var lineNumber: Int { fixAhead(lastSource)?.lineNumber ?? sources[lastSource].lineNumber }
    public var sourceName: String { sources[lastSource].sourceName }
    /// Bytes consumed over all sources.
    public var bytesRead: Int { sources.reduce(0) { $0 + $1.bytesRead } }
    /// Each source's place after the last record the merge returned (`ReadingDecoder.position`).
    public var positions: [InputPosition] {
        if let single { return [single.position] }
        return returned
    }

    /// Moves every source on to its place in `positions` (a resumed run; nothing read yet).
    /// Returns the index of the first source that ends before its place, if one does.
    public func resume(at positions: [InputPosition]) -> Int? {
        precondition(positions.count == sources.count)
        for (i, p) in positions.enumerated() {
            if !sources[i].resume(at: p) { return i }
            returned[i] = p
        }
        return nil
    }

    /// Track points skipped over all sources (`ReadingDecoder.untimedPoints`).
    public var untimedPoints: Int { sources.reduce(0) { $0 + $1.untimedPoints } }
    /// `ReadingDecoder.whenIdle` for every source.
    public func whenIdle(_ body: @escaping () -> Void) {
        for s in sources { s.whenIdle(body) }
    }

    /// Lines passed over by kind, over all sources (`ReadingDecoder.passedOver`).
    public var passedOver: [String: Int] {
        sources.reduce(into: [:]) { all, s in all.merge(s.passedOver, uniquingKeysWith: +) }
    }
    /// Has the one source's plain lane decoded ahead by threads with nothing else to do
    /// (`DecodesAhead`), where it can (not with several sources, another format, or an input
    /// that is not a mapped file).
    package func decodeAhead(on spare: SpareWork) {
        (single as? DecodesAhead)?.decodeAhead(on: spare)
    }

    /// The plain lane (`ReadingDecoder.drainPlainFixes`): the one source's own; with several, their
    /// fixes in the merge's order while the next reading is a fix (each source's first readings,
    /// any other reading and a rejected record come through `next()`).
    public func drainPlainFixes(_ body: (_ t: Double, _ device: ByteView, _ latitude: Double,
                                         _ longitude: Double, _ accuracy: Double) -> Bool) {
        if let single {
            if !singleEnded {
                lastSource = 0
                single.drainPlainFixes(body)
            }
            return
        }
        guard polled == sources.count, pending == nil else { return }
        if let nmea = typed.nmea {
            drain(nmea, body)
        } else if let ndjson = typed.ndjson {
            drain(ndjson, body)
        } else {
            drain(MixedSources(all: sources), body)
        }
    }

    /// The lane over several sources, written once for every kind of `MergeSources`.
    @inline(__always)
    private func drain<S: MergeSources>(_ s: S, _ body: (_ t: Double, _ device: ByteView, _ latitude: Double,
                                                         _ longitude: Double, _ accuracy: Double) -> Bool) {
        while true {
            if consumed, let reason = advanceTop(s) {
                pending = (reason, heads.top)
                return
            }
            guard !heads.isEmpty else { return }
            let best = heads.top
            let r = head(best, s)
            guard r.kind == .fix else { return }
            consumed = true
            lastSource = best
            returned[best] = position(best, s)
            if !body(r.t, r.device, r.latitude, r.longitude, r.accuracy) { return }
        }
    }

    /// The I/O errors that ended inputs early, as `(source name, message)`.
    public var ioErrors: [(source: String, message: String)] {
        sources.compactMap { s in s.ioError.map { (s.sourceName, $0) } }
    }
}

/// `MergedReadings`' sources, typed where they are all of one decoder type (neither: a mix).
///
/// Two optionals rather than an enum with a case for each: such an enum keeps its case in spare
/// bits of the array's pointer, where LeakSanitizer sees no pointer, and a replay left to the
/// process's exit (the command line's `LeftForExit`) then had its list reported as leaked.
private struct TypedSourceList {
    let nmea: TypedSources<NMEADecoder>?
    let ndjson: TypedSources<NDJSONDecoder>?

    init(_ sources: [any ReadingDecoder]) {
        let nmea = sources as? [NMEADecoder]
        self.nmea = nmea.map { TypedSources($0) }
        ndjson = nmea == nil ? (sources as? [NDJSONDecoder]).map { TypedSources($0) } : nil
    }
}

/// What the merge's plain lane asks of source `i`: one protocol, so that the lane is written once
/// and specialized both for sources of one decoder type (whose calls inline) and for a mix
/// (called through `ReadingDecoder`).
private protocol MergeSources {
    func next(_ i: Int) -> DecodeStep
    func current(_ i: Int) -> Reading
    func position(_ i: Int) -> InputPosition
    func lineNumber(_ i: Int) -> Int
    func cacheHint(_ i: Int) -> CacheHint
}

/// Sources of one type, called without a retain and a release each: the merge's `sources` keeps
/// every one alive for as long as the lane runs. (Each release wrote to a decoder the cache had
/// let go of since its last turn, at every reading.)
private struct TypedSources<D: ReadingDecoder>: MergeSources {
    let all: [Unmanaged<D>]
    init(_ decoders: [D]) { all = decoders.map { Unmanaged.passUnretained($0) } }
    @inline(__always) func next(_ i: Int) -> DecodeStep { all[i]._withUnsafeGuaranteedRef { $0.next() } }
    @inline(__always) func current(_ i: Int) -> Reading { all[i]._withUnsafeGuaranteedRef { $0.current } }
    @inline(__always) func position(_ i: Int) -> InputPosition { all[i]._withUnsafeGuaranteedRef { $0.position } }
    @inline(__always) func lineNumber(_ i: Int) -> Int { all[i]._withUnsafeGuaranteedRef { $0.lineNumber } }
    @inline(__always) func cacheHint(_ i: Int) -> CacheHint { all[i]._withUnsafeGuaranteedRef { $0.cacheHint } }
}

private struct MixedSources: MergeSources {
    let all: [any ReadingDecoder]
    @inline(__always) func next(_ i: Int) -> DecodeStep { all[i].next() }
    @inline(__always) func current(_ i: Int) -> Reading { all[i].current }
    @inline(__always) func position(_ i: Int) -> InputPosition { all[i].position }
    @inline(__always) func lineNumber(_ i: Int) -> Int { all[i].lineNumber }
    @inline(__always) func cacheHint(_ i: Int) -> CacheHint { all[i].cacheHint }
}
