// RSSIFilter.swift — per (device, beacon) smoothing of RSSI over time.
//
// Pure value type, no allocation, no Foundation: one `update` per sighting on the hot path.

/// A one-dimensional Kalman filter on RSSI in dBm, for sightings at irregular times.
///
/// The level is a random walk: its variance grows by `processNoise`·Δt between sightings, and
/// each sighting has variance `measurementNoise`. The defaults are physical, not fitted:
/// - `processNoise` 15 dB²/s: a walker at 1.3 m/s, 3 m from a beacon, changes the RSSI by about
///   10·n·v/(d·ln 10) ≈ 3.8 dB/s (n = 2), and 3.8² ≈ 15.
/// - `measurementNoise` 36 dB² (σ = 6 dB): indoor multipath and shadowing at 2.4 GHz is 4–8 dB.
/// - A sample whose innovation exceeds `gateSigmas` predicted standard deviations is skipped; the
///   variance keeps growing, so a real step gets through after a few sightings.
///
/// Everything is `Double`: RSSI arrives in whole dB, and rounding the estimate (as AltBeacon's
/// ARMA filter does) would stall it and bias it. On a constant signal the estimate is exact.
public struct RSSIFilter: Sendable {
    public struct Parameters: Sendable, Equatable {
        /// Growth of the level's variance, dB² per second.
        public var processNoise: Double
        /// Variance of one sighting, dB².
        public var measurementNoise: Double
        /// Innovations beyond this many predicted standard deviations are skipped.
        public var gateSigmas: Double

        public init(processNoise: Double = 15, measurementNoise: Double = 36, gateSigmas: Double = 3) {
            precondition(processNoise > 0 && measurementNoise > 0 && gateSigmas > 0, "filter parameters must be positive")
            self.processNoise = processNoise
            self.measurementNoise = measurementNoise
            self.gateSigmas = gateSigmas
        }

        public static let `default` = Parameters()
    }

    public let parameters: Parameters
    /// The smoothed RSSI (dBm); NaN before the first sighting.
    public internal(set) var estimate: Double = .nan
    /// The estimate's variance (dB²); infinite before the first sighting.
    public internal(set) var variance: Double = .infinity
    public internal(set) var lastTime: Double = -.infinity

    public init(parameters: Parameters = .default) {
        self.parameters = parameters
    }

    public var isInitialized: Bool { !estimate.isNaN }

    /// The estimate's standard deviation (dB).
    public var sigma: Double { variance.squareRoot() }

    /// The variance the estimate will have at `t` if nothing is heard until then.
    public func predictedVariance(at t: Double) -> Double {
        guard isInitialized else { return .infinity }
        return variance + parameters.processNoise * max(0, t - lastTime)
    }

    /// Takes one sighting and returns the smoothed RSSI.
    @discardableResult
    public mutating func update(rssi z: Double, at t: Double) -> Double {
        guard z.isFinite else { return estimate }
        guard isInitialized else {
            estimate = z
            variance = parameters.measurementNoise
            lastTime = t
            return z
        }
        let p = predictedVariance(at: t)
        if t > lastTime { lastTime = t }
        let innovation = z - estimate
        let s = p + parameters.measurementNoise
        guard innovation * innovation <= parameters.gateSigmas * parameters.gateSigmas * s else {
            variance = p  // skipped: only the time that passed is known
            return estimate
        }
        let k = p / s
        estimate += k * innovation
        variance = (1 - k) * p
        return estimate
    }

    public mutating func reset() {
        self = RSSIFilter(parameters: parameters)
    }
}
