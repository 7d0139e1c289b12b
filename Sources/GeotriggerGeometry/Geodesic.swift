// Geodesic.swift — WGS84 geodesic inverse problem (distance only).
//
// This is a Swift port of the inverse solution in GeographicLib's C library, geodesic.c,
// implementing the algorithms described in
//
//   C. F. F. Karney, Algorithms for geodesics, J. Geodesy 87, 43–55 (2013);
//   https://doi.org/10.1007/s00190-012-0578-z
//   Addenda: https://geographiclib.sourceforge.io/geod-addenda.html
//
// Original C code: Copyright (c) Charles Karney (2012-2022) <charles@karney.com> and
// licensed under the MIT/X11 License. For more information, see
// https://geographiclib.sourceforge.io/
//
//   Permission is hereby granted, free of charge, to any person obtaining a copy of this
//   software and associated documentation files (the "Software"), to deal in the Software
//   without restriction, including without limitation the rights to use, copy, modify,
//   merge, publish, distribute, sublicense, and/or sell copies of the Software, and to
//   permit persons to whom the Software is furnished to do so, subject to the following
//   conditions:
//
//   The above copyright notice and this permission notice shall be included in all copies
//   or substantial portions of the Software.
//
//   THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
//   INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A
//   PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT
//   HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
//   CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE
//   OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
//
// Port notes (what differs from geodesic.c, all without changing s12):
//  * Only s12 is produced: azimuths, reduced length m12 (except where the algorithm itself
//    needs it), geodesic scales M12/M21, area S12, and the direct problem are dropped.
//  * The ellipsoid is fixed to WGS84 (f > 0), so the oblate-only branches are kept and the
//    f < 0 (prolate) branches of InverseStart are omitted.
//  * Coefficient scratch arrays are fixed-size `InlineArray`s: no heap allocation.
//  * The series order is GEOGRAPHICLIB_GEODESIC_ORDER = 6, as in the C library.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore

/// Geodesic distances on the WGS84 ellipsoid (Karney's algorithm, accurate to about 15 nm).
public enum Geodesic {
    /// WGS84 equatorial radius a, metres.
    public static let equatorialRadius: Double = 6_378_137
    /// WGS84 flattening f.
    public static let flattening: Double = 1 / 298.257223563
    /// WGS84 polar semi-axis b = a (1 − f), metres.
    public static let polarRadius: Double = equatorialRadius * (1 - flattening)

    /// The WGS84 geodesic distance s12 between `a` and `b`, in metres (shortest path on the ellipsoid).
    ///
    /// Latitudes must be in [−90, 90] (otherwise the result is NaN); longitudes may be any value.
    /// Correct everywhere, including coincident, nearly antipodal, polar, equatorial and meridional pairs.
    @inlinable
    public static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        inverseDistance(lat1: a.latitude, lon1: a.longitude, lat2: b.latitude, lon2: b.longitude)
    }

    /// The WGS84 geodesic distance in metres between (lat1, lon1) and (lat2, lon2), degrees.
    public static func inverseDistance(lat1: Double, lon1: Double, lat2: Double, lon2: Double) -> Double {
        wgs84.inverse(lat1, lon1, lat2, lon2)
    }

    static let wgs84 = GeodesicEllipsoid(a: equatorialRadius, f: flattening)
}

// MARK: - Constants (geodesic.c Init)

private let nC1 = 6
private let nC2 = 6
private let nC3 = 6
private let maxit1 = 20
private let maxit2 = maxit1 + Double.significandBitCount + 1 + 10  // DBL_MANT_DIG = 53
private let tiny = Double.leastNormalMagnitude.squareRoot()
private let tol0 = Double.ulpOfOne
private let tol1 = 200 * tol0
private let tol2 = tol0.squareRoot()
private let tolb = tol0
private let xthresh = 1000 * tol2
private let degree = Double.pi / 180

// MARK: - Math helpers (geodesic.c)

typealias Coeffs = InlineArray<7, Double>  // index 0 unused for the sine series, as in C

@inline(__always) private func sq(_ x: Double) -> Double { x * x }

@inline(__always) private func copysign(_ x: Double, _ y: Double) -> Double {
    Double(signOf: y, magnitudeOf: x)
}

/// Error-free sum: u + v = s + t exactly.
@inline(__always) private func sumx(_ u: Double, _ v: Double) -> (s: Double, t: Double) {
    let s = u + v
    var up = s - v
    var vpp = s - up
    up -= u
    vpp -= v
    let t = s != 0 ? 0 - (up + vpp) : s
    return (s, t)
}

@inline(__always) private func polyval<let N: Int>(_ n: Int, _ p: borrowing InlineArray<N, Double>, _ o: Int, _ x: Double) -> Double {
    if n < 0 { return 0 }
    var y = p[o]
    var i = 1
    while i <= n {
        y = y * x + p[o + i]
        i += 1
    }
    return y
}

@inline(__always) private func norm2(_ sinx: inout Double, _ cosx: inout Double) {
    let r = hypot(sinx, cosx)
    sinx /= r
    cosx /= r
}

@inline(__always) private func latFix(_ x: Double) -> Double { abs(x) > 90 ? .nan : x }

private func angDiff(_ x: Double, _ y: Double) -> (d: Double, e: Double) {
    // Use remainder instead of AngNormalize, since we treat boundary cases later taking
    // account of the error.
    var (d, t) = sumx((-x).remainder(dividingBy: 360), y.remainder(dividingBy: 360))
    // This second sum can only change d if abs(d) < 128, so don't need to apply remainder yet again.
    (d, t) = sumx(d.remainder(dividingBy: 360), t)
    // Fix the sign if d = -180, 0, 180.
    if d == 0 || abs(d) == 180 {
        // If t == 0, take sign from y - x else (t != 0, implies d = +/-180), d and t must
        // have opposite signs.
        d = copysign(d, t == 0 ? y - x : -t)
    }
    return (d, t)
}

private func angRound(_ x: Double) -> Double {
    let z = 1.0 / 16.0
    var y = abs(x)
    let w = z - y
    // The compiler mustn't "simplify" z - (z - y) to y (Swift never does).
    y = w > 0 ? z - w : y
    return copysign(y, x)
}

/// sin and cos of x degrees, reducing the argument exactly to [−45°, 45°] first.
private func sincosd(_ x: Double, _ t: Double = 0, rounded: Bool = false) -> (s: Double, c: Double) {
    var q: Int32 = 0
    var r = remquo(x, 90, &q)
    if rounded { r = angRound(r + t) }
    r *= degree
    let s = sin(r), c = cos(r)
    var sinx: Double, cosx: Double
    switch UInt32(bitPattern: q) & 3 {
    case 0: sinx = s; cosx = c
    case 1: sinx = c; cosx = -s
    case 2: sinx = -s; cosx = -c
    default: sinx = -c; cosx = s
    }
    cosx += 0  // special values from F.10.1.12
    if sinx == 0 { sinx = copysign(sinx, x) }  // special values from F.10.1.13
    return (sinx, cosx)
}

/// SinCosSeries with sinp = true: sum(c[i] * sin(2*i*x), i, 1, n), Clenshaw summation.
@inline(__always) private func sinSeries(_ sinx: Double, _ cosx: Double, _ c: borrowing Coeffs, _ n: Int) -> Double {
    var k = n + 1  // one beyond the last element
    let ar = 2 * (cosx - sinx) * (cosx + sinx)  // 2 * cos(2 * x)
    var y0 = 0.0, y1 = 0.0
    if n & 1 != 0 {
        k -= 1
        y0 = c[k]
    }
    var m = n / 2
    while m > 0 {
        m -= 1
        k -= 1
        y1 = ar * y0 - y1 + c[k]
        k -= 1
        y0 = ar * y1 - y0 + c[k]
    }
    return 2 * sinx * cosx * y0  // sin(2 * x) * y0
}

// MARK: - Series coefficients (geodesic.c, order 6)

/// The scale factor A1-1 = mean value of (d/dsigma)I1 - 1.
private func a1m1f(_ eps: Double) -> Double {
    let coeff: InlineArray<5, Double> = [
        // (1-eps)*A1-1, polynomial in eps2 of order 3
        1, 4, 64, 0, 256,
    ]
    let m = 6 / 2
    let t = polyval(m, coeff, 0, sq(eps)) / coeff[m + 1]
    return (t + eps) / (1 - eps)
}

/// The coefficients C1[l] in the Fourier expansion of B1.
private func c1f(_ eps: Double) -> Coeffs {
    let coeff: InlineArray<18, Double> = [
        -1, 6, -16, 32,     // C1[1]/eps^1, polynomial in eps2 of order 2
        -9, 64, -128, 2048, // C1[2]/eps^2, polynomial in eps2 of order 2
        9, -16, 768,        // C1[3]/eps^3, polynomial in eps2 of order 1
        3, -5, 512,         // C1[4]/eps^4, polynomial in eps2 of order 1
        -7, 1280,           // C1[5]/eps^5, polynomial in eps2 of order 0
        -7, 2048,           // C1[6]/eps^6, polynomial in eps2 of order 0
    ]
    return evenSeriesCoeffs(coeff, nC1, eps)
}

/// The scale factor A2-1 = mean value of (d/dsigma)I2 - 1.
private func a2m1f(_ eps: Double) -> Double {
    let coeff: InlineArray<5, Double> = [
        // (eps+1)*A2-1, polynomial in eps2 of order 3
        -11, -28, -192, 0, 256,
    ]
    let m = 6 / 2
    let t = polyval(m, coeff, 0, sq(eps)) / coeff[m + 1]
    return (t - eps) / (1 + eps)
}

/// The coefficients C2[l] in the Fourier expansion of B2.
private func c2f(_ eps: Double) -> Coeffs {
    let coeff: InlineArray<18, Double> = [
        1, 2, 16, 32,       // C2[1]/eps^1, polynomial in eps2 of order 2
        35, 64, 384, 2048,  // C2[2]/eps^2, polynomial in eps2 of order 2
        15, 80, 768,        // C2[3]/eps^3, polynomial in eps2 of order 1
        7, 35, 512,         // C2[4]/eps^4, polynomial in eps2 of order 1
        63, 1280,           // C2[5]/eps^5, polynomial in eps2 of order 0
        77, 2048,           // C2[6]/eps^6, polynomial in eps2 of order 0
    ]
    return evenSeriesCoeffs(coeff, nC2, eps)
}

/// Shared loop of C1f / C2f: c[l] = eps^l * poly_l(eps^2) / denominator.
@inline(__always) private func evenSeriesCoeffs(_ coeff: borrowing InlineArray<18, Double>, _ n: Int, _ eps: Double) -> Coeffs {
    var c = Coeffs(repeating: 0)
    let eps2 = sq(eps)
    var d = eps
    var o = 0
    for l in 1...n {
        let m = (n - l) / 2  // order of polynomial in eps^2
        c[l] = d * polyval(m, coeff, o, eps2) / coeff[o + m + 1]
        o += m + 2
        d *= eps
    }
    return c
}

// MARK: - The ellipsoid and the inverse solution

struct GeodesicEllipsoid: Sendable {
    let a: Double, f: Double, f1: Double, e2: Double, ep2: Double, n: Double, b: Double, etol2: Double
    let A3x: InlineArray<6, Double>
    let C3x: InlineArray<15, Double>

    init(a: Double, f: Double) {
        self.a = a
        self.f = f
        f1 = 1 - f
        e2 = f * (2 - f)
        ep2 = e2 / sq(f1)  // e2 / (1 - e2)
        n = f / (2 - f)
        b = a * f1
        // The sig12 threshold for "really short" (see geodesic.c geod_init).
        etol2 = 0.1 * tol2 / (max(0.001, abs(f)) * min(1.0, 1 - f / 2) / 2).squareRoot()

        // A3coeff: the scale factor A3 = mean value of (d/dsigma)I3.
        let a3: InlineArray<18, Double> = [
            -3, 128,         // A3, coeff of eps^5, polynomial in n of order 0
            -2, -3, 64,      // A3, coeff of eps^4, polynomial in n of order 1
            -1, -3, -1, 16,  // A3, coeff of eps^3, polynomial in n of order 2
            3, -1, -2, 8,    // A3, coeff of eps^2, polynomial in n of order 2
            1, -1, 2,        // A3, coeff of eps^1, polynomial in n of order 1
            1, 1,            // A3, coeff of eps^0, polynomial in n of order 0
        ]
        var A3x = InlineArray<6, Double>(repeating: 0)
        do {
            var o = 0, k = 0
            var j = 6 - 1
            while j >= 0 {  // coeff of eps^j
                let m = min(6 - j - 1, j)  // order of polynomial in n
                A3x[k] = polyval(m, a3, o, n) / a3[o + m + 1]
                k += 1
                o += m + 2
                j -= 1
            }
        }
        self.A3x = A3x

        // C3coeff: the coefficients C3[l] in the Fourier expansion of B3.
        let c3: InlineArray<45, Double> = [
            3, 128,          // C3[1], coeff of eps^5, polynomial in n of order 0
            2, 5, 128,       // C3[1], coeff of eps^4, polynomial in n of order 1
            -1, 3, 3, 64,    // C3[1], coeff of eps^3, polynomial in n of order 2
            -1, 0, 1, 8,     // C3[1], coeff of eps^2, polynomial in n of order 2
            -1, 1, 4,        // C3[1], coeff of eps^1, polynomial in n of order 1
            5, 256,          // C3[2], coeff of eps^5, polynomial in n of order 0
            1, 3, 128,       // C3[2], coeff of eps^4, polynomial in n of order 1
            -3, -2, 3, 64,   // C3[2], coeff of eps^3, polynomial in n of order 2
            1, -3, 2, 32,    // C3[2], coeff of eps^2, polynomial in n of order 2
            7, 512,          // C3[3], coeff of eps^5, polynomial in n of order 0
            -10, 9, 384,     // C3[3], coeff of eps^4, polynomial in n of order 1
            5, -9, 5, 192,   // C3[3], coeff of eps^3, polynomial in n of order 2
            7, 512,          // C3[4], coeff of eps^5, polynomial in n of order 0
            -14, 7, 512,     // C3[4], coeff of eps^4, polynomial in n of order 1
            21, 2560,        // C3[5], coeff of eps^5, polynomial in n of order 0
        ]
        var C3x = InlineArray<15, Double>(repeating: 0)
        do {
            var o = 0, k = 0
            for l in 1..<nC3 {  // l is index of C3[l]
                var j = nC3 - 1
                while j >= l {  // coeff of eps^j
                    let m = min(nC3 - j - 1, j)  // order of polynomial in n
                    C3x[k] = polyval(m, c3, o, n) / c3[o + m + 1]
                    k += 1
                    o += m + 2
                    j -= 1
                }
            }
        }
        self.C3x = C3x
    }

    @inline(__always) func a3f(_ eps: Double) -> Double {
        // polyval(nA3 - 1, A3x, eps)
        var y = A3x[0]
        for i in 1..<6 { y = y * eps + A3x[i] }
        return y
    }

    /// C3 coefficients; elements c[1] through c[nC3 - 1] are set.
    @inline(__always) func c3f(_ eps: Double) -> Coeffs {
        var c = Coeffs(repeating: 0)
        var mult = 1.0
        var o = 0
        for l in 1..<nC3 {  // l is index of C3[l]
            let m = nC3 - l - 1  // order of polynomial in eps
            mult *= eps
            var y = C3x[o]
            var i = 1
            while i <= m {
                y = y * eps + C3x[o + i]
                i += 1
            }
            c[l] = mult * y
            o += m + 1
        }
        return c
    }

    /// Lengths: s12b = distance/b and m12b = (reduced length)/b, each only if requested.
    func lengths(
        _ eps: Double, _ sig12: Double,
        _ ssig1: Double, _ csig1: Double, _ dn1: Double,
        _ ssig2: Double, _ csig2: Double, _ dn2: Double,
        wantS: Bool, wantM: Bool
    ) -> (s12b: Double, m12b: Double) {
        var m0 = 0.0, J12 = 0.0, A1 = 0.0, A2 = 0.0
        var Ca = Coeffs(repeating: 0)
        var Cb = Coeffs(repeating: 0)
        let redlp = wantM
        if wantS || redlp {
            A1 = a1m1f(eps)
            Ca = c1f(eps)
            if redlp {
                A2 = a2m1f(eps)
                Cb = c2f(eps)
                m0 = A1 - A2
                A2 = 1 + A2
            }
            A1 = 1 + A1
        }
        var s12b = 0.0
        if wantS {
            let B1 = sinSeries(ssig2, csig2, Ca, nC1) - sinSeries(ssig1, csig1, Ca, nC1)
            // Missing a factor of b
            s12b = A1 * (sig12 + B1)
            if redlp {
                let B2 = sinSeries(ssig2, csig2, Cb, nC2) - sinSeries(ssig1, csig1, Cb, nC2)
                J12 = m0 * sig12 + (A1 * B1 - A2 * B2)
            }
        } else if redlp {
            // Assume here that nC1 >= nC2
            for l in 1...nC2 { Cb[l] = A1 * Ca[l] - A2 * Cb[l] }
            J12 = m0 * sig12 + (sinSeries(ssig2, csig2, Cb, nC2) - sinSeries(ssig1, csig1, Cb, nC2))
        }
        var m12b = 0.0
        if redlp {
            // Missing a factor of b. Parens around (csig1 * ssig2) and (ssig1 * csig2) ensure
            // accurate cancellation in the case of coincident points.
            m12b = dn2 * (csig1 * ssig2) - dn1 * (ssig1 * csig2) - csig1 * csig2 * J12
        }
        return (s12b, m12b)
    }

    /// Solve k^4+2*k^3-(x^2+y^2-1)*k^2-2*y^2*k-y^2 = 0 for positive root k.
    func astroid(_ x: Double, _ y: Double) -> Double {
        let p = sq(x), q = sq(y), r = (p + q - 1) / 6
        guard !(q == 0 && r <= 0) else {
            // y = 0 with |x| <= 1. For y small, positive root is k = abs(y)/sqrt(1-x^2)
            return 0
        }
        // Avoid possible division by zero when r = 0 by multiplying equations for s and t
        // by r^3 and r, resp.
        let S = p * q / 4  // S = r^3 * s
        let r2 = sq(r), r3 = r * r2
        // The discriminant of the quadratic equation for T3. This is zero on the evolute
        // curve p^(1/3)+q^(1/3) = 1
        let disc = S * (S + 2 * r3)
        var u = r
        if disc >= 0 {
            var T3 = S + r3
            // Pick the sign on the sqrt to maximize abs(T3), minimizing cancellation.
            T3 += T3 < 0 ? -disc.squareRoot() : disc.squareRoot()  // T3 = (r * t)^3
            let T = cbrt(T3)  // T = r * t
            // T can be zero; but then r2 / T -> 0.
            u += T + (T != 0 ? r2 / T : 0)
        } else {
            // T is complex, but the way u is defined the result is real.
            let ang = atan2((-disc).squareRoot(), -(S + r3))
            // Choose the cube root which avoids cancellation. disc < 0 implies r < 0.
            u += 2 * r * cos(ang / 3)
        }
        let v = (sq(u) + q).squareRoot()  // guaranteed positive
        // Avoid loss of accuracy when u < 0.
        let uv = u < 0 ? q / (v - u) : u + v  // u+v, guaranteed positive
        let w = (uv - q) / (2 * v)  // positive?
        // Rearrange expression for k to avoid loss of accuracy due to subtraction.
        return uv / ((uv + sq(w)).squareRoot() + w)  // guaranteed positive
    }

    /// A starting point for Newton's method (salp1, calp1). If Newton's method isn't needed
    /// (really short lines), also sig12 >= 0 and dnm (sig12 is -1 otherwise).
    func inverseStart(
        _ sbet1: Double, _ cbet1: Double, _ dn1: Double,
        _ sbet2: Double, _ cbet2: Double, _ dn2: Double,
        _ lam12: Double, _ slam12: Double, _ clam12: Double
    ) -> (sig12: Double, salp1: Double, calp1: Double, dnm: Double) {
        var salp1 = 0.0, calp1 = 0.0, dnm = 0.0
        var sig12 = -1.0
        // bet12 = bet2 - bet1 in [0, pi); bet12a = bet2 + bet1 in (-pi, 0]
        let sbet12 = sbet2 * cbet1 - cbet2 * sbet1
        let cbet12 = cbet2 * cbet1 + sbet2 * sbet1
        let shortline = cbet12 >= 0 && sbet12 < 0.5 && cbet2 * lam12 < 0.5
        var somg12: Double, comg12: Double
        let sbet12a = sbet2 * cbet1 + cbet2 * sbet1
        if shortline {
            var sbetm2 = sq(sbet1 + sbet2)
            // sin((bet1+bet2)/2)^2 = (sbet1 + sbet2)^2 / ((sbet1 + sbet2)^2 + (cbet1 + cbet2)^2)
            sbetm2 /= sbetm2 + sq(cbet1 + cbet2)
            dnm = (1 + ep2 * sbetm2).squareRoot()
            let omg12 = lam12 / (f1 * dnm)
            somg12 = sin(omg12)
            comg12 = cos(omg12)
        } else {
            somg12 = slam12
            comg12 = clam12
        }

        salp1 = cbet2 * somg12
        calp1 = comg12 >= 0
            ? sbet12 + cbet2 * sbet1 * sq(somg12) / (1 + comg12)
            : sbet12a - cbet2 * sbet1 * sq(somg12) / (1 - comg12)

        let ssig12 = hypot(salp1, calp1)
        let csig12 = sbet1 * sbet2 + cbet1 * cbet2 * comg12

        if shortline && ssig12 < etol2 {
            // really short lines (salp2, calp2 only matter for azimuths, omitted)
            sig12 = atan2(ssig12, csig12)
        } else if abs(n) > 0.1  // No astroid calc if too eccentric
                    || csig12 >= 0 || ssig12 >= 6 * abs(n) * .pi * sq(cbet1) {
            // Nothing to do, zeroth order spherical approximation is OK
        } else {
            // Scale lam12 and bet2 to x, y coordinate system where antipodal point is at
            // origin and singular point is at y = 0, x = -1.
            let lam12x = atan2(-slam12, -clam12)  // lam12 - pi
            // f > 0 (WGS84): x = dlong, y = dlat
            let k2 = sq(sbet1) * ep2
            let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
            let lamscale = f * cbet1 * a3f(eps) * .pi
            let betscale = lamscale * cbet1
            let x = lam12x / lamscale
            let y = sbet12a / betscale

            if y > -tol1 && x > -1 - xthresh {
                // strip near cut
                salp1 = Double.minimum(1.0, -x)
                calp1 = -(1 - sq(salp1)).squareRoot()
            } else {
                // Estimate alp1 by solving the astroid problem; estimate omg12 from the
                // astroid and use the spherical formula to compute alp1.
                let k = astroid(x, y)
                let omg12a = lamscale * (-x * k / (1 + k))
                somg12 = sin(omg12a)
                comg12 = -cos(omg12a)
                // Update spherical estimate of alp1 using omg12 instead of lam12
                salp1 = cbet2 * somg12
                calp1 = sbet12a - cbet2 * sbet1 * sq(somg12) / (1 - comg12)
            }
        }
        // Sanity check on starting guess. Backwards check allows NaN through.
        if !(salp1 <= 0) {
            norm2(&salp1, &calp1)
        } else {
            salp1 = 1
            calp1 = 0
        }
        return (sig12, salp1, calp1, dnm)
    }

    struct Lambda12Result {
        var lam12: Double, sig12: Double
        var ssig1: Double, csig1: Double, ssig2: Double, csig2: Double
        var eps: Double, dlam12: Double
    }

    func lambda12(
        _ sbet1: Double, _ cbet1: Double, _ dn1: Double,
        _ sbet2: Double, _ cbet2: Double, _ dn2: Double,
        _ salp1: Double, _ calp1In: Double,
        _ slam120: Double, _ clam120: Double,
        diffp: Bool
    ) -> Lambda12Result {
        var calp1 = calp1In
        if sbet1 == 0 && calp1 == 0 {
            // Break degeneracy of equatorial line. This case has already been handled.
            calp1 = -tiny
        }
        // sin(alp1) * cos(bet1) = sin(alp0)
        let salp0 = salp1 * cbet1
        let calp0 = hypot(calp1, salp1 * sbet1)  // calp0 > 0

        // tan(bet1) = tan(sig1) * cos(alp1)
        // tan(omg1) = sin(alp0) * tan(sig1) = tan(omg1)=tan(alp1)*sin(bet1)
        var ssig1 = sbet1
        let somg1 = salp0 * sbet1
        var csig1 = calp1 * cbet1
        let comg1 = csig1
        norm2(&ssig1, &csig1)
        // norm2(&somg1, &comg1); -- don't need to normalize!

        // Enforce symmetries in the case abs(bet2) = -bet1. (salp2 is only an output.)
        // calp2 = sqrt(1 - sq(salp2)) = sqrt(sq(calp0) - sq(sbet2)) / cbet2, rearranged.
        let calp2 = cbet2 != cbet1 || abs(sbet2) != -sbet1
            ? (sq(calp1 * cbet1) + (cbet1 < -sbet1
                ? (cbet2 - cbet1) * (cbet1 + cbet2)
                : (sbet1 - sbet2) * (sbet1 + sbet2))).squareRoot() / cbet2
            : abs(calp1)
        // tan(bet2) = tan(sig2) * cos(alp2)
        // tan(omg2) = sin(alp0) * tan(sig2).
        var ssig2 = sbet2
        let somg2 = salp0 * sbet2
        var csig2 = calp2 * cbet2
        let comg2 = csig2
        norm2(&ssig2, &csig2)

        // sig12 = sig2 - sig1, limit to [0, pi]
        let sig12 = atan2(Double.maximum(0.0, csig1 * ssig2 - ssig1 * csig2) + 0,
                          csig1 * csig2 + ssig1 * ssig2)
        // omg12 = omg2 - omg1, limit to [0, pi]
        let somg12 = Double.maximum(0.0, comg1 * somg2 - somg1 * comg2) + 0
        let comg12 = comg1 * comg2 + somg1 * somg2
        // eta = omg12 - lam120
        let eta = atan2(somg12 * clam120 - comg12 * slam120,
                        comg12 * clam120 + somg12 * slam120)
        let k2 = sq(calp0) * ep2
        let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
        let C3a = c3f(eps)
        let B312 = sinSeries(ssig2, csig2, C3a, nC3 - 1) - sinSeries(ssig1, csig1, C3a, nC3 - 1)
        let domg12 = -f * a3f(eps) * salp0 * (sig12 + B312)
        let lam12 = eta + domg12

        var dlam12 = 0.0
        if diffp {
            if calp2 == 0 {
                dlam12 = -2 * f1 * dn1 / sbet1
            } else {
                dlam12 = lengths(eps, sig12, ssig1, csig1, dn1, ssig2, csig2, dn2,
                                 wantS: false, wantM: true).m12b
                dlam12 *= f1 / (calp2 * cbet2)
            }
        }
        return Lambda12Result(lam12: lam12, sig12: sig12, ssig1: ssig1, csig1: csig1,
                              ssig2: ssig2, csig2: csig2, eps: eps, dlam12: dlam12)
    }

    /// geod_geninverse_int restricted to s12.
    func inverse(_ lat1In: Double, _ lon1: Double, _ lat2In: Double, _ lon2: Double) -> Double {
        // Compute longitude difference (AngDiff does this carefully). Result is in
        // [-180, 180] but -180 is only for west-going geodesics. 180 is for east-going and
        // meridional geodesics.
        var (lon12, lon12s) = angDiff(lon1, lon2)
        // Make longitude difference positive. (lonsign only affects azimuths/area: omitted.)
        let lonsign: Double = lon12.sign == .minus ? -1 : 1
        lon12 *= lonsign
        lon12s *= lonsign
        let lam12 = lon12 * degree
        // Calculate sincos of lon12 + error (this applies AngRound internally).
        let (slam12, clam12) = sincosd(lon12, lon12s, rounded: true)
        lon12s = (180 - lon12) - lon12s  // the supplementary longitude difference

        // If really close to the equator, treat as on equator.
        var lat1 = angRound(latFix(lat1In))
        var lat2 = angRound(latFix(lat2In))
        // Swap points so that point with higher (abs) latitude is point 1.
        // If one latitude is a nan, then it becomes lat1.
        if abs(lat1) < abs(lat2) || lat2.isNaN {
            swap(&lat1, &lat2)
        }
        // Make lat1 <= -0
        let latsign: Double = lat1.sign == .minus ? 1 : -1
        lat1 *= latsign
        lat2 *= latsign
        // Now 0 <= lon12 <= 180, -90 <= lat1 <= -0, lat1 <= lat2 <= -lat1.

        var (sbet1, cbet1) = sincosd(lat1)
        sbet1 *= f1
        // Ensure cbet1 = +epsilon at poles
        norm2(&sbet1, &cbet1)
        cbet1 = Double.maximum(tiny, cbet1)

        var (sbet2, cbet2) = sincosd(lat2)
        sbet2 *= f1
        // Ensure cbet2 = +epsilon at poles
        norm2(&sbet2, &cbet2)
        cbet2 = Double.maximum(tiny, cbet2)

        // If cbet1 < -sbet1, then cbet2 - cbet1 is a sensitive measure of |bet1| - |bet2|.
        // Alternatively (cbet1 >= -sbet1), abs(sbet2) + sbet1 is a better measure. Sometimes
        // these quantities vanish and in that case we force bet2 = +/- bet1 exactly.
        if cbet1 < -sbet1 {
            if cbet2 == cbet1 { sbet2 = copysign(sbet1, sbet2) }
        } else {
            if abs(sbet2) == -sbet1 { cbet2 = cbet1 }
        }

        let dn1 = (1 + ep2 * sq(sbet1)).squareRoot()
        let dn2 = (1 + ep2 * sq(sbet2)).squareRoot()

        var meridian = lat1 == -90 || slam12 == 0
        var s12x = 0.0
        var sig12 = 0.0
        var calp1 = 0.0, salp1 = 0.0

        if meridian {
            // Endpoints are on a single full meridian, so the geodesic might lie on a meridian.
            calp1 = clam12; salp1 = slam12  // Head to the target longitude
            let calp2 = 1.0                 // At the target we're heading north
            // tan(bet) = tan(sig) * cos(alp)
            let ssig1 = sbet1, csig1 = calp1 * cbet1
            let ssig2 = sbet2, csig2 = calp2 * cbet2
            // sig12 = sig2 - sig1
            sig12 = atan2(Double.maximum(0.0, csig1 * ssig2 - ssig1 * csig2) + 0,
                          csig1 * csig2 + ssig1 * ssig2)
            var (s12b, m12b) = lengths(n, sig12, ssig1, csig1, dn1, ssig2, csig2, dn2,
                                       wantS: true, wantM: true)
            // Add the check for sig12 since zero length geodesics might yield m12 < 0.
            // In fact, we will have sig12 > pi/2 for meridional geodesic which is not a
            // shortest path.
            if sig12 < 1 || m12b >= 0 {
                // Need at least 2, to handle 90 0 90 180
                if sig12 < 3 * tiny
                    // Prevent negative s12 or m12 for short lines
                    || (sig12 < tol0 && (s12b < 0 || m12b < 0)) {
                    sig12 = 0; m12b = 0; s12b = 0
                }
                s12x = s12b * b
            } else {
                // m12 < 0, i.e., prolate and too close to anti-podal
                meridian = false
            }
        }

        if !meridian && sbet1 == 0  // and sbet2 == 0
            // Mimic the way Lambda12 works with calp1 = 0
            && (f <= 0 || lon12s >= f * 180) {
            // Geodesic runs along equator
            s12x = a * lam12
        } else if !meridian {
            // Now point1 and point2 belong within a hemisphere bounded by a meridian and
            // geodesic is neither meridional or equatorial.

            // Figure a starting point for Newton's method
            let start = inverseStart(sbet1, cbet1, dn1, sbet2, cbet2, dn2, lam12, slam12, clam12)
            sig12 = start.sig12
            salp1 = start.salp1
            calp1 = start.calp1

            if sig12 >= 0 {
                // Short lines (InverseStart sets dnm)
                s12x = sig12 * b * start.dnm
            } else {
                // Newton's method. This is a straightforward solution of f(alp1) =
                // lambda12(alp1) - lam12 = 0 with one wrinkle. f(alp) has exactly one root
                // in the interval (0, pi) and its derivative is positive at the root. Thus
                // f(alp) is positive for alp > alp1 and negative for alp < alp1. During the
                // course of the iteration, a range (alp1a, alp1b) is maintained which
                // brackets the root and with each evaluation of f(alp) the range is shrunk,
                // if possible. Newton's method is restarted whenever the derivative of f is
                // negative (because the new value of alp1 is then further from the solution)
                // or if the new estimate of alp1 lies outside (0,pi); in this case, the new
                // starting guess is taken to be (alp1a + alp1b) / 2.
                var ssig1 = 0.0, csig1 = 0.0, ssig2 = 0.0, csig2 = 0.0, eps = 0.0
                var numit = 0
                // Bracketing range
                var salp1a = tiny, calp1a = 1.0, salp1b = tiny, calp1b = -1.0
                var tripn = false
                var tripb = false
                while true {
                    let r = lambda12(sbet1, cbet1, dn1, sbet2, cbet2, dn2, salp1, calp1,
                                     slam12, clam12, diffp: numit < maxit1)
                    let v = r.lam12, dv = r.dlam12
                    sig12 = r.sig12
                    ssig1 = r.ssig1; csig1 = r.csig1; ssig2 = r.ssig2; csig2 = r.csig2
                    eps = r.eps
                    if tripb
                        // Reversed test to allow escape with NaNs
                        || !(abs(v) >= (tripn ? 8 : 1) * tol0)
                        // Enough bisections to get accurate result
                        || numit == maxit2 {
                        break
                    }
                    // Update bracketing values
                    if v > 0 && (numit > maxit1 || calp1 / salp1 > calp1b / salp1b) {
                        salp1b = salp1; calp1b = calp1
                    } else if v < 0 && (numit > maxit1 || calp1 / salp1 < calp1a / salp1a) {
                        salp1a = salp1; calp1a = calp1
                    }
                    if numit < maxit1 && dv > 0 {
                        let dalp1 = -v / dv
                        if abs(dalp1) < .pi {
                            let sdalp1 = sin(dalp1), cdalp1 = cos(dalp1)
                            let nsalp1 = salp1 * cdalp1 + calp1 * sdalp1
                            if nsalp1 > 0 {
                                calp1 = calp1 * cdalp1 - salp1 * sdalp1
                                salp1 = nsalp1
                                norm2(&salp1, &calp1)
                                // In some regimes we don't get quadratic convergence because
                                // slope -> 0. So use convergence conditions based on epsilon
                                // instead of sqrt(epsilon).
                                tripn = abs(v) <= 16 * tol0
                                numit += 1
                                continue
                            }
                        }
                    }
                    // Either dv was not positive or updated value was outside legal range.
                    // Use the midpoint of the bracket as the next estimate.
                    salp1 = (salp1a + salp1b) / 2
                    calp1 = (calp1a + calp1b) / 2
                    norm2(&salp1, &calp1)
                    tripn = false
                    tripb = (abs(salp1a - salp1) + (calp1a - calp1) < tolb
                             || abs(salp1 - salp1b) + (calp1 - calp1b) < tolb)
                    numit += 1
                }
                let s12b = lengths(eps, sig12, ssig1, csig1, dn1, ssig2, csig2, dn2,
                                   wantS: true, wantM: false).s12b
                s12x = s12b * b
            }
        }
        return 0 + s12x  // Convert -0 to 0
    }
}
