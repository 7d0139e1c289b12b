// GEOS's C API, opened when GEOS is first used (include/CGEOS.h says why; CLazyLibrary.h how).
// The system headers geos_c.h includes come first, so only GEOS's own declarations are made
// hidden.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "CLazyLibrary.h"

#pragma GCC visibility push(hidden)
#include "CGEOS.h"
#pragma GCC visibility pop

#if defined(__APPLE__)
#define GEOTRIGGER_GEOS_FILE "libgeos_c.1.dylib"
#else
#define GEOTRIGGER_GEOS_FILE "libgeos_c.so.1"
#endif

// Every GEOS function Geotrigger calls, as geos_c.h declares them.
#define GEOTRIGGER_GEOS_FUNCTIONS(R, V) \
    R(GEOSMessageHandler_r, GEOSContext_setErrorMessageHandler_r, (GEOSContextHandle_t extHandle, GEOSMessageHandler_r ef, void *userData), (extHandle, ef, userData)) \
    R(GEOSCoordSequence *, GEOSCoordSeq_create_r, (GEOSContextHandle_t handle, unsigned int size, unsigned int dims), (handle, size, dims)) \
    V(void, GEOSCoordSeq_destroy_r, (GEOSContextHandle_t handle, GEOSCoordSequence* s), (handle, s)) \
    R(int, GEOSCoordSeq_setXY_r, (GEOSContextHandle_t handle, GEOSCoordSequence* s, unsigned int idx, double x, double y), (handle, s, idx, x, y)) \
    V(void, GEOSFree_r, (GEOSContextHandle_t handle, void *buffer), (handle, buffer)) \
    R(GEOSGeometry *, GEOSGeom_createCollection_r, (GEOSContextHandle_t handle, int type, GEOSGeometry* *geoms, unsigned int ngeoms), (handle, type, geoms, ngeoms)) \
    R(GEOSGeometry *, GEOSGeom_createLinearRing_r, (GEOSContextHandle_t handle, GEOSCoordSequence* s), (handle, s)) \
    R(GEOSGeometry *, GEOSGeom_createPointFromXY_r, (GEOSContextHandle_t handle, double x, double y), (handle, x, y)) \
    R(GEOSGeometry *, GEOSGeom_createPolygon_r, (GEOSContextHandle_t handle, GEOSGeometry* shell, GEOSGeometry** holes, unsigned int nholes), (handle, shell, holes, nholes)) \
    R(GEOSGeometry *, GEOSGeom_createRectangle_r, (GEOSContextHandle_t handle, double xmin, double ymin, double xmax, double ymax), (handle, xmin, ymin, xmax, ymax)) \
    V(void, GEOSGeom_destroy_r, (GEOSContextHandle_t handle, GEOSGeometry* g), (handle, g)) \
    R(int, GEOSGeom_getXMax_r, (GEOSContextHandle_t handle, const GEOSGeometry* g, double* value), (handle, g, value)) \
    R(int, GEOSGeom_getXMin_r, (GEOSContextHandle_t handle, const GEOSGeometry* g, double* value), (handle, g, value)) \
    R(int, GEOSGeom_getYMax_r, (GEOSContextHandle_t handle, const GEOSGeometry* g, double* value), (handle, g, value)) \
    R(int, GEOSGeom_getYMin_r, (GEOSContextHandle_t handle, const GEOSGeometry* g, double* value), (handle, g, value)) \
    R(const GEOSPreparedGeometry *, GEOSPrepare_r, (GEOSContextHandle_t handle, const GEOSGeometry* g), (handle, g)) \
    R(char, GEOSPreparedCovers_r, (GEOSContextHandle_t handle, const GEOSPreparedGeometry* pg1, const GEOSGeometry* g2), (handle, pg1, g2)) \
    V(void, GEOSPreparedGeom_destroy_r, (GEOSContextHandle_t handle, const GEOSPreparedGeometry* g), (handle, g)) \
    R(GEOSSTRtree *, GEOSSTRtree_create_r, (GEOSContextHandle_t handle, size_t nodeCapacity), (handle, nodeCapacity)) \
    V(void, GEOSSTRtree_destroy_r, (GEOSContextHandle_t handle, GEOSSTRtree *tree), (handle, tree)) \
    V(void, GEOSSTRtree_insert_r, (GEOSContextHandle_t handle, GEOSSTRtree *tree, const GEOSGeometry *g, void *item), (handle, tree, g, item)) \
    V(void, GEOSSTRtree_query_r, (GEOSContextHandle_t handle, GEOSSTRtree *tree, const GEOSGeometry *g, GEOSQueryCallback callback, void *userdata), (handle, tree, g, callback, userdata)) \
    V(void, GEOS_finish_r, (GEOSContextHandle_t handle), (handle)) \
    R(GEOSContextHandle_t, GEOS_init_r, (void), ()) \
    R(char *, GEOSisValidReason_r, (GEOSContextHandle_t handle, const GEOSGeometry* g), (handle, g)) \
    R(char, GEOSisValid_r, (GEOSContextHandle_t handle, const GEOSGeometry* g), (handle, g))

GEOTRIGGER_LAZY_LIBRARY(GEOTRIGGER_GEOS_FUNCTIONS, "GEOS", GEOTRIGGER_GEOS_FILE, geotrigger_geos_load,
                        geotrigger_geos_probe)
