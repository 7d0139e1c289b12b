// Everything is in include/CLazyLibrary.h (used by CRdKafka.c and CGEOS.c); SwiftPM needs one
// source file per C target.
#include "CLazyLibrary.h"
