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

    /// The source when there is only one: nothing to merge, so `next` passes its steps through.
    private let single: (any ReadingDecoder)?
    @exclusivity(unchecked) private var singleEnded = false

    public init(_ sources: [any ReadingDecoder]) {
        self.sources = sources
        single = sources.count == 1 ? sources[0] : nil
        heads = SourceHeap(sources: sources.count)
        returned = Array(repeating: .start, count: sources.count)
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
            switch sources[i].next() {
            case .reading:
                heads.replaceTop(at: sources[i].current.t)
            case .rejected(let reason):
                // Still without a head: asked again on the next call.
                return rejected(reason, from: i)
            case .end:
                heads.removeTop()
            }
            consumed = false
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
    /// The one source's plain lane (`ReadingDecoder.drainPlainFixes`); with several sources,
    /// none: their readings must be merged by time one at a time.
    public func drainPlainFixes(_ body: (_ t: Double, _ device: ByteView, _ latitude: Double,
                                         _ longitude: Double, _ accuracy: Double) -> Bool) {
        if let single, !singleEnded {
            lastSource = 0
            single.drainPlainFixes(body)
        }
    }
    /// The I/O errors that ended inputs early, as `(source name, message)`.
    public var ioErrors: [(source: String, message: String)] {
        sources.compactMap { s in s.ioError.map { (s.sourceName, $0) } }
    }
}
