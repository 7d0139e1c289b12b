#ifndef GEOTRIGGER_CPREFETCH_H
#define GEOTRIGGER_CPREFETCH_H

/// Asks the CPU to bring the cache line holding `p` closer, without waiting for it and without
/// faulting: a hint, so any address (even a stale one) is safe. Swift has no prefetch intrinsic.
static inline void geotrigger_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }

/// The same, for a line about to be written.
static inline void geotrigger_prefetch_write(const void *p) { __builtin_prefetch(p, 1, 3); }

#endif
