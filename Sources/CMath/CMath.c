// The function is static inline in include/CMath.h; SwiftPM needs one source file per C target.
#include "CMath.h"
