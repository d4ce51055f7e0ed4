package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25's scan: one command refused on 250,000 distinct hosts, through {@code ./knockwatch
 * streams} as the launcher runs it (its own JVM, the launcher's heap, the shipped rules, relative
 * paths), on a broker of its own. No error; the heap after a full GC stays flat from the first
 * quarter of the scan to its end, within 12 MB: a leak of 70 bytes a host would show (every per
 * command bound, 20 targets and a 1 KB sketch, is passed in the first quarter's first thousand
 * hosts); the scan is one off-role alert, not a quarter of a million; another command's
 * page still comes out; the API answers for both commands. Prints the heap after each quarter.
 */
@Tag("integration")
class ScanFloodTest {

  static final String SCANNER = "ScanFloodScanFloodSca1";
  static final String OTHER = "ScanFloodOtherCommand1";
  static final int HOSTS = 250_000;
  static final String TOKEN = "scan-flood-token-0123456789";
  static final Pattern USED = Pattern.compile("used (\\d+)K");

  @TempDir Path dir;

  @Test
  void aQuarterMillionDistinctHostsFromOneCommandKeepTheHeapFlatAndEveryoneElsesPage() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0)) {
      broker.createTopics();
      int apiPort = Launched.freePort();
      try (Launched streams = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN),
          "streams", "--bootstrap-servers", broker.bootstrapServers(), "--api-port", String.valueOf(apiPort),
          "--metrics-port", String.valueOf(Launched.freePort()));
          Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
          KafkaProducer<String, ViolationEvent> producer = new KafkaProducer<>(Map.of(
              ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, 20,
              ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024, ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"),
              new StringSerializer(), Json.eventSerde().serializer())) {
        streams.awaitLine("knockwatch streams:", Duration.ofSeconds(180));
        long pid = streams.pid();
        List<Long> heapMb = new ArrayList<>();
        int quarter = HOSTS / 4;
        for (int q = 0; q < 4; q++) {
          for (int i = q * quarter; i < (q + 1) * quarter; i++) {
            producer.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), SCANNER,
                refusal(SCANNER, "s" + i, "h" + i + ".scan.example")));
          }
          producer.flush();
          Launched.awaitCaughtUp(admin, streams);
          heapMb.add(heapAfterGc(pid));
          System.out.println("ScanFloodTest: after " + (q + 1) * quarter + " refusals, heap after a full GC "
              + heapMb.get(q) + " MB");
        }
        producer.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), OTHER, refusal(OTHER, "o1", "exfil.example")));
        producer.flush();
        Launched.awaitCaughtUp(admin, streams);

        assertThat(streams.err()).doesNotContain("OutOfMemoryError", "RecordTooLarge", "Exception");
        // flat: the last quarter holds no more than the first, give or take 12 MB (25-33 MB measured)
        assertThat(heapMb.get(3)).as("heap after GC per quarter (MB): %s", heapMb)
            .isLessThanOrEqualTo(heapMb.get(0) + 12);

        List<Alert> alerts = dev.knockwatch.testkit.TopicReader.readUntil(broker, Topics.ALERTS.name(),
            Json.serde(Alert.class).deserializer(), r -> r.value().commandId().equals(OTHER), 1)
            .stream().map(r -> r.value()).toList();
        assertThat(alerts).extracting(Alert::rule).containsExactly("off-role-host");
        List<Alert> scan = dev.knockwatch.testkit.TopicReader.readToEnd(broker, Topics.ALERTS.name(),
            Json.serde(Alert.class).deserializer(), r -> r.value().commandId().equals(SCANNER))
            .stream().map(r -> r.value()).toList();
        Set<String> rules = scan.stream().map(Alert::rule).collect(Collectors.toSet());
        assertThat(rules).contains("off-role-host", "persistent-retry", "scanning");
        assertThat(scan.stream().map(Alert::fingerprint).distinct().count()).isEqualTo(rules.size());
        assertThat(scan.size()).as("alerts of the scan").isLessThan(100);

        JsonNode scanner = Launched.command(apiPort, TOKEN, SCANNER);
        assertThat(scanner.path("events").asLong()).isEqualTo(HOSTS);
        assertThat(scanner.path("distinctTargets").asLong()).isBetween((long) (HOSTS * 0.9), (long) (HOSTS * 1.1));
        assertThat(scanner.has("targetSketch")).isFalse();
        assertThat(Launched.command(apiPort, TOKEN, OTHER).path("events").asLong()).isEqualTo(1);
        System.out.println("ScanFloodTest: heap after a full GC per quarter " + heapMb + " MB; alerts of the scan "
            + scan.size() + "; distinct hosts estimated " + scanner.path("distinctTargets").asLong());
      }
    }
  }

  private static ViolationEvent refusal(String cmd, String id, String host) {
    return ViolationEvent.builder().eventId(id).commandId(cmd).agentId("ci-runner-1").source("srt-violation")
        .kind(Kind.NETWORK).action("network-outbound").host(host).port(443).reason("host is not on the allow list")
        .observedAt(Instant.now()).build();
  }

  /** The process's heap in use after a full GC, in MB (jcmd, the JDK's own tool). */
  private static long heapAfterGc(long pid) throws IOException, InterruptedException {
    run("jcmd", String.valueOf(pid), "GC.run");
    String info = run("jcmd", String.valueOf(pid), "GC.heap_info");
    Matcher m = USED.matcher(info);
    if (!m.find()) {
      throw new AssertionError("no heap use in jcmd's answer:\n" + info);
    }
    return Long.parseLong(m.group(1)) / 1024;
  }

  private static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor();
    return out;
  }
}
