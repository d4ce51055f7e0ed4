package dev.knockwatch.streams;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;

/**
 * The detection topology on a TopologyTestDriver (at-least-once, the lifecycle on stream time),
 * with the violations topic to write and the alerts topic to read: what the count and dedup
 * tests share.
 */
public final class DetectionDriver implements AutoCloseable {

  public final TopologyTestDriver driver;
  public final TestInputTopic<String, ViolationEvent> violations;
  public final TestOutputTopic<String, Alert> alerts;
  private int seq;

  private DetectionDriver(List<Rule> rules, Path state, long cacheBytes) {
    Properties p = DetectionTopology.streamsConfig("test", "unused:9092", state, Map.of());
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, cacheBytes);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    driver = new TopologyTestDriver(DetectionTopology.buildTopology(Policy.ofRules(rules),
        AlertLifecycleProcessor.Clock.STREAM), p);
    violations = driver.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(),
        Json.serde(ViolationEvent.class).serializer());
    alerts = driver.createOutputTopic(Topics.ALERTS.name(), new StringDeserializer(),
        Json.serde(Alert.class).deserializer());
  }

  /** {@code rules} only, the record cache at {@code cacheBytes} (0: off). */
  public static DetectionDriver start(List<Rule> rules, Path state, long cacheBytes) {
    return new DetectionDriver(rules, state, cacheBytes);
  }

  /** One srt refusal of example.com:443 by ci-runner-1 at {@code at}; event ids e1, e2, … */
  public void refuse(String commandId, Instant at) {
    seq++;
    ViolationEvent e = ViolationEvent.builder().eventId("e" + seq).commandId(commandId).agentId("ci-runner-1")
        .source("srt-violation").kind(Kind.NETWORK).action("network-outbound")
        .host("example.com").port(443).reason("host is not on the allow list").observedAt(at).build();
    violations.pipeInput(commandId, e, at);
  }

  /** {@code n} refusals, {@code step} apart from {@code from}. */
  public void refuseTimes(String commandId, int n, Instant from, Duration step) {
    for (int i = 0; i < n; i++) {
      refuse(commandId, from.plus(step.multipliedBy(i)));
    }
  }

  @Override
  public void close() {
    driver.close();
  }
}
