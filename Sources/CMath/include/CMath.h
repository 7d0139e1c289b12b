#ifndef GEOTRIGGER_CMATH_H
#define GEOTRIGGER_CMATH_H

/// sin x and cos x from one call (glibc's sincos, one argument reduction for both): the same bits
/// as sin and cos, about 30 % cheaper than the two. Swift's Glibc module does not export sincos
/// (a GNU extension), so the compiler's builtin, which lowers to it, is wrapped here.
static inline void geotrigger_sincos(double x, double *s, double *c) { __builtin_sincos(x, s, c); }

/// The sine-cosine table `sinCos` reads: for k in −GEOTRIGGER_SINCOS_STEPS…GEOTRIGGER_SINCOS_STEPS,
/// sin(k·π/1440) and cos(k·π/1440) (steps of 1/8°), each the double nearest the exact value but
/// for long double's last bits: computed once, before main, in long double (CMath.c).
#define GEOTRIGGER_SINCOS_STEPS 1468
extern double geotrigger_sincos_table[2 * (2 * GEOTRIGGER_SINCOS_STEPS + 1)];

/// The (sin, cos) pair of step k, |k| ≤ GEOTRIGGER_SINCOS_STEPS.
static inline const double *geotrigger_sincos_step(long k) {
    return geotrigger_sincos_table + 2 * (k + GEOTRIGGER_SINCOS_STEPS);
}

#endif
