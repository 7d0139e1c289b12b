import GeotriggerCore
import GeotriggerFormats

/// Every rejected record of a run, whichever command read it (`replay`, the `--jobs` merge,
/// `consume`): counted by reason, the first few reported on stderr as `PLACE: reason`, each
/// written to the rejects output, and under `--strict` the end of the run (`reject` returns the
/// message the caller stops with, as its own error).
package final class RejectSink {
    package let strict: Bool
    /// How many are reported one by one on stderr.
    let limit: Int
    let diagnostics: (String) -> Void
    /// `--rejects FILE`, or `consume`'s `GROUP-rejects` topic: one line per rejection,
    /// `PLACE<TAB>reason<TAB>record`, with the record's Kafka key where it had one.
    let output: RecordBuffer?
    /// Rejections by reason (`RejectReason.allCases` order): the summary's and a checkpoint's.
    package var counts = [Int](repeating: 0, count: RejectReason.allCases.count)
    /// Reports written to stderr so far (a checkpoint keeps it, so a resumed run goes on counting).
    package var reported = 0
    /// The line being written, reused.
    private var line: [UInt8] = []

    package init(strict: Bool, limit: Int, output: RecordBuffer?, diagnostics: @escaping (String) -> Void) {
        self.strict = strict
        self.limit = limit
        self.output = output
        self.diagnostics = diagnostics
    }

    package var total: Int { counts.reduce(0, +) }

    package static func message(_ reason: RejectReason, _ detail: String?) -> String {
        detail.map { "\(reason.message): \($0)" } ?? reason.message
    }

    /// Counts one rejection of `reason`.
    package func count(_ reason: RejectReason) {
        counts[RejectReason.allCases.firstIndex(of: reason)!] += 1
    }

    /// A record rejected at `place`: counted; under `--strict` the message to stop with (nothing
    /// is reported: the run's error says it); otherwise reported and nil.
    package func reject(_ reason: RejectReason, detail: String? = nil, place: String, record: ByteView,
                        key: ByteView? = nil) throws -> String? {
        count(reason)
        if strict { return "\(place): \(Self.message(reason, detail))" }
        try report(reason, detail: detail, place: place, record: record, key: key)
        return nil
    }

    /// Reports a rejection counted already (`--jobs` counts in input order and reports in the
    /// merge's): on stderr while under the limit, and to the rejects output.
    package func report(_ reason: RejectReason, detail: String?, place: String, record: ByteView,
                        key: ByteView? = nil) throws {
        if reported < limit {
            reported += 1
            diagnostics("\(place): \(Self.message(reason, detail))\n")
        }
        guard let output else { return }
        line.removeAll(keepingCapacity: true)
        line.append(contentsOf: place.utf8)
        line.append(UInt8(ascii: "\t"))
        line.append(contentsOf: reason.rawValue.utf8)
        line.append(UInt8(ascii: "\t"))
        line.append(contentsOf: record)
        try line.withByteView { try output.appendRecord($0, key: key) }
    }

    /// Writes the reports so far to the rejects output now (a live input that would block).
    package func flush() throws { try output?.flush() }

    /// At the end of a run: how many were not shown on stderr.
    package func finish() {
        if reported < total {
            diagnostics("geotrigger: \(grouped(total - reported)) more rejected records not shown\n")
        }
    }
}
