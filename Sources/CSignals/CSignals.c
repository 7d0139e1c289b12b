// The functions are static inline in include/CSignals.h; SwiftPM needs one source file per C target.
#include "CSignals.h"
