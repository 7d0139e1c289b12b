#ifndef GEOTRIGGER_CLINESCAN_H
#define GEOTRIGGER_CLINESCAN_H

#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// What `geotrigger_scan_line` found in a line: its last `$` and the commas after it.
typedef struct {
    /// The index of the last `$`, or -1.
    int64_t dollar;
    /// Bit i set (bit i - 64 of `high`) where byte i of the line is a comma after `dollar`, for
    /// the line's first 128 bytes; only when asked for (`map_commas`).
    uint64_t low, high;
} geotrigger_line_scan_t;

#if defined(__SSE2__)
/// The sixteen bytes of `line` at `at`, those in `fresh` (bit i for byte i) not seen before: a
/// `$` among them is the last one so far (the commas before it no longer count), and with
/// `map` their commas after it are added to `commas`.
static inline void geotrigger_scan16(const uint8_t *line, int64_t at, uint32_t fresh, int map,
                                     int64_t *dollar, unsigned __int128 *commas) {
    const __m128i v = _mm_loadu_si128((const __m128i *)(line + at));
    const uint32_t d = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('$'))) & fresh;
    uint32_t c = map ? (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(','))) & fresh : 0;
    if (d) {
        const int j = 31 - __builtin_clz(d);
        *dollar = at + j;
        *commas = 0;
        c &= ~((2u << j) - 1);
    }
    if (c) *commas |= (unsigned __int128)c << at;
}
#endif

/// Sixteen bytes at a time (SSE compare and movemask, which Swift's SIMD types do not offer):
/// the last `$` of `line[from..<end]` and, when `map_commas` (and `end` <= 128), where the commas
/// after it are. Every load lies within `line[from..<end]`: the last sixteen bytes are loaded
/// again, those already seen masked off. Lines shorter than sixteen bytes, and other targets,
/// are read a byte at a time.
static inline geotrigger_line_scan_t geotrigger_scan_line(const uint8_t *line, int64_t from, int64_t end,
                                                          int map_commas) {
    int64_t dollar = -1;
    unsigned __int128 commas = 0;
    const int map = map_commas && end <= 128;
    int64_t k = from;
#if defined(__SSE2__)
    for (; k + 16 <= end; k += 16) geotrigger_scan16(line, k, 0xFFFFu, map, &dollar, &commas);
    if (k < end && end - from >= 16) {
        // The last sixteen bytes, those before `k` seen already.
        geotrigger_scan16(line, end - 16, (0xFFFFu << (k - (end - 16))) & 0xFFFFu, map, &dollar, &commas);
        k = end;
    }
#endif
    for (; k < end; k++) {
        if (line[k] == '$') {
            dollar = k;
            commas = 0;
        } else if (map && line[k] == ',') {
            commas |= (unsigned __int128)1 << k;
        }
    }
    geotrigger_line_scan_t r = { dollar, (uint64_t)commas, (uint64_t)(commas >> 64) };
    return r;
}

/// The index of the last `byte` in `line[from..<end]`, or -1: sixteen bytes at a time from the
/// end where SSE is (the first sixteen loaded again, those past `from` masked off, rather than
/// reading before it), a byte at a time otherwise and in lines shorter than sixteen bytes.
static inline int64_t geotrigger_last_byte(const uint8_t *line, int64_t from, int64_t end, uint8_t byte) {
    int64_t k = end;
#if defined(__SSE2__)
    if (end - from >= 16) {
        const __m128i wanted = _mm_set1_epi8((char)byte);
        for (; k - 16 >= from; k -= 16) {
            const uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(line + k - 16)), wanted));
            if (m) return k - 16 + (31 - __builtin_clz(m));
        }
        if (k > from) {
            // The first bytes, in a load that starts at `from`: only those before `k` count.
            const uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(line + from)), wanted))
                & ((1u << (k - from)) - 1);
            if (m) return from + (31 - __builtin_clz(m));
        }
        return -1;
    }
#endif
    while (k > from) {
        k--;
        if (line[k] == byte) return k;
    }
    return -1;
}

/// The XOR of the bytes of `line[from..<end]` (an NMEA sentence's checksum), sixteen at a time
/// where SSE is (XOR does not care where a byte sits: the sixteen are folded at the end). Every
/// load lies within `line[from..<end]`: the last sixteen bytes are loaded again, those already
/// XORed masked off.
static inline uint8_t geotrigger_xor_bytes(const uint8_t *line, int64_t from, int64_t end) {
    uint8_t x = 0;
    int64_t k = from;
#if defined(__SSE2__)
    __m128i acc = _mm_setzero_si128();
    for (; k + 16 <= end; k += 16) acc = _mm_xor_si128(acc, _mm_loadu_si128((const __m128i *)(line + k)));
    if (k < end && end - from >= 16) {
        const int64_t s = end - 16;
        const __m128i index = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        const __m128i fresh = _mm_cmpgt_epi8(index, _mm_set1_epi8((char)(k - s - 1)));
        acc = _mm_xor_si128(acc, _mm_and_si128(fresh, _mm_loadu_si128((const __m128i *)(line + s))));
        k = end;
    }
    acc = _mm_xor_si128(acc, _mm_srli_si128(acc, 8));
    acc = _mm_xor_si128(acc, _mm_srli_si128(acc, 4));
    acc = _mm_xor_si128(acc, _mm_srli_si128(acc, 2));
    acc = _mm_xor_si128(acc, _mm_srli_si128(acc, 1));
    x = (uint8_t)_mm_cvtsi128_si32(acc);
#endif
    for (; k < end; k++) x ^= line[k];
    return x;
}

#endif
