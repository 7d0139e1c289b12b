// SampleWindow.swift — the recent RSSI samples of one (device, beacon) and their gated mean.
//
// Fixed capacity, no heap: a 32-slot inline ring; the gate sorts in a 32-slot inline scratch buffer.

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

    private var storage: (
        RSSISample, RSSISample, RSSISample, RSSISample, RSSISample, RSSISample, RSSISample, RSSISample,
        RSSISample, RSSISample, RSSISample, RSSISample, RSSISample, RSSISample, RSSISample, RSSISample,
        RSSISample, RSSISample, RSSISample, RSSISample, RSSISample, RSSISample, RSSISample, RSSISample,
        RSSISample, RSSISample, RSSISample, RSSISample, RSSISample, RSSISample, RSSISample, RSSISample
    ) = (
        .zero, .zero, .zero, .zero, .zero, .zero, .zero, .zero,
        .zero, .zero, .zero, .zero, .zero, .zero, .zero, .zero,
        .zero, .zero, .zero, .zero, .zero, .zero, .zero, .zero,
        .zero, .zero, .zero, .zero, .zero, .zero, .zero, .zero
    )
    /// Slot of the oldest sample.
    private var head = 0
    public private(set) var count = 0

    public init() {}

    public var isEmpty: Bool { count == 0 }

    /// The i-th sample, 0 = oldest.
    public subscript(i: Int) -> RSSISample {
        precondition(i >= 0 && i < count, "sample index out of range")
        let slot = (head + i) & (Self.capacity - 1)
        return withUnsafeBytes(of: storage) { $0.load(fromByteOffset: slot * MemoryLayout<RSSISample>.stride, as: RSSISample.self) }
    }

    /// The newest sample, nil when empty.
    public var last: RSSISample? { count == 0 ? nil : self[count - 1] }

    /// Appends a sample, dropping the oldest when full. Non-finite values are ignored (false).
    @discardableResult
    public mutating func append(rssi: Double, at t: Double) -> Bool {
        guard rssi.isFinite, t.isFinite else { return false }
        let sample = RSSISample(t: t, rssi: rssi)
        let slot = (head + count) & (Self.capacity - 1)
        withUnsafeMutableBytes(of: &storage) { raw in
            raw.baseAddress!.assumingMemoryBound(to: RSSISample.self)[slot] = sample
        }
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
        while count > 0 && self[0].t <= t0 {
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
        var values = Scratch32()
        var n = 0
        for i in 0..<count {
            let s = self[i]
            if s.t > t0 {
                values[n] = s.rssi
                n += 1
            }
        }
        guard n > 0 else { return nil }
        // Chronological copy for the mean (summed in time order), sorted copy for the medians.
        var sorted = values
        sorted.sort(n)
        let m = sorted.median(n)
        var deviations = Scratch32()
        for i in 0..<n { deviations[i] = abs(sorted[i] - m) }
        deviations.sort(n)
        let mad = max(deviations.median(n), Self.madFloor)
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

    /// Gate half-width in robust standard deviations.
    public static let gateWidth: Double = 3
    /// σ / MAD for Gaussian noise.
    public static let madScale: Double = 1.4826
    /// MAD floor, dB.
    public static let madFloor: Double = 1
}

/// 32 Doubles inline, for sorting without the heap.
struct Scratch32 {
    private var storage: (
        Double, Double, Double, Double, Double, Double, Double, Double,
        Double, Double, Double, Double, Double, Double, Double, Double,
        Double, Double, Double, Double, Double, Double, Double, Double,
        Double, Double, Double, Double, Double, Double, Double, Double
    ) = (
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
    )

    subscript(i: Int) -> Double {
        get { withUnsafeBytes(of: storage) { $0.load(fromByteOffset: i * 8, as: Double.self) } }
        set { withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: newValue, toByteOffset: i * 8, as: Double.self) } }
    }

    /// Insertion sort of the first `n` values (n ≤ 32).
    mutating func sort(_ n: Int) {
        var i = 1
        while i < n {
            let v = self[i]
            var j = i - 1
            while j >= 0 && v < self[j] {
                self[j + 1] = self[j]
                j -= 1
            }
            self[j + 1] = v
            i += 1
        }
    }

    /// Median of the first `n` (sorted) values: the middle one, or the mean of the middle two.
    func median(_ n: Int) -> Double {
        n % 2 == 1 ? self[n / 2] : (self[n / 2 - 1] + self[n / 2]) * 0.5
    }
}

extension SampleWindow {
    /// Samples newer than `t0`, gated or not: how often a beacon was received, itself evidence of
    /// its range (packet loss grows with distance).
    public func countSince(_ t0: Double) -> Int {
        var n = 0
        for i in 0..<count where self[i].t > t0 { n += 1 }
        return n
    }
}
