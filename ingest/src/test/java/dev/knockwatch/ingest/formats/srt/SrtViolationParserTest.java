package dev.knockwatch.ingest.formats.srt;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.Settled;
import dev.knockwatch.ingest.spi.SourceLine;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Golden tests on the records srt 0.0.83 really produced (api/h*-api-violations*.json). */
class SrtViolationParserTest {

  private static final Instant NOW = Instant.parse("2026-11-29T19:00:00Z");
  private final SrtViolationParser parser = new SrtViolationParser();

  /** A fixture run: its label, the commandId srt was given, and each record as one JSON line. */
  record Run(String file, String label, String commandId, List<String> records) {}

  static List<Run> runs() throws IOException {
    List<Run> out = new ArrayList<>();
    for (String f : List.of("h-api-violations.json", "h2-api-violations-empty-allowlist.json",
        "h3-api-violations-refuseOpaqueTunnels.json")) {
      try (InputStream in = SrtViolationParserTest.class.getResourceAsStream("api/" + f)) {
        for (JsonNode run : Json.MAPPER.readTree(in).get("runs")) {
          List<String> records = new ArrayList<>();
          run.get("getViolationsForCommand").forEach(r -> records.add(r.toString()));
          out.add(new Run(f, run.get("label").asText(), run.get("commandId").isNull() ? null
              : run.get("commandId").asText(), records));
        }
      }
    }
    return out;
  }

  private Parsed parse(String json) {
    return Settled.of(parser.parse(new SourceLine("ci-runner-1/x.violations.jsonl", 120, json, "ci-runner-1", null, "host-a", NOW)), NOW);
  }

  private ViolationEvent event(String json) {
    Parsed p = parse(json);
    assertThat(p).isInstanceOf(Parsed.Events.class);
    return ((Parsed.Events) p).events().get(0);
  }

  @Test
  void everyFixtureRecordWithACommandIdBecomesAnEventOfThatCommand() throws IOException {
    int parsed = 0;
    for (Run run : runs()) {
      for (String record : run.records()) {
        Parsed p = parse(record);
        if (run.commandId() == null) {
          assertThat(p).as(run.label()).isInstanceOf(Parsed.Rejected.class);
          continue;
        }
        assertThat(p).as(run.file() + " " + run.label()).isInstanceOf(Parsed.Events.class);
        ViolationEvent e = ((Parsed.Events) p).events().get(0);
        assertThat(e.commandId()).as(run.label()).isEqualTo(run.commandId());
        assertThat(e.source()).isEqualTo("srt-violation");
        assertThat(e.commandText()).as("secrets never leave ingest")
            .doesNotContain("token=SECRET").doesNotContain("SECRET=1");
        parsed++;
      }
    }
    assertThat(parsed).as("13 + 13 + 3 records with a commandId in the three captures").isEqualTo(29);
  }

  @Test
  void theFixtureRecordsYieldTheseTargetsAndClasses() throws IOException {
    Map<String, String> seen = new LinkedHashMap<>();
    for (Run run : runs()) {
      if (!run.file().equals("h-api-violations.json") && !run.file().startsWith("h3")) {
        continue;
      }
      for (String record : run.records()) {
        if (parse(record) instanceof Parsed.Events ev) {
          ViolationEvent e = ev.events().get(0);
          seen.put(run.label() + "/" + e.action(), e.kind() + " " + (e.host() != null ? e.host() + ":" + e.port() : e.path())
              + " " + e.addressClass() + " " + e.reason());
        }
      }
    }
    assertThat(seen).containsExactly(
        Map.entry("http-get-not-allowed/network-outbound", "NETWORK example.com:80 null host is not on the allow list"),
        Map.entry("https-connect-not-allowed/network-outbound", "NETWORK example.com:443 null host is not on the allow list"),
        Map.entry("https-connect-bitly/network-outbound",
            "NETWORK bit.ly:443 null URL shorteners are blocked; use the full destination URL"),
        Map.entry("socks5h-not-allowed/network-outbound", "NETWORK example.com:443 null host is not on the allow list"),
        Map.entry("resolved-loopback-http/network-outbound",
            "NETWORK loopback-alias.test:8080 LOOPBACK resolved to a loopback address"),
        Map.entry("resolved-linklocal-connect/network-outbound",
            "NETWORK linklocal-alias.test:443 LINK_LOCAL resolved to a link-local address"),
        Map.entry("resolved-metadata-socks/network-outbound",
            "NETWORK metadata-alias.test:80 CLOUD_METADATA resolved to a cloud metadata address"),
        Map.entry("fs-touch-home/openat", "FILESYSTEM /home/agent/sandbox-probe null null"),
        Map.entry("fs-touch-home/utimensat", "FILESYSTEM /home/agent/sandbox-probe null null"),
        Map.entry("fs-git-hook-append/openat", "FILESYSTEM /home/agent/work/.git/hooks/pre-commit null null"),
        Map.entry("fs-dotenv-write/openat", "FILESYSTEM /home/agent/work/.env null null"),
        Map.entry("fs-write-etc/openat", "FILESYSTEM /etc/srt-probe null null"),
        Map.entry("commandText-differs/network-outbound", "NETWORK example.net:443 null host is not on the allow list"),
        Map.entry("connect-allowed-host-opaque-refused/http-request",
            "NETWORK loopback-alias.test:8443 null this proxy does not tunnel CONNECTs it cannot inspect"),
        Map.entry("socks-any-host-refused/socks-tunnel", "NETWORK example.com:443 null refuseOpaqueTunnels"),
        Map.entry("connect-not-allowed/network-outbound", "NETWORK example.com:443 null host is not on the allow list"));
  }

  @Test
  void theFirstFixtureRecordBecomesExactlyThisEvent() {
    ViolationEvent e = event("{\"line\":\"deny network-outbound example.com:80 (host is not on the allow list)\","
        + "\"encodedCommand\":\"eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ==\","
        + "\"command\":\"curl -s http://example.com/path?token=SECRET#frag\",\"timestamp\":\"2026-11-29T18:45:32.887Z\"}");
    assertThat(Json.write(e)).isEqualTo("{\"schema\":1,\"eventId\":\"" + e.eventId() + "\","
        + "\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\",\"agentId\":\"ci-runner-1\",\"source\":\"srt-violation\","
        + "\"kind\":\"network\",\"action\":\"network-outbound\",\"host\":\"example.com\",\"port\":80,"
        + "\"reason\":\"host is not on the allow list\",\"observedAt\":\"2026-11-29T18:45:32.887Z\","
        + "\"ingestedAt\":\"2026-11-29T19:00:00Z\",\"commandText\":\"curl -s http://example.com/path?token=[REDACTED]#frag\","
        + "\"origin\":{\"file\":\"ci-runner-1/x.violations.jsonl\",\"offset\":120,\"ingestHost\":\"host-a\"}}");
    assertThat(e.eventId()).hasSize(32).isEqualTo(event(
        "{\"line\":\"deny network-outbound example.com:80 (host is not on the allow list)\",\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\"}")
        .eventId());
  }

  @Test
  void whereTheFileNameIsNoIdTheRecordsCommandIdIsUsedButNeverItsAgentId() {
    ViolationEvent e = event("{\"line\":\"deny network-outbound example.com:443 (x)\","
        + "\"encodedCommand\":\"eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ==\",\"commandId\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"agentId\":\"bridge-agent\"}");
    assertThat(e.commandId()).isEqualTo("AAAAAAAAAAAAAAAAAAAAAA");
    assertThat(e.agentId()).isEqualTo("ci-runner-1");
    assertThat(e.identityConflict()).isEqualTo(new ViolationEvent.IdentityClaim("bridge-agent", null));
  }

  /** docs/TRUST.md: the directory and the file name the bridge wrote decide; the record's words are claims. */
  @Test
  void theLayoutDecidesWhoseRefusalItIsAndAClaimThatDisagreesIsKeptAsAConflict() {
    String file = "dev-bot-71/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl";
    java.util.function.Function<String, ViolationEvent> read = json -> ((Parsed.Events) Settled.of(parser.parse(
        new SourceLine(file, 0, json, "dev-bot-71", "xhfHytmXL-L6RsYw2CrSjA", "h", NOW)), NOW)).events().get(0);
    String deny = "{\"line\":\"deny network-outbound evil.test:443 (host is not on the allow list)\",";

    ViolationEvent agrees = read.apply(deny + "\"encodedCommand\":\"eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ==\","
        + "\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\",\"agentId\":\"dev-bot-71\"}");
    assertThat(agrees.identityConflict()).isNull();

    ViolationEvent guard = read.apply(deny + "\"agentId\":\"knockwatch-guard\"}");
    assertThat(guard.agentId()).isEqualTo("dev-bot-71");
    assertThat(guard.identityConflict()).isEqualTo(new ViolationEvent.IdentityClaim("knockwatch-guard", null));

    ViolationEvent other = read.apply(deny + "\"commandId\":\"AAAAAAAAAAAAAAAAAAAAAA\"}");
    assertThat(other.commandId()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
    assertThat(other.identityConflict()).isEqualTo(new ViolationEvent.IdentityClaim(null, "AAAAAAAAAAAAAAAAAAAAAA"));

    // base64 of another id, as srt's encodedCommand would carry it
    ViolationEvent encoded = read.apply(deny + "\"encodedCommand\":\"QUFBQUFBQUFBQUFBQUFBQUFBQUFBQQ==\"}");
    assertThat(encoded.commandId()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
    assertThat(encoded.identityConflict().commandId()).isEqualTo("AAAAAAAAAAAAAAAAAAAAAA");

    // hostile claims lose and are kept only as safe, bounded text; the refusal still counts
    ViolationEvent hostile = read.apply(deny + "\"agentId\":\"../../x\",\"commandId\":\"<script>" + "y".repeat(500) + "\"}");
    assertThat(hostile.agentId()).isEqualTo("dev-bot-71");
    assertThat(hostile.commandId()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
    assertThat(hostile.identityConflict().agentId()).isEqualTo("../../x");
    assertThat(hostile.identityConflict().commandId()).startsWith("<script>yyy").hasSizeLessThanOrEqualTo(129);

    // the command text srt encodes when it was given no id is no claim
    ViolationEvent text = read.apply(deny + "\"encodedCommand\":\"Y3VybCAtcyBodHRwczovL2V4YW1wbGUub3Jn\"}");
    assertThat(text.identityConflict()).isNull();
  }

  @Test
  void aDirectoryThatIsNoAgentIdRefusesTheLineWithTheReason() {
    for (String dir : List.of("<script>", "..", "a b", "x".repeat(129))) {
      Parsed p = parser.parse(new SourceLine(dir + "/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", 0,
          "{\"line\":\"deny network-outbound evil.test:443 (x)\"}", dir, "xhfHytmXL-L6RsYw2CrSjA", "h", NOW));
      assertThat(p).as(dir).isInstanceOf(Parsed.Rejected.class);
      assertThat(((Parsed.Rejected) p).code()).isEqualTo(Rejection.BAD_AGENT_ID);
      assertThat(((Parsed.Rejected) p).reason()).startsWith("the directory that names the agent is no agent id: agentId ");
    }
  }

  @Test
  void withoutIdOrEncodedCommandTheFileNameGivesTheCommand() {
    Parsed p = parser.parse(new SourceLine("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", 0,
        "{\"line\":\"deny network-outbound example.com:443 (x)\"}", "a", "xhfHytmXL-L6RsYw2CrSjA", "h", NOW));
    assertThat(((Parsed.Events) p).events().get(0).commandId()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
  }

  @Test
  void aRecordKeyedByCommandTextIsRejectedAsHavingNoCommandId() {
    // srt encodes the command text when it was given no id (fixture run no-commandId-keyed-by-command-text)
    assertThat(parse("{\"line\":\"deny network-outbound example.org:443 (host is not on the allow list)\","
        + "\"encodedCommand\":\"Y3VybCAtcyBodHRwczovL2V4YW1wbGUub3Jn\",\"command\":\"curl -s https://example.org\"}"))
        .isEqualTo(Parsed.rejected(Rejection.BAD_COMMAND_ID,
            "encodedCommand decodes to no command id (commandId has a character outside [A-Za-z0-9._:-] at position 5: U+0020)"));
  }

  @Test
  void aTenCharacterIdIsRejectedWithTheReason() {
    assertThat(parse("{\"line\":\"deny network-outbound example.com:443 (x)\",\"commandId\":\"abcdefghij\"}"))
        .isEqualTo(Parsed.rejected(Rejection.SHORT_COMMAND_ID,
            "commandId is too short: 10 characters, at least 22 required"));
  }

  @Test
  void badInputIsRejectedWithAClearReason() {
    assertThat(parse("not json at all")).isInstanceOf(Parsed.Rejected.class)
        .extracting(r -> ((Parsed.Rejected) r).code()).isEqualTo(Rejection.UNPARSEABLE);
    assertThat(parse("[1,2]")).isEqualTo(Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object"));
    assertThat(parse("{\"encodedCommand\":\"eA==\"}"))
        .isEqualTo(Parsed.rejected(Rejection.UNPARSEABLE, "srt violation record has no \"line\" text"));
    assertThat(parse("{\"line\":\"permit all\",\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\"}"))
        .isEqualTo(Parsed.rejected(Rejection.UNPARSEABLE, "not an srt deny line: \"permit all\""));
    assertThat(parse("{\"line\":\"deny network-outbound a.test:1 (x)\",\"encodedCommand\":\"***\"}"))
        .isEqualTo(Parsed.rejected(Rejection.BAD_COMMAND_ID, "encodedCommand is not base64"));
    assertThat(parse("{\"line\":\"deny network-outbound a.test:1 (x)\"}"))
        .isEqualTo(Parsed.rejected(Rejection.MISSING_COMMAND_ID,
            "commandId is missing: the line names none, and the log layout none"));
  }

  @Test
  void hostileFieldsAreCleanedBeforeTheyLeaveIngest() {
    ViolationEvent e = event("{\"line\":\"deny network-outbound EVIL.Test.:443 (host\\u001b[31m is not\\u202e on the list)\","
        + "\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\",\"agentId\":\"a\\nb\","
        + "\"command\":\"curl -H 'Authorization: Bearer abc' https://u:pw@evil.test/\\r\\n" + "x".repeat(5000) + "\"}");
    assertThat(e.host()).isEqualTo("evil.test");
    assertThat(e.reason()).isEqualTo("host [31m is not  on the list");
    assertThat(e.agentId()).isEqualTo("ci-runner-1");
    assertThat(e.identityConflict().agentId()).isEqualTo("a b");
    assertThat(e.commandText()).startsWith("curl -H 'Authorization: Bearer [REDACTED]' https://u:[REDACTED]@evil.test/  xxx")
        .hasSize(SrtViolationParser.MAX_COMMAND_CHARS + 1).endsWith("…");
  }

  @Test
  void aDenyLineMetAgainReadsAsTheFirstTimeAmongMoreThanTheParserRemembers() {
    // more distinct lines than the parser keeps, met again in a shuffled order: each record must
    // give what a parser that never saw a line before makes of it
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < SrtViolationParser.RECENT_DENIALS + 3; i++) {
      lines.add(i % 3 == 0 ? "deny network-outbound 10.0.0." + i + ":80 (host is not on the allow list)"
          : i % 3 == 1 ? "deny http-request GET http://169.254.169.254/" + i + " (resolved to a cloud-metadata address)"
          : "deny unlinkat /etc/x" + i);
    }
    lines.add("permit all");
    java.util.Random random = new java.util.Random(3);
    for (int n = 0; n < 500; n++) {
      String json = "{\"line\":\"" + lines.get(random.nextInt(lines.size())) + "\",\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\"}";
      SourceLine src = new SourceLine("ci-runner-1/x.violations.jsonl", n, json, "ci-runner-1", null, "host-a", NOW);
      assertThat(parser.parse(src)).as(json).isEqualTo(new SrtViolationParser().parse(src));
    }
  }

  @Test
  void aMissingUnreadableOrTooEarlyTimestampFallsBackToIngestTimeAndSaysSo() {
    for (String t : java.util.List.of("yesterday", "2026-11-29Tx1:45:32Z", "2026-11-29T-1:45:32Z", "2026-11-29T24:00:00Z",
        "9999-12-31T23:59:59Z", "2100-01-01T00:00:00Z", "2026-11-29T19:05:01Z", "1969-12-31T23:59:59Z",
        "+999999999-12-31T23:59:59Z", "-1", "")) {
      ViolationEvent e = event("{\"line\":\"deny openat /etc/x\",\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\",\"timestamp\":\""
          + t + "\"}");
      assertThat(e.observedAt()).as(t).isEqualTo(NOW);
      assertThat(e.timeSource()).as(t).isEqualTo("ingest");
    }
    ViolationEvent missing = event("{\"line\":\"deny openat /etc/x\",\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\"}");
    assertThat(missing.observedAt()).isEqualTo(NOW);
    assertThat(missing.timeSource()).isEqualTo("ingest");
    // within the bound ahead of the ingest clock, and any time before it, the record's own time stands
    for (String t : java.util.List.of("2026-11-29T19:04:59Z", "2026-11-29T18:00:00Z", "1970-01-01T00:00:00Z")) {
      ViolationEvent e = event("{\"line\":\"deny openat /etc/x\",\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\",\"timestamp\":\""
          + t + "\"}");
      assertThat(e.observedAt()).as(t).isEqualTo(Instant.parse(t));
      assertThat(e.timeSource()).as(t).isNull();
    }
  }

  @Test
  void srtsTimestampShapeIsReadExactlyAndOtherIsoFormsToo() {
    for (String t : java.util.List.of("2026-11-29T18:45:32.887Z", "2024-02-29T00:00:00.000Z", "1999-12-31T23:59:59.999Z",
        "2026-11-29T18:45:32Z", "2026-11-29T18:45:32.123456789Z", "2026-11-29T19:45:32.887+01:00")) {
      assertThat(event("{\"line\":\"deny openat /etc/x\",\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\",\"timestamp\":\""
          + t + "\"}").observedAt()).as(t).isEqualTo(java.time.OffsetDateTime.parse(t).toInstant());
    }
    assertThat(event("{\"line\":\"deny openat /etc/x\",\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\","
        + "\"timestamp\":\"2026-02-30T18:45:32.887Z\"}").observedAt()).as("no such day").isEqualTo(NOW);
  }

  @Test
  void anIpLiteralIsClassifiedFromItsAddress() {
    ViolationEvent e = event("{\"line\":\"deny network-outbound 169.254.169.254:80 (host is not on the allow list)\","
        + "\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\"}");
    assertThat(e.addressClass()).isEqualTo(AddressClass.CLOUD_METADATA);
    assertThat(e.kind()).isEqualTo(Kind.NETWORK);
  }
}
