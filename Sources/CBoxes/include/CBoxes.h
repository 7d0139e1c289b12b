#ifndef GEOTRIGGER_CBOXES_H
#define GEOTRIGGER_CBOXES_H

#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// Which of 16 boxes meet a query box (closed intervals), as bit k for box k. The block holds
/// the 16 boxes as four rows: 16 minX, 16 minY, 16 maxX, 16 maxY (64 floats, 16-byte aligned).
/// A box with a NaN bound meets nothing (every comparison with NaN is false), so a short last
/// block is padded with NaN. Four boxes per SSE comparison and one movemask per four, where
/// Swift's SIMD types offer no mask-to-bits operation; other targets compare one box at a time.
static inline uint32_t geotrigger_meets16(const float *block, float minX, float minY, float maxX, float maxY) {
#if defined(__SSE2__)
    const __m128 qMaxX = _mm_set1_ps(maxX), qMaxY = _mm_set1_ps(maxY);
    const __m128 qMinX = _mm_set1_ps(minX), qMinY = _mm_set1_ps(minY);
    uint32_t mask = 0;
    for (int k = 0; k < 4; k++) {
        const __m128 a = _mm_cmple_ps(_mm_load_ps(block + 4 * k), qMaxX);
        const __m128 b = _mm_cmple_ps(_mm_load_ps(block + 16 + 4 * k), qMaxY);
        const __m128 c = _mm_cmpge_ps(_mm_load_ps(block + 32 + 4 * k), qMinX);
        const __m128 d = _mm_cmpge_ps(_mm_load_ps(block + 48 + 4 * k), qMinY);
        mask |= (uint32_t)_mm_movemask_ps(_mm_and_ps(_mm_and_ps(a, b), _mm_and_ps(c, d))) << (4 * k);
    }
    return mask;
#else
    uint32_t mask = 0;
    for (int k = 0; k < 16; k++) {
        if (block[k] <= maxX && block[16 + k] <= maxY && block[32 + k] >= minX && block[48 + k] >= minY) {
            mask |= (uint32_t)1 << k;
        }
    }
    return mask;
#endif
}

/// What `geotrigger_due` found: which entries are due, and the smallest clearance not due.
typedef struct {
    uint32_t mask;
    float rest;
} geotrigger_due_t;

/// Which of `4 * quads` retest odometer readings (1 <= quads <= 4: a block of a device's
/// neighbourhood clearances, `Neighbourhood`) are due at `limit`, as bit k for c[k] <= limit;
/// `rest` is returned lowered to every c[k] above `limit` (the next one due). A list is padded
/// to a multiple of four with +infinity, which is never due and never lowers `rest`. Four per
/// SSE compare, one movemask per four; other targets compare one at a time. (`rest` goes in and
/// out by value: a pointer to the caller's variable made Swift protect and outline its caller.)
static inline geotrigger_due_t geotrigger_due(const float *c, int quads, float limit, float rest) {
    geotrigger_due_t out;
#if defined(__SSE2__)
    const __m128 l = _mm_set1_ps(limit), inf = _mm_set1_ps(__builtin_inff());
    __m128 m = _mm_set1_ps(rest);
    uint32_t mask = 0;
    for (int k = 0; k < quads; k++) {
        const __m128 v = _mm_loadu_ps(c + 4 * k);
        const __m128 due = _mm_cmple_ps(v, l);
        mask |= (uint32_t)_mm_movemask_ps(due) << (4 * k);
        m = _mm_min_ps(m, _mm_or_ps(_mm_and_ps(due, inf), _mm_andnot_ps(due, v)));
    }
    m = _mm_min_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
    m = _mm_min_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
    out.mask = mask;
    out.rest = _mm_cvtss_f32(m);
#else
    uint32_t mask = 0;
    for (int k = 0; k < 4 * quads; k++) {
        if (c[k] <= limit) {
            mask |= (uint32_t)1 << k;
        } else if (c[k] < rest) {
            rest = c[k];
        }
    }
    out.mask = mask;
    out.rest = rest;
#endif
    return out;
}

/// Whether `v` is among the `n` values at `a`, four compared at a time (a batch's devices,
/// `Monitor.batchAppend`).
static inline int geotrigger_contains_i32(const int32_t *a, int32_t n, int32_t v) {
    int32_t k = 0;
#if defined(__SSE2__)
    const __m128i t = _mm_set1_epi32(v);
    __m128i any = _mm_setzero_si128();
    for (; k + 4 <= n; k += 4) any = _mm_or_si128(any, _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(a + k)), t));
    if (_mm_movemask_epi8(any) != 0) return 1;
#endif
    for (; k < n; k++) if (a[k] == v) return 1;
    return 0;
}

/// `base + step` when a < b (unsigned), else `base`, by a conditional move: for a binary search
/// over random keys, whose comparisons no predictor can learn. In C with the move written out,
/// because the compiler turns a select in a loop back into a branch (LLVM's x86 cmov conversion).
static inline long geotrigger_step_if_below(long base, long step, uint32_t a, uint32_t b) {
#if defined(__x86_64__)
    const long moved = base + step;
    __asm__("cmpl %[b], %[a]\n\tcmovbq %[moved], %[base]"
            : [base] "+r"(base)
            : [moved] "r"(moved), [a] "r"(a), [b] "r"(b)
            : "cc");
    return base;
#else
    return a < b ? base + step : base;
#endif
}

#endif
