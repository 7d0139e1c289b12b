import GeotriggerCore
import GeotriggerMonitoring
import GeotriggerFormats

/// The one place a record meets the engine, whatever source it came from: the replay's decoders
/// on one thread, or a `--jobs` job's batches. Source → applier → engine → output: a new source
/// decodes records and hands them here; a new sink is an `EngineOutput`.
///
/// It dispatches each record by kind (fix, beacon sighting, control record, a clock tick from
/// another job), and takes plain fixes through the engine's batches of distinct devices where
/// the engine allows (`Engine.batchesFixes`). The events are those of one record at a time: a
/// batch is applied before anything else reaches the engine (any record but a fix, a fix that
/// cannot join it, `flush`), and whether to batch is asked again after each such record.
package final class ReadingApplier {
    package let engine: Engine

    /// What the applier made of the records it was given, for the summary.
    package struct Counts {
        /// Fixes applied (those ignored for their accuracy included) and, of them, ignored.
        package var fixes = 0
        package var ignoredForAccuracy = 0
        /// Sightings applied and, of them, those no region matches.
        package var sightings = 0
        package var sightingsUnmatched = 0
        package var controls = 0
    }
    @exclusivity(unchecked) package private(set) var counts = Counts()

    /// The plain lane's state while it runs (`takePlainFixes`), here so that its closure reaches
    /// it through `self` without a box.
    @exclusivity(unchecked) private var lane = Lane()
    @exclusivity(unchecked) private var laneBudget = 0
    /// Whether fixes join the engine's batch now.
    @exclusivity(unchecked) private var batching: Bool
    /// True while the batch is applied: the events then belong to the batched fixes, not to the
    /// record being handed in (`replay --jobs` tags each with its own fix, `consume` with its
    /// offset). Read through a getter: those ask per event from other modules, where a stored
    /// property's read is checked for exclusivity whatever its attribute.
    package var applyingBatch: Bool { batchApplying }
    @exclusivity(unchecked) private var batchApplying = false

    package init(engine: Engine) {
        self.engine = engine
        batching = engine.batchesFixes
    }

    /// What became of a fix.
    package enum FixOutcome {
        /// Waiting in the batch: its events come when the batch is applied.
        case batched
        /// Applied at once (its accuracy may have kept it from changing any state).
        case applied
        /// Older than its device's previous reading: nothing changed.
        case rejected(RejectReason)
    }

    /// What became of a reading of any kind (`apply`).
    package enum Outcome {
        /// A fix waiting in the batch, as `device`: its events come when the batch is applied.
        case batched(device: Int32)
        /// Applied (a fix's accuracy may have kept it from changing any state).
        case applied
        /// Rejected, and what was wrong when there is more to say than the reason.
        case rejected(RejectReason, String?)
    }

    /// The one way a decoded reading reaches the engine, for `replay`, its `--jobs` and
    /// `consume`: a region record to the regions, anything else to its device, interned here.
    @inline(__always)
    package func apply(_ r: Reading) -> Outcome {
        if r.kind == .control && r.op.isRegionChange {
            guard let (reason, detail) = regionRecord(op: r.op, t: r.t, line: r.line) else { return .applied }
            return .rejected(reason, detail)
        }
        return apply(r, device: device(r.device))
    }

    /// A reading of device `d` (interned already: a `--jobs` job's readings come with their id),
    /// dispatched by kind. A region record has no device: use `apply(_:)`.
    @inline(__always)
    package func apply(_ r: Reading, device d: Int32) -> Outcome {
        switch r.kind {
        case .fix:
            switch fix(device: d, t: r.t, at: Coordinate(latitude: r.latitude, longitude: r.longitude), accuracy: r.accuracy) {
            case .batched: return .batched(device: d)
            case .applied: return .applied
            case .rejected(let reason): return .rejected(reason, nil)
            }
        case .sighting:
            guard let reason = sighting(device: d, t: r.t, beacon: r.beacon, rssi: r.rssi, tx: r.tx) else { return .applied }
            return .rejected(reason, nil)
        case .control:
            guard let (reason, detail) = control(device: d, t: r.t, op: r.op, line: r.line) else { return .applied }
            return .rejected(reason, detail)
        }
    }

    /// The device's id, interned on first sight (no allocation for a known device).
    @inline(__always)
    package func device(_ name: ByteView) -> Int32 { engine.device(name) }

    @inline(__always)
    package func fix(device d: Int32, t: Double, at p: Coordinate, accuracy: Double) -> FixOutcome {
        if batching {
            if engine.batchAppend(device: d, t: t, at: p, accuracy: accuracy) { return .batched }
            flush()
            if engine.batchAppend(device: d, t: t, at: p, accuracy: accuracy) { return .batched }
            // Older than its device's last reading: rejected on its own, below.
        }
        switch engine.fix(device: d, t: t, at: p, accuracy: accuracy) {
        case .applied:
            counts.fixes += 1
            return .applied
        case .ignoredForAccuracy:
            counts.fixes += 1
            counts.ignoredForAccuracy += 1
            return .applied
        case .rejected(let reason):
            return .rejected(reason)
        }
    }

    /// A beacon sighting (RSSI in dBm; `tx` NaN when absent); the reason when it is rejected.
    package func sighting(device d: Int32, t: Double, beacon: BeaconID, rssi: Double, tx: Double) -> RejectReason? {
        flush()
        defer { batching = engine.batchesFixes }
        switch engine.sighting(device: d, t: t, beacon: beacon, rssi: rssi, tx: tx) {
        case nil:
            return .outOfOrder
        case .applied?:
            counts.sightings += 1
        case .unmatched?:
            counts.sightings += 1
            counts.sightingsUnmatched += 1
        }
        return nil
    }

    /// A control record for the device's notification center (`ControlRecord`), its JSON line
    /// given whole; the reason (and what was wrong) when it is rejected.
    package func control(device d: Int32, t: Double, op: ControlOp, line: ByteView) -> (RejectReason, String?)? {
        flush()
        defer { batching = engine.batchesFixes }
        if let reason = engine.touch(device: d, t: t) { return (reason, nil) }
        if let problem = ControlRecord.apply(op, line: line, t: t, device: d, to: engine.scheduler) {
            return (.badControl, problem)
        }
        counts.controls += 1
        return nil
    }

    /// A device-less region record (`addRegion`, `removeRegion`: `Engine.regionRecord`), its JSON
    /// line given whole; the reason (and what was wrong) when it is rejected. Counted with the
    /// control records.
    package func regionRecord(op: ControlOp, t: Double, line: ByteView) -> (RejectReason, String?)? {
        flush()
        defer { batching = engine.batchesFixes }
        if let problem = engine.regionRecord(op, line: line, t: t) { return (.badControl, problem) }
        counts.controls += 1
        return nil
    }

    /// Another job's reading moved the stream clock to `t` (`Engine.tick`).
    package func tick(to t: Double) {
        flush()
        engine.tick(to: t)
        batching = engine.batchesFixes
    }

    /// Applies the batch, if any: its fixes' events reach the output now.
    @inline(__always)
    package func flush() {
        let n = engine.batchCount
        guard n > 0 else { return }
        batchApplying = true
        counts.ignoredForAccuracy += engine.applyBatch()
        batchApplying = false
        counts.fixes += n
    }

    /// Flushes, then asks again whether fixes may be batched (the caller changed the engine).
    package func resume() {
        flush()
        batching = engine.batchesFixes
    }
}

// MARK: The plain lane

extension ReadingApplier {
    /// How a plain lane ended (`takePlainFixes`).
    package struct Lane {
        /// Fixes taken (batched or applied).
        package var taken = 0
        /// The fix the engine rejected, which stopped the lane (its line is the source's current).
        package var rejected: RejectReason?
    }

    /// Runs of plain fixes from `source`'s read buffer (its plain lane, `drainPlainFixes`)
    /// straight to the engine, without a `Reading` each, until the source has none at hand,
    /// `budget` fixes are taken, one is rejected, or `keepGoing`, asked after a fix applied at
    /// once (not batched), says to stop. One method per source type: the lane's closure is
    /// written here, in the engine's module, so that the per-fix calls into the engine inline.
    package func takePlainFixes(from source: NDJSONDecoder, budget: Int, keepGoing: () -> Bool) -> Lane {
        takePlainFixes(source, budget, keepGoing)
    }

    package func takePlainFixes(from source: CSVDecoder, budget: Int, keepGoing: () -> Bool) -> Lane {
        takePlainFixes(source, budget, keepGoing)
    }

    package func takePlainFixes(from source: MergedReadings, budget: Int, keepGoing: () -> Bool) -> Lane {
        takePlainFixes(source, budget, keepGoing)
    }

    @inline(__always)
    private func takePlainFixes<Source: PlainFixSource>(_ source: Source, _ budget: Int, _ keepGoing: () -> Bool) -> Lane {
        lane = Lane()
        laneBudget = budget
        source.drainPlainFixes { t, name, latitude, longitude, accuracy in
            switch fix(device: device(name), t: t, at: Coordinate(latitude: latitude, longitude: longitude), accuracy: accuracy) {
            case .batched:
                // A write failure is not looked for per batched fix: events are written only as
                // batches are applied, and the caller looks when the lane stops.
                lane.taken += 1
                return lane.taken < laneBudget
            case .applied:
                lane.taken += 1
                return lane.taken < laneBudget && keepGoing()
            case .rejected(let reason):
                lane.rejected = reason
                return false
            }
        }
        return lane
    }
}

/// A source with a plain lane (`ReadingDecoder.drainPlainFixes`), for `takePlainFixes`.
protocol PlainFixSource {
    func drainPlainFixes(_ body: (_ t: Double, _ device: ByteView, _ latitude: Double,
                                  _ longitude: Double, _ accuracy: Double) -> Bool)
}

extension NDJSONDecoder: PlainFixSource {}
extension CSVDecoder: PlainFixSource {}
extension MergedReadings: PlainFixSource {}
