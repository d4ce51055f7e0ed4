package dev.knockwatch.streams;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.count.ThresholdCrossingProcessor;
import dev.knockwatch.streams.count.WindowCount;
import dev.knockwatch.streams.rules.CountRule;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.TimestampExtractor;
import org.apache.kafka.streams.state.Stores;

/**
 * The detection app: violations in, alerts out. Three parts, as in Kafka's own examples: the
 * topics ({@link Topics}), {@link #streamsConfig}, and the pure {@link #buildTopology}, which
 * tests drive with a TopologyTestDriver.
 */
public final class DetectionTopology {

  public static final String DEFAULT_APPLICATION_ID = "knockwatch-streams";

  static final Serde<ViolationEvent> EVENT_SERDE = Json.serde(ViolationEvent.class);
  static final Serde<Alert> ALERT_SERDE = Json.serde(Alert.class);
  static final Serde<WindowCount> COUNT_SERDE = Json.serde(WindowCount.class);

  private DetectionTopology() {}

  public static Properties streamsConfig(String applicationId, String bootstrapServers, Path stateDir,
      Map<String, Object> clientProps) {
    Properties p = new Properties();
    p.putAll(clientProps);
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
    p.put(StreamsConfig.ENSURE_EXPLICIT_INTERNAL_RESOURCE_NAMING_CONFIG, true);
    // A value that is not a ViolationEvent is logged and skipped rather than stopping detection.
    p.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, LogAndContinueExceptionHandler.class);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    return p;
  }

  /** One crossing detector per count rule, each with its own named window store. */
  public static Topology buildTopology(List<CountRule> countRules) {
    StreamsBuilder builder = new StreamsBuilder();
    KStream<String, ViolationEvent> violations = builder.stream(Topics.VIOLATIONS.name(),
        Consumed.with(Serdes.String(), EVENT_SERDE)
            .withTimestampExtractor(observedAt())
            .withName("violations-source"))
        .peek((commandId, e) -> StreamsMetrics.REFUSALS.labels(label(e.source()), label(e.kind())).inc(),
            Named.as("count-refusals"));
    for (CountRule rule : countRules) {
      String store = "count-" + rule.id();
      builder.addStateStore(Stores.windowStoreBuilder(
          Stores.persistentWindowStore(store, rule.window().plus(rule.grace()), rule.window(), false),
          Serdes.String(), COUNT_SERDE));
      violations
          .process(() -> new ThresholdCrossingProcessor(rule, store), Named.as("detect-" + rule.id()), store)
          .to(Topics.ALERTS.name(), Produced.with(Serdes.String(), ALERT_SERDE).withName("alerts-" + rule.id()));
    }
    return builder.build();
  }

  private static String label(Enum<?> value) {
    return value == null ? "unknown" : value.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }

  /** Event time is when the sandbox refused, not when Kafka received it. */
  static TimestampExtractor observedAt() {
    return (record, partitionTime) -> {
      if (record.value() instanceof ViolationEvent e && e.observedAt() != null) {
        return e.observedAt().toEpochMilli();
      }
      return record.timestamp() >= 0 ? record.timestamp() : partitionTime;
    };
  }
}
