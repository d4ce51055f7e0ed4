package dev.knockwatch.streams;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.streams.timeline.CommandSummary;
import dev.knockwatch.streams.timeline.TimelineProcessor;
import io.prometheus.client.Collector;
import io.prometheus.client.CollectorRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25: ingest's at-least-once holds end to end only if detection is idempotent on eventId.
 * A storm through the shipped rules, once, and again with every event sent twice as ingest re-sends
 * a batch after a crash — the same ids, all copies after all originals (so each copy is further
 * back than its command's last 32 refusals), and a line without a time of its own stamped with
 * the later ingest clock: the alerts, the timeline and the refusal metrics are the same.
 */
class ResentStormTest {

  static final Instant T0 = Instant.parse("2026-12-02T06:00:00Z");
  static final int COMMANDS = 20;
  static final int BUSY = 40;
  static final int QUIET = 3;

  @TempDir Path state;

  record Run(List<Alert> alerts, Map<String, CommandSummary> summaries, double refusals, double duplicates) {}

  @Test
  void everyEventOfAStormSentTwiceWithItsIdGivesTheSameAlertsTimelineAndCounts() {
    Run once = run(storm(), "once");
    List<ViolationEvent> twice = new ArrayList<>(storm());
    for (ViolationEvent e : storm()) {
      // re-read after the crash: a line with no time of its own gets the ingest clock again
      twice.add(e.timeSource() == null ? e : e.toBuilder().observedAt(e.observedAt().plusSeconds(90)).build());
    }
    Run resent = run(twice, "twice");

    assertThat(once.alerts()).extracting(Alert::rule).contains("persistent-retry", "off-role-host");
    assertThat(once.alerts().stream().filter(a -> a.commandId().endsWith("0"))).as("3 refusals never warn").isEmpty();
    assertThat(resent.alerts()).isEqualTo(once.alerts());
    assertThat(resent.summaries()).isEqualTo(once.summaries());
    assertThat(once.summaries().values()).extracting(CommandSummary::events).contains((long) QUIET, (long) BUSY);
    assertThat(resent.refusals()).isEqualTo(once.refusals()).isEqualTo(COMMANDS / 2 * (BUSY + QUIET) + 1);
    assertThat(resent.duplicates() - once.duplicates()).isEqualTo(COMMANDS / 2 * (BUSY + QUIET));
  }

  /** Half the commands refused 3 times on an in-role host; half 40 times, off-role too, half of those by strace with no time. */
  static List<ViolationEvent> storm() {
    List<ViolationEvent> out = new ArrayList<>();
    for (int c = 0; c < COMMANDS; c++) {
      String cmd = String.format("ResentStormCommand%04d", c * 5 + (c % 2 == 0 ? 0 : 1));
      int n = c % 2 == 0 ? QUIET : BUSY;
      for (int i = 0; i < n; i++) {
        Instant at = T0.plusMillis(1_000L * c + 500L * i);
        ViolationEvent.Builder b = ViolationEvent.builder().eventId(String.format("%016x%016x", c, i)).commandId(cmd)
            .agentId("ci-runner-1").kind(Kind.NETWORK).observedAt(at).ingestedAt(at)
            .origin(new ViolationEvent.Origin("ci-runner-1/" + cmd + ".log", 100L * i, "host-a"));
        if (n == BUSY && i % 2 == 1) {
          b.source("strace").action("connect").host("10.0.0." + (i % 7)).port(443).errno("ENETUNREACH")
              .syscall("connect").timeSource("ingest");
        } else {
          b.source("srt-violation").action("network-outbound").host(i == 4 ? "exfil.example" : "registry.npmjs.org")
              .port(443).reason("host is not on the allow list");
        }
        out.add(b.build());
      }
    }
    return out;
  }

  private Run run(List<ViolationEvent> events, String name) {
    Policy policy = PolicyLoader.load(Path.of("../alert-rules"));
    double refusalsBefore = sum("knockwatch_streams_refusals_total");
    double duplicatesBefore = sum("knockwatch_streams_exact_duplicates_total");
    List<Alert> alerts;
    try (TopologyTestDriver d = new TopologyTestDriver(
        DetectionTopology.buildTopology(policy, AlertLifecycleProcessor.Clock.STREAM), props(name + "-detect"), T0)) {
      TestInputTopic<String, ViolationEvent> in = d.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(),
          Json.eventSerde().serializer());
      events.forEach(e -> in.pipeInput(e.commandId(), e, e.observedAt()));
      // both runs end at one stream time: throttled updates due by then come out in both
      ViolationEvent tick = ViolationEvent.builder().eventId("tick").commandId("ResentStormClockTick00")
          .agentId("ci-runner-1").source("srt-violation").kind(Kind.NETWORK).action("network-outbound")
          .host("registry.npmjs.org").port(443).observedAt(T0.plus(Duration.ofMinutes(5))).build();
      in.pipeInput(tick.commandId(), tick, tick.observedAt());
      alerts = d.createOutputTopic(Topics.ALERTS.name(), new StringDeserializer(), Json.serde(Alert.class).deserializer())
          .readValuesToList();
    }
    double refusals = sum("knockwatch_streams_refusals_total") - refusalsBefore;
    double duplicates = sum("knockwatch_streams_exact_duplicates_total") - duplicatesBefore;
    Map<String, CommandSummary> summaries = new TreeMap<>();
    try (TopologyTestDriver d = new TopologyTestDriver(TimelineTopology.build(policy, Duration.ofDays(1)),
        props(name + "-timeline"), T0)) {
      TestInputTopic<String, ViolationEvent> in = d.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(),
          Json.eventSerde().serializer());
      events.forEach(e -> in.pipeInput(e.commandId(), e, e.observedAt()));
      KeyValueStore<String, CommandSummary> commands = d.getKeyValueStore(TimelineProcessor.COMMANDS);
      commands.all().forEachRemaining(kv -> summaries.put(kv.key, kv.value));
    }
    return new Run(alerts, summaries, refusals, duplicates);
  }

  private Properties props(String name) {
    Properties p = DetectionTopology.streamsConfig(name, "unused:9092", state.resolve(name), Map.of());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    return p;
  }

  private static double sum(String metric) {
    double total = 0;
    for (Collector.MetricFamilySamples f : java.util.Collections.list(CollectorRegistry.defaultRegistry.metricFamilySamples())) {
      for (Collector.MetricFamilySamples.Sample s : f.samples) {
        if (s.name.equals(metric)) {
          total += s.value;
        }
      }
    }
    return total;
  }
}
