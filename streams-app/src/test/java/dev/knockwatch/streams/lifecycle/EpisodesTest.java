package dev.knockwatch.streams.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor.Clock;
import dev.knockwatch.streams.rules.PolicyLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.BiConsumer;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One lifecycle for every detector (issue 43): an alert resolves once its rule's resolveAfter of
 * stream time passes without a hit, and a hit after that opens a new episode with a fresh
 * firing alert, even when nothing moved stream time in between (replay's jump of 30 minutes).
 */
class EpisodesTest {

  static final Instant T0 = Instant.parse("2026-11-29T18:45:00Z");
  static final Instant T0_PLUS_30M = T0.plus(Duration.ofMinutes(30));
  static final String CMD = "xhfHytmXL-L6RsYw2CrSjA";

  @TempDir Path state;
  @TempDir Path rulesDir;
  TopologyTestDriver driver;
  TestInputTopic<String, ViolationEvent> in;
  int seq;

  @AfterEach
  void tearDown() {
    if (driver != null) {
      driver.close();
    }
  }

  /** A detector's rule, and what makes it hit once, starting at a given time. */
  record DetectorCase(String name, String rule, BiConsumer<EpisodesTest, Instant> trigger) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> detectors() {
    return Stream.of(
        new DetectorCase("count", "detector: count\n    window: 5m\n    threshold: 2",
            (t, at) -> { t.net(at, "evil.example", 443); t.net(at.plusSeconds(1), "evil.example", 443); }),
        new DetectorCase("value-count", "detector: value-count\n    window: 5m\n    threshold: 2",
            (t, at) -> { t.net(at, "a.example", 443); t.net(at.plusSeconds(1), "b.example", 443); }),
        new DetectorCase("off-role", "detector: off-role", (t, at) -> t.net(at, "evil.example", 443)),
        new DetectorCase("address-class", "detector: address-class\n    classes: [cloud-metadata]",
            (t, at) -> t.send(at, b -> b.host("169.254.169.254").port(80).addressClass(AddressClass.CLOUD_METADATA))),
        new DetectorCase("bypass", "detector: bypass\n    within: 2m", (t, at) -> {
          t.net(at, "pastebin.com", 443);
          t.send(at.plusSeconds(5), b -> b.source("proxy-403").action("dns").host("pastebin.com"));
        }),
        new DetectorCase("fs-guard", "detector: fs-guard",
            (t, at) -> t.send(at, b -> b.kind(Kind.FILESYSTEM).action("openat").path("/home/agent/.bashrc"))),
        new DetectorCase("identity-conflict", "detector: identity-conflict", (t, at) -> t.send(at,
            b -> b.host("evil.example").port(443).identityConflict(new ViolationEvent.IdentityClaim("knockwatch-guard", null)))),
        new DetectorCase("ingest-rejects", "detector: ingest-rejects", (t, at) -> t.send(at, b -> b.agentId(null).kind(null)
            .action(null).unattributed(new ViolationEvent.Unattributed("bad-agent-id", "ci-runner-1\u2024x")))),
        new DetectorCase("wall-breach", "detector: wall-breach", (t, at) -> t.send(at, b -> b.source("probe-result")
            .probe(new ViolationEvent.ProbeResult("plain-http", "403 blocked-by-allowlist", "200 OK", false)))))
        .map(Arguments::of);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("detectors")
  void aHitAfterTheQuietTimeResolvesTheEpisodeAndOpensANewOne(DetectorCase kind) throws IOException {
    start("rules:\n  - id: the-rule\n    " + kind.rule() + "\n    severity: page\n    resolveAfter: 10m\n");
    TestOutputTopic<String, Alert> out = driver.createOutputTopic(Topics.ALERTS.name(), new StringDeserializer(),
        Json.serde(Alert.class).deserializer());
    kind.trigger().accept(this, T0);
    kind.trigger().accept(this, T0_PLUS_30M);

    List<Alert> alerts = out.readValuesToList();
    assertThat(alerts).extracting(Alert::rule).containsOnly("the-rule");
    assertThat(alerts).extracting(Alert::status, a -> a.firstSeen().isBefore(T0_PLUS_30M)).containsExactly(
        tuple(Alert.Status.FIRING, true), tuple(Alert.Status.RESOLVED, true), tuple(Alert.Status.FIRING, false));
    assertThat(alerts.get(1).count()).isEqualTo(alerts.get(0).count());
    assertThat(alerts.get(2).count()).isEqualTo(alerts.get(0).count());
    assertThat(alerts.get(2).firstSeen()).isAfterOrEqualTo(T0_PLUS_30M);
  }

  private void start(String rules) throws IOException {
    Files.writeString(rulesDir.resolve("rules.yaml"), rules);
    Files.writeString(rulesDir.resolve("roles.yaml"), "roles:\n  ci:\n    hosts: [\"registry.npmjs.org\"]\n"
        + "agents:\n  - match: \"ci-*\"\n    role: ci\n");
    Properties p = DetectionTopology.streamsConfig("test", "unused:9092", state, Map.of());
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 10 * 1024 * 1024);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    driver = new TopologyTestDriver(DetectionTopology.buildTopology(PolicyLoader.load(rulesDir), Clock.STREAM), p, T0);
    in = driver.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(),
        Json.serde(ViolationEvent.class).serializer());
  }

  void send(Instant at, UnaryOperator<ViolationEvent.Builder> f) {
    seq++;
    ViolationEvent.Builder b = ViolationEvent.builder().eventId("e" + seq).commandId(CMD).agentId("ci-runner-1")
        .source("srt-violation").kind(Kind.NETWORK).action("network-outbound").observedAt(at);
    in.pipeInput(CMD, f.apply(b).build(), at);
  }

  void net(Instant at, String host, int port) {
    send(at, b -> b.host(host).port(port));
  }
}
