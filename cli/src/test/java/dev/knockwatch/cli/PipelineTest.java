package dev.knockwatch.cli;

import dev.knockwatch.cli.run.Pipeline;
import dev.knockwatch.streams.detect.CountDetector;
import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.console.ConsoleNotifier;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.TopicReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The whole path on a real broker: lines appended to a log directory -> events -> alerts -> console. */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class PipelineTest {

  static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir static Path work;
  static Path logs;
  static EmbeddedKafkaBroker broker;
  static Pipeline pipeline;
  static final ByteArrayOutputStream console = new ByteArrayOutputStream();

  @BeforeAll
  static void start(EmbeddedKafkaBroker b) throws IOException {
    broker = b;
    logs = Files.createDirectories(work.resolve("logs"));
    pipeline = Pipeline.start(new Pipeline.Settings(b.bootstrapServers(), Map.of(), logs, work.resolve("var"),
        Policy.ofRules(List.of(CountDetector.defaultRule())), "pipeline-test", "pipeline-test-notify", Duration.ofMillis(50), null),
        ReceiversConfig.consoleOnly(), List.of(new ConsoleNotifier(new PrintStream(console, true, StandardCharsets.UTF_8))));
  }

  @AfterAll
  static void stop() {
    pipeline.close();
  }

  static void refuse(String agent, String commandId, int times) throws IOException {
    Path file = Files.createDirectories(logs.resolve(agent)).resolve(commandId + ".violations.jsonl");
    Instant now = Instant.now();
    StringBuilder lines = new StringBuilder();
    for (int i = 0; i < times; i++) {
      // each refusal at its own millisecond: the same line at the same time is one refusal read twice
      lines.append("{\"line\":\"deny network-outbound example.com:443 (host is not on the allow list)\",")
          .append("\"encodedCommand\":\"").append(java.util.Base64.getEncoder().encodeToString(commandId.getBytes(StandardCharsets.UTF_8)))
          .append("\",\"command\":\"curl -s https://example.com\",\"timestamp\":\"").append(now.plusMillis(i)).append("\"}\n");
    }
    Files.writeString(file, lines, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }

  static List<String> consoleLinesFor(String commandId) {
    return console.toString(StandardCharsets.UTF_8).lines().filter(l -> l.contains("command=" + commandId + " ")).toList();
  }

  static List<Alert> alertsFor(String commandId) {
    return TopicReader.readToEnd(broker, Topics.ALERTS.name(), Json.serde(Alert.class).deserializer(),
        r -> commandId.equals(r.value().commandId())).stream().map(r -> r.value()).toList();
  }

  static void awaitEvents(String commandId, int n) {
    assertThat(TopicReader.readUntil(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
        r -> commandId.equals(r.key()), n)).hasSize(n);
  }

  @Test
  void fiveRefusalsOfOneCommandWithinFiveMinutesGiveExactlyOneAlertOnTheConsole() throws Exception {
    String cmd = "PipelineTestFiveRefusa";
    refuse("ci-runner-1", cmd, 5);
    Instant deadline = Instant.now().plus(WAIT);
    while (consoleLinesFor(cmd).isEmpty() && Instant.now().isBefore(deadline)) {
      Thread.sleep(50);
    }
    pipeline.awaitDetectionCaughtUp(WAIT);
    assertThat(alertsFor(cmd)).singleElement().satisfies(a -> {
      assertThat(a.count()).isEqualTo(5);
      assertThat(a.agentId()).isEqualTo("ci-runner-1");
      assertThat(a.rule()).isEqualTo("persistent-retry");
    });
    // the role comes from whatever policy is on knockwatch.policy (other tests of this JVM publish one)
    assertThat(consoleLinesFor(cmd)).singleElement().asString()
        .startsWith("ALERT [WARNING] persistent-retry firing command=" + cmd + " agent=ci-runner-1 role=")
        .contains(" count=5 window=");
  }

  @Test
  void fourRefusalsGiveNoAlert() throws Exception {
    String cmd = "PipelineTestFourRefusa";
    refuse("ci-runner-2", cmd, 4);
    awaitEvents(cmd, 4);
    pipeline.awaitDetectionCaughtUp(WAIT);
    assertThat(alertsFor(cmd)).isEmpty();
    assertThat(consoleLinesFor(cmd)).isEmpty();
  }

  @Test
  void aLineWithATenCharacterIdLandsInTheRejectedTopicWithItsReason() throws Exception {
    Path file = Files.createDirectories(logs.resolve("ci-runner-3")).resolve("tenchars.violations.jsonl");
    Files.writeString(file, "{\"line\":\"deny network-outbound example.com:443 (host is not on the allow list)\","
        + "\"commandId\":\"0123456789\"}\n");
    List<RejectedLine> rejected = TopicReader.readUntil(broker, Topics.REJECTED.name(),
        Json.serde(RejectedLine.class).deserializer(), r -> r.value().file().equals("ci-runner-3/tenchars.violations.jsonl"), 1)
        .stream().map(r -> r.value()).toList();
    assertThat(rejected).singleElement().satisfies(r ->
        assertThat(r.reason()).isEqualTo("commandId is too short: 10 characters, at least 22 required"));
  }
}
