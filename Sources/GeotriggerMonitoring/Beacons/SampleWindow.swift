// SampleWindow.swift — the recent RSSI samples of one (device, beacon) and their gated mean.
//
// Fixed capacity, no heap: a 32-slot `InlineArray` ring; the gate sorts in a 32-slot `InlineArray`
// scratch buffer.

/// One RSSI sample: time (seconds) and dBm.
import GeotriggerCore
import GeotriggerRuntime

public struct RSSISample: Sendable, Equatable {
    public var t: Double
    public var rssi: Double

    public init(t: Double, rssi: Double) {
        self.t = t
        self.rssi = rssi
    }

    static let zero = RSSISample(t: 0, rssi: 0)
}

/// The most recent `capacity` (32) RSSI samples of one (device, beacon), oldest first; when full,
/// appending drops the oldest. At 2–10 Hz advertising, 32 samples cover the fused estimator's
/// 2 s window with room to spare.
///
/// Samples are expected in time order (`drop(through:)` stops at the first newer sample), but
/// `gatedMean(since:)` selects by time stamp, so a sample a few µs out of order is still counted
/// correctly.
public struct SampleWindow: Sendable {
    public static let capacity = 32

    /// The ring; its size is `capacity` (a power of two: slots wrap with `& (capacity - 1)`).
    private var storage = InlineArray<32, RSSISample>(repeating: .zero)
    /// Slot of the oldest sample.
    private var head = 0
    public private(set) var count = 0

    public init() {}

    public var isEmpty: Bool { count == 0 }

    /// The i-th sample, 0 = oldest.
    public subscript(i: Int) -> RSSISample {
        precondition(i >= 0 && i < count, "sample index out of range")
        var window = self  // see `gatedMean(since:)`
        return window.inPlaceSample(atSlot: slot(i))
    }

    /// `storage[slot]`, `mutating` only so that `storage` is read in place.
    @inline(__always)
    private mutating func inPlaceSample(atSlot slot: Int) -> RSSISample { storage[slot] }

    /// Ring slot of the i-th sample (0 = oldest).
    @inline(__always)
    private func slot(_ i: Int) -> Int { (head + i) & (Self.capacity - 1) }

    /// Calls `body` with the slot of every sample, oldest first: from `head` up to the end of the
    /// ring, then from slot 0 (no wrap-around arithmetic per sample).
    @inline(__always)
    private func forEachSlot(_ body: (Int) -> Void) {
        let end = min(head + count, Self.capacity)
        for slot in head..<end { body(slot) }
        for slot in 0..<(head + count - end) { body(slot) }
    }

    /// The newest sample, nil when empty.
    public var last: RSSISample? { count == 0 ? nil : self[count - 1] }

    /// Appends a sample, dropping the oldest when full. Non-finite values are ignored (false).
    @discardableResult
    public mutating func append(rssi: Double, at t: Double) -> Bool {
        guard rssi.isFinite, t.isFinite else { return false }
        storage[slot(count)] = RSSISample(t: t, rssi: rssi)
        if count < Self.capacity {
            count += 1
        } else {
            head = (head + 1) & (Self.capacity - 1)
        }
        return true
    }

    /// Removes the oldest samples while their time is ≤ `t0`: what remains is the window (t0, …],
    /// the same boundary as `gatedMean(since:)`.
    public mutating func drop(through t0: Double) {
        while count > 0 && storage[head].t <= t0 {
            head = (head + 1) & (Self.capacity - 1)
            count -= 1
        }
    }

    public mutating func removeAll() {
        head = 0
        count = 0
    }

    /// The gated mean RSSI of the samples with t > `t0`, nil when there are none.
    ///
    /// With m the median of those samples and MAD = max(median |x − m|, 1 dB), samples with
    /// |x − m| > 3 · 1.4826 · MAD are rejected (1.4826·MAD estimates σ for Gaussian noise; the 1 dB
    /// floor stops integer RSSIs, most of them equal, from giving MAD = 0 and rejecting every
    /// sample one step off). `mean` is the mean of the samples kept, `count` their number (never 0:
    /// at least half the samples lie within MAD of m).
    public func gatedMean(since t0: Double) -> (mean: Double, count: Int)? {
        // This compiler copies all 32 samples at every `storage[i]` read through a non-mutating
        // `self`, but reads a `var` in place; and as nothing writes to `window`, it is not copied.
        var window = self
        return window.inPlaceGatedMean(since: t0)
    }

    /// `gatedMean(since:)`, `mutating` only so that `storage` is read in place (it changes nothing).
    private mutating func inPlaceGatedMean(since t0: Double) -> (mean: Double, count: Int)? {
        // `values` in time order (the mean is summed in that order), `sorted` kept sorted as they
        // are gathered (insertion sort), for the medians.
        var values = InlineArray<32, Double>(repeating: 0)
        var sorted = InlineArray<32, Double>(repeating: 0)
        var n = 0
        forEachSlot { slot in
            let s = storage[slot]
            guard s.t > t0 else { return }
            let v = s.rssi
            values[n] = v
            var j = n - 1
            while j >= 0 && v < sorted[j] {
                sorted[j + 1] = sorted[j]
                j -= 1
            }
            sorted[j + 1] = v
            n += 1
        }
        guard n > 0 else { return nil }
        let m = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) * 0.5
        let mad = max(Self.medianDeviation(&sorted, n, from: m), Self.madFloor)
        let limit = Self.gateWidth * Self.madScale * mad
        var sum = 0.0
        var kept = 0
        for i in 0..<n where abs(values[i] - m) <= limit {
            sum += values[i]
            kept += 1
        }
        guard kept > 0 else { return (m, 0) }  // unreachable: the median's neighbours are kept
        return (sum / Double(kept), kept)
    }

    /// The median of |x − m| over the first `n` values of `sorted` (ascending): the middle one, or
    /// the mean of the middle two. Those below m, read downwards, and those from m up, read upwards,
    /// are two runs of deviations already in ascending order (rounding is monotonic), so merging them
    /// up to the middle gives the same deviations, in the same order, as sorting all n.
    /// (`inout` only to read the scratch in place.)
    @inline(__always)
    private static func medianDeviation(_ sorted: inout InlineArray<32, Double>, _ n: Int, from m: Double) -> Double {
        var up = 0
        while up < n && sorted[up] < m { up += 1 }
        var down = up - 1
        var previous = 0.0, current = 0.0
        for _ in 0...(n / 2) {
            let below = down >= 0 ? abs(sorted[down] - m) : Double.infinity
            let above = up < n ? abs(sorted[up] - m) : Double.infinity
            previous = current
            if below <= above {
                current = below
                down -= 1
            } else {
                current = above
                up += 1
            }
        }
        return n % 2 == 1 ? current : (previous + current) * 0.5
    }

    /// Gate half-width in robust standard deviations.
    public static let gateWidth: Double = 3
    /// σ / MAD for Gaussian noise.
    public static let madScale: Double = 1.4826
    /// MAD floor, dB.
    public static let madFloor: Double = 1
}

extension SampleWindow {
    /// Samples newer than `t0`, gated or not: how often a beacon was received, itself evidence of
    /// its range (packet loss grows with distance).
    public func countSince(_ t0: Double) -> Int {
        var window = self  // see `gatedMean(since:)`
        return window.inPlaceCount(since: t0)
    }

    /// `countSince(_:)`, `mutating` only so that `storage` is read in place (it changes nothing).
    private mutating func inPlaceCount(since t0: Double) -> Int {
        var n = 0
        forEachSlot { slot in if storage[slot].t > t0 { n += 1 } }
        return n
    }
}
