package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's "Which wall do you run?" for srt on macOS, in a copy of the repository: the bridge
 * line's command is the sample's, word for word; {@code ./knockwatch up} watches {@code var/logs};
 * then the records srt 0.0.83's macOS source makes of that command (the proxy's refusal of
 * {@code example.com}, Seatbelt's of the direct dial to its address: macOS does not run here) are
 * written where the README's bridge line writes them, stamped with the time they are written as
 * srt stamps its own, and the command pages {@code bypass}; the file-write sample's command pages
 * {@code fs-guard}.
 */
@Tag("integration")
class SrtMacosJourneyTest {

  static final Duration START = Duration.ofMinutes(3);
  static final Duration ALERT = Duration.ofMinutes(2);
  static final Path SAMPLES = Launched.REPO.resolve("ingest/src/test/resources/dev/knockwatch/ingest/formats/srt/samples");
  static final Pattern BRIDGE = Pattern.compile(
      "node probes/srt-bridge/bridge\\.mjs --settings \\S+ --logs (\\S+) --agent (\\S+) \\\\\\n\\s*-c \"(.*)\"\\n");

  @TempDir Path dir;

  @Test
  void seatbeltsDenialAfterTheProxysRefusalPagesBypassAndAWriteToAShellStartUpFilePagesFsGuardThroughUp()
      throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    ReadmeBlocks readme = ReadmeBlocks.read();
    String bridge = readme.starting("sh", "node probes/srt-bridge/bridge.mjs --settings srt-settings.json --logs var/logs")
        .text();
    Matcher m = BRIDGE.matcher(bridge);
    assertThat(m.matches()).as(bridge).isTrue();
    assertThat(m.group(1)).isEqualTo("var/logs");
    String agent = m.group(2);
    // the README's command is the one the sample's records are of
    JsonNode first = Json.MAPPER.readTree(Files.readAllLines(
        SAMPLES.resolve("srt-0.0.83-macos-network-by-ip.violations.jsonl")).get(0));
    assertThat(first.path("command").asText()).isEqualTo(m.group(3));
    assertThat(first.path("agentId").asText()).isEqualTo(agent);

    int api = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of(), "up", "--no-probes", "--kafka-port",
        String.valueOf(Launched.freePort()), "--metrics-port", String.valueOf(Launched.freePort()), "--api-port",
        String.valueOf(api), "--otlp-port", String.valueOf(Launched.freePort()))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("watching var/logs/");
      Path logs = checkout.resolve(m.group(1)).resolve(agent);
      Files.createDirectories(logs);
      String byIp = write("srt-0.0.83-macos-network-by-ip.violations.jsonl", logs);
      String fileWrite = write("srt-0.0.83-macos-file-write.violations.jsonl", logs);

      assertThat(up.awaitLine("ALERT [PAGE] bypass firing command=" + byIp + " ", ALERT))
          .contains("agent=" + agent, "host=93.184.215.14:443", "the IP literal 93.184.215.14:443");
      assertThat(up.awaitLine("ALERT [PAGE] fs-guard firing command=" + fileWrite + " ", ALERT))
          .contains("agent=" + agent);
      up.stop(Duration.ofSeconds(90));
    }
  }

  /** The sample's records, each stamped now (in order), appended where the bridge writes its command's: its id. */
  private static String write(String sample, Path logs) throws Exception {
    Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    StringBuilder out = new StringBuilder();
    String commandId = null;
    int i = 0;
    for (String line : Files.readAllLines(SAMPLES.resolve(sample), StandardCharsets.UTF_8)) {
      ObjectNode record = (ObjectNode) Json.MAPPER.readTree(line);
      record.put("timestamp", now.plusMillis(100L * i++).toString());
      commandId = record.path("commandId").asText();
      out.append(Json.MAPPER.writeValueAsString(record)).append('\n');
    }
    Files.writeString(logs.resolve(commandId + ".violations.jsonl"), out, StandardCharsets.UTF_8,
        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    return commandId;
  }
}
