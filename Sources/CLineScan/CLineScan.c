// The functions are static inline in include/CLineScan.h; SwiftPM needs one source file per C target.
#include "CLineScan.h"
