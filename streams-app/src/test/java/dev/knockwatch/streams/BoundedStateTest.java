package dev.knockwatch.streams;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.detect.CrossSourceDedupProcessor;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.streams.timeline.CommandSummary;
import dev.knockwatch.streams.timeline.TimelineProcessor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/RELIABILITY.md, bounds per command: one command refused on 20,000 distinct hosts and paths
 * of the longest size ingest lets through (3-byte characters) is one alert per rule, every store
 * entry and record of it stays bounded far below Kafka's 1 MiB message limit, the distinct count
 * is right within a few percent, and another command's page still comes out.
 */
class BoundedStateTest {

  static final Instant T0 = Instant.parse("2026-12-02T06:00:00Z");
  static final String SCANNER = "ScannerScannerScanne01";
  static final String OTHER = "OtherCommandOtherComm1";
  static final int HOSTS = 20_000;
  /** Kafka's default max.message.bytes. */
  static final int MAX_MESSAGE_BYTES = 1_048_588;
  static final String RULES = "rules:\n"
      + "  - id: off-role-host\n    detector: off-role\n    severity: page\n"
      + "  - id: persistent-retry\n    detector: count\n    window: 5m\n    threshold: 5\n"
      + "  - id: fs-guard\n    detector: fs-guard\n    severity: page\n";
  static final String ROLES = "roles:\n  ci:\n    hosts: [\"registry.npmjs.org\"]\n"
      + "agents:\n  - match: \"ci-*\"\n    role: ci\n";

  @TempDir Path state;
  @TempDir Path rules;

  /** A host of the longest size ingest keeps (255 chars), in 3-byte characters, unique per {@code i}. */
  static String host(int i, Random r) {
    StringBuilder b = new StringBuilder(i + ".");
    while (b.length() < 255) {
      b.append((char) (0x4E00 + r.nextInt(0x5000)));
    }
    return b.toString();
  }

  static String path(int i) {
    return "/home/agent/.ssh/" + i + "界".repeat(4096 - 30);
  }

  private Policy policy() throws Exception {
    Files.writeString(rules.resolve("rules.yaml"), RULES);
    Files.writeString(rules.resolve("roles.yaml"), ROLES);
    return PolicyLoader.load(rules);
  }

  private static ViolationEvent refusal(String cmd, int i, Instant at, String source, String host, String path) {
    ViolationEvent.Builder b = ViolationEvent.builder().eventId("e" + i).commandId(cmd).agentId("ci-runner-1")
        .source(source).observedAt(at).reason("host is not on the allow list");
    return (host != null ? b.kind(Kind.NETWORK).action("network-outbound").host(host).port(443)
        : b.kind(Kind.FILESYSTEM).action("openat").path(path)).build();
  }

  @Test
  void aScanOfDistinctHostsIsOneAlertPerRuleWithBoundedStateAndAnotherCommandStillPages() throws Exception {
    Properties p = DetectionTopology.streamsConfig("bounded", "unused:9092", state, Map.of());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    Random r = new Random(7);
    try (TopologyTestDriver d = new TopologyTestDriver(
        DetectionTopology.buildTopology(policy(), AlertLifecycleProcessor.Clock.STREAM), p, T0)) {
      TestInputTopic<String, ViolationEvent> in = d.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(),
          Json.serde(ViolationEvent.class).serializer());
      TestOutputTopic<String, Alert> out = d.createOutputTopic(Topics.ALERTS.name(), new StringDeserializer(),
          Json.serde(Alert.class).deserializer());
      for (int i = 0; i < HOSTS; i++) {
        Instant at = T0.plusMillis(10L * i);
        // srt and the proxy alternate: the cross-source dedup store sees every host
        String s = i % 2 == 0 ? "srt-violation" : "proxy-403";
        in.pipeInput(SCANNER, i % 10 == 9 ? refusal(SCANNER, i, at, s, null, path(i))
            : refusal(SCANNER, i, at, s, host(i, r), null), at);
        if (i == HOSTS / 4) {
          // mid-flood: the cross-source store holds the command's cap, no more
          assertThat(count(d.getKeyValueStore(DetectionTopology.DEDUP_STORE), SCANNER))
              .isEqualTo(CrossSourceDedupProcessor.MAX_PER_COMMAND);
        }
      }
      Instant after = T0.plusMillis(10L * HOSTS).plusSeconds(31); // past the throttle: the last update
      in.pipeInput(OTHER, refusal(OTHER, -1, after, "srt-violation", "exfil.example", null), after);
      List<Alert> alerts = out.readValuesToList();

      assertThat(alerts.stream().filter(a -> a.commandId().equals(OTHER)).map(Alert::rule))
          .containsExactly("off-role-host");
      List<Alert> scanner = alerts.stream().filter(a -> a.commandId().equals(SCANNER)).toList();
      // one alert per rule: a first firing and throttled updates, never a new page per host
      Set<String> fingerprints = scanner.stream().map(Alert::fingerprint).collect(Collectors.toSet());
      assertThat(fingerprints).hasSize(3);
      assertThat(scanner.size()).isLessThan(30);
      for (Alert a : scanner) {
        assertThat(Json.MAPPER.writeValueAsBytes(a).length).as(a.rule()).isLessThan(64 * 1024);
      }
      Alert offRole = scanner.stream().filter(a -> a.rule().equals("off-role-host")).reduce((a, b) -> b).orElseThrow();
      int networkHosts = HOSTS - HOSTS / 10;
      assertThat(offRole.distinctTargets()).isBetween((long) (networkHosts * 0.9), (long) (networkHosts * 1.1));
      assertThat(offRole.targets()).hasSizeLessThanOrEqualTo(5);

      KeyValueStore<String, Object> lifecycle = d.getKeyValueStore(AlertLifecycleProcessor.STORE);
      assertThat(count(lifecycle, SCANNER)).isEqualTo(3);
      assertThat(maxBytes(lifecycle)).isLessThan(64 * 1024);
      assertThat(count(d.getKeyValueStore(DetectionTopology.DEDUP_STORE), SCANNER))
          .isLessThanOrEqualTo(CrossSourceDedupProcessor.MAX_PER_COMMAND);
      @SuppressWarnings("unchecked")
      var digests = (dev.knockwatch.streams.state.WriteBackStore<Object>)
          d.getStateStore(DetectionTopology.EXACT_DUPLICATES_STORE);
      for (var e : digests.entries()) {
        assertThat(dev.knockwatch.streams.detect.ExactDuplicateProcessor.bytes(e.getValue()).length)
            .isLessThan(MAX_MESSAGE_BYTES / 4);
      }
      // the rules' state of the command's path, as its changelog holds it
      var serde = dev.knockwatch.streams.detect.DetectProcessor.serde(policy().rules().stream()
          .filter(rule -> rule.per() != dev.knockwatch.streams.rules.Grain.AGENT).toList());
      @SuppressWarnings("unchecked")
      var state = (dev.knockwatch.streams.state.WriteBackStore<dev.knockwatch.streams.detect.DetectProcessor.Slices>)
          d.getStateStore(DetectionTopology.DETECT_STORE);
      assertThat(state.get(SCANNER)).isNotNull();
      for (var e : state.entries()) {
        assertThat(serde.serializer().serialize("t", e.getValue()).length).isLessThan(MAX_MESSAGE_BYTES / 4);
      }
    }
  }

  @Test
  void aCommandSummaryStaysUnderTheMessageLimitWhateverItsTargetsReasonsAndAlerts() throws Exception {
    Properties p = DetectionTopology.streamsConfig("bounded-timeline", "unused:9092", state, Map.of());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    Random r = new Random(11);
    try (TopologyTestDriver d = new TopologyTestDriver(TimelineTopology.build(policy(), Duration.ofDays(1)), p, T0)) {
      TestInputTopic<String, ViolationEvent> in = d.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(),
          Json.serde(ViolationEvent.class).serializer());
      TestInputTopic<String, Alert> alertsIn = d.createInputTopic(Topics.ALERTS.name(), new StringSerializer(),
          Json.serde(Alert.class).serializer());
      int n = 5_000;
      for (int i = 0; i < n; i++) {
        Instant at = T0.plusMillis(i);
        ViolationEvent e = ViolationEvent.builder().eventId("t" + i).commandId(SCANNER).agentId("ci-runner-1")
            .source("srt-violation").kind(Kind.FILESYSTEM).action("openat").path(path(i))
            .reason(i + "理".repeat(1000)).observedAt(at).build();
        in.pipeInput(SCANNER, e, at);
      }
      for (int i = 0; i < 200; i++) {
        alertsIn.pipeInput("f" + i, Alert.firing("rule-" + i, SCANNER).fingerprint("f" + i)
            .severity(Alert.Severity.PAGE).agentId("ci-runner-1").role("ci").host(host(i, r)).port(443)
            .firstSeen(T0).lastSeen(T0).summary("理".repeat(4000)).sampleEventIds(List.of()).sources(List.of())
            .policyVersion("v").build(), T0.plusMillis(n + i));
      }
      KeyValueStore<String, CommandSummary> commands = d.getKeyValueStore(TimelineProcessor.COMMANDS);
      CommandSummary s = commands.get(SCANNER);
      assertThat(s.events()).isEqualTo(n);
      assertThat(s.targets()).hasSize(CommandSummary.MAX_KEYS + 1);
      assertThat(s.reasons()).hasSize(CommandSummary.MAX_KEYS + 1);
      assertThat(s.alerts()).hasSize(CommandSummary.MAX_ALERTS);
      assertThat(s.distinctTargets()).isBetween((long) (n * 0.9), (long) (n * 1.1));
      assertThat(Json.MAPPER.writeValueAsBytes(s).length).isLessThan(MAX_MESSAGE_BYTES / 2);
    }
  }

  private static long count(KeyValueStore<String, Object> store, String commandId) {
    long n = 0;
    try (KeyValueIterator<String, Object> it = store.all()) {
      while (it.hasNext()) {
        if (it.next().key.startsWith(commandId)) {
          n++;
        }
      }
    }
    return n;
  }

  private static long maxBytes(KeyValueStore<String, Object> store) throws Exception {
    long max = 0;
    try (KeyValueIterator<String, Object> it = store.all()) {
      while (it.hasNext()) {
        Object v = it.next().value;
        max = Math.max(max, v instanceof byte[] b ? b.length : Json.MAPPER.writeValueAsBytes(v).length);
      }
    }
    return max;
  }
}
