// geotrigger_sincos is static inline in include/CMath.h; the sine-cosine table is filled here.
#include "CMath.h"
#include <math.h>

__attribute__((nodebug)) double geotrigger_sincos_table[2 * (2 * GEOTRIGGER_SINCOS_STEPS + 1)];

// Before main, so the hot path reads the table with no check that it is ready. long double
// carries 64 bits: k·π/1440 and its sine and cosine are within a few 10⁻²⁰ of the exact values,
// so each double below is the nearest one but in the rarest ties.
__attribute__((constructor, nodebug)) static void geotrigger_fill_sincos_table(void) {
    const long double step = 3.14159265358979323846264338327950288L / 1440;
    for (long k = -GEOTRIGGER_SINCOS_STEPS; k <= GEOTRIGGER_SINCOS_STEPS; k++) {
        const long double a = (long double)k * step;
        double *entry = geotrigger_sincos_table + 2 * (k + GEOTRIGGER_SINCOS_STEPS);
        entry[0] = (double)sinl(a);
        entry[1] = (double)cosl(a);
    }
}
