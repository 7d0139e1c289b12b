import GeotriggerCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerGeometry
import GeotriggerRuntime

// Fixes of distinct devices taken together, each stage over the whole batch (`FixBatch`).
extension Monitor {
    /// Fixes taken in batches of distinct devices (`batchAppend`, `applyBatch`), each stage over
    /// the whole batch before the next, and each stage asking for the lines the next one reads:
    /// the devices' states as they join, their neighbourhoods when the skip tests are done, the
    /// regions due when the positions are, the visit lists and events' lines of the crossings.
    /// One fix at a time, a fix's chain of dependent loads (its state, its neighbourhood, its
    /// regions' lines, its visits) is longer than the processor can look ahead and each load
    /// waits in turn; over a batch of 32 they are asked for together, and come in while other
    /// work is done. Decisions and events are the same as one fix at a time: the devices are
    /// distinct, so no stage reads what another fix of the batch writes, and everything that
    /// reaches the sink happens in the last stage, in the fixes' order.
    struct FixBatch {
        static let capacity = 32
        var count = 0
        /// The fixed-size arrays below, carved out of one allocation that this owns and frees.
        private let storage = FixBatchStorage(capacity: capacity)
        /// Bit d mod 256 set for each device d in the batch: a device whose bit is clear is not in
        /// it (feeds number devices in turn, so the 32 of a batch rarely share a bit); a set bit
        /// means the devices are compared.
        let seen: BatchArray<UInt64>
        let devices: BatchArray<Int32>
        let times: BatchArray<Double>
        let coordinates: BatchArray<Coordinate>
        let accuracies: BatchArray<Double>
        /// Per fix, what the first stage made of it (`Stage`).
        let stages: BatchArray<Stage>
        /// Per fix: its position (retests and refreshes), its step from the last evaluated fix,
        /// for a retest its distance bound from the neighbourhood's centre, then its safe
        /// distance (the smallest clearance among its regions not due, less the odometer).
        let points: BatchArray<GeoPoint>
        let steps: BatchArray<Double>
        let moved: BatchArray<Double>
        let safe: BatchArray<Double>
        /// The retests' due entries, fix by fix: the fix in the high half, the entry of its
        /// device's neighbourhood in the low.
        var due = PodList<UInt64>()
        /// The crossings the retests found, fix by fix (fix k's from `crossingBounds[k]` up to
        /// `crossingBounds[k + 1]`), each an entry of the device's neighbourhood shifted left by
        /// one, the low bit set when the device leaves.
        var crossings = PodList<Int32>()
        let crossingBounds: BatchArray<Int32>
        /// The fixes each later stage works on, in batch order, listed without a branch as the
        /// stage before decides them (a loop over all fixes that skipped the others branched on
        /// each fix's stage, which no predictor can learn): those needing a position, the
        /// retests, the refreshes, and those with events or refreshes in the last stage.
        let positioned: BatchArray<UInt8>
        let retests: BatchArray<UInt8>
        let refreshes: BatchArray<UInt8>
        let finals: BatchArray<UInt8>
        /// Per refresh: its plan, and where its candidates lie in `candidates` (start -1: the
        /// index gave none, near a pole or the antimeridian).
        let plans: BatchArray<RefreshPlan>
        let candidateStarts: BatchArray<Int32>
        let candidateCounts: BatchArray<Int32>
        var candidates = PodList<Int32>()

        enum Stage: UInt8 {
            /// Ignored for its accuracy, or within its device's safe distance: nothing more to do.
            case done
            /// Within the neighbourhood: retest what is due.
            case retest
            /// Beyond the neighbourhood, the device's first fix, or the plain path.
            case refresh
            case firstRefresh
            case plain
            case firstPlain
        }

        init() {
            var carve = storage.carver()
            seen = carve.next(UInt64.self, 4)
            seen.fill(0, count: 4)
            devices = carve.next(Int32.self, Self.capacity)
            times = carve.next(Double.self, Self.capacity)
            coordinates = carve.next(Coordinate.self, Self.capacity)
            accuracies = carve.next(Double.self, Self.capacity)
            stages = carve.next(Stage.self, Self.capacity)
            points = carve.next(GeoPoint.self, Self.capacity)
            steps = carve.next(Double.self, Self.capacity)
            moved = carve.next(Double.self, Self.capacity)
            safe = carve.next(Double.self, Self.capacity)
            crossingBounds = carve.next(Int32.self, Self.capacity + 1)
            positioned = carve.next(UInt8.self, Self.capacity)
            retests = carve.next(UInt8.self, Self.capacity)
            refreshes = carve.next(UInt8.self, Self.capacity)
            finals = carve.next(UInt8.self, Self.capacity)
            plans = carve.next(RefreshPlan.self, Self.capacity)
            candidateStarts = carve.next(Int32.self, Self.capacity)
            candidateCounts = carve.next(Int32.self, Self.capacity)
        }

        /// The growable lists' buffers (the fixed arrays go with `storage`).
        mutating func free() {
            due.free()
            crossings.free()
            candidates.free()
        }
    }

    /// Whether fixes may go through `batchAppend` and `applyBatch`: with dwell timers (which
    /// fire between readings) or polygons (tested at the index's one query point) they may not.
    /// An engine adds its own conditions (`Engine.batchesFixes`).
    package var batchesFixes: Bool { options.dwell == nil && !index.hasPolygons }

    /// Fixes waiting in the batch.
    package var batchCount: Int { batch.count }

    /// Adds a fix to the batch, or returns false when it cannot join it: the batch is full, it
    /// holds the device already, or the fix is older than its device's last reading (then
    /// apply the batch, and this fix with `fix`, which rejects it); whether the batch holds the
    /// device is found from its filter (`FixBatch.seen`), and only when that cannot tell, by
    /// comparing its devices, four at a time. Nothing is decided here; the device's state is
    /// asked for.
    @inline(__always)
    package func batchAppend(device d: Int32, t: Double, at p: Coordinate, accuracy: Double) -> Bool {
        let slot = checked(d)
        let k = batch.count
        let bit = UInt64(1) << UInt64(d & 63), word = Int(d >> 6) & 3
        guard k < FixBatch.capacity, !isOutOfOrder(t, after: states[slot].last),
              batch.seen[word] & bit == 0 || !batch.devices.contains(d, inFirst: k) else {
            return false
        }
        batch.seen[word] |= bit
        batch.devices[k] = d
        batch.times[k] = t
        batch.coordinates[k] = p
        batch.accuracies[k] = accuracy
        batch.count = k + 1
        // The state's second line (the first was just read); the lists come in stage 1.
        states.prefetchForWriting(slot, byteOffset: 64)
        return true
    }

    /// Applies the batch: every fix as `fix` would, its events in the same order. Returns how
    /// many were ignored for their accuracy (none is rejected: `batchAppend` keeps those out).
    package func applyBatch() -> Int {
        let n = batch.count
        guard n > 0 else { return 0 }
        batch.count = 0
        batch.seen.fill(0, count: 4)
        var ignored = 0
        var positioned = 0, retests = 0, refreshes = 0
        // Stage 1: clocks, accuracy, skip tests; retests add their step to the odometer, and
        // their neighbourhoods are asked for.
        for k in 0..<n {
            let slot = Int(batch.devices[k])
            switch begin(slot, batch.times[k], batch.coordinates[k], accuracy: batch.accuracies[k], step: &batch.steps[k]) {
            case .ignored:
                batch.stages[k] = .done
                ignored += 1
            case .skipped:
                batch.stages[k] = .done
            case .plain(let first):
                batch.stages[k] = first ? .firstPlain : .plain
            case .retest(let moved):
                batch.moved[k] = moved
                batch.stages[k] = .retest
                states[slot].near.prefetch()
            case .refresh(let first):
                batch.stages[k] = first ? .firstRefresh : .refresh
            }
            let stage = batch.stages[k]
            batch.positioned[positioned] = UInt8(k)
            positioned &+= stage != .done ? 1 : 0
            batch.retests[retests] = UInt8(k)
            retests &+= stage == .retest ? 1 : 0
            batch.refreshes[refreshes] = UInt8(k)
            refreshes &+= stage == .refresh || stage == .firstRefresh ? 1 : 0
        }
        // Stage 2: the positions of the fixes that need one.
        for j in 0..<positioned {
            let k = Int(batch.positioned[j])
            batch.points[k] = GeoPoint(batch.coordinates[k])
        }
        // Stage 3: the retests' due entries, their regions' lines asked for; then the tests,
        // each entry rewritten and each change of decision kept for the last stage.
        batch.due.removeAll()
        for j in 0..<retests {
            let k = Int(batch.retests[j])
            let slot = Int(batch.devices[k])
            let near = states[slot].near
            let odometer = states[slot].odometer
            // For a Float c, c ≤ odometer exactly when c ≤ the largest Float not above it.
            let limit = Float.belowNonNegative(odometer)
            // The smallest clearance not due: those regions keep their decision until then.
            var rest = Float.infinity
            for b in 0..<near.blocks {
                let entries = UInt64(k) << 32 | UInt64(16 * b)
                batch.due.appendBits(near.due(block: b, limit: limit, rest: &rest)) { entries | UInt64($0) }
            }
            batch.safe[k] = Double(rest) - odometer
        }
        // The due regions' lines, asked for in one loop over the batch's entries.
        for e in 0..<Int(batch.due.count) {
            let entry = batch.due[e]
            let near = states[Int(batch.devices[Int(entry >> 32)])].near
            index.prefetch(NearRegion.region(ofKey: near.key(Int(entry & 0xFFFF_FFFF))))
        }
        batch.crossings.removeAll()
        // Each fix's crossings counted, then summed into ends: no branch on how many fixes lie
        // between one due entry and the next.
        batch.crossingBounds.fill(0, count: n + 1)
        for e in 0..<Int(batch.due.count) {
            let entry = batch.due[e]
            let k = Int(entry >> 32), i = Int(entry & 0xFFFF_FFFF)
            let slot = Int(batch.devices[k])
            let e = retestEntry(states[slot].near, i, batch.points[k], odometer: states[slot].odometer)
            batch.safe[k] = min(batch.safe[k], e.clearance)
            if e.inside != e.visited {
                batch.crossings.append(Int32(i) << 1 | (e.visited ? 1 : 0))
                batch.crossingBounds[k + 1] += 1
                states[slot].visits.prefetchAll()
                prefetchForEvent(e.region)
            }
        }
        for k in 0..<n { batch.crossingBounds[k + 1] += batch.crossingBounds[k] }
        for j in 0..<retests {
            let k = Int(batch.retests[j])
            let slot = Int(batch.devices[k])
            setAnchor(slot, batch.points[k], safe: min(batch.safe[k], Double(states[slot].reach) - batch.moved[k]))
        }
        // The refreshes' queries, their candidates' lines asked for.
        batch.candidates.removeAll()
        for j in 0..<refreshes {
            let k = Int(batch.refreshes[j])
            let slot = Int(batch.devices[k]), q = batch.points[k]
            let plan = refreshPlan(slot, batch.times[k], q, step: batch.steps[k])
            batch.plans[k] = plan
            guard let box = index.candidates(around: plan.centre.point.coordinate, metres: plan.reach) else {
                batch.candidateStarts[k] = -1
                continue
            }
            batch.candidateStarts[k] = batch.candidates.count
            batch.candidateCounts[k] = Int32(box.count)
            batch.candidates.append(contentsOf: box.buffer)
            index.warm(box)
        }
        // Stage 4, in the fixes' order: crossings' events, refreshes.
        var finals = 0
        for k in 0..<n {
            let stage = batch.stages[k].rawValue
            let crossed = batch.crossingBounds[k + 1] != batch.crossingBounds[k]
            batch.finals[finals] = UInt8(k)
            finals &+= (stage >= FixBatch.Stage.refresh.rawValue ? 1 : 0) | (crossed ? 1 : 0)
        }
        for j in 0..<finals {
            let k = Int(batch.finals[j])
            let start = batch.crossingBounds[k], end = batch.crossingBounds[k + 1]
            let stage = batch.stages[k]
            let d = batch.devices[k], slot = Int(d), t = batch.times[k], q = batch.points[k]
            switch stage {
            case .retest:
                let near = states[slot].near
                var from = 0
                for c in start..<end {
                    let crossing = batch.crossings[Int(c)]
                    let r = NearRegion.region(ofKey: near.key(Int(crossing >> 1)))
                    cross(slot, d, t, r, q, leaving: crossing & 1 != 0, first: false, from: &from)
                }
            case .plain, .firstPlain:
                evaluate(slot, d, t, q, index.candidates(at: q.coordinate), first: stage == .firstPlain, safe: nil)
            case .refresh, .firstRefresh:
                let from = batch.candidateStarts[k]
                let box = from < 0 ? nil
                    : RegionCandidates(batch.candidates, from: Int(from), count: Int(batch.candidateCounts[k]))
                refresh(slot, d, t, q, first: stage == .firstRefresh, batch.plans[k], candidates: box)
            case .done:
                break
            }
            if held.count > 0 { reportHeld(d, t) }
        }
        return ignored
    }
}
