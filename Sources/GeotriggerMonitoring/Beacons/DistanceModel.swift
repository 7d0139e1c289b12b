// DistanceModel.swift — RSSI → distance (log-distance model) and proximity classes.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore

/// The log-distance path-loss model of SPEC §4: d = 10^((P₁ₘ − RSSI) / (10·n)) metres.
public enum DistanceModel {
    /// P₁ₘ when neither the sighting (`tx`) nor the region gives one: −59 dBm, the calibrated
    /// power Apple's iBeacon examples and most vendors ship.
    public static let defaultMeasuredPower: Double = -59
    /// n when the region gives none: 2, free space.
    public static let defaultPathLossExponent: Double = 2

    /// Distance in metres for `rssi` (dBm) given the power at 1 m and the exponent n (> 0).
    ///
    /// RSSI = P gives 1 m; each 10·n dB weaker multiplies the distance by 10. NaN in, NaN out.
    @inlinable
    public static func distance(rssi: Double, measuredPower: Double, pathLossExponent: Double) -> Double {
        pow(10, (measuredPower - rssi) / (10 * pathLossExponent))
    }

    /// P₁ₘ for a sighting: its `tx` (NaN if absent), else the region's `measuredPower`, else −59.
    @inlinable
    public static func resolvePower(tx: Double, regionMeasuredPower: Double?) -> Double {
        if !tx.isNaN { return tx }
        return regionMeasuredPower ?? defaultMeasuredPower
    }

    /// n for a region: its `pathLossExponent`, else 2.
    @inlinable
    public static func resolveExponent(regionPathLossExponent: Double?) -> Double {
        regionPathLossExponent ?? defaultPathLossExponent
    }

    /// The distance for a sighting of a beacon matched by `region`, resolving P₁ₘ and n as SPEC says.
    @inlinable
    public static func distance(rssi: Double, tx: Double, region: BeaconRegion) -> Double {
        distance(rssi: rssi, measuredPower: resolvePower(tx: tx, regionMeasuredPower: region.measuredPower),
                 pathLossExponent: resolveExponent(regionPathLossExponent: region.pathLossExponent))
    }
}

/// Core Location's proximity classes, ordered from nearest to farthest (`unknown` last: no estimate).
public enum Proximity: UInt8, Sendable, CaseIterable, Comparable {
    case immediate
    case near
    case far
    case unknown

    /// Upper limit of `immediate`, metres.
    public static let immediateLimit: Double = 0.5
    /// Upper limit of `near`, metres.
    public static let nearLimit: Double = 3

    /// The name used in output events.
    public var name: String {
        switch self {
        case .immediate: return "immediate"
        case .near: return "near"
        case .far: return "far"
        case .unknown: return "unknown"
        }
    }

    /// immediate < 0.5 m, near < 3 m, far otherwise; unknown for NaN or a negative distance.
    @inlinable
    public static func classify(distance d: Double) -> Proximity {
        if d.isNaN || d < 0 { return .unknown }
        if d < immediateLimit { return .immediate }
        if d < nearLimit { return .near }
        return .far
    }

    /// The boundary between this class and the next one out (∞ for `far`, NaN for `unknown`).
    @inlinable
    public var outerLimit: Double {
        switch self {
        case .immediate: return Proximity.immediateLimit
        case .near: return Proximity.nearLimit
        case .far: return .infinity
        case .unknown: return .nan
        }
    }

    public static func < (a: Proximity, b: Proximity) -> Bool { a.rawValue < b.rawValue }
}

/// Proximity with hysteresis, so a distance estimate wobbling about a boundary does not flap.
///
/// Inward moves happen as soon as the distance is below a boundary (the classes' own `<` rule);
/// outward moves only when it exceeds the boundary × (1 + h).
///
/// h = 0.15 by default. The distance's relative noise is σ_dB·ln 10 / (10·n) of the smoothed RSSI's
/// σ_dB: with n = 2 and `RSSIFilter`'s defaults that is ≈ ±7 % at 10 Hz (σ ≈ 0.6 dB), where the
/// band is two standard deviations wide and stops nearly all flapping, and ≈ ±23 % at 1 Hz
/// (σ ≈ 2 dB), where it still removes most of it. A wider band delays every real exit: at walking
/// speed 15 % of the 3 m boundary is 0.45 m, a third of a second. The same margin suits
/// zone limits.
public struct ProximityState: Sendable, Equatable {
    public private(set) var proximity: Proximity
    public var hysteresis: Double

    public init(proximity: Proximity = .unknown, hysteresis: Double = 0.15) {
        self.proximity = proximity
        self.hysteresis = hysteresis
    }

    /// The class after `previous` given a new distance.
    ///
    /// From `unknown`, or for a NaN distance, it is the plain classification. Outward, the class
    /// moves past each boundary the distance exceeds by more than the hysteresis (so it may skip
    /// from `immediate` to `far`); inward, it follows the plain classification.
    @inlinable
    public static func next(previous: Proximity, distance d: Double, hysteresis h: Double = 0.15) -> Proximity {
        let plain = Proximity.classify(distance: d)
        if previous == .unknown || plain == .unknown || plain <= previous { return plain }
        // Outward: only past boundaries exceeded by the margin.
        var p = previous
        while p < plain && d > p.outerLimit * (1 + h) {
            p = Proximity(rawValue: p.rawValue + 1)!
        }
        return p
    }

    /// Applies a new distance and returns the new class.
    @discardableResult
    public mutating func update(distance: Double) -> Proximity {
        proximity = Self.next(previous: proximity, distance: distance, hysteresis: hysteresis)
        return proximity
    }
}
