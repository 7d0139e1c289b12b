import ArgumentParser
import Geotrigger
import GeotriggerConsume
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct ConsumeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consume",
        abstract: "Run as a member of a Kafka consumer group: readings from a topic, events to a topic, state that follows the partition.",
        discussion: """
            Every process started with the same --group shares the partitions of topic IN \
            (readings, one NDJSON record per message, keyed by device id, so that a \
            device's readings stay in one partition, in order). Each partition gets an \
            engine of its own, with its own clock: the largest t it has read.

            Events go to topic OUT, keyed by device, one NDJSON event per message, each \
            with an "id" (input partition-offset-index) that is the same however often it \
            is produced: delivery is at least once, so drop repeats by id. Bad records are \
            rejected as replay rejects them and written, with their reason, to GROUP-rejects.

            --format nmea: a message holds one or more NMEA 0183 lines of the receiver its \
            key names (a log sent line by line, kcat -P -K: or one message per line). Each \
            device's sentences make cycles as replay --device KEY makes them of a file: a \
            cycle's fix comes out when that device's next cycle begins (about one cycle \
            late), and at the end (--exit-when-idle). --format gpsd: a message is a gpsd \
            report (a line of gpspipe -w); its device is the key, else the report's \
            "device". A device's open cycle travels with the partition's snapshot.

            A partition's state is written to GROUP-state every --checkpoint-every records \
            and when the partition is taken away; its input offset is committed only after \
            that, with the snapshot's place in the commit's metadata. A process given the \
            partition (a new one, or the survivor of a kill -9) loads the snapshot and \
            reads on from the committed offset: after dropping repeated ids, each device's \
            events are exactly those of geotrigger replay on the same readings.

            Examples:
              # librdkafka's mock cluster, to try it without Kafka (prints its address)
              geotrigger mock-kafka --topic readings:6 --topic events:3 &
              # one member of group g1 (start more with the same command)
              geotrigger consume --regions zones.geojson --brokers 127.0.0.1:PORT \\
                --topic readings --group g1 --events-topic events --exit-when-idle 30
              # feed and read the topics by hand (kcat: Debian package kcat)
              kcat -P -b 127.0.0.1:PORT -t readings -K '|' < keyed-readings.txt
              # a receiver's NMEA log, line by line, keyed by its name (--format nmea)
              sed 's/^/van-7:/' receiver.log | kcat -P -b 127.0.0.1:PORT -t nmea -K:
              kcat -C -b 127.0.0.1:PORT -t events -e

            SIGINT or SIGTERM: every partition's snapshot is written and committed, the \
            group is left cleanly (its partitions move at once), exit 0.

            Exit status: 0 success, 64 usage error, 65 bad regions or requests file, a bad \
            reading under --strict, or a snapshot of another configuration, 66 regions file \
            missing, 74 Kafka failure (a setting refused, events that cannot be delivered).
            """
    )

    @OptionGroup(title: "Regions and decisions")
    var engine: EngineOptions

    @Option(help: ArgumentHelp("Kafka bootstrap servers (bootstrap.servers).", valueName: "host:port[,…]"))
    var brokers: String

    @Option(help: ArgumentHelp("Topic IN: readings, one NDJSON record per message, keyed by device id.", valueName: "IN"))
    var topic: String

    @Option(help: ArgumentHelp("What a message of IN holds: an NDJSON record, or the NMEA 0183 lines or gpsd reports (gpspipe -w lines) of the receiver its key names.", valueName: "ndjson|nmea|gpsd"))
    var format = MessageFormat(.ndjson)

    @Option(help: ArgumentHelp("Consumer group: processes with the same group share IN's partitions. Snapshots go to GROUP-state, bad records to GROUP-rejects.", valueName: "GROUP"))
    var group: String

    @Option(help: ArgumentHelp("Topic OUT: events, keyed by device id, each with its \"id\".", valueName: "OUT"))
    var eventsTopic: String

    @Option(help: ArgumentHelp("Stop after S seconds without a new record (counted again from each assignment and each loss of partitions): --until (if given) is applied, every partition's snapshot written and committed, the group left (for tests and batch jobs; default: run until SIGTERM).", valueName: "S"))
    var exitWhenIdle: Double?

    @Option(help: ArgumentHelp("Records of a partition between its snapshots (and commits). Fewer: less read again after a crash, more snapshot traffic.", valueName: "N"))
    var checkpointEvery: Int = 100_000

    @Option(name: .customLong("kafka-config"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("A librdkafka setting, passed through as kcat -X does (repeat for more), e.g. session.timeout.ms=6000 or security.protocol=SSL. A session.timeout.ms under 9000 without heartbeat.interval.ms gets a heartbeat of a third of it.", valueName: "KEY=VALUE"))
    var kafkaConfig: [String] = []

    @Flag(name: .shortAndLong, help: "Do not print partition changes and the summary on stderr.")
    var quiet = false

    func validate() throws {
        if let exitWhenIdle, !(exitWhenIdle > 0 && exitWhenIdle.isFinite) {
            throw ValidationError("--exit-when-idle must be a positive number of seconds")
        }
        if checkpointEvery < 1 { throw ValidationError("--checkpoint-every must be a positive number of records") }
        for setting in kafkaConfig where !setting.contains("=") || setting.hasPrefix("=") {
            throw ValidationError("--kafka-config takes KEY=VALUE, not \"\(setting)\"")
        }
        for name in [topic, group, eventsTopic] where name.isEmpty {
            throw ValidationError("--topic, --group and --events-topic must not be empty")
        }
    }

    func run() throws {
        var config = ConsumeConfiguration(engine: engine.configuration(), brokers: brokers, topic: topic, group: group,
                                          eventsTopic: eventsTopic)
        config.format = format.format
        config.exitWhenIdle = exitWhenIdle
        config.checkpointEvery = checkpointEvery
        config.kafkaSettings = kafkaConfig.map { s in
            let eq = s.firstIndex(of: "=")!
            return (String(s[..<eq]), String(s[s.index(after: eq)...]))
        }
        config.verbose = !quiet
        let consume = Consume(configuration: config)
        do {
            let stats = try consume.run()
            if consume.stoppedBySignal {
                writeStandardError("geotrigger: stopped by a signal; every partition's state is committed\n")
            }
            if !quiet { writeStandardError(stats.summary) }
        } catch {
            writeStandardError("geotrigger: \(error)\n")
            throw ExitCode(error.exitStatus)
        }
    }
}

struct MockKafkaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock-kafka",
        abstract: "Run librdkafka's mock Kafka cluster on loopback, to try consume (and run its tests and bench) without Kafka.",
        discussion: """
            Prints the bootstrap servers (host:port,…) on the first line of standard output, \
            then serves until SIGINT or SIGTERM. It speaks Kafka's protocol: produce, fetch, \
            consumer groups, offset commits with metadata. It keeps about the last 5 MB of \
            each partition (older messages are dropped), has no transactions and no \
            compaction, and forgets everything when it stops: for trials and tests, not for data.

            Example:
              geotrigger mock-kafka --topic readings:6 --topic events:3 --topic g1-state:3
            """
    )

    @Option(help: ArgumentHelp("Brokers in the cluster.", valueName: "N"))
    var brokers: Int32 = 3

    @Option(help: ArgumentHelp("A topic to create, with its partition count (repeat for more). Others are created on first use with the cluster's default partition count.", valueName: "NAME:PARTITIONS"))
    var topic: [String] = []

    func run() throws {
        let cluster: KafkaMockCluster
        do {
            cluster = try KafkaMockCluster(brokers: brokers)
            for t in topic {
                let parts = t.split(separator: ":")
                guard parts.count == 2, let n = Int32(parts[1]), n > 0 else {
                    throw ValidationError("--topic takes NAME:PARTITIONS, not \"\(t)\"")
                }
                try cluster.createTopic(String(parts[0]), partitions: n)
            }
        } catch let e as ValidationError {
            throw e
        } catch {
            writeStandardError("geotrigger: \(error)\n")
            throw ExitCode(74)
        }
        // Unbuffered, so that a parent reading the pipe sees it at once.
        writeStandardOutput(cluster.bootstrapServers + "\n")
        StopSignals.catchSignals()
        while !StopSignals.requested { usleep(100_000) }
        withExtendedLifetime(cluster) {}
    }
}

/// What a message of IN may hold: `Consume.formats` only (a message is a record or a receiver's
/// lines, never a whole CSV or GPX file), so `--help` lists just those.
struct MessageFormat: ExpressibleByArgument {
    let format: ReadingFormat

    init(_ format: ReadingFormat) { self.format = format }

    init?(argument: String) {
        guard let f = ReadingFormat(rawValue: argument), Consume.formats.contains(f) else { return nil }
        format = f
    }

    var defaultValueDescription: String { format.rawValue }
    static var allValueStrings: [String] { Consume.formats.map(\.rawValue) }
}
