// `import GeotriggerConsume` brings the Kafka binding its configuration and tests use.
@_exported import GeotriggerKafka
