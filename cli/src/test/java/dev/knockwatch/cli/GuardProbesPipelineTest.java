package dev.knockwatch.cli;

import dev.knockwatch.cli.run.Pipeline;
import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.console.ConsoleNotifier;
import dev.knockwatch.probes.guard.GuardProbes;
import dev.knockwatch.probes.guard.GuardRunner;
import dev.knockwatch.probes.guard.ProbeOutcome;
import dev.knockwatch.probes.sandbox.RealSandbox;
import dev.knockwatch.probes.sandbox.SrtBridge;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.streams.rules.PolicyPublisher;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.TopicReader;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guard probes on the real srt (bubblewrap, the library's proxy, each probe in its own
 * network namespace holding only lo), through the real pipeline with the shipped rules:
 * ingest -> Kafka -> detection. The wall holds: every refusal arrives and nothing pages. Then one
 * probe's forbidden action is allowed, and wall-breach fires for it.
 */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class GuardProbesPipelineTest {

  static final Duration WAIT = Duration.ofSeconds(90);
  static final Path RULES = Path.of("../alert-rules");

  @TempDir static Path work;
  static Path logs;
  static EmbeddedKafkaBroker broker;
  static Pipeline pipeline;
  static SrtBridge bridge;

  @BeforeAll
  static void start(EmbeddedKafkaBroker b) throws Exception {
    broker = b;
    bridge = RealSandbox.prepare(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    logs = Files.createDirectories(work.resolve("logs"));
    // the roles every instance uses come from knockwatch.policy: the shipped ones map knockwatch-guard
    PolicyPublisher.publish(b.bootstrapServers(), Map.of(), PolicyLoader.files(RULES));
    pipeline = Pipeline.start(new Pipeline.Settings(b.bootstrapServers(), Map.of(), logs, work.resolve("var"),
        PolicyLoader.load(RULES), "guard-probes-test", "guard-probes-test-notify", Duration.ofMillis(50), null),
        ReceiversConfig.consoleOnly(), List.of(new ConsoleNotifier(new PrintStream(new ByteArrayOutputStream(), true,
            StandardCharsets.UTF_8))));
  }

  @AfterAll
  static void stop() {
    if (pipeline != null) {
      pipeline.close();
    }
  }

  static List<Alert> alertsOf(Set<String> commandIds) {
    return TopicReader.readToEnd(broker, Topics.ALERTS.name(), Json.serde(Alert.class).deserializer(),
        r -> commandIds.contains(r.value().commandId())).stream().map(r -> r.value()).toList();
  }

  @Test
  void everyGuardProbeIsRefusedItsRefusalsArriveAndNothingPages() {
    List<ProbeOutcome> outcomes = new GuardRunner(bridge, logs, work.resolve("probes"), Clock.systemUTC())
        .run(GuardProbes.all(), p -> null);
    assertThat(outcomes).hasSize(10).allSatisfy(o -> {
      assertThat(o.error()).as(o.probe()).isNull();
      assertThat(o.refused()).as(o.probe() + ": " + o.observed()).isTrue();
    });
    Map<String, String> ids = outcomes.stream().collect(Collectors.toMap(ProbeOutcome::probe, ProbeOutcome::commandId));

    // the ten probe results (each written after its probe's refusals), then everything of those commands
    Set<String> commands = Set.copyOf(ids.values());
    assertThat(TopicReader.readUntil(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
        r -> commands.contains(r.key()) && "probe-result".equals(r.value().source()), 10)).hasSize(10)
        .allSatisfy(r -> {
          assertThat(r.value().probe().refused()).isTrue();
          assertThat(r.value().agentId()).isEqualTo(GuardRunner.AGENT_ID);
        });
    pipeline.awaitDetectionCaughtUp(WAIT);
    List<ViolationEvent> events = TopicReader.readToEnd(broker, Topics.VIOLATIONS.name(),
        Json.serde(ViolationEvent.class).deserializer(), r -> commands.contains(r.key())).stream().map(r -> r.value()).toList();
    Map<String, List<ViolationEvent>> byProbe = ids.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey,
        e -> events.stream().filter(v -> v.commandId().equals(e.getValue())).toList()));
    Function<String, List<ViolationEvent>> refusals = probe -> byProbe.get(probe).stream()
        .filter(v -> v.source() != "probe-result").toList();

    assertThat(refusals.apply("plain-http")).anySatisfy(v -> {
      assertThat(v.source()).isEqualTo("srt-violation");
      assertThat(v.host()).isEqualTo("localhost");
      assertThat(v.port()).isEqualTo(GuardProbes.CANARY_PORT);
      assertThat(v.reason()).isEqualTo("host is not on the allow list");
    }).anySatisfy(v -> {
      assertThat(v.source()).isEqualTo("proxy-403");
      assertThat(v.proxyError()).isEqualTo("blocked-by-allowlist");
    });
    assertThat(refusals.apply("https-connect")).anySatisfy(v -> assertThat(v.port()).isEqualTo(GuardProbes.CANARY_PORT));
    assertThat(refusals.apply("url-shortener")).anySatisfy(v -> {
      assertThat(v.host()).isEqualTo("bit.ly");
      assertThat(v.reason()).isEqualTo("URL shorteners are blocked; use the full destination URL");
    });
    assertThat(refusals.apply("noproxy-direct")).anySatisfy(v -> {
      assertThat(v.source()).isEqualTo("proxy-403");
      assertThat(v.host()).isEqualTo("knockwatch-canary.invalid");
    });
    assertThat(refusals.apply("ip-literal-direct")).anySatisfy(v -> assertThat(v.host()).isEqualTo("192.0.2.10"));
    assertThat(refusals.apply("touch-home")).anySatisfy(v -> {
      assertThat(v.kind()).isEqualTo(Kind.FILESYSTEM);
      assertThat(v.path()).endsWith("/home/knockwatch-probe");
    });
    assertThat(refusals.apply("git-hook-append")).anySatisfy(v -> assertThat(v.path()).endsWith("/.git/hooks/pre-commit"));
    assertThat(refusals.apply("dotenv-write")).anySatisfy(v -> assertThat(v.path()).endsWith("/work/.env"));
    // the proxy token in the captured curl transcript never leaves ingest
    assertThat(events).allSatisfy(v -> assertThat(String.valueOf(v.commandText()) + v.url()).doesNotContain("srt."));

    // the guard's expected refusals are excepted from the paging rules, and no probe got through
    assertThat(alertsOf(Set.copyOf(ids.values()))).isEmpty();
  }

  @Test
  void aProbeWhoseForbiddenActionIsAllowedRaisesWallBreach() throws Exception {
    // the canary on 127.0.0.1 is reached as localhost: allow it, and the plain-HTTP probe gets through
    Path allowing = Files.writeString(work.resolve("allow-localhost.json"), GuardRunner.defaultSettings()
        .replace("\"allowedDomains\": []", "\"allowedDomains\": [\"localhost\"]"));
    assertThat(Files.readString(allowing)).contains("[\"localhost\"]");
    List<ProbeOutcome> outcomes = new GuardRunner(bridge, logs, work.resolve("breach"), Clock.systemUTC())
        .run(List.of(GuardProbes.named("plain-http").orElseThrow()), p -> allowing);
    ProbeOutcome o = outcomes.get(0);
    assertThat(o.refused()).isFalse();
    assertThat(o.observed()).isEqualTo("reached: knockwatch canary reached");

    List<Alert> alerts = TopicReader.readUntil(broker, Topics.ALERTS.name(), Json.serde(Alert.class).deserializer(),
        r -> o.commandId().equals(r.value().commandId()), 1).stream().map(r -> r.value()).toList();
    assertThat(alerts).first().satisfies(a -> {
      assertThat(a.rule()).isEqualTo("wall-breach");
      assertThat(a.severity()).isEqualTo(Alert.Severity.CRITICAL);
      assertThat(a.status()).isEqualTo(Alert.Status.FIRING);
      assertThat(a.agentId()).isEqualTo(GuardRunner.AGENT_ID);
      assertThat(a.summary()).contains("guard probe plain-http was not refused");
    });
    pipeline.awaitDetectionCaughtUp(WAIT);
    assertThat(alertsOf(Set.of(o.commandId()))).extracting(Alert::rule).containsOnly("wall-breach");
  }
}
