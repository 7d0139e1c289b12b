// PositionFusion.swift — weighted least-squares trilateration from beacon distances.
//
// Fixed capacity, no heap: anchors live in a 16-slot inline array (`FusionAnchors`).

import GeotriggerCore

/// One positioned beacon: where it is in a local frame (metres east `x`, north `y`), its estimated
/// distance and the weight of that distance in the fit.
public struct FusionAnchor: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var distance: Double
    public var weight: Double

    /// `weight` nil: `FusionAnchor.defaultWeight(distance:)`, 1/d².
    public init(x: Double, y: Double, distance: Double, weight: Double? = nil) {
        self.x = x
        self.y = y
        self.distance = distance
        self.weight = weight ?? Self.defaultWeight(distance: distance)
    }

    public init(_ p: LocalPoint, distance: Double, weight: Double? = nil) {
        self.init(x: p.east, y: p.north, distance: distance, weight: weight)
    }

    /// Distances below this count as this for the default weight (no infinite weights at d = 0).
    public static let minimumWeightDistance: Double = 0.1

    /// 1/d²: inverse variance under the log-distance model. ln d = (P − RSSI)·ln 10 / (10 n), so an
    /// RSSI error of σ dB is the same *relative* distance error at every distance (σ·ln 10 / (10 n),
    /// ≈ 23 % for σ = 2 dB, n = 2): the absolute error grows in proportion to d, its variance with d².
    /// A beacon 2 m away is worth four times one 4 m away.
    @inlinable
    public static func defaultWeight(distance d: Double) -> Double {
        let r = max(d, minimumWeightDistance)
        return 1 / (r * r)
    }

    @usableFromInline var isUsable: Bool {
        x.isFinite && y.isFinite && distance.isFinite && distance >= 0 && weight.isFinite && weight > 0
    }

    static let zero = FusionAnchor(x: 0, y: 0, distance: 0, weight: 0)
}

/// Up to 16 anchors stored inline (no heap). When full, a new anchor replaces the lightest one if it
/// is heavier, so the 16 most reliable (by default: nearest) beacons are kept. The solvers read
/// them in place (`PositionFusion.solve`, `solveLogRange`).
public struct FusionAnchors: Sendable, RandomAccessCollection {
    public static let capacity = 16

    private var storage = InlineArray<16, FusionAnchor>(repeating: .zero)
    public private(set) var count = 0

    public init() {}

    public var isEmpty: Bool { count == 0 }
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// Adds an anchor; false when full and the anchor is no heavier than the lightest kept.
    @discardableResult
    public mutating func append(_ anchor: FusionAnchor) -> Bool {
        let n = count
        if n < Self.capacity {
            storage[n] = anchor
            count = n + 1
            return true
        }
        var lightest = 0
        for i in 1..<n where storage[i].weight < storage[lightest].weight { lightest = i }
        guard anchor.weight > storage[lightest].weight else { return false }
        storage[lightest] = anchor
        return true
    }

    @discardableResult
    public mutating func append(x: Double, y: Double, distance: Double, weight: Double? = nil) -> Bool {
        append(FusionAnchor(x: x, y: y, distance: distance, weight: weight))
    }

    public subscript(i: Int) -> FusionAnchor {
        precondition(i >= 0 && i < count, "anchor index out of range")
        return storage[unchecked: i]
    }

    /// Anchor `i` for the solvers' loops over `indices`: checked by `assert` only.
    @inline(__always)
    subscript(unchecked i: Int) -> FusionAnchor {
        assert(i >= 0 && i < count, "anchor index out of range")
        return storage[unchecked: i]
    }

    public mutating func removeAll() { count = 0 }
}

/// A fused position and how far to trust it.
public struct FusionFix: Sendable, Equatable {
    public enum Confidence: UInt8, Sendable, Comparable {
        /// No usable anchor: `x`, `y` are NaN.
        case none
        /// One or two anchors, or anchors (nearly) on a line: a position, but not a determined one.
        case low
        /// Three or more anchors around the position.
        case good

        public static func < (a: Confidence, b: Confidence) -> Bool { a.rawValue < b.rawValue }
    }

    /// The estimate, metres in the anchors' frame.
    public var x: Double
    public var y: Double
    /// Weighted RMS of the range residuals |p − aᵢ| − dᵢ at the estimate, metres (for one anchor: its
    /// distance, the radius of the circle the device is on).
    public var residual: Double
    /// How well the anchors surround the estimate, 0…1: 2·λ_min(Σ uᵢuᵢᵀ) / n, uᵢ the unit vectors
    /// from the anchors to the estimate (directions only: one very near, very heavy beacon does not
    /// hide the others' geometry). 1 for anchors evenly around, near 0 for an estimate far outside
    /// them, 0 for anchors on one line. With equal range errors σ the position error is about
    /// σ·√(2 / (geometry · n)) in the weakest direction.
    public var geometry: Double
    public var anchorCount: Int
    /// Gauss–Newton steps taken.
    public var iterations: Int
    public var confidence: Confidence

    public var point: LocalPoint { LocalPoint(east: x, north: y) }
}

/// Weighted least-squares trilateration in a local metric frame.
///
/// Minimises Σ wᵢ (|p − aᵢ| − dᵢ)² by Gauss–Newton with Levenberg damping (a step is taken only if
/// it lowers the cost; the damping grows until one does, so rank-deficient geometry cannot blow up)
/// and the Hessian's second-order term when that keeps it positive definite (see `refine`),
/// starting from the weighted centroid of the anchors. With three or more anchors the fit is also
/// started from the linearised solution (differences of the squared range equations), which finds
/// positions well outside the anchors' hull where the centroid start can stop in a local minimum.
/// That fit wins only if its cost is below a quarter (`switchRatio`) of the centroid fit's: with
/// noisy ranges the two are often mirror-image minima of similar cost, and the one nearer the
/// centroid is then more often right (devices are mostly among the beacons; in simulation taking
/// the strictly lower cost raised the RMS error by 3–7 %).
///
/// - 0 usable anchors: NaN, confidence `none`.
/// - 1 anchor: the anchor itself, confidence `low`.
/// - 2 anchors: the weighted least-squares point on the segment between them,
///   t = (w₁d₁ + w₂(L − d₂)) / (w₁ + w₂) from the first, clamped to [0, L]; confidence `low`
///   (the two circles' intersections are mirror images across the segment).
/// - 3 or more: the fit; confidence `good` when `geometry` ≥ `minimumGeometry`, else `low`
///   (collinear anchors give the best point on their line, finite).
public enum PositionFusion {
    /// Below this `geometry` a fix is `low` confidence: with three anchors the position's error in
    /// the weakest direction is then more than √(2 / (0.1·3)) ≈ 2.6 times the range error.
    public static let minimumGeometry: Double = 0.1
    public static let maxIterations = 50
    /// The fit from the linearised start replaces the one from the centroid only when its cost is
    /// below this fraction of it (see the type's notes).
    public static let switchRatio = 0.25

    public static func solve(_ anchors: FusionAnchors) -> FusionFix {
        // The helpers take the anchors `inout` only to read them in place: this compiler copies a
        // borrowed `FusionAnchors` (its 512-byte inline array) at every element read.
        var a = anchors
        var usable = 0
        var first = -1, second = -1
        var sw = 0.0, cx = 0.0, cy = 0.0
        for i in a.indices where a[unchecked: i].isUsable {
            usable += 1
            if first < 0 { first = i } else if second < 0 { second = i }
            sw += a[unchecked: i].weight
            cx += a[unchecked: i].weight * a[unchecked: i].x
            cy += a[unchecked: i].weight * a[unchecked: i].y
        }
        switch usable {
        case 0:
            return FusionFix(x: .nan, y: .nan, residual: .nan, geometry: 0, anchorCount: 0, iterations: 0, confidence: .none)
        case 1:
            let p = a[unchecked: first]
            return FusionFix(x: p.x, y: p.y, residual: p.distance, geometry: 0, anchorCount: 1, iterations: 0,
                             confidence: .low)
        case 2:
            let p = a[unchecked: first], q = a[unchecked: second]
            let ex = q.x - p.x, ey = q.y - p.y
            let l = (ex * ex + ey * ey).squareRoot()
            var x = p.x, y = p.y
            if l > 0 {
                let t = min(max((p.weight * p.distance + q.weight * (l - q.distance)) / (p.weight + q.weight), 0), l)
                x = p.x + ex * t / l
                y = p.y + ey * t / l
            }
            let c = cost(&a, x, y)
            return FusionFix(x: x, y: y, residual: (c / sw).squareRoot(), geometry: 0, anchorCount: 2, iterations: 0,
                             confidence: .low)
        default:
            break
        }

        var best = refine(&a, x: cx / sw, y: cy / sw)
        if let (lx, ly) = linearStart(&a, cx: cx / sw, cy: cy / sw) {
            let other = refine(&a, x: lx, y: ly)
            if other.cost < switchRatio * best.cost { best = other }
        }
        let g = geometry(&a, best.x, best.y)
        return FusionFix(x: best.x, y: best.y, residual: (best.cost / sw).squareRoot(), geometry: g,
                         anchorCount: usable, iterations: best.iterations,
                         confidence: g >= minimumGeometry ? .good : .low)
    }

    /// Σ wᵢ (|p − aᵢ| − dᵢ)² over usable anchors.
    @inline(__always)
    static func cost(_ a: inout FusionAnchors, _ x: Double, _ y: Double) -> Double {
        var c = 0.0
        for i in a.indices where a[unchecked: i].isUsable {
            let dx = x - a[unchecked: i].x, dy = y - a[unchecked: i].y
            let r = (dx * dx + dy * dy).squareRoot() - a[unchecked: i].distance
            c += a[unchecked: i].weight * r * r
        }
        return c
    }

    /// Damped Gauss–Newton from (x, y), with the Hessian's second-order term where it helps.
    ///
    /// The exact Hessian of the cost is Σ wᵢ [uᵢuᵢᵀ + (rᵢ − dᵢ)/rᵢ · (I − uᵢuᵢᵀ)]; Gauss–Newton keeps only
    /// the first term, which is right at zero residuals (exact ranges: quadratic convergence) but
    /// converges only linearly, sometimes very slowly, when noisy ranges leave large residuals. The
    /// full (Newton) matrix is used whenever it is positive definite, the Gauss–Newton one otherwise;
    /// a step is taken only if it does not raise the cost, the damping growing until one does.
    static func refine(_ a: inout FusionAnchors, x x0: Double, y y0: Double)
        -> (x: Double, y: Double, cost: Double, iterations: Int)
    {
        var x = x0, y = y0
        var c = cost(&a, x, y)
        var mu = 1e-6
        var iterations = 0
        while iterations < maxIterations {
            var a11 = 0.0, a12 = 0.0, a22 = 0.0, g1 = 0.0, g2 = 0.0, span = 0.0
            var h11 = 0.0, h12 = 0.0, h22 = 0.0
            for i in a.indices where a[unchecked: i].isUsable {
                let dx = x - a[unchecked: i].x, dy = y - a[unchecked: i].y
                let r = (dx * dx + dy * dy).squareRoot()
                span = max(span, r)
                guard r > 1e-12 else { continue }  // at an anchor: no direction, no gradient
                let ux = dx / r, uy = dy / r, w = a[unchecked: i].weight, res = r - a[unchecked: i].distance
                a11 += w * ux * ux
                a12 += w * ux * uy
                a22 += w * uy * uy
                g1 += w * ux * res
                g2 += w * uy * res
                let q = w * res / r
                h11 += q * (1 - ux * ux)
                h12 -= q * ux * uy
                h22 += q * (1 - uy * uy)
            }
            let trace = a11 + a22
            guard trace > 0 else { break }
            // Newton's matrix if positive definite, else Gauss–Newton's.
            var m11 = a11 + h11, m12 = a12 + h12, m22 = a22 + h22
            if !(m11 > 0 && m11 * m22 - m12 * m12 > 1e-12 * trace * trace) {
                m11 = a11
                m12 = a12
                m22 = a22
            }
            var stepped = false
            var step = 0.0
            while mu < 1e12 {
                let damp = mu * trace * 0.5
                let b11 = m11 + damp, b22 = m22 + damp
                let det = b11 * b22 - m12 * m12
                guard det > 0 else { mu *= 10; continue }
                let sx = -(b22 * g1 - m12 * g2) / det
                let sy = -(b11 * g2 - m12 * g1) / det
                let nc = cost(&a, x + sx, y + sy)
                if nc <= c {
                    x += sx
                    y += sy
                    c = nc
                    step = (sx * sx + sy * sy).squareRoot()
                    stepped = true
                    mu = max(mu * 0.1, 1e-12)
                    break
                }
                mu *= 10
            }
            iterations += 1
            if !stepped || step <= 1e-12 * (1 + span) { break }
        }
        return (x, y, c, iterations)
    }

    /// The linearised solution: subtracting the heaviest anchor's squared-range equation from the
    /// others gives equations linear in p, solved by weighted least squares (coordinates taken about
    /// the centroid for conditioning). Nil when the anchors are (nearly) collinear.
    static func linearStart(_ a: inout FusionAnchors, cx: Double, cy: Double) -> (Double, Double)? {
        var ref = -1
        for i in a.indices
        where a[unchecked: i].isUsable && (ref < 0 || a[unchecked: i].weight > a[unchecked: ref].weight) {
            ref = i
        }
        let rx = a[unchecked: ref].x - cx, ry = a[unchecked: ref].y - cy, rd = a[unchecked: ref].distance
        var m11 = 0.0, m12 = 0.0, m22 = 0.0, v1 = 0.0, v2 = 0.0
        for i in a.indices where i != ref && a[unchecked: i].isUsable {
            let ix = a[unchecked: i].x - cx, iy = a[unchecked: i].y - cy, d = a[unchecked: i].distance
            let h1 = 2 * (ix - rx), h2 = 2 * (iy - ry)
            let b = rd * rd - d * d + ix * ix + iy * iy - rx * rx - ry * ry
            let w = a[unchecked: i].weight
            m11 += w * h1 * h1
            m12 += w * h1 * h2
            m22 += w * h2 * h2
            v1 += w * h1 * b
            v2 += w * h2 * b
        }
        let det = m11 * m22 - m12 * m12
        let tr = m11 + m22
        guard tr > 0, det > 1e-6 * tr * tr else { return nil }
        let x = (m22 * v1 - m12 * v2) / det
        let y = (m11 * v2 - m12 * v1) / det
        guard x.isFinite, y.isFinite else { return nil }
        return (x + cx, y + cy)
    }

    /// 2·λ_min(Σ uᵢuᵢᵀ) / n at (x, y), in [0, 1]; 0 when the anchors themselves lie on a line
    /// (their spread across it below 5 % of the spread along it), where the mirror image of any
    /// fix across that line fits as well.
    static func geometry(_ a: inout FusionAnchors, _ x: Double, _ y: Double) -> Double {
        var n = 0.0, a11 = 0.0, a12 = 0.0, a22 = 0.0
        var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0, syy = 0.0, m = 0.0
        for i in a.indices where a[unchecked: i].isUsable {
            m += 1
            sx += a[unchecked: i].x
            sy += a[unchecked: i].y
            sxx += a[unchecked: i].x * a[unchecked: i].x
            sxy += a[unchecked: i].x * a[unchecked: i].y
            syy += a[unchecked: i].y * a[unchecked: i].y
            let dx = x - a[unchecked: i].x, dy = y - a[unchecked: i].y
            let r = (dx * dx + dy * dy).squareRoot()
            guard r > 1e-12 else { continue }
            let ux = dx / r, uy = dy / r
            n += 1
            a11 += ux * ux
            a12 += ux * uy
            a22 += uy * uy
        }
        guard n > 0, m > 0 else { return 0 }
        // The anchors' own spread: covariance eigenvalues.
        let cxx = sxx / m - (sx / m) * (sx / m), cyy = syy / m - (sy / m) * (sy / m), cxy = sxy / m - (sx / m) * (sy / m)
        let (spreadMin, spreadMax) = eigenvalues(cxx, cxy, cyy)
        guard spreadMax > 0, spreadMin > 0.05 * 0.05 * spreadMax else { return 0 }
        return min(max(2 * eigenvalues(a11, a12, a22).min / n, 0), 1)
    }

    /// Eigenvalues of the symmetric 2×2 matrix [[a, b], [b, c]].
    @inline(__always)
    static func eigenvalues(_ a: Double, _ b: Double, _ c: Double) -> (min: Double, max: Double) {
        let mean = (a + c) * 0.5, half = (a - c) * 0.5
        let radius = (half * half + b * b).squareRoot()
        return (mean - radius, mean + radius)
    }

    /// Fuses geographic anchors: the local frame is centred on the first, the fix mapped back.
    /// Nil without a usable anchor. At most `FusionAnchors.capacity` anchors are used (the heaviest).
    public static func fuse(_ anchors: some Sequence<(position: Coordinate, distance: Double)>) -> Coordinate? {
        var frame: LocalFrame?
        var buffer = FusionAnchors()
        for anchor in anchors {
            if frame == nil { frame = LocalFrame(origin: anchor.position) }
            buffer.append(FusionAnchor(frame!.point(anchor.position), distance: anchor.distance))
        }
        guard let frame else { return nil }
        let fix = solve(buffer)
        guard fix.confidence != .none else { return nil }
        return frame.coordinate(LocalPoint(east: fix.x, north: fix.y))
    }
}
