// LogRangeFusion.swift — log-range least-squares position (tools/ble README, "B. Fused position").
//
// Fixed capacity, no heap: works on `FusionAnchors` or a caller's buffer.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PositionFusion {
    /// Gauss–Newton steps at most, for `solveLogRange`.
    public static let logRangeMaxIterations = 15
    /// `solveLogRange` stops after a step shorter than this, metres.
    public static let logRangeStopStep: Double = 0.01
    /// `solveLogRange` caps each step at this length, metres.
    public static let logRangeMaxStep: Double = 2
    /// Levenberg damping: `A += logRangeDamping · trace(A) · I`.
    public static let logRangeDamping: Double = 1e-3
    /// Ranges below this count as this in the log residual and its Jacobian, metres.
    public static let logRangeMinimumRange: Double = 0.1

    /// Log-range least squares: the maximum-likelihood position under log-normal shadowing (RSSI
    /// error additive in dB, so multiplicative in distance).
    ///
    /// Each anchor's `weight` is nᵢ, the number of RSSI samples behind its distance dᵢ (the
    /// samples kept by `SampleWindow.gatedMean(since:)`). Minimises Σ nᵢ (ln‖x − bᵢ‖ − ln dᵢ)² by
    /// Gauss–Newton with Levenberg damping, exactly as the reference prototype
    /// (`tools/ble/prototype.py`, `FusedModel.solve_log`):
    ///
    ///     eᵢ = ln(ρᵢ / dᵢ),  ρᵢ = max(‖x − bᵢ‖, 0.1 m),  Jᵢ = (x − bᵢ) / ρᵢ²
    ///     A = Σ nᵢ JᵢJᵢᵀ,  A += 10⁻³ · trace(A) · I,  step = A⁻¹ Σ nᵢ Jᵢ eᵢ
    ///     ‖step‖ capped at 2 m,  x −= step
    ///
    /// at most 15 iterations, stopping after a step (before the cap) shorter than 1 cm. The start
    /// is always the centroid of the anchors weighted by 1/max(dᵢ, 0.1)² (never a previous fix, so
    /// a bad fix cannot persist).
    ///
    /// Anchors that are not finite, or have dᵢ ≤ 0 or nᵢ ≤ 0, are skipped.
    ///
    /// - Fewer than 3 usable anchors: NaN, confidence `none` (`anchorCount` says how many there were).
    /// - Otherwise: confidence `good` when `geometry` ≥ `minimumGeometry`, else `low` (collinear
    ///   anchors: a finite point near their line). `residual` is the nᵢ-weighted RMS of the range
    ///   residuals ‖x − bᵢ‖ − dᵢ in metres, as for `solve`; `iterations` the steps taken; `geometry`
    ///   as for `solve` (over the anchors `FusionAnchor.isUsable` accepts).
    public static func solveLogRange(_ anchors: FusionAnchors) -> FusionFix {
        var a = anchors  // read in place, as `solve` does
        @inline(__always) func usable(_ p: FusionAnchor) -> Bool { p.isUsable && p.distance > 0 }

        var usableCount = 0
        var sc = 0.0, cx = 0.0, cy = 0.0
        for i in a.indices where usable(a[unchecked: i]) {
            let p = a[unchecked: i]
            usableCount += 1
            let w = FusionAnchor.defaultWeight(distance: p.distance)
            sc += w
            cx += w * p.x
            cy += w * p.y
        }
        guard usableCount >= 3 else {
            return FusionFix(x: .nan, y: .nan, residual: .nan, geometry: 0, anchorCount: usableCount, iterations: 0,
                             confidence: .none)
        }

        var x = cx / sc, y = cy / sc
        var iterations = 0
        while iterations < logRangeMaxIterations {
            var a11 = 0.0, a12 = 0.0, a22 = 0.0, g1 = 0.0, g2 = 0.0
            for i in a.indices where usable(a[unchecked: i]) {
                let p = a[unchecked: i]
                let dx = x - p.x, dy = y - p.y
                let rho = max((dx * dx + dy * dy).squareRoot(), logRangeMinimumRange)
                let e = log(rho / p.distance)
                let rho2 = rho * rho
                let jx = dx / rho2, jy = dy / rho2
                let n = p.weight
                a11 += n * jx * jx
                a12 += n * jx * jy
                a22 += n * jy * jy
                g1 += n * jx * e
                g2 += n * jy * e
            }
            let damp = logRangeDamping * (a11 + a22)
            let b11 = a11 + damp, b22 = a22 + damp
            let det = b11 * b22 - a12 * a12
            // Singular only when every Jᵢ vanishes (impossible with three distinct anchors).
            guard det > 0, det.isFinite else { break }
            var sx = (b22 * g1 - a12 * g2) / det
            var sy = (b11 * g2 - a12 * g1) / det
            let norm = (sx * sx + sy * sy).squareRoot()
            guard norm.isFinite else { break }
            if norm > logRangeMaxStep {
                sx *= logRangeMaxStep / norm
                sy *= logRangeMaxStep / norm
            }
            x -= sx
            y -= sy
            iterations += 1
            if norm < logRangeStopStep { break }
        }

        var sw = 0.0, c = 0.0
        for i in a.indices where usable(a[unchecked: i]) {
            let p = a[unchecked: i]
            let dx = x - p.x, dy = y - p.y
            let r = (dx * dx + dy * dy).squareRoot() - p.distance
            sw += p.weight
            c += p.weight * r * r
        }
        let g = geometry(&a, x, y)
        return FusionFix(x: x, y: y, residual: (c / sw).squareRoot(), geometry: g, anchorCount: usableCount,
                         iterations: iterations, confidence: g >= minimumGeometry ? .good : .low)
    }

}
