package dev.knockwatch.cli;

import java.util.Map;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code --bootstrap-servers} and {@code --kafka-config}, shared by every command that talks to a
 * Kafka cluster it does not start.
 */
final class ClusterOptions {

  @Option(names = "--bootstrap-servers", paramLabel = "HOSTS",
      defaultValue = "${env:KNOCKWATCH_BOOTSTRAP_SERVERS:-127.0.0.1:9092}",
      description = "Kafka (default: ${DEFAULT-VALUE}, the embedded broker of `knockwatch up`; env KNOCKWATCH_BOOTSTRAP_SERVERS).")
  String bootstrapServers;

  @Mixin KafkaClientOptions kafka;

  /** The client settings of {@code --kafka-config} (none without it). */
  Map<String, Object> clientProps() {
    return kafka.props();
  }
}
