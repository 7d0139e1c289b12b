#ifndef GEOTRIGGER_CGEOS_H
#define GEOTRIGGER_CGEOS_H

// Only the reentrant (_r) half of the GEOS C API: one context handle per thread.
//
// The library is not linked: it is opened when GEOS is first used (CGEOS.c, by way of
// CLazyLibrary.h), which only polygons and `--tree geos` do: a replay of circles neither loads
// libgeos_c and libgeos nor has their symbols bound.
#define GEOS_USE_ONLY_R_API
#include <geos_c.h>

/// Loads GEOS and finds every function Geotrigger calls, once per process. Returns 1 when they
/// are all there; otherwise 0 with `*error` set to why (a static string).
int geotrigger_geos_load(const char **error);

/// What `geotrigger_geos_load` would answer for the library file `name`, opened on its own and
/// closed again (this process's own loading is not changed). 1 or 0 as it; on 0 the reason is
/// written into `error` (`size` bytes).
int geotrigger_geos_probe(const char *name, char *error, size_t size);

#endif
