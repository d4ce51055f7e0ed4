package dev.knockwatch.streams.rules;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor.Clock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Detection at the task, session and agent grain (issue 44): a model's retry is a new tool call,
 * a new command; the shipped rules count and group per task, and a refusal with no task (srt,
 * Squid, strace) is its own command's task, with the alert it had before grains.
 */
class GrainsTest {

  static final Instant T0 = Instant.parse("2026-12-03T23:00:00Z");
  static final String SESSION = "3910808c-131a-4082-8590-281847ea4a47";

  @TempDir Path state;
  TopologyTestDriver driver;
  TestInputTopic<String, ViolationEvent> in;
  TestOutputTopic<String, Alert> out;
  int seq;

  @AfterEach
  void tearDown() {
    if (driver != null) {
      driver.close();
    }
  }

  private void start(Path rules) {
    Properties p = DetectionTopology.streamsConfig("test", "unused:9092", state, Map.of());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    driver = new TopologyTestDriver(DetectionTopology.buildTopology(PolicyLoader.load(rules), Clock.STREAM), p, T0);
    in = driver.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(), Json.serde(ViolationEvent.class).serializer());
    out = driver.createOutputTopic(Topics.ALERTS.name(), new StringDeserializer(), Json.serde(Alert.class).deserializer());
  }

  private void send(String commandId, Instant at, UnaryOperator<ViolationEvent.Builder> f) {
    seq++;
    ViolationEvent.Builder b = ViolationEvent.builder().eventId("e" + seq).commandId(commandId).agentId("claude-code")
        .source("claude-code").kind(Kind.NETWORK).action("network-outbound").host("example.com").port(443)
        .observedAt(at);
    in.pipeInput(commandId, f.apply(b).build(), at);
  }

  private static String toolCall(int i) {
    return String.format("toolu_01%022d", i);
  }

  private List<Alert> firing() {
    return out.readValuesToList().stream().filter(a -> a.status() == Alert.Status.FIRING).toList();
  }

  @Test
  void fiveRetriesAsFiveToolCallsOfOneTaskWarnOnceAndPageOnce() {
    start(Path.of("../alert-rules"));
    for (int i = 0; i < 5; i++) {
      send(toolCall(i), T0.plusSeconds(10L * i), b -> b.sessionId(SESSION).taskId("task-1"));
    }
    // stream time moves on (another agent's refusal): the throttled update of the page goes out
    send("OtherCommand0000000000001", T0.plusSeconds(120), b -> b.agentId("ci-runner-1").host("registry.npmjs.org"));
    List<Alert> alerts = firing();
    assertThat(alerts.stream().map(Alert::fingerprint).distinct()).as("one alert of each rule for the task").hasSize(2);
    assertThat(alerts.stream().map(Alert::rule).distinct()).containsExactly("off-role-host", "persistent-retry");
    Alert page = alerts.stream().filter(a -> a.rule().equals("off-role-host")).reduce((a, b) -> b).orElseThrow();
    assertThat(page.count()).as("the page's count, updated").isEqualTo(5);
    Alert retry = alerts.stream().filter(a -> a.rule().equals("persistent-retry")).findFirst().orElseThrow();
    assertThat(retry.count()).isEqualTo(5);
    assertThat(retry.commandId()).as("the tool call that crossed").isEqualTo(toolCall(4));
    assertThat(retry.summary()).startsWith("task refused 5 times in 40s");
    assertThat(alerts.get(0).commandId()).as("the off-role page is the first tool call's").isEqualTo(toolCall(0));
    assertThat(alerts.get(0).summary()).contains("example.com:443");
  }

  @Test
  void fiveToolCallsOfFiveTasksAreFiveTasks() {
    start(Path.of("../alert-rules"));
    for (int i = 0; i < 5; i++) {
      int task = i;
      send(toolCall(i), T0.plusSeconds(10L * i), b -> b.sessionId(SESSION).taskId("task-" + task));
    }
    assertThat(firing()).extracting(Alert::rule).containsOnly("off-role-host").hasSize(5);
  }

  @Test
  void aRefusalAfterWhichTheNextToolCallTriesAnotherDoorIsABypassOfTheTask() {
    start(Path.of("../alert-rules"));
    send(toolCall(1), T0, b -> b.sessionId(SESSION).taskId("task-1"));
    send(toolCall(2), T0.plusSeconds(5), b -> b.sessionId(SESSION).taskId("task-1").action("dns").port(443)
        .evidence(ViolationEvent.EVIDENCE_COMMAND));
    assertThat(firing()).extracting(Alert::rule, Alert::commandId)
        .contains(org.assertj.core.groups.Tuple.tuple("bypass", toolCall(2)));
  }

  @Test
  void refusalsWithNoTaskKeepTheirCommandsAlertsAsBeforeGrains() {
    start(Path.of("../alert-rules"));
    String srtCommand = "xhfHytmXL-L6RsYw2CrSjA";
    for (int i = 0; i < 5; i++) {
      send(srtCommand, T0.plusSeconds(i), b -> b.agentId("ci-runner-1").source("srt-violation").host("evil.example"));
    }
    List<Alert> alerts = firing();
    assertThat(alerts).extracting(Alert::rule).containsExactly("off-role-host", "persistent-retry");
    assertThat(alerts).allSatisfy(a -> {
      assertThat(a.commandId()).isEqualTo(srtCommand);
      assertThat(a.fingerprint()).isEqualTo(Alert.fingerprintOf(a.rule(), srtCommand));
    });
    assertThat(alerts.get(1).summary()).startsWith("command refused 5 times");
  }

  @Test
  void perSessionAndPerAgentCountAcrossTasksAndSessions(@TempDir Path rules) throws IOException {
    Files.writeString(rules.resolve("rules.yaml"), "rules:\n"
        + "  - {id: per-session, detector: count, window: 5m, threshold: 3, per: session, severity: warning}\n"
        + "  - {id: per-agent, detector: count, window: 5m, threshold: 4, per: agent, severity: page}\n"
        + "  - {id: per-command, detector: count, window: 5m, threshold: 2, severity: info}\n");
    start(rules);
    send(toolCall(1), T0, b -> b.sessionId("s-1").taskId("t-1"));
    send(toolCall(2), T0.plusSeconds(1), b -> b.sessionId("s-1").taskId("t-2"));
    send(toolCall(3), T0.plusSeconds(2), b -> b.sessionId("s-1").taskId("t-3"));
    send(toolCall(4), T0.plusSeconds(3), b -> b.sessionId("s-2").taskId("t-4"));
    assertThat(firing()).extracting(Alert::rule, Alert::count).containsExactly(
        org.assertj.core.groups.Tuple.tuple("per-session", 3L), org.assertj.core.groups.Tuple.tuple("per-agent", 4L));
  }

  /** Aligned windows (a count with {@code hop}) at every grain: each counts its own, the agent's too. */
  @Test
  void alignedWindowsCountAtEveryGrain(@TempDir Path rules) throws IOException {
    Files.writeString(rules.resolve("rules.yaml"), "rules:\n"
        + "  - {id: hop-session, detector: count, window: 5m, hop: 1m, threshold: 3, per: session, severity: warning}\n"
        + "  - {id: hop-agent, detector: count, window: 5m, hop: 5m, threshold: 4, per: agent, severity: page}\n");
    start(rules);
    send(toolCall(1), T0, b -> b.sessionId("s-1").taskId("t-1"));
    send(toolCall(2), T0.plusSeconds(1), b -> b.sessionId("s-1").taskId("t-2"));
    send(toolCall(3), T0.plusSeconds(2), b -> b.sessionId("s-1").taskId("t-3"));
    send(toolCall(4), T0.plusSeconds(3), b -> b.sessionId("s-2").taskId("t-4"));
    assertThat(firing()).extracting(Alert::rule, Alert::count).containsExactlyInAnyOrder(
        org.assertj.core.groups.Tuple.tuple("hop-session", 3L), org.assertj.core.groups.Tuple.tuple("hop-agent", 4L));
  }

  @Test
  void aGrainThatIsNoneIsRefusedAtLoad(@TempDir Path rules) throws IOException {
    Files.writeString(rules.resolve("rules.yaml"), "rules:\n  - {id: r, detector: count, threshold: 3, per: prompt, severity: warning}\n"
        + "  - {id: w, detector: wall-breach, per: task, severity: critical}\n");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> PolicyLoader.load(rules))
        .hasMessageContaining("per \"prompt\" is not one of command, task, session, agent")
        .hasMessageContaining("rule w: \"per\" is a key of count and value-count and off-role and address-class and bypass"
            + " and fs-guard and sandbox-escape and write-attempt and sandbox-unavailable and drift rules, not of wall-breach rules");
  }
}
