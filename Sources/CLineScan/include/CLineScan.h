#ifndef GEOTRIGGER_CLINESCAN_H
#define GEOTRIGGER_CLINESCAN_H

#include <stdint.h>
#include <string.h>
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

/// What `geotrigger_frame_line` found at the start of a buffer: its first line, in one pass.
typedef struct {
    /// The line's length without its end (a newline, or CR LF), or -1 when no newline is among
    /// the first 128 bytes the buffer holds.
    int64_t length;
    /// How many bytes end the line: 1 (a newline) or 2 (CR LF).
    int64_t terminator;
    /// The index of the line's last `$`, or -1.
    int64_t dollar;
    /// Bit i set (bit i - 64 of `high`) where byte i of the line is a comma after `dollar`.
    uint64_t low, high;
    /// The XOR of the line's bytes after its first (a sentence's checksum, when the line begins
    /// with its `$`, once the `*HH` after it are XORed back out).
    uint8_t xor_after_first;
} geotrigger_line_frame_t;

#if defined(__SSE2__)
/// The `$`s (bits `d`) and commas (bits `c`) of a line's sixteen bytes at `k`, for
/// `geotrigger_frame_line`: the commas kept at their place in `commas`, unless a later `$` begins
/// the sentence again (the line's last `$` goes to `dollar`, the commas before it are dropped).
static inline void geotrigger_frame_commas(uint32_t d, uint32_t c, int64_t k, int64_t *dollar, uint16_t commas[8]) {
    if (d) {
        const int last = 31 - __builtin_clz(d);
        *dollar = k + last;
        memset(commas, 0, 8 * sizeof commas[0]);
        c &= ~((2u << last) - 1);
    }
    commas[k >> 4] = (uint16_t)c;
}
#endif

/// The first line of `buffer[0..<count]`, if it ends within 128 bytes: its length, its last `$`,
/// the commas after it and the XOR of its bytes, from one load of each sixteen bytes.
///
/// Reads past `count`: every load starts before `count` and may end up to fifteen bytes after
/// it, so the caller must own and pad the buffer (`PaddedBytes` with sixteen bytes of padding,
/// as `LineReader`'s buffer has); bytes past `count` never count.
static inline geotrigger_line_frame_t geotrigger_frame_line(const uint8_t *buffer, int64_t count) {
    geotrigger_line_frame_t r = { -1, 0, -1, 0, 0, 0 };
#if defined(__SSE2__)
    // Each sixteen bytes' commas, kept as sixteen bits at their place (the map's two words), and
    // cleared where a later `$` begins the sentence again.
    uint16_t commas[8] = { 0 };
    __m128i acc = _mm_setzero_si128();
    int64_t dollar = -1;
    const int64_t limit = count < 128 ? count : 128;
    for (int64_t k = 0; k < limit; k += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(buffer + k));
        uint32_t nl = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')));
        uint32_t d = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('$')));
        uint32_t c = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')));
        if (nl == 0 && k + 16 <= count) {
            // Sixteen bytes all of the line.
            geotrigger_frame_commas(d, c, k, &dollar, commas);
            acc = _mm_xor_si128(acc, v);
            continue;
        }
        // The last sixteen: the line's bytes are those before its newline (none past `count`).
        if (count - k < 16) nl &= (1u << (count - k)) - 1;
        if (nl == 0) break;
        const int j = __builtin_ctz(nl);
        const uint32_t live = (1u << j) - 1;
        d &= live;
        c &= live;
        geotrigger_frame_commas(d, c, k, &dollar, commas);
        const __m128i index = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        acc = _mm_xor_si128(acc, _mm_and_si128(v, _mm_cmplt_epi8(index, _mm_set1_epi8((char)j))));
        acc = _mm_xor_si128(acc, _mm_srli_si128(acc, 8));
        acc = _mm_xor_si128(acc, _mm_srli_si128(acc, 4));
        acc = _mm_xor_si128(acc, _mm_srli_si128(acc, 2));
        acc = _mm_xor_si128(acc, _mm_srli_si128(acc, 1));
        int64_t length = k + j;
        uint8_t x = (uint8_t)_mm_cvtsi128_si32(acc);
        r.terminator = 1;
        if (length > 0 && buffer[length - 1] == '\r') {
            length -= 1;
            x ^= '\r';
            r.terminator = 2;
        }
        // A line of no bytes has no first byte to leave out.
        if (length > 0) x ^= buffer[0];
        r.length = length;
        r.dollar = dollar;
        memcpy(&r.low, &commas[0], 8);
        memcpy(&r.high, &commas[4], 8);
        r.xor_after_first = x;
        return r;
    }
#endif
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
