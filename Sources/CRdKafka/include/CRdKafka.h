#ifndef GEOTRIGGER_CRDKAFKA_H
#define GEOTRIGGER_CRDKAFKA_H

// librdkafka's C API (Debian librdkafka-dev, Homebrew librdkafka), and its built-in mock cluster
// (rdkafka_mock.h: the Kafka protocol on loopback, for tests and the bench).
//
// The library is not linked: it is opened when Kafka is first used (CRdKafka.c, by way of
// CLazyLibrary.h), so a process that never consumes (every `geotrigger replay`) neither loads it
// nor has its symbols bound, nor those of what it needs (OpenSSL, SASL, zstd, lz4, zlib).
#include <stddef.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/// Loads librdkafka and finds every function Geotrigger calls, once per process. Returns 1 when
/// they are all there; otherwise 0 with `*error` set to why (a static string).
int geotrigger_rdkafka_load(const char **error);

/// What `geotrigger_rdkafka_load` would answer for the library named `name`, tried on its own and
/// unloaded again (the process's own loading is not changed). Returns 1 or 0 as it does; on 0 the
/// reason is written into `error` (`size` bytes).
int geotrigger_rdkafka_probe(const char *name, char *error, size_t size);

#endif
