package dev.knockwatch.streams;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor.Clock;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A wall that names no command (a firewall): its refusals travel under their agent's (or
 * session's) key, and the rules count them there whatever their grain: the shipped rules page on
 * the agent's off-role host and its retries, a rule per agent counts each refusal once, and every
 * alert names the agent's key, never an invented command.
 */
class WallRefusalsTest {

  static final Instant T0 = Instant.parse("2026-12-06T04:40:00Z");
  static final String AGENT = "sandbox-runner-1";

  @TempDir Path state;
  TopologyTestDriver driver;
  TestInputTopic<String, ViolationEvent> in;
  TestOutputTopic<String, Alert> out;
  int seq;

  private void start(Policy policy) {
    Properties p = DetectionTopology.streamsConfig("wall-test", "unused:9092", state, Map.of());
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 10 * 1024 * 1024);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    driver = new TopologyTestDriver(DetectionTopology.buildTopology(policy, Clock.STREAM), p, T0);
    in = driver.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(), Json.serde(ViolationEvent.class).serializer());
    out = driver.createOutputTopic(Topics.ALERTS.name(), new StringDeserializer(), Json.serde(Alert.class).deserializer());
  }

  @AfterEach
  void stop() {
    if (driver != null) {
      driver.close();
    }
  }

  /** A packet of the agent's the firewall refused, as the netfilter format makes it, sent as ingest sends it. */
  private void packet(String session, Instant at, String host, int port) {
    seq++;
    ViolationEvent e = ViolationEvent.builder().eventId("p" + seq).agentId(AGENT).sessionId(session).commandUnknown(true)
        .source("netfilter").kind(Kind.NETWORK).action("connect").protocol("tcp").host(host).port(port)
        .reason("agent-egress-deny").subject(new ViolationEvent.Subject("netfilter", "uid=65534"))
        .sourceAddress("10.77.0.1").sourcePort(40_000 + seq).observedAt(at).build();
    in.pipeInput(e.key(), e, at);
  }

  @Test
  void theShippedRulesPageOnTheAgentsOffRoleHostAndItsRetriesUnderItsKey() throws IOException {
    start(PolicyLoader.load(Path.of("../alert-rules")));
    for (int i = 0; i < 6; i++) {
      packet(null, T0.plusSeconds(i * 2), "10.77.0.2", 443);
    }
    List<Alert> alerts = out.readValuesToList();
    Alert offRole = alerts.stream().filter(a -> a.rule().equals("off-role-host")).findFirst().orElseThrow();
    assertThat(offRole.commandId()).isEqualTo("agent:" + AGENT);
    assertThat(offRole.agentId()).isEqualTo(AGENT);
    assertThat(offRole.fingerprint()).isEqualTo(Alert.fingerprintOf("off-role-host", "agent:" + AGENT));
    assertThat(offRole.summary()).contains("agent " + AGENT).contains("10.77.0.2:443");
    Alert retry = alerts.stream().filter(a -> a.rule().equals("persistent-retry")).findFirst().orElseThrow();
    assertThat(retry.commandId()).isEqualTo("agent:" + AGENT);
    assertThat(retry.count()).isEqualTo(5);
    assertThat(retry.summary()).startsWith("agent refused 5 times");
    assertThat(alerts).extracting(Alert::rule).doesNotHaveDuplicates().doesNotContain("identity-conflict", "ingest-rejects");
  }

  @Test
  void aRuleOfTheAgentsGrainCountsEachOfItsRefusalsOnceAndASessionsKeepToTheSession(@TempDir Path rules)
      throws IOException {
    Files.writeString(rules.resolve("rules.yaml"), """
        rules:
          - {id: agent-storm, detector: count, threshold: 4, window: 5m, per: agent, severity: page}
          - {id: session-retry, detector: count, threshold: 3, window: 5m, per: session, severity: warning}
        """);
    start(PolicyLoader.load(rules));
    packet(null, T0, "10.77.0.2", 443);
    packet(null, T0.plusSeconds(1), "10.77.0.2", 443);
    packet(null, T0.plusSeconds(2), "10.77.0.3", 443);
    // a refusal that names no session is its agent's own session, as one that names no task is its command's task
    assertThat(out.readValuesToList()).extracting(Alert::rule, Alert::commandId, Alert::count)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("session-retry", "agent:" + AGENT, 3L));
    packet(null, T0.plusSeconds(3), "10.77.0.3", 443);
    List<Alert> fourth = out.readValuesToList();
    // counted once each: on the agent's own key, never again through the by-grain topic
    assertThat(fourth).filteredOn(a -> a.rule().equals("agent-storm")).extracting(Alert::commandId, Alert::count)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("agent:" + AGENT, 4L));
    assertThat(fourth.stream().filter(a -> a.rule().equals("agent-storm")).findFirst().orElseThrow().summary())
        .startsWith("agent refused 4 times");
    // a sandbox the wall names (OpenShell's container) is a session: its refusals meet under its key, the summary names it
    packet("sandbox-7", T0.plusSeconds(10), "10.77.0.2", 443);
    packet("sandbox-7", T0.plusSeconds(11), "10.77.0.2", 443);
    packet("sandbox-7", T0.plusSeconds(12), "10.77.0.2", 443);
    List<Alert> session = out.readValuesToList().stream().filter(a -> a.rule().equals("session-retry")
        && a.commandId().startsWith("session:")).toList();
    assertThat(session).extracting(Alert::commandId).containsExactly("session:" + AGENT + "/sandbox-7");
    assertThat(session.get(0).summary()).startsWith("sandbox refused 3 times");
  }

  /** A count in aligned windows at the agent's grain: on the agent's own key, as the count in any window is. */
  @Test
  void aCountInAlignedWindowsOfTheAgentsGrainCountsOnTheAgentsKey(@TempDir Path rules) throws IOException {
    Files.writeString(rules.resolve("rules.yaml"), """
        rules:
          - {id: agent-storm, detector: count, threshold: 4, window: 5m, hop: 5m, per: agent, severity: page}
        """);
    start(PolicyLoader.load(rules));
    for (int i = 0; i < 3; i++) {
      packet(null, T0.plusSeconds(i), "10.77.0." + (2 + i), 443);
    }
    assertThat(out.readValuesToList()).isEmpty();
    packet(null, T0.plusSeconds(3), "10.77.0.9", 443);
    assertThat(out.readValuesToList()).extracting(Alert::rule, Alert::commandId, Alert::count)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("agent-storm", "agent:" + AGENT, 4L));
  }
}
