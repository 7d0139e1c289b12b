#ifndef GEOTRIGGER_CLAZYLIBRARY_H
#define GEOTRIGGER_CLAZYLIBRARY_H

// A shared library opened on first use rather than linked (CRdKafka, CGEOS): a process that
// never calls it neither loads it nor has the loader bind its symbols at start-up.
//
// A module lists the functions it calls as an X-macro, FUNCTIONS(R, V), with one entry a function:
// R(return type, name, (parameters), (arguments)), or V(…) for one returning nothing, the
// parameters written as the library's header declares them. GEOTRIGGER_LAZY_LIBRARY, used in
// one C file after the library's header, then defines each function with that prototype (the
// compiler refuses a definition that differs from the header's declaration) forwarding to the
// library's own, which dlsym finds once. The C file includes the header with hidden visibility,
// so these definitions serve the executable's Swift code and are not exported: the library, once
// loaded, binds its own calls to its own functions.

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/// Opens the file `name` and finds each of the `count` `symbols` into `functions`. Returns 1 when
/// all are there (`*handle` is then the open library); otherwise 0, with the reason in `error`
/// (`what` names the library there) and the library closed again.
static inline int geotrigger_lazy_open(const char *what, const char *name, const char *const *symbols,
                                       size_t count, void **functions, void **handle, char *error, size_t size) {
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *why = dlerror();
        snprintf(error, size, "%s could not be loaded (%s)", what, why != NULL ? why : name);
        return 0;
    }
    for (size_t k = 0; k < count; k++) {
        functions[k] = dlsym(h, symbols[k]);
        if (functions[k] == NULL) {
            snprintf(error, size, "%s has no %s: not a %s this build can use", name, symbols[k], what);
            dlclose(h);
            return 0;
        }
    }
    *handle = h;
    return 1;
}

#define GEOTRIGGER_LAZY_INDEX(ret, name, params, args) geotrigger_lazy_index_##name,
#define GEOTRIGGER_LAZY_SYMBOL(ret, name, params, args) #name,
#define GEOTRIGGER_LAZY_FORWARD(ret, name, params, args)                                                  \
    ret name params {                                                                                    \
        geotrigger_lazy_require();                                                                       \
        return ((__typeof__(&name))geotrigger_lazy_functions[geotrigger_lazy_index_##name]) args;        \
    }
#define GEOTRIGGER_LAZY_FORWARD_VOID(ret, name, params, args)                                             \
    void name params {                                                                                   \
        geotrigger_lazy_require();                                                                       \
        ((__typeof__(&name))geotrigger_lazy_functions[geotrigger_lazy_index_##name]) args;               \
    }

/// The library's loading and its forwarding functions, in one C file. `WHAT`: its name in
/// messages; `NAME`: the file opened; `LOAD`: the loader, `int LOAD(const char **error)`, 1 once
/// loaded, else 0 with `*error` the reason (a static string); `PROBE`: `int PROBE(const char
/// *name, char *error, size_t size)`, what LOAD would answer for the file `name`, which is opened
/// and closed again without touching this process's loading. The library, once loaded, is never
/// closed (its threads or objects may outlive any caller). pthread_once orders every later read
/// of the functions after the writes.
#define GEOTRIGGER_LAZY_LIBRARY(FUNCTIONS, WHAT, NAME, LOAD, PROBE)                                      \
    enum { FUNCTIONS(GEOTRIGGER_LAZY_INDEX, GEOTRIGGER_LAZY_INDEX) geotrigger_lazy_count };              \
    static const char *const geotrigger_lazy_symbols[] = {                                               \
        FUNCTIONS(GEOTRIGGER_LAZY_SYMBOL, GEOTRIGGER_LAZY_SYMBOL)};                                      \
    static void *geotrigger_lazy_functions[geotrigger_lazy_count];                                       \
    static pthread_once_t geotrigger_lazy_once = PTHREAD_ONCE_INIT;                                      \
    static int geotrigger_lazy_loaded;                                                                   \
    static char geotrigger_lazy_error[512];                                                              \
    static void geotrigger_lazy_load(void) {                                                             \
        void *handle = NULL;                                                                             \
        geotrigger_lazy_loaded = geotrigger_lazy_open(WHAT, NAME, geotrigger_lazy_symbols,               \
            geotrigger_lazy_count, geotrigger_lazy_functions, &handle, geotrigger_lazy_error,            \
            sizeof geotrigger_lazy_error);                                                               \
    }                                                                                                    \
    int LOAD(const char **error) {                                                                       \
        pthread_once(&geotrigger_lazy_once, geotrigger_lazy_load);                                       \
        if (!geotrigger_lazy_loaded && error != NULL) *error = geotrigger_lazy_error;                    \
        return geotrigger_lazy_loaded;                                                                   \
    }                                                                                                    \
    int PROBE(const char *name, char *error, size_t size) {                                              \
        void *functions[geotrigger_lazy_count];                                                          \
        void *handle = NULL;                                                                             \
        if (!geotrigger_lazy_open(WHAT, name, geotrigger_lazy_symbols, geotrigger_lazy_count,            \
                                  functions, &handle, error, size))                                      \
            return 0;                                                                                    \
        dlclose(handle);                                                                                 \
        return 1;                                                                                        \
    }                                                                                                    \
    /* The Swift side loads before its first call and reports a failure; a forwarding function      \
       reached without the library is a bug, stopped with the reason rather than a jump to null. */ \
    static void geotrigger_lazy_require(void) {                                                          \
        const char *error = NULL;                                                                        \
        if (!LOAD(&error)) {                                                                             \
            fprintf(stderr, "geotrigger: %s\n", error);                                                  \
            abort();                                                                                     \
        }                                                                                                \
    }                                                                                                    \
    FUNCTIONS(GEOTRIGGER_LAZY_FORWARD, GEOTRIGGER_LAZY_FORWARD_VOID)

#endif
