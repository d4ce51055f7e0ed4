package dev.knockwatch.ingest.formats.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.Settled;
import dev.knockwatch.ingest.spi.SourceLine;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class JsonAccessLogParserTest {

  static final Instant NOW = Instant.parse("2026-11-29T19:00:00Z");
  static final Map<String, String> ENVOY = Map.of(
      "commandId", "request_headers.x-command-id",
      "authority", "authority",
      "method", "method",
      "url", "path",
      "status", "response_code",
      "proxyError", "response_flags",
      "timestamp", "start_time");
  final JsonAccessLogParser parser = new JsonAccessLogParser(ENVOY, Set.of(403, 407));

  Parsed parse(String line) {
    return Settled.of(parser.parse(new SourceLine("envoy/access.json", 0, line, "envoy", null, "h", NOW)), NOW);
  }

  @Test
  void anEnvoyStyleRefusalBecomesAnEvent() {
    Parsed p = parse("{\"start_time\":\"2026-11-29T18:45:32.887Z\",\"method\":\"CONNECT\",\"authority\":\"169.254.169.254:80\","
        + "\"path\":null,\"response_code\":403,\"response_flags\":\"UAEX\","
        + "\"request_headers\":{\"x-command-id\":\"xhfHytmXL-L6RsYw2CrSjA\"}}");
    ViolationEvent e = ((Parsed.Events) p).events().get(0);
    assertThat(e.source()).isEqualTo("json");
    assertThat(e.commandId()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
    assertThat(e.host() + ":" + e.port()).isEqualTo("169.254.169.254:80");
    assertThat(e.addressClass()).isEqualTo(AddressClass.CLOUD_METADATA);
    assertThat(e.proxyError()).isEqualTo("UAEX");
    assertThat(e.reason()).isEqualTo("refused with status 403");
    assertThat(e.observedAt()).isEqualTo(Instant.parse("2026-11-29T18:45:32.887Z"));
    assertThat(e.agentId()).isEqualTo("envoy");
  }

  @Test
  void theUrlGivesTheHostWhenThereIsNoAuthorityAndIsRedacted() {
    JsonAccessLogParser p = new JsonAccessLogParser(Map.of("commandId", "cmd", "url", "url", "status", "status"), Set.of(403));
    Parsed r = p.parse(new SourceLine("a/b.json", 0,
        "{\"cmd\":\"xhfHytmXL-L6RsYw2CrSjA\",\"url\":\"https://evil.test/x?token=abc\",\"status\":\"403\"}", "a", null, "h", NOW));
    ViolationEvent e = ((Parsed.Events) r).events().get(0);
    assertThat(e.host() + ":" + e.port()).isEqualTo("evil.test:443");
    assertThat(e.url()).isEqualTo("https://evil.test/x?token=[REDACTED]");
  }

  @Test
  void allowedLinesAreSkippedAndBadOnesRejected() {
    assertThat(parse("{\"response_code\":200,\"request_headers\":{\"x-command-id\":\"xhfHytmXL-L6RsYw2CrSjA\"}}"))
        .isEqualTo(Parsed.skipped("allowed"));
    assertThat(parse("{\"response_code\":403}"))
        .isEqualTo(Parsed.rejected(Rejection.MISSING_COMMAND_ID, "commandId is missing: the line names none, and the log layout none (at request_headers.x-command-id)"));
    assertThat(parse("{\"method\":\"GET\"}")).isEqualTo(Parsed.rejected(Rejection.UNPARSEABLE, "no status at response_code"));
    assertThat(parse("[]")).isEqualTo(Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object"));
  }

  @Test
  void anUnknownMappingFieldIsRefused() {
    assertThatThrownBy(() -> new JsonAccessLogParser(Map.of("hostname", "h"), Set.of(403)))
        .hasMessageStartingWith("unknown mapping field \"hostname\" (known: agentId, authority, commandId,");
  }
}
