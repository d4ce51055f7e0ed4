package dev.knockwatch.streams;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor.Clock;
import dev.knockwatch.streams.rules.PolicyLoader;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Codex's sessions under the shipped rules, as ingest's codex format makes their events (its
 * samples' expectations): a turn's retries page once for the turn, its refusals at the turn
 * (proxy decisions of calls run side by side) count with its calls', an escalation let out is
 * critical with who let it out, and a sandbox that could not start warns once a session.
 */
class CodexSessionsTest {

  static final Instant T0 = Instant.parse("2026-12-06T05:47:55Z");
  static final String AGENT = "codex-dev-laptop-7";
  static final String THREAD = "01a249e5-036b-73a3-b543-b0a9805c5977";

  @TempDir Path state;
  TopologyTestDriver driver;
  TestInputTopic<String, ViolationEvent> in;
  TestOutputTopic<String, Alert> out;
  int seq;

  @BeforeEach
  void start() {
    Properties p = DetectionTopology.streamsConfig("codex-test", "unused:9092", state, Map.of());
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 10 * 1024 * 1024);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    driver = new TopologyTestDriver(DetectionTopology.buildTopology(PolicyLoader.load(Path.of("../alert-rules")),
        Clock.STREAM), p, T0);
    in = driver.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(), Json.serde(ViolationEvent.class).serializer());
    out = driver.createOutputTopic(Topics.ALERTS.name(), new StringDeserializer(), Json.serde(Alert.class).deserializer());
  }

  @AfterEach
  void stop() {
    driver.close();
  }

  static String call(int n) {
    return "call_" + "Lk3vQ8ZpX2mN7rT4wY6bC9d".substring(0, 20) + String.format("%04d", n);
  }

  private void send(String command, String task, Instant at, Consumer<ViolationEvent.Builder> fill) {
    ViolationEvent.Builder b = ViolationEvent.builder().eventId("c" + (++seq)).agentId(AGENT).commandId(command)
        .sessionId(THREAD).taskId(task).source("codex").observedAt(at);
    if (command == null) {
      b.commandUnknown(true);
    }
    fill.accept(b);
    ViolationEvent e = b.build();
    in.pipeInput(e.key(), e, at);
  }

  private static Consumer<ViolationEvent.Builder> proxy(String host, int port) {
    return b -> b.kind(Kind.NETWORK).action("http-connect").host(host).port(port).addressClass(AddressClass.PUBLIC)
        .reason("Codex's network proxy refused it: not_allowed (baseline_policy)").evidence("sandbox-record");
  }

  @Test
  void fiveCallsOfOneTurnRefusedOneHostAreOneRetryWarningAndOneOffRolePageForTheTurn() {
    String turn = call(1);
    for (int i = 1; i <= 5; i++) {
      send(call(i), turn, T0.plusMillis(110L * i), proxy("evil.example", 443));
    }
    send(call(6), turn, T0.plusSeconds(1), b -> b.kind(Kind.NETWORK).action("http-request").host("169.254.169.254")
        .port(80).addressClass(AddressClass.CLOUD_METADATA).reason("not_allowed_local").evidence("sandbox-record"));
    List<Alert> alerts = out.readValuesToList();
    String task = "task:" + AGENT + "/" + THREAD + "/" + turn;
    // one alert for the turn (its fingerprint the task's), naming the call that crossed
    assertThat(alerts).filteredOn(a -> a.rule().equals("persistent-retry")).extracting(Alert::fingerprint, Alert::commandId)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(Alert.fingerprintOf("persistent-retry", task), call(5)));
    assertThat(alerts).filteredOn(a -> a.rule().equals("persistent-retry")).first()
        .satisfies(a -> assertThat(a.severity()).isEqualTo(Alert.Severity.WARNING));
    assertThat(alerts).filteredOn(a -> a.rule().equals("off-role-host")).extracting(Alert::fingerprint)
        .as("one page for the task, updated").containsOnly(Alert.fingerprintOf("off-role-host", task));
    assertThat(alerts).extracting(Alert::rule).contains("sensitive-address");
  }

  @Test
  void refusalsCountedAtTheTurnCountWithItsCalls() {
    String turn = call(1);
    // four calls in one response: the proxy's refusals name no call, and count at the turn
    for (int i = 0; i < 3; i++) {
      send(null, turn, T0.plusMillis(100L * i), proxy("evil.example", 443));
    }
    send(call(5), turn, T0.plusSeconds(1), proxy("evil.example", 443));
    assertThat(out.readValuesToList()).extracting(Alert::rule).doesNotContain("persistent-retry");
    send(call(6), turn, T0.plusSeconds(2), proxy("evil.example", 443));
    assertThat(out.readValuesToList()).filteredOn(a -> a.rule().equals("persistent-retry"))
        .extracting(Alert::fingerprint, Alert::count).containsExactly(org.assertj.core.groups.Tuple.tuple(
            Alert.fingerprintOf("persistent-retry", "task:" + AGENT + "/" + THREAD + "/" + turn), 5L));
  }

  @Test
  void anEscalationLetOutIsCriticalWithWhoLetItOut() {
    String turn = call(1);
    send(call(1), turn, T0, b -> b.kind(Kind.FILESYSTEM).action("open").path("/home/u/sandbox-probe").errno("EROFS")
        .reason("Read-only file system").evidence("output"));
    send(call(2), turn, T0.plusSeconds(1), b -> b.kind(Kind.PROCESS).action(ViolationEvent.SANDBOX_OFF_REQUEST)
        .reason("the call asks to run outside the sandbox (require_escalated): Create ~/sandbox-probe")
        .evidence("command-text"));
    send(call(3), turn, T0.plusSeconds(2), b -> b.kind(Kind.PROCESS).action(ViolationEvent.SANDBOX_OFF_REQUEST)
        .reason("the call asks to run outside the sandbox (require_escalated): again").evidence("command-text"));
    send(call(3), turn, T0.plusSeconds(2), b -> b.kind(Kind.PROCESS).action(ViolationEvent.SANDBOX_OFF_APPROVED)
        .reason("approved by User: it ran outside the sandbox").evidence("sandbox-record"));
    List<Alert> escapes = out.readValuesToList().stream().filter(a -> a.rule().equals("sandbox-escape")).toList();
    assertThat(escapes).extracting(Alert::fingerprint).containsOnly(
        Alert.fingerprintOf("sandbox-escape", "task:" + AGENT + "/" + THREAD + "/" + turn),
        Alert.fingerprintOf("sandbox-escape:approved", "task:" + AGENT + "/" + THREAD + "/" + turn));
    Alert request = escapes.stream().filter(a -> a.summary().contains("require_escalated")).findFirst().orElseThrow();
    assertThat(request.severity()).as("right after the sandbox refused the task").isEqualTo(Alert.Severity.CRITICAL);
    Alert approved = escapes.stream().filter(a -> a.summary().contains("let out")).findFirst().orElseThrow();
    assertThat(approved.severity()).isEqualTo(Alert.Severity.CRITICAL);
    assertThat(approved.summary()).contains("approved by User");
  }

  @Test
  void aSandboxThatCouldNotStartWarnsOnceASessionAndPagesNoOne() {
    String turn = call(1);
    for (int i = 1; i <= 6; i++) {
      send(call(i), turn, T0.plusSeconds(i), b -> b.kind(Kind.PROCESS).action(ViolationEvent.SANDBOX_UNAVAILABLE)
          .reason("the sandbox could not start (bwrap: execvp codex-linux-sandbox: No such file or directory)")
          .evidence("output"));
    }
    List<Alert> alerts = out.readValuesToList();
    assertThat(alerts).extracting(Alert::rule).containsOnly("sandbox-unavailable");
    assertThat(alerts).extracting(Alert::fingerprint).containsOnly(
        Alert.fingerprintOf("sandbox-unavailable", "session:" + AGENT + "/" + THREAD));
    assertThat(alerts.get(0).severity()).isEqualTo(Alert.Severity.WARNING);
    assertThat(alerts.get(0).summary()).contains("could not start").contains("none of their failures is a refusal");
  }
}
