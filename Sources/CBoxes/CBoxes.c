// The function is static inline in include/CBoxes.h; SwiftPM needs one source file per C target.
#include "CBoxes.h"
