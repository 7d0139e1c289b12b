// librdkafka, opened when Kafka is first used (include/CRdKafka.h says why; CLazyLibrary.h how).
// The system headers rdkafka.h includes come first, so only librdkafka's own declarations are
// made hidden.
#include <inttypes.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "CLazyLibrary.h"

#pragma GCC visibility push(hidden)
#include "CRdKafka.h"
#pragma GCC visibility pop

#if defined(__APPLE__)
#define GEOTRIGGER_RDKAFKA_FILE "librdkafka.1.dylib"
#else
#define GEOTRIGGER_RDKAFKA_FILE "librdkafka.so.1"
#endif

// Every librdkafka function Geotrigger calls, as rdkafka.h and rdkafka_mock.h declare them.
#define GEOTRIGGER_RDKAFKA_FUNCTIONS(R, V) \
    R(rd_kafka_resp_err_t, rd_kafka_assign, (rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *partitions), (rk, partitions)) \
    R(rd_kafka_resp_err_t, rd_kafka_assignment, (rd_kafka_t *rk, rd_kafka_topic_partition_list_t **partitions), (rk, partitions)) \
    R(int, rd_kafka_assignment_lost, (rd_kafka_t *rk), (rk)) \
    R(rd_kafka_resp_err_t, rd_kafka_commit_queue, (rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *offsets, rd_kafka_queue_t *rkqu, void (*cb)(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *offsets, void *commit_opaque), void *commit_opaque), (rk, offsets, rkqu, cb, commit_opaque)) \
    R(rd_kafka_resp_err_t, rd_kafka_committed, (rd_kafka_t *rk, rd_kafka_topic_partition_list_t *partitions, int timeout_ms), (rk, partitions, timeout_ms)) \
    V(void, rd_kafka_conf_destroy, (rd_kafka_conf_t *conf), (conf)) \
    R(rd_kafka_conf_t *, rd_kafka_conf_new, (void), ()) \
    R(rd_kafka_conf_res_t, rd_kafka_conf_set, (rd_kafka_conf_t *conf, const char *name, const char *value, char *errstr, size_t errstr_size), (conf, name, value, errstr, errstr_size)) \
    V(void, rd_kafka_conf_set_dr_msg_cb, (rd_kafka_conf_t *conf, void (*dr_msg_cb)(rd_kafka_t *rk, const rd_kafka_message_t *rkmessage, void *opaque)), (conf, dr_msg_cb)) \
    V(void, rd_kafka_conf_set_opaque, (rd_kafka_conf_t *conf, void *opaque), (conf, opaque)) \
    V(void, rd_kafka_conf_set_rebalance_cb, (rd_kafka_conf_t *conf, void (*rebalance_cb)(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *partitions, void *opaque)), (conf, rebalance_cb)) \
    R(ssize_t, rd_kafka_consume_batch_queue, (rd_kafka_queue_t *rkqu, int timeout_ms, rd_kafka_message_t **rkmessages, size_t rkmessages_size), (rkqu, timeout_ms, rkmessages, rkmessages_size)) \
    R(rd_kafka_resp_err_t, rd_kafka_consumer_close, (rd_kafka_t *rk), (rk)) \
    R(rd_kafka_message_t *, rd_kafka_consumer_poll, (rd_kafka_t *rk, int timeout_ms), (rk, timeout_ms)) \
    V(void, rd_kafka_destroy, (rd_kafka_t *rk), (rk)) \
    R(const char *, rd_kafka_err2str, (rd_kafka_resp_err_t err), (err)) \
    V(void, rd_kafka_error_destroy, (rd_kafka_error_t *error), (error)) \
    V(void, rd_kafka_event_destroy, (rd_kafka_event_t *rkev), (rkev)) \
    R(rd_kafka_resp_err_t, rd_kafka_event_error, (rd_kafka_event_t *rkev), (rkev)) \
    R(rd_kafka_topic_partition_list_t *, rd_kafka_event_topic_partition_list, (rd_kafka_event_t *rkev), (rkev)) \
    R(rd_kafka_event_type_t, rd_kafka_event_type, (const rd_kafka_event_t *rkev), (rkev)) \
    R(rd_kafka_resp_err_t, rd_kafka_flush, (rd_kafka_t *rk, int timeout_ms), (rk, timeout_ms)) \
    R(rd_kafka_error_t *, rd_kafka_incremental_assign, (rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *partitions), (rk, partitions)) \
    R(rd_kafka_error_t *, rd_kafka_incremental_unassign, (rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *partitions), (rk, partitions)) \
    R(rd_kafka_resp_err_t, rd_kafka_last_error, (void), ()) \
    V(void, rd_kafka_message_destroy, (rd_kafka_message_t *rkmessage), (rkmessage)) \
    R(rd_kafka_resp_err_t, rd_kafka_metadata, (rd_kafka_t *rk, int all_topics, rd_kafka_topic_t *only_rkt, const struct rd_kafka_metadata **metadatap, int timeout_ms), (rk, all_topics, only_rkt, metadatap, timeout_ms)) \
    V(void, rd_kafka_metadata_destroy, (const struct rd_kafka_metadata *metadata), (metadata)) \
    R(rd_kafka_resp_err_t, rd_kafka_mock_broker_set_down, (rd_kafka_mock_cluster_t *mcluster, int32_t broker_id), (mcluster, broker_id)) \
    R(rd_kafka_resp_err_t, rd_kafka_mock_broker_set_up, (rd_kafka_mock_cluster_t *mcluster, int32_t broker_id), (mcluster, broker_id)) \
    R(const char *, rd_kafka_mock_cluster_bootstraps, (const rd_kafka_mock_cluster_t *mcluster), (mcluster)) \
    V(void, rd_kafka_mock_cluster_destroy, (rd_kafka_mock_cluster_t *mcluster), (mcluster)) \
    R(rd_kafka_mock_cluster_t *, rd_kafka_mock_cluster_new, (rd_kafka_t *rk, int broker_cnt), (rk, broker_cnt)) \
    V(void, rd_kafka_mock_push_request_errors_array, (rd_kafka_mock_cluster_t *mcluster, int16_t ApiKey, size_t cnt, const rd_kafka_resp_err_t *errors), (mcluster, ApiKey, cnt, errors)) \
    R(rd_kafka_resp_err_t, rd_kafka_mock_topic_create, (rd_kafka_mock_cluster_t *mcluster, const char *topic, int partition_cnt, int replication_factor), (mcluster, topic, partition_cnt, replication_factor)) \
    R(rd_kafka_t *, rd_kafka_new, (rd_kafka_type_t type, rd_kafka_conf_t *conf, char *errstr, size_t errstr_size), (type, conf, errstr, errstr_size)) \
    R(int, rd_kafka_poll, (rd_kafka_t *rk, int timeout_ms), (rk, timeout_ms)) \
    R(rd_kafka_resp_err_t, rd_kafka_poll_set_consumer, (rd_kafka_t *rk), (rk)) \
    R(int, rd_kafka_produce, (rd_kafka_topic_t *rkt, int32_t partition, int msgflags, void *payload, size_t len, const void *key, size_t keylen, void *msg_opaque), (rkt, partition, msgflags, payload, len, key, keylen, msg_opaque)) \
    R(int, rd_kafka_produce_batch, (rd_kafka_topic_t *rkt, int32_t partition, int msgflags, rd_kafka_message_t *rkmessages, int message_cnt), (rkt, partition, msgflags, rkmessages, message_cnt)) \
    R(rd_kafka_resp_err_t, rd_kafka_query_watermark_offsets, (rd_kafka_t *rk, const char *topic, int32_t partition, int64_t *low, int64_t *high, int timeout_ms), (rk, topic, partition, low, high, timeout_ms)) \
    V(void, rd_kafka_queue_destroy, (rd_kafka_queue_t *rkqu), (rkqu)) \
    R(rd_kafka_queue_t *, rd_kafka_queue_get_consumer, (rd_kafka_t *rk), (rk)) \
    R(rd_kafka_queue_t *, rd_kafka_queue_new, (rd_kafka_t *rk), (rk)) \
    R(rd_kafka_event_t *, rd_kafka_queue_poll, (rd_kafka_queue_t *rkqu, int timeout_ms), (rkqu, timeout_ms)) \
    R(const char *, rd_kafka_rebalance_protocol, (rd_kafka_t *rk), (rk)) \
    R(rd_kafka_resp_err_t, rd_kafka_subscribe, (rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *topics), (rk, topics)) \
    V(void, rd_kafka_topic_destroy, (rd_kafka_topic_t *rkt), (rkt)) \
    R(const char *, rd_kafka_topic_name, (const rd_kafka_topic_t *rkt), (rkt)) \
    R(rd_kafka_topic_t *, rd_kafka_topic_new, (rd_kafka_t *rk, const char *topic, rd_kafka_topic_conf_t *conf), (rk, topic, conf)) \
    R(rd_kafka_topic_partition_t *, rd_kafka_topic_partition_list_add, (rd_kafka_topic_partition_list_t *rktparlist, const char *topic, int32_t partition), (rktparlist, topic, partition)) \
    V(void, rd_kafka_topic_partition_list_destroy, (rd_kafka_topic_partition_list_t *rkparlist), (rkparlist)) \
    R(rd_kafka_topic_partition_list_t *, rd_kafka_topic_partition_list_new, (int size), (size))

GEOTRIGGER_LAZY_LIBRARY(GEOTRIGGER_RDKAFKA_FUNCTIONS, "librdkafka", GEOTRIGGER_RDKAFKA_FILE,
                        geotrigger_rdkafka_load, geotrigger_rdkafka_probe)
