// RSSIFilter.swift — per (device, beacon) smoothing of RSSI over time.
//
// Pure value type, no allocation, no Foundation: one `update` per sighting on the hot path.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Smooths one (device, beacon) RSSI stream in dBm over time, without bias.
///
/// A one-dimensional Kalman filter on dBm, with innovation gating against single outliers.
///
/// **Model.** The smoothed value x follows the true signal. Between sightings the filter's error
/// variance grows by the process noise Q = R·(Δt/τ)², R being the measurement noise variance and τ
/// the time constant. Process noise growing with Δt² (rather than Δt, a random walk) models a
/// signal that *drifts* (a walking device's RSSI changes roughly linearly over a second or two), and
/// it makes the steady-state gain depend on Δt/τ alone: K ≈ 1 − e^(−Δt/τ) whatever the advertising
/// rate, so τ is a real time constant in seconds at 1 Hz and at 10 Hz alike, and a long silence
/// (Δt ≫ τ) makes the next sighting count almost fully. Because K does not depend on R, R can be
/// estimated online (see below) without changing how fast the filter follows the signal.
///
/// **No bias.** The update is linear (x += K·(z − x)) in floating point: a constant stream stays
/// exactly constant (the first sample initialises the estimate exactly), and zero-mean noise stays
/// zero-mean. Nothing is rounded to integers (AltBeacon's `ArmaRssiFilter` truncates to `Int`, which
/// biases every estimate towards zero by up to 1 dB).
///
/// **Outliers.** A sample whose innovation |z − x| exceeds max(k·σ·√(P/R + 1), `minimumGate`) is
/// not applied (σ is the running estimate of the measurement spread, √(P/R + 1) widens the gate as
/// the estimate's own uncertainty grows, e.g. after a silence). Gating is symmetric, so it adds no
/// bias for symmetric noise. `reseedAfter` consecutive rejected samples on the same side are a real
/// change, not an outlier: the estimate then jumps to their mean.
///
/// **Spread.** σ is a robust running estimate: an exponential average (weight `spreadWeight` per
/// sample) of |innovation| normalised by its predicted scale, times √(π/2) (for Gaussian noise
/// E|y| = σ·√(2/π)). Rejected samples enter clipped at the gate, so a burst of outliers widens the
/// gate only gradually.
///
/// **Default τ = 2 s.** BLE beacons advertise at about 1–10 Hz (iOS ranging reports once per
/// second), and a walker moves at about 1.4 m/s. An exponential filter lags a steady walk by
/// v·τ ≈ 2.8 m, about the size of the `near` zone (3 m) and no more; a shorter τ would leave too
/// much noise at 1 Hz: with σ ≈ 4 dB per sample (typical indoors) τ = 2 s leaves ≈ 2 dB at 1 Hz
/// (≈ ±25 % in distance for n = 2) and ≈ 0.6 dB at 10 Hz. A step is followed to within 10 % after
/// τ·ln 10 ≈ 4.6 s (a step larger than the gate is taken after `reseedAfter` samples instead).
public struct RSSIFilter: Sendable {
    /// Tuning, shared by value; the defaults are discussed on the type.
    public struct Parameters: Sendable, Equatable {
        /// Time constant τ in seconds (> 0).
        public var timeConstant: Double
        /// The spread assumed before any data, dB (one sample's standard deviation).
        public var initialSigma: Double
        /// Lower bound of the spread estimate, dB: RSSI comes in whole dBm and a perfectly steady
        /// signal must not make the gate (or the reported variance) collapse to nothing.
        public var minimumSigma: Double
        /// Gate width in spreads (k).
        public var gateSigmas: Double
        /// The gate is never narrower than this, dB: smaller jumps are always filtered, never rejected.
        public var minimumGate: Double
        /// This many consecutive rejected samples on the same side re-seed the estimate at their mean.
        public var reseedAfter: Int32
        /// Weight of each sample in the spread's exponential average (≈ 1 / memory in samples).
        public var spreadWeight: Double

        public init(timeConstant: Double = 2, initialSigma: Double = 4, minimumSigma: Double = 1,
                    gateSigmas: Double = 3, minimumGate: Double = 10, reseedAfter: Int32 = 3,
                    spreadWeight: Double = 0.05) {
            precondition(timeConstant > 0, "timeConstant must be positive")
            precondition(reseedAfter >= 1, "reseedAfter must be at least 1")
            self.timeConstant = timeConstant
            self.initialSigma = initialSigma
            self.minimumSigma = minimumSigma
            self.gateSigmas = gateSigmas
            self.minimumGate = minimumGate
            self.reseedAfter = reseedAfter
            self.spreadWeight = spreadWeight
        }

        public static let `default` = Parameters()
    }

    public let parameters: Parameters

    /// The smoothed RSSI, dBm; NaN before the first sample.
    public private(set) var estimate: Double = .nan
    /// Error variance of the estimate divided by R (dimensionless).
    private var p: Double = 1
    /// Mean |normalised innovation|; σ = meanAbs·√(π/2).
    private var meanAbs: Double
    /// Time of the latest sample applied (seconds).
    public private(set) var lastTime: Double = -.infinity
    /// Consecutive rejected samples on the same side, their sum and side (+1 above, −1 below).
    private var rejectedCount: Int32 = 0
    private var rejectedSide: Int32 = 0
    private var rejectedSum: Double = 0

    private static let sqrtHalfPi = 1.2533141373155002  // √(π/2)

    public init(parameters: Parameters = .default) {
        self.parameters = parameters
        meanAbs = parameters.initialSigma / Self.sqrtHalfPi
    }

    public init(timeConstant: Double) {
        self.init(parameters: Parameters(timeConstant: timeConstant))
    }

    /// Whether a sample has been applied.
    @inlinable public var isInitialized: Bool { !estimate.isNaN }

    /// The running robust estimate of one sample's standard deviation, dB.
    public var measurementSigma: Double {
        max(meanAbs * Self.sqrtHalfPi, parameters.minimumSigma)
    }

    /// The estimate's error variance, dB², as of the latest sample (∞ before the first).
    public var variance: Double {
        isInitialized ? p * measurementSigma * measurementSigma : .infinity
    }

    /// The estimate's error variance had a sample arrived at `t` and not been applied: it grows
    /// with the silence (the gate widens with it).
    public func predictedVariance(at t: Double) -> Double {
        guard isInitialized else { return .infinity }
        let e = max(0, t - lastTime) / parameters.timeConstant
        return (p + e * e) * measurementSigma * measurementSigma
    }

    /// Applies one sample (dBm) taken at `t` (seconds) and returns the smoothed value.
    ///
    /// Samples should come in time order; one older than the previous is applied as if simultaneous.
    /// A non-finite `rssi` is ignored (the current estimate is returned).
    @discardableResult
    public mutating func update(rssi z: Double, at t: Double) -> Double {
        guard z.isFinite else { return estimate }
        guard isInitialized else {
            estimate = z
            p = 1  // one measurement's worth of uncertainty
            lastTime = t
            return z
        }
        let dt = t > lastTime ? t - lastTime : 0
        if t > lastTime { lastTime = t }
        let e = dt / parameters.timeConstant
        let prior = p + e * e
        let scale = (prior + 1).squareRoot()  // predicted innovation sd / σ
        let y = z - estimate
        let sigma = measurementSigma
        let gate = max(parameters.gateSigmas * sigma * scale, parameters.minimumGate)
        let w = parameters.spreadWeight

        if abs(y) <= gate {
            let k = prior / (prior + 1)
            estimate += k * y
            p = prior / (prior + 1)  // (1 − K)·prior
            meanAbs += w * (abs(y) / scale - meanAbs)
            rejectedCount = 0
            rejectedSum = 0
            return estimate
        }

        // Rejected: no information about the level, only the time that passed.
        p = prior
        meanAbs += w * (gate / scale - meanAbs)
        let side: Int32 = y > 0 ? 1 : -1
        if rejectedCount > 0 && side == rejectedSide {
            rejectedCount += 1
            rejectedSum += z
        } else {
            rejectedCount = 1
            rejectedSide = side
            rejectedSum = z
        }
        if rejectedCount >= parameters.reseedAfter {
            // A sustained change: start again from the mean of the run.
            estimate = rejectedSum / Double(rejectedCount)
            p = 1 / Double(rejectedCount)
            rejectedCount = 0
            rejectedSum = 0
        }
        return estimate
    }

    /// Forgets everything (the next sample initialises the estimate).
    public mutating func reset() {
        self = RSSIFilter(parameters: parameters)
    }
}
