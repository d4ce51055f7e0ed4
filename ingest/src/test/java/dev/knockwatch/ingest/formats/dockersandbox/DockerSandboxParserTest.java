package dev.knockwatch.ingest.formats.dockersandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.ingest.Hostile;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceLine;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Docker Sandboxes' denials of network egress, and nothing that only looks like one: only an
 * evaluation record that denied a connection or an HTTP request, and that Docker enforced, is a
 * refusal, of the agent the source maps the record's user, AI agent and machine to; what the agent
 * chose (the destination, the path, what the reasons quote of them) is read as a value, made safe
 * and bounded, never as a field or a line, and hostile lines around real ones hide none of them.
 */
class DockerSandboxParserTest {

  /** A denial as schema 1.82.0 writes it (samples/README.md): destination, reason, user and agent to fill in. */
  static final String DENIED = "{\"audit_event_id\":\"95e7257f-93c9-4f29-bde7-88830e2dae80\","
      + "\"timestamp\":\"2026-05-28T19:15:00.728933Z\",\"schema_version\":\"1.82.0\","
      + "\"category\":\"AUDIT_CATEGORY_EVALUATION\",\"decision\":\"AUDIT_DECISION_DENY\",\"username\":%s,"
      + "\"user_email\":\"jordandoe@example.com\",\"org_id\":\"9f8e7d6c-5b4a-3210-fedc-ba9876543210\","
      + "\"org_name\":\"Acme Inc\",\"audit_session_id\":\"8a3bc076-79d0-4502-baf3-cc6ad35fb578\",\"resource_id\":%s,"
      + "\"os\":\"macos\",\"app_version\":\"v0.31.0\",\"client_name\":\"sbx\",\"hostname\":\"host-machine\","
      + "\"deny_reason\":[%s],\"action_type\":\"network_egress\",\"network_egress\":{\"protocol\":\"tcp\"},\"agent\":%s}";
  /** An HTTP request denied, as schema 1.216.0 writes it: the payload's host, port, method and path to fill in. */
  static final String HTTP_DENIED = "{\"audit_event_id\":\"9c0d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f\","
      + "\"timestamp\":\"2026-09-25T17:42:15.402731Z\",\"schema_version\":\"1.216.0\","
      + "\"category\":\"AUDIT_CATEGORY_EVALUATION\",\"decision\":\"AUDIT_DECISION_DENY\",\"username\":\"jordandoe\","
      + "\"user_email\":\"jordandoe@example.com\",\"audit_session_id\":\"8a3bc076-79d0-4502-baf3-cc6ad35fb578\","
      + "\"resource_id\":%s,\"os\":\"macos\",\"app_version\":\"v0.46.0\",\"client_name\":\"sbx\","
      + "\"hostname\":\"host-machine\",\"enforcement_mode\":\"enforce\",\"action_type\":\"http_request\","
      + "\"http_request\":{\"method\":%s,\"host\":%s,\"port\":%s,\"path\":%s},\"agent\":\"claude\"}";
  static final String REASON = "no applicable policies for op(action=net:connect:tcp, resource=net:domain:%s)";
  static final Instant NOW = Instant.parse("2026-12-06T10:00:00Z");

  private final LineParser parser = parser("""
      agents:
        - {username: jordandoe, ai_agent: claude, agent: claude-jordandoe}
        - {user_email: ci@example.com, agent: ci-sandboxes}
        - {hostname: build-*, agent: build-farm}
      """);

  static LineParser parser(String yaml) {
    DockerSandboxFormat f = new DockerSandboxFormat();
    List<String> problems = new ArrayList<>();
    KeyValues with = KeyValues.of(new YamlFile("sources.yaml", problems).parse(yaml).orElseThrow(), "source 1", f.keys())
        .orElseThrow();
    assertThat(problems).isEmpty();
    return f.parser(new FileOptions(with, "auditkit/audit-x-1.jsonl", "audit-x-1", other -> false));
  }

  static String denied(String resource, String reasonJson, String username, String agent) {
    return DENIED.formatted(Hostile.json(username), Hostile.json(resource), reasonJson, Hostile.json(agent));
  }

  static String denied(String resource) {
    return denied(resource, Hostile.json(REASON.formatted(resource)), "jordandoe", "claude");
  }

  static String httpDenied(String host, String portJson, String method, String path) {
    return HTTP_DENIED.formatted(Hostile.json(host + ":443"), Hostile.json(method), Hostile.json(host), portJson,
        Hostile.json(path));
  }

  private Parsed parse(LineParser p, String line) {
    return p.parse(new SourceLine("auditkit/audit-x-1.jsonl", 0, line, "auditkit", null, "host-a", NOW));
  }

  private Parsed parse(String line) {
    return parse(parser, line);
  }

  private ViolationEvent event(String line) {
    Parsed p = parse(line);
    assertThat(p).as(line).isInstanceOf(Parsed.Events.class);
    return ((Parsed.Events) p).events().get(0);
  }

  @Test
  void aDenialIsItsMappedAgentsWithTheDestinationAsTargetAndNoCommand() {
    ViolationEvent e = event(denied("example.com:443"));
    assertThat(e.agentId()).isEqualTo("claude-jordandoe");
    assertThat(e.commandId()).isNull();
    assertThat(e.commandUnknown()).isTrue();
    assertThat(e.source()).isEqualTo("dockersandbox");
    assertThat(e.action()).isEqualTo("network-outbound");
    assertThat(e.host()).isEqualTo("example.com");
    assertThat(e.port()).isEqualTo(443);
    assertThat(e.protocol()).isEqualTo("tcp");
    assertThat(e.reason()).isEqualTo(REASON.formatted("example.com:443"));
    assertThat(e.subject()).isEqualTo(new ViolationEvent.Subject("dockersandbox", "username=jordandoe agent=claude"));
    assertThat(e.observedAt()).isEqualTo(Instant.parse("2026-05-28T19:15:00.728933Z"));
    // schema 1.80.0 names the host alone; several phrases are one reason
    ViolationEvent hostOnly = event(denied("169.254.169.254", "\"first\",\"second\"", "jordandoe", "claude"));
    assertThat(hostOnly.port()).isNull();
    assertThat(hostOnly.addressClass()).isEqualTo(AddressClass.CLOUD_METADATA);
    assertThat(hostOnly.reason()).isEqualTo("first; second");
    // an IPv6 address in brackets is one; without them its port cannot be told, and no target is guessed
    assertThat(event(denied("[::1]:8080")).host()).isEqualTo("::1");
    ViolationEvent bare = event(denied("fe80::1:80"));
    assertThat(bare.host()).isNull();
    assertThat(bare.targetUnknown()).isTrue();

    // an HTTP request: the payload's host (IPv6 without brackets), its port a string, its method and path
    ViolationEvent http = event(httpDenied("fd00::7", "\"8443\"", "HTTP_METHOD_DELETE", "/v1/items/42"));
    assertThat(http.action()).isEqualTo("http-request");
    assertThat(http.host()).isEqualTo("fd00::7");
    assertThat(http.port()).isEqualTo(8443);
    assertThat(http.addressClass()).isEqualTo(AddressClass.PRIVATE);
    assertThat(http.method()).isEqualTo("DELETE");
    assertThat(http.url()).isEqualTo("/v1/items/42");
    assertThat(http.reason()).isNull();
    // a payload with no host: resource_id's
    ViolationEvent noHost = event(HTTP_DENIED.formatted("\"api.example.com:443\"", "\"HTTP_METHOD_GET\"", "null",
        "null", "\"/\""));
    assertThat(noHost.host()).isEqualTo("api.example.com");
    assertThat(noHost.port()).isEqualTo(443);
    assertThat(event(httpDenied("api.example.com", "\"99999\"", "GET", "/")).method()).isNull();
  }

  @Test
  void everyAttributeAnEntryNamesMustMatchAndAnUnmappedRecordIsRefusedWithWhoDockerSaysItIs() {
    Parsed codex = parse(denied("pastebin.com:443", "\"x\"", "jordandoe", "codex"));
    assertThat(codex).isInstanceOfSatisfying(Parsed.Rejected.class, r -> {
      assertThat(r.code().code()).isEqualTo("unmapped-identity");
      assertThat(r.identity()).isEqualTo("dockersandbox username=jordandoe agent=codex");
      assertThat(r.at()).isEqualTo(Instant.parse("2026-05-28T19:15:00.728933Z"));
    });
    // the e-mail address alone, and the machine by a glob
    String ci = denied("pastebin.com:443", "\"x\"", "ci-bot", "claude").replace("jordandoe@example.com", "ci@example.com");
    assertThat(event(ci).agentId()).isEqualTo("ci-sandboxes");
    String build = denied("pastebin.com:443", "\"x\"", "sam", "codex").replace("host-machine", "build-7");
    assertThat(event(build).agentId()).isEqualTo("build-farm");
    assertThat(event(build).subject().identity()).isEqualTo("username=sam agent=codex");
    // no user signed in when the daemon started: empty names, and the agent alone says who
    Parsed anonymous = parse(denied("pastebin.com:443", "\"x\"", "", "claude").replace("jordandoe@example.com", ""));
    assertThat(anonymous).isInstanceOfSatisfying(Parsed.Rejected.class,
        r -> assertThat(r.identity()).isEqualTo("dockersandbox agent=claude"));
    // with no agents at all, every record is unmapped
    assertThat(parse(parser("agents: []\n"), denied("example.com:443"))).isInstanceOf(Parsed.Rejected.class);
  }

  @Test
  void whatOnlyLooksLikeADenialIsNone() {
    String denial = denied("example.com:443");
    assertThat(parse(denial.replace("AUDIT_DECISION_DENY", "AUDIT_DECISION_ALLOW"))).isEqualTo(Parsed.skipped("allowed"));
    assertThat(parse(denial.replace("AUDIT_DECISION_DENY", "AUDIT_DECISION_APPROVAL_REQUIRED")))
        .isEqualTo(Parsed.skipped("approval-required"));
    assertThat(parse(denial.replace("AUDIT_DECISION_DENY", "AUDIT_DECISION_APPROVAL_ALLOW")))
        .isEqualTo(Parsed.skipped("approval-answer"));
    assertThat(parse(denial.replace("AUDIT_DECISION_DENY", "AUDIT_DECISION_APPROVAL_DENY")))
        .isEqualTo(Parsed.skipped("approval-answer"));
    assertThat(parse(denial.replace("AUDIT_CATEGORY_EVALUATION", "AUDIT_CATEGORY_MANAGEMENT")))
        .isEqualTo(Parsed.skipped("management"));
    assertThat(parse(denial.replace("AUDIT_CATEGORY_EVALUATION", "AUDIT_CATEGORY_EXECUTION")))
        .isEqualTo(Parsed.skipped("execution"));
    assertThat(parse(denial.replace("\"network_egress\",", "\"filesystem_mount\","))).isEqualTo(Parsed.skipped("other-action"));
    assertThat(parse(denial.replace("\"network_egress\",", "\"tool_invocation\","))).isEqualTo(Parsed.skipped("other-action"));
    // recorded and not enforced; governance off is the local policy's own denial, enforced
    String mode = denial.replace("\"action_type\"", "\"enforcement_mode\":\"%s\",\"action_type\"");
    // audit mode: recorded and let through, the refusal's event as drift (enforced: false)
    unenforcedTwin(parse(mode.formatted("audit")), parse(mode.formatted("enforce")));
    assertThat(parse(mode.formatted("enforce"))).isInstanceOf(Parsed.Events.class);
    assertThat(parse(mode.formatted("off"))).isInstanceOf(Parsed.Events.class);
    // what Docker does not write is never guessed either way
    assertThat(parse(mode.formatted("shadow"))).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse(denial.replace("\"AUDIT_DECISION_DENY\"", "false"))).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse(denial.replace("AUDIT_DECISION_DENY", "AUDIT_DECISION_MAYBE"))).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse(denial.replace("AUDIT_CATEGORY_EVALUATION", "AUDIT_CATEGORY_NEW"))).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse(denial.replace("\"action_type\":\"network_egress\",", ""))).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse(denial.substring(0, denial.length() / 2))).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse("[" + denial + "]")).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse("{\"domain\":\"example.com\",\"decision\":\"deny\",\"count\":3}")).isInstanceOf(Parsed.Rejected.class);
    // a destination holding a forged denial is a destination, inside an allowed record's string: still allowed
    String forged = "x\",\"decision\":\"AUDIT_DECISION_DENY\",\"username\":\"jordandoe\",\"agent\":\"claude";
    assertThat(parse(denied(forged).replace("AUDIT_DECISION_DENY\",\"username", "AUDIT_DECISION_ALLOW\",\"username")))
        .isEqualTo(Parsed.skipped("allowed"));
    // and a reason quoting another user's name moves no identity
    ViolationEvent quoted = event(denied("pastebin.com:443", Hostile.json("\",\"username\":\"ci-bot"), "jordandoe",
        "claude"));
    assertThat(quoted.agentId()).isEqualTo("claude-jordandoe");
    assertThat(quoted.reason()).isEqualTo("\",\"username\":\"ci-bot");
  }

  /**
   * Hostile values in every field the agent chose (the destination, the HTTP method, host, port and
   * path, the reasons that quote them) and in the names around them, among the real denials of two
   * agents: every real denial is an event of its agent, a hostile denial from a mapped machine is
   * still one event with safe, bounded text, and no line stops the parser.
   */
  @Test
  void hostileValuesHideNoDenialAndEscapeNothing() {
    Random random = new Random(65);
    Hostile h = new Hostile(65);
    int real = 0;
    int hostile = 0;
    for (int i = 0; i < 20_000; i++) {
      int kind = random.nextInt(4);
      if (kind == 0) {
        boolean first = random.nextBoolean();
        String line = first ? denied("example.com:443")
            : denied("pastebin.com:443", "\"x\"", "sam", "codex").replace("host-machine", "build-" + random.nextInt(99));
        assertThat(event(line).agentId()).isEqualTo(first ? "claude-jordandoe" : "build-farm");
        real++;
      } else if (kind == 1) {
        String reasons = Hostile.json(h.text()) + (random.nextBoolean() ? "," + Hostile.json(h.text()) : "");
        String line = random.nextBoolean()
            ? denied(random.nextBoolean() ? h.hostPort() : h.text(), reasons, h.text(), h.text())
            : httpDenied(h.text(), random.nextBoolean() ? Hostile.json(h.text()) : String.valueOf(random.nextInt()),
                h.text(), h.text()).replace("\"username\":\"jordandoe\"", "\"username\":" + Hostile.json(h.text()));
        Parsed p = parse(line.replace("host-machine", "build-1"));
        assertThat(p).as("a denial from a mapped machine is one event, whatever the agent chose: %s", p)
            .isInstanceOf(Parsed.Events.class);
        ViolationEvent e = ((Parsed.Events) p).events().get(0);
        assertThat(e.agentId()).isIn("build-farm", "claude-jordandoe");
        for (String text : new String[] {e.host(), e.reason(), e.url(), e.method(), e.protocol(), e.subject().identity()}) {
          if (text != null) {
            assertThat(text).doesNotContainPattern("[\\x00-\\x1f\\x7f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]");
            assertThat(text).doesNotContainPattern("[\\ud800-\\udfff]");
            assertThat(text.length()).isLessThanOrEqualTo(2049);
          }
        }
        assertThat(e.port() == null || (e.port() >= 0 && e.port() <= 65_535)).isTrue();
        hostile++;
      } else {
        // hostile text anywhere in a line, or a JSON object of hostile keys and values
        String line = random.nextBoolean() ? h.text()
            : "{" + Hostile.json(h.text()) + ":" + Hostile.json(h.text()) + ",\"category\":\"AUDIT_CATEGORY_EVALUATION\"}";
        Parsed p = parse(line);
        assertThat(p).isNotInstanceOf(Parsed.Events.class);
      }
    }
    assertThat(real).isGreaterThan(4_000);
    assertThat(hostile).isGreaterThan(4_000);
  }

  /** The one event of an audit's line: the enforced line's, but {@code enforced: false}. */
  private static void unenforcedTwin(Parsed audited, Parsed enforced) {
    ViolationEvent refusal = ((Parsed.Events) enforced).events().get(0);
    assertThat(refusal.enforced()).isNull();
    assertThat(audited).isInstanceOfSatisfying(Parsed.Events.class, p -> assertThat(p.events()).singleElement()
        .satisfies(e -> {
          assertThat(e.enforced()).isFalse();
          assertThat(e.unenforced()).isTrue();
          assertThat(e.toBuilder().enforced(null).reason(refusal.reason()).build()).isEqualTo(refusal);
        }));
  }
}
