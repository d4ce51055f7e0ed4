package dev.knockwatch.ingest.formats.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.Settled;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.Formats;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ProbeResultParserTest {

  private static final Instant NOW = Instant.parse("2026-11-30T01:00:00Z");
  private static final String ID = "cHJvYmUtcGxhaW4taHR0cC0x";

  private Parsed parse(String json) {
    return Settled.of(new ProbeResultParser().parse(new SourceLine("probe/" + ID + ".probe.jsonl", 0, json, "probe", ID,
        "h", NOW)), NOW);
  }

  private ViolationEvent event(String json) {
    Parsed p = parse(json);
    assertThat(p).isInstanceOf(Parsed.Events.class);
    return ((Parsed.Events) p).events().get(0);
  }

  @Test
  void aProbeTheSandboxLetThroughIsAnEventSayingSo() {
    ViolationEvent e = event("{\"probe\":\"plain-http\",\"commandId\":\"" + ID + "\",\"expected\":\"403 blocked-by-allowlist\","
        + "\"observed\":\"200 OK\",\"refused\":false,\"kind\":\"network\",\"target\":\"Example.COM:80\","
        + "\"timestamp\":\"2026-11-30T00:59:58.123Z\",\"agentId\":\"probe-runner\"}");
    assertThat(e.source()).isEqualTo("probe-result");
    assertThat(e.commandId()).isEqualTo(ID);
    assertThat(e.agentId()).isEqualTo("probe"); // the directory's: the result's own agentId is a claim
    assertThat(e.identityConflict()).isEqualTo(new ViolationEvent.IdentityClaim("probe-runner", null));
    assertThat(e.kind()).isEqualTo(Kind.NETWORK);
    assertThat(e.action()).isEqualTo("plain-http");
    assertThat(e.host()).isEqualTo("example.com");
    assertThat(e.port()).isEqualTo(80);
    assertThat(e.observedAt()).isEqualTo(Instant.parse("2026-11-30T00:59:58.123Z"));
    assertThat(e.probe()).isEqualTo(new ViolationEvent.ProbeResult("plain-http", "403 blocked-by-allowlist", "200 OK", false));
  }

  @Test
  void aRefusedProbeKeepsItsPathAndTheCommandIdOfItsFile() {
    ViolationEvent e = event("{\"probe\":\"touch-home\",\"refused\":true,\"kind\":\"filesystem\",\"target\":\"/root/probe\","
        + "\"observed\":\"touch: cannot touch '/root/probe': Read-only file system\"}");
    assertThat(e.commandId()).isEqualTo(ID);
    assertThat(e.agentId()).isEqualTo("probe");
    assertThat(e.path()).isEqualTo("/root/probe");
    assertThat(e.probe().refused()).isTrue();
    assertThat(e.observedAt()).isEqualTo(NOW);
  }

  @Test
  void hostileTextIsCleanedAndSecretsRedacted() {
    ViolationEvent e = event("{\"probe\":\"x\\u001b[31m\",\"refused\":false,\"observed\":\"curl http://u:hunter2@h.test/?token=abc\","
        + "\"command\":\"curl -H 'Authorization: Bearer sekrit' http://h.test\"}");
    assertThat(e.probe().name()).doesNotContain("\u001b");
    assertThat(e.probe().observed()).doesNotContain("hunter2").doesNotContain("abc");
    assertThat(e.commandText()).doesNotContain("sekrit");
  }

  @Test
  void badResultsAreRejectedWithTheirReason() {
    assertThat(parse("not json")).isInstanceOfSatisfying(Parsed.Rejected.class,
        r -> assertThat(r.code()).isEqualTo(Rejection.UNPARSEABLE));
    assertThat(parse("{\"refused\":false}")).isEqualTo(Parsed.rejected(Rejection.UNPARSEABLE,
        "probe result has no \"probe\" name"));
    assertThat(parse("{\"probe\":\"p\",\"refused\":\"no\"}")).isEqualTo(Parsed.rejected(Rejection.UNPARSEABLE,
        "probe result has no \"refused\": true or false"));
    assertThat(parse("{\"probe\":\"p\",\"refused\":true,\"kind\":\"telepathy\"}")).isEqualTo(Parsed.rejected(
        Rejection.UNPARSEABLE, "probe result kind \"telepathy\" is not one of network, filesystem, unix-socket, process"));
    // an unreadable time keeps the result, at the time ingest read it
    assertThat(event("{\"probe\":\"p\",\"refused\":false,\"timestamp\":\"yesterday\"}")).satisfies(e -> {
      assertThat(e.observedAt()).isEqualTo(NOW);
      assertThat(e.timeSource()).isEqualTo("ingest");
      assertThat(e.probe().refused()).isFalse();
    });
    // a bad id in the result is a claim the file name overrules: the result is kept under the file's id
    assertThat(event("{\"probe\":\"p\",\"refused\":true,\"commandId\":\"short\"}")).satisfies(e -> {
      assertThat(e.commandId()).isEqualTo(ID);
      assertThat(e.identityConflict()).isEqualTo(new ViolationEvent.IdentityClaim(null, "short"));
    });
  }

  @Test
  void theFileNameAndTheFirstLineSelectTheType() {
    assertThat(Formats.ofFileName(ID + ".probe.jsonl")).containsInstanceOf(ProbeResultFormat.class);
    assertThat(Formats.ofFirstLine("{\"probe\":\"plain-http\",\"refused\":false}")).containsInstanceOf(ProbeResultFormat.class);
    assertThat(new ProbeResultFormat().wireName()).isEqualTo("probe-result");
  }
}
