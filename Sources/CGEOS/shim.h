// Only the reentrant (_r) half of the GEOS C API: one context handle per thread.
#define GEOS_USE_ONLY_R_API
#include <geos_c.h>
