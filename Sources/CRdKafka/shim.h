// librdkafka's C API (Debian librdkafka-dev, Homebrew librdkafka), and its built-in mock cluster
// (rdkafka_mock.h: the Kafka protocol on loopback, for tests and the bench).
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
