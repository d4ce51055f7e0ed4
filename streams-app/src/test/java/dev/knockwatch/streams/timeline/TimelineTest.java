package dev.knockwatch.streams.timeline;

import dev.knockwatch.streams.TimelineTopology;
import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The timeline app on a TopologyTestDriver: events in order and bounded, alerts beside them, retention. */
class TimelineTest {

  static final Instant T0 = Instant.parse("2026-11-30T02:00:00Z");
  static final String CMD = "TimelineTimelineTimeL1";

  @TempDir Path state;
  @TempDir Path rules;
  TopologyTestDriver driver;
  TestInputTopic<String, ViolationEvent> violations;
  TestInputTopic<String, Alert> alerts;

  @BeforeEach
  void start() throws IOException {
    Files.writeString(rules.resolve("rules.yaml"), "rules:\n  - id: off-role-host\n    detector: off-role\n");
    Files.writeString(rules.resolve("roles.yaml"), "roles:\n  ci:\n    hosts: [\"registry.npmjs.org\"]\n"
        + "agents:\n  - match: \"ci-*\"\n    role: ci\n");
    Policy policy = PolicyLoader.load(rules);
    Properties p = DetectionTopology.streamsConfig("timeline-test", "unused:9092", state, Map.of());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    driver = new TopologyTestDriver(TimelineTopology.build(policy, Duration.ofDays(1)), p, T0);
    driver.advanceWallClockTime(Duration.ofMillis(100)); // the empty index's build: marked built
    violations = driver.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(),
        Json.serde(ViolationEvent.class).serializer());
    alerts = driver.createInputTopic(Topics.ALERTS.name(), new StringSerializer(), Json.serde(Alert.class).serializer());
  }

  @AfterEach
  void stop() {
    driver.close();
  }

  private void refuse(String cmd, int i, String host, Instant at) {
    violations.pipeInput(cmd, ViolationEvent.builder().eventId("e" + i).commandId(cmd).agentId("ci-runner-1")
        .source("srt-violation").kind(Kind.NETWORK).action("network-outbound").host(host).port(443)
        .reason("host is not on the allow list").observedAt(at).build(), at);
  }

  private KeyValueStore<String, CommandSummary> commands() {
    return driver.getKeyValueStore(TimelineProcessor.COMMANDS);
  }

  private List<String> eventIds(String cmd) {
    KeyValueStore<String, ViolationEvent> events = driver.getKeyValueStore(TimelineProcessor.EVENTS);
    List<String> ids = new ArrayList<>();
    String[] range = TimelineProcessor.eventRange(cmd);
    try (KeyValueIterator<String, ViolationEvent> it = events.range(range[0], range[1])) {
      while (it.hasNext()) {
        KeyValue<String, ViolationEvent> kv = it.next();
        ids.add(kv.value.eventId());
      }
    }
    return ids;
  }

  @Test
  void aCommandsEventsAreKeptInOrderWithItsCountsAndRole() {
    refuse(CMD, 0, "evil.example", T0);
    refuse(CMD, 1, "evil.example", T0.plusSeconds(1));
    refuse(CMD, 2, "registry.npmjs.org", T0.plusSeconds(2));
    refuse("OtherOtherOtherOther01", 3, "x.example", T0.plusSeconds(3));
    assertThat(eventIds(CMD)).containsExactly("e0", "e1", "e2");
    CommandSummary s = commands().get(CMD);
    assertThat(s.agentId()).isEqualTo("ci-runner-1");
    assertThat(s.role()).isEqualTo("ci");
    assertThat(s.events()).isEqualTo(3);
    assertThat(s.firstSeen()).isEqualTo(T0);
    assertThat(s.lastSeen()).isEqualTo(T0.plusSeconds(2));
    assertThat(s.targets()).containsExactly(Map.entry("evil.example:443", 2L), Map.entry("registry.npmjs.org:443", 1L));
    assertThat(s.reasons()).containsExactly(Map.entry("host is not on the allow list", 3L));
    assertThat(s.sources()).containsExactly(Map.entry("srt-violation", 3L));
  }

  @Test
  void anEventReadTwiceIsShownAndCountedOnce() {
    refuse(CMD, 0, "evil.example", T0);
    refuse(CMD, 1, "evil.example", T0); // the same line again at another offset: another event id
    refuse(CMD, 2, "evil.example", T0.plusMillis(40)); // a real retry
    assertThat(eventIds(CMD)).containsExactly("e0", "e2");
    assertThat(commands().get(CMD).events()).isEqualTo(2);
  }

  @Test
  void onlyTheFirstAndTheLastThousandEventsAreKeptAndAllAreCounted() {
    for (int i = 0; i < 2_500; i++) {
      refuse(CMD, i, "evil.example", T0.plusMillis(i));
    }
    List<String> ids = eventIds(CMD);
    assertThat(ids).hasSize(2_000);
    assertThat(ids.subList(0, 3)).containsExactly("e0", "e1", "e2");
    assertThat(ids.get(999)).isEqualTo("e999");
    assertThat(ids.get(1000)).isEqualTo("e1500");
    assertThat(ids.get(1999)).isEqualTo("e2499");
    assertThat(commands().get(CMD).events()).isEqualTo(2_500);
  }

  @Test
  void theCommandsAlertsSitBesideItsEventsWithTheirLastStatus() {
    refuse(CMD, 0, "evil.example", T0);
    Alert firing = Alert.firing("off-role-host", CMD).fingerprint("fp1").severity(Alert.Severity.PAGE)
        .agentId("ci-runner-1").role("ci").host("evil.example").port(443).firstSeen(T0).lastSeen(T0)
        .summary("agent tried evil.example:443").sampleEventIds(List.of("e0")).build();
    alerts.pipeInput("fp1", firing, T0);
    alerts.pipeInput("fp1", firing.resolved(), T0.plusSeconds(600));
    CommandSummary s = commands().get(CMD);
    assertThat(s.alerts()).containsOnlyKeys("fp1");
    assertThat(s.alerts().get("fp1").status()).isEqualTo(Alert.Status.RESOLVED);
    assertThat(s.alerts().get("fp1").rule()).isEqualTo("off-role-host");
    assertThat(s.events()).isEqualTo(1);
  }

  @Test
  void commandsIdleLongerThanTheRetentionGoWithTheirEvents() {
    refuse(CMD, 0, "evil.example", T0.minus(Duration.ofDays(2)));
    refuse("RecentRecentRecentRe01", 1, "evil.example", T0);
    driver.advanceWallClockTime(TimelineProcessor.SWEEP_EVERY.plusSeconds(1));
    assertThat(commands().get(CMD)).isNull();
    assertThat(eventIds(CMD)).isEmpty();
    assertThat(commands().get("RecentRecentRecentRe01")).isNotNull();
    assertThat(index()).containsOnlyKeys(expectedIndex().keySet()).hasSize(3); // marker, by time, by agent
  }

  /**
   * The lists' index holds exactly each command's entries, whatever order events and alerts come
   * in and whatever the agent wrote: ids with NUL, bidi overrides and lone surrogates, times out of
   * order, alerts that change status, severity and rule, commands that expire. A missed delete
   * leaves a stale row (a resolved alert still listed as firing); a missed put leaves a hole.
   */
  @Test
  void theListIndexHoldsEachCommandsEntriesAndNothingElse() {
    String[] agents = {"ci-runner-1", "assistant-7", "a\u0000b", "\u202eevil", "x\ud800y", "knockwatch-limit", "ci-runner-1\u0000"};
    Alert.Severity[] severities = Alert.Severity.values();
    for (long seed = 1; seed <= 3; seed++) {
      java.util.Random r = new java.util.Random(seed);
      List<String> ids = new ArrayList<>();
      for (int c = 0; c < 12; c++) {
        ids.add(String.format("IndexProperty%02d%02dxxxxx", seed, c));
      }
      for (int op = 0; op < 400; op++) {
        String cmd = ids.get(r.nextInt(ids.size()));
        Instant at = T0.minus(Duration.ofDays(2)).plusSeconds(r.nextInt(4 * 24 * 3600));
        if (r.nextInt(3) > 0) {
          violations.pipeInput(cmd, ViolationEvent.builder().eventId("p" + seed + "-" + op).commandId(cmd)
              .agentId(agents[r.nextInt(agents.length)]).source("srt-violation").kind(Kind.NETWORK)
              .action("network-outbound").host("h" + r.nextInt(5) + ".example").port(443).observedAt(at).build(), at);
        } else {
          String fp = "fp-" + cmd + "-" + r.nextInt(3);
          alerts.pipeInput(fp, Alert.firing("rule-" + r.nextInt(3), cmd).fingerprint(fp)
              .severity(severities[r.nextInt(severities.length)])
              .status(r.nextBoolean() ? Alert.Status.FIRING : Alert.Status.RESOLVED)
              .agentId(agents[r.nextInt(agents.length)]).role(r.nextBoolean() ? "ci" : null).firstSeen(at)
              .lastSeen(r.nextInt(10) == 0 ? null : at).summary("s").sampleEventIds(List.of())
              .shadow(r.nextBoolean() ? true : null).build(), at);
        }
        if (op % 50 == 49) {
          assertThat(difference(index(), expectedIndex())).as("seed %d, after %d", seed, op).isEmpty();
        }
      }
    }
    driver.advanceWallClockTime(Duration.ofDays(4)); // past every command's retention
    try (KeyValueIterator<String, CommandSummary> left = commands().all()) {
      assertThat(left.hasNext()).isFalse();
    }
    assertThat(index()).containsOnlyKeys(TimelineIndex.BUILT);
  }

  /**
   * Issue 43: a refusal ingest rejected for whose it is is listed in the console: its notice is the
   * timeline of its directory's key, with the ingest-rejects alert beside it, in the lists' index.
   */
  @Test
  void anUnattributedRefusalsNoticeIsListedWithItsAlert() {
    String key = ViolationEvent.unattributedCommandId("ci-runner-1\u2024x");
    violations.pipeInput(key, ViolationEvent.builder().eventId("n0").commandId(key)
        .source("srt-violation").reason("a refusal was rejected (bad-agent-id): it cannot be told whose it is")
        .unattributed(new ViolationEvent.Unattributed("bad-agent-id", "ci-runner-1\u2024x")).observedAt(T0).build(), T0);
    Alert firing = Alert.firing("ingest-rejects", key).fingerprint("fp-rejects").severity(Alert.Severity.PAGE)
        .role("default").firstSeen(T0).lastSeen(T0)
        .summary("ingest rejected a refusal in directory \"ci-runner-1\u2024x\"").sampleEventIds(List.of("n0"))
        .build();
    alerts.pipeInput("fp-rejects", firing, T0);
    CommandSummary s = commands().get(key);
    assertThat(s.events()).isEqualTo(1);
    assertThat(s.alerts()).containsOnlyKeys("fp-rejects");
    assertThat(index().keySet()).anyMatch(k -> k.contains(key));
    assertThat(difference(index(), expectedIndex())).isEmpty();
  }

  /**
   * A wall that names no command (a firewall): its refusals are the timeline of its agent's key, in
   * that agent's list like any of its commands, and carry that they name no command.
   */
  @Test
  void aWallsRefusalsAreTheTimelineOfTheAgentsKeyAndInItsList() {
    for (int i = 0; i < 3; i++) {
      ViolationEvent e = ViolationEvent.builder().eventId("w" + i).agentId("ci-runner-7").commandUnknown(true)
          .source("netfilter").kind(Kind.NETWORK).action("connect").host("10.77.0.2").port(443).protocol("tcp")
          .subject(new ViolationEvent.Subject("netfilter", "uid=65534")).observedAt(T0.plusSeconds(i)).build();
      violations.pipeInput(e.key(), e, T0.plusSeconds(i));
    }
    CommandSummary s = commands().get("agent:ci-runner-7");
    assertThat(s.events()).isEqualTo(3);
    assertThat(s.agentId()).isEqualTo("ci-runner-7");
    assertThat(s.role()).isEqualTo("ci");
    assertThat(eventIds("agent:ci-runner-7")).containsExactly("w0", "w1", "w2");
    assertThat(index().keySet()).anyMatch(k -> k.startsWith(TimelineIndex.agentPrefix("ci-runner-7"))
        && k.endsWith("agent:ci-runner-7"));
    assertThat(difference(index(), expectedIndex())).isEmpty();
  }

  private java.util.Map<String, String> index() {
    java.util.Map<String, String> out = new java.util.TreeMap<>();
    KeyValueStore<String, String> index = driver.getKeyValueStore(TimelineIndex.STORE);
    try (KeyValueIterator<String, String> it = index.all()) {
      it.forEachRemaining(kv -> out.put(kv.key, kv.value));
    }
    return out;
  }

  /** Each key whose row differs: what is there, and what should be. */
  private static List<String> difference(java.util.Map<String, String> is, java.util.Map<String, String> shouldBe) {
    java.util.Set<String> keys = new java.util.TreeSet<>(is.keySet());
    keys.addAll(shouldBe.keySet());
    return keys.stream().filter(k -> !java.util.Objects.equals(is.get(k), shouldBe.get(k)))
        .map(k -> k + ": " + is.get(k) + " instead of " + shouldBe.get(k)).toList();
  }

  /** What the index holds when it is right: the marker, and every command's entries made afresh. */
  private java.util.Map<String, String> expectedIndex() {
    java.util.Map<String, String> out = new java.util.TreeMap<>();
    out.put(TimelineIndex.BUILT, index().get(TimelineIndex.BUILT));
    try (KeyValueIterator<String, CommandSummary> it = commands().all()) {
      // a key is stored as UTF-8: a lone surrogate in an agent id is stored as '?', as when it was put
      it.forEachRemaining(kv -> TimelineIndex.entries(kv.value, true).forEach((k, v) -> out.put(
          new String(k.getBytes(java.nio.charset.StandardCharsets.UTF_8), java.nio.charset.StandardCharsets.UTF_8), v)));
    }
    return out;
  }
}
