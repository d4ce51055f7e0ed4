package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code KNOCKWATCH_EXPORT=ocsf ./knockwatch up}: the export stage runs beside the pipeline, and an
 * off-role refusal reaches {@code knockwatch.export.ocsf} as a Network Activity record and its page
 * as a Detection Finding, keyed by the command.
 */
@Tag("integration")
class UpExportTest {

  static final String COMMAND = "UpExportCommandUpExpo1";

  @TempDir Path dir;

  @Test
  void upWithExportWritesTheRefusalAndItsFindingToTheExportTopic() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    int kafka = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_EXPORT", "ocsf"), "up",
        "--no-probes", "--kafka-port", String.valueOf(kafka), "--metrics-port", String.valueOf(Launched.freePort()),
        "--api-port", String.valueOf(Launched.freePort()))) {
      assertThat(up.awaitLine("  export   ", FirstRunTest.FIRST_START))
          .isEqualTo("  export   refusals and alerts as ocsf to knockwatch.export.ocsf");
      up.awaitLine("Ctrl-C to stop.", Duration.ofMinutes(2));
      Path logs = Files.createDirectories(checkout.resolve("var/logs/ci-runner-7"));
      Files.writeString(logs.resolve(COMMAND + ".violations.jsonl"),
          FloodFairnessTest.record(COMMAND, "exfil.evil.test:443", Instant.now()) + "\n", StandardCharsets.UTF_8);

      List<JsonNode> exported = new ArrayList<>();
      try (KafkaConsumer<String, String> c = new KafkaConsumer<>(Map.of(
          ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + kafka, ConsumerConfig.GROUP_ID_CONFIG, "up-export-test",
          ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(), new StringDeserializer())) {
        c.subscribe(List.of("knockwatch.export.ocsf"));
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (System.nanoTime() < deadline && exported.stream().noneMatch(r -> r.path("class_uid").asInt() == 2004)) {
          for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
            assertThat(r.key()).isEqualTo(COMMAND);
            exported.add(Json.MAPPER.readTree(r.value()));
          }
        }
      }
      assertThat(exported).anySatisfy(r -> {
        assertThat(r.path("class_uid").asInt()).isEqualTo(4001);
        assertThat(r.path("dst_endpoint").path("hostname").asText()).isEqualTo("exfil.evil.test");
        assertThat(r.path("disposition").asText()).isEqualTo("Blocked");
      });
      assertThat(exported).anySatisfy(r -> {
        assertThat(r.path("class_uid").asInt()).isEqualTo(2004);
        assertThat(r.path("finding_info").path("title").asText()).contains("off-role-host");
      });
    }
  }
}
