package dev.knockwatch.cli;

import dev.knockwatch.broker.TopicCreator;
import java.time.Duration;
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

  @Option(names = "--wait", paramLabel = "DURATION", converter = DurationConverter.class, defaultValue = "${env:KNOCKWATCH_KAFKA_WAIT:-25s}",
      description = "How long to wait at start for Kafka to answer, then stop saying why (default: ${DEFAULT-VALUE}; "
          + "env KNOCKWATCH_KAFKA_WAIT). A refused login or TLS handshake stops at once.")
  Duration waitFor;

  /**
   * Waits until the cluster answers, at most {@code --wait}; a cluster that refuses (a login, a
   * TLS handshake, a listener that hangs up) or does not answer ends it in one line.
   */
  void awaitReady() {
    TopicCreator.awaitReady(bootstrapServers, clientProps(), waitFor);
  }

  /** The client settings of {@code --kafka-config} (none without it). */
  Map<String, Object> clientProps() {
    return kafka.props();
  }
}
