package dev.knockwatch.probes.limit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RetryStormProbeTest {

  @TempDir Path logs;

  @Test
  void theStormIsWrittenAsSrtRecordsInTheIngestLayout() throws Exception {
    Clock clock = Clock.fixed(Instant.parse("2026-11-29T18:45:00Z"), ZoneOffset.UTC);
    String id = new RetryStormProbe(logs, "example.com", 443, 6, Duration.ZERO, clock).run();

    assertThat(CommandId.problem(id)).isEmpty();
    assertThat(id).hasSize(22);
    List<String> lines = Files.readAllLines(logs.resolve("knockwatch-probe").resolve(id + ".violations.jsonl"));
    assertThat(lines).hasSize(6);
    JsonNode r = Json.MAPPER.readTree(lines.get(0));
    assertThat(r.get("line").asText()).isEqualTo("deny network-outbound example.com:443 (host is not on the allow list)");
    assertThat(new String(Base64.getDecoder().decode(r.get("encodedCommand").asText()), StandardCharsets.UTF_8))
        .isEqualTo(id);
    assertThat(r.get("timestamp").asText()).isEqualTo("2026-11-29T18:45:00Z");
    assertThat(r.get("agentId").asText()).isEqualTo(RetryStormProbe.AGENT_ID);
  }

  @Test
  void everyRunIsANewCommand() {
    assertThat(RetryStormProbe.newCommandId()).isNotEqualTo(RetryStormProbe.newCommandId());
  }
}
