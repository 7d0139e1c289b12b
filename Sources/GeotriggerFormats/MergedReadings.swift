import GeotriggerCore
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
    /// The sources whose `current` holds a reading not yet returned, earliest first.
    @exclusivity(unchecked) private var heads: SourceHeap
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

    public init(_ sources: [any ReadingDecoder]) {
        self.sources = sources
        typed = TypedSourceList(sources)
        hints = Array(repeating: CacheHint(), count: sources.count)
        single = sources.count == 1 ? sources[0] : nil
        heads = SourceHeap(sources: sources.count)
        returned = Array(repeating: .start, count: sources.count)
    }

    /// Moves the top source (whose reading was returned) on to its next: its new head into
    /// place, or out at its end; a rejected record is returned, the source then still without a
    /// head (`consumed` stays set, so it is asked again). With a new head, notes where the source
    /// will read from next and has the cache load what the sources after the top will read, a
    /// step or two before they do.
    @inline(__always)
    private func advanceTop<S: MergeSources>(_ s: S) -> RejectReason? {
        let i = heads.top
        switch s.next(i) {
        case .reading:
            heads.replaceTop(at: s.current(i).t)
            hints[i] = s.cacheHint(i)
            let (a, b) = heads.following
            if a >= 0 { hints[a].prefetch() }
            if b >= 0 { hints[b].prefetch() }
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
        while polled < sources.count {
            let i = polled
            switch sources[i].next() {
            case .reading:
                heads.insert(i, at: sources[i].current.t)
            case .rejected(let reason):
                return rejected(reason, from: i)
            case .end:
                break
            }
            polled += 1
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
        returned[best] = sources[best].position
        return Step(step: .reading, source: best)
    }

    /// A rejected record of source `i`, passed through as it is read.
    private func rejected(_ reason: RejectReason, from i: Int) -> Step {
        lastSource = i
        returned[i] = sources[i].position
        return Step(step: .rejected(reason), source: i)
    }

    /// The source of the last step (reading or rejected).
    public var currentSource: any ReadingDecoder { sources[lastSource] }
    /// The reading of the last `.reading` step.
    public var current: Reading { sources[lastSource].current }
    public var rejectedLine: ByteView { sources[lastSource].rejectedLine }
    public var lineNumber: Int { sources[lastSource].lineNumber }
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
        switch typed {
        case .nmea(let typed): drain(typed, body)
        case .ndjson(let typed): drain(typed, body)
        case .mixed: drain(MixedSources(all: sources), body)
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
            let r = s.current(best)
            guard r.kind == .fix else { return }
            consumed = true
            lastSource = best
            returned[best] = s.position(best)
            if !body(r.t, r.device, r.latitude, r.longitude, r.accuracy) { return }
        }
    }

    /// The I/O errors that ended inputs early, as `(source name, message)`.
    public var ioErrors: [(source: String, message: String)] {
        sources.compactMap { s in s.ioError.map { (s.sourceName, $0) } }
    }
}

/// `MergedReadings`' sources, typed where they are all of one decoder type.
private enum TypedSourceList {
    case nmea(TypedSources<NMEADecoder>)
    case ndjson(TypedSources<NDJSONDecoder>)
    case mixed

    init(_ sources: [any ReadingDecoder]) {
        if let all = sources as? [NMEADecoder] {
            self = .nmea(TypedSources(all))
        } else if let all = sources as? [NDJSONDecoder] {
            self = .ndjson(TypedSources(all))
        } else {
            self = .mixed
        }
    }
}

/// What the merge's plain lane asks of source `i`: one protocol, so that the lane is written once
/// and specialized both for sources of one decoder type (whose calls inline) and for a mix
/// (called through `ReadingDecoder`).
private protocol MergeSources {
    func next(_ i: Int) -> DecodeStep
    func current(_ i: Int) -> Reading
    func position(_ i: Int) -> InputPosition
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
    @inline(__always) func cacheHint(_ i: Int) -> CacheHint { all[i]._withUnsafeGuaranteedRef { $0.cacheHint } }
}

private struct MixedSources: MergeSources {
    let all: [any ReadingDecoder]
    @inline(__always) func next(_ i: Int) -> DecodeStep { all[i].next() }
    @inline(__always) func current(_ i: Int) -> Reading { all[i].current }
    @inline(__always) func position(_ i: Int) -> InputPosition { all[i].position }
    @inline(__always) func cacheHint(_ i: Int) -> CacheHint { all[i].cacheHint }
}
