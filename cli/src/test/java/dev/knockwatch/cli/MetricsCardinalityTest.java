package dev.knockwatch.cli;

import dev.knockwatch.cli.run.Pipeline;
import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.console.ConsoleNotifier;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.TopicReader;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.common.TextFormat;
import io.prometheus.client.hotspot.DefaultExports;
import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * 100,000 distinct hosts and commands through ingest, detection and delivery: the number of
 * series on /metrics stays bounded, and no label carries a command, a host or an agent. (Agents
 * are the log layout's directories, docs/TRUST.md: a line cannot add one.)
 */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class MetricsCardinalityTest {

  static final int FLOOD = 100_000;
  static final int RETRIERS = 1_000;
  /** Series the whole process may export: the JVM's, every module's, Kafka Streams' bridged ones. */
  static final int BOUND = 1_500;

  @TempDir Path work;

  static String series() throws Exception {
    StringWriter w = new StringWriter();
    TextFormat.write004(w, CollectorRegistry.defaultRegistry.metricFamilySamples());
    return w.toString();
  }

  static long count(String exposition) {
    return exposition.lines().filter(l -> !l.isEmpty() && !l.startsWith("#")).count();
  }

  @Test
  void aFloodOfDistinctHostsAndCommandsAddsNoSeries(EmbeddedKafkaBroker broker) throws Exception {
    DefaultExports.initialize();
    Policy shipped = PolicyLoader.load(Path.of("../alert-rules"));
    // the shipped rules but off-role, which would page 100,000 times: the retriers still alert
    Policy policy = Policy.ofRules(shipped.rules().stream().filter(r -> !r.is(dev.knockwatch.streams.detect.OffRoleDetector.Settings.class)).toList());
    Path logs = Files.createDirectories(work.resolve("logs"));
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    try (Pipeline pipeline = Pipeline.start(new Pipeline.Settings(broker.bootstrapServers(), Map.of(), logs,
        work.resolve("var"), policy, "cardinality-test", "cardinality-test-notify", Duration.ofMillis(50), null),
        ReceiversConfig.consoleOnly(), List.of(new ConsoleNotifier(new PrintStream(console, true, StandardCharsets.UTF_8))))) {
      // warm up: one of each kind of line, so every bounded series exists before the count
      write(logs, "warm", 0, 10, 5);
      awaitEvents(broker, "FloodWarm", 10 * 5);
      pipeline.awaitDetectionCaughtUp(Duration.ofSeconds(120));
      long before = count(series());

      write(logs, "flood", FLOOD, RETRIERS, 5);
      awaitEvents(broker, "FloodFlood", FLOOD + RETRIERS * 5);
      pipeline.awaitDetectionCaughtUp(Duration.ofSeconds(300));
      Instant deadline = Instant.now().plusSeconds(120);
      while (console.toString(StandardCharsets.UTF_8).lines().filter(l -> l.contains("FloodFloodR")).count() < RETRIERS
          && Instant.now().isBefore(deadline)) {
        Thread.sleep(200);
      }
      assertThat(console.toString(StandardCharsets.UTF_8).lines().filter(l -> l.contains("FloodFloodR")).count())
          .as("the retriers' alerts were delivered").isGreaterThanOrEqualTo(RETRIERS);

      String after = series();
      org.slf4j.LoggerFactory.getLogger(MetricsCardinalityTest.class).info(
          "series on /metrics: {} before the flood, {} after it", before, count(after));
      assertThat(count(after)).as("series on /metrics").isLessThan(BOUND);
      assertThat(count(after) - before).as("series the flood added").isLessThan(40);
      assertThat(after).doesNotContain("flood.example", "FloodFlood", "flood-flood");
    }
  }

  /**
   * {@code n} commands of one refusal each (host and command distinct), then
   * {@code retriers} commands of {@code times} refusals, in one srt log.
   */
  static void write(Path logs, String tag, int n, int retriers, int times) throws Exception {
    // a file name that is no command id: the records' own ids name their commands (docs/TRUST.md)
    Path file = Files.createDirectories(logs.resolve("flood-" + tag)).resolve("session-" + tag + ".violations.jsonl");
    Instant now = Instant.now();
    try (BufferedWriter w = Files.newBufferedWriter(file)) {
      for (int i = 0; i < n; i++) {
        line(w, id("Flood" + capital(tag), i), "h" + i + ".flood.example", now.toString());
      }
      for (int i = 0; i < retriers; i++) {
        for (int k = 0; k < times; k++) {
          // each retry at its own millisecond: the same line at the same time is one refusal read twice
          line(w, id("Flood" + capital(tag) + "R", i), "r" + i + ".flood.example", now.plusMillis(k).toString());
        }
      }
    }
  }

  static String capital(String s) {
    return Character.toUpperCase(s.charAt(0)) + s.substring(1);
  }

  static String id(String prefix, int i) {
    String digits = String.format("%022d", i);
    return prefix + digits.substring(prefix.length());
  }

  static void line(BufferedWriter w, String commandId, String host, String ts) throws Exception {
    w.write("{\"line\":\"deny network-outbound " + host + ":443 (host is not on the allow list)\",\"command\":\"curl -s https://"
        + host + "/\",\"timestamp\":\"" + ts + "\",\"commandId\":\"" + commandId + "\"}\n");
  }

  static void awaitEvents(EmbeddedKafkaBroker broker, String prefix, int n) {
    assertThat(TopicReader.readUntil(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
        r -> r.key() != null && r.key().startsWith(prefix), n)).hasSize(n);
  }
}
