// The function is static inline in include/CMalloc.h; SwiftPM needs one source file per C target.
#include "CMalloc.h"
