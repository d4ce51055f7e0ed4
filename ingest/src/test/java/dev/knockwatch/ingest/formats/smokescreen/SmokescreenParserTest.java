package dev.knockwatch.ingest.formats.smokescreen;

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
 * smokescreen's denied decisions, and nothing that only looks like one: only a
 * {@code CANONICAL-PROXY-DECISION} line that did not allow its request is a refusal, of the agent the
 * source maps what smokescreen knows of the client to; what the client chose (the host, a trace id,
 * a role a header gave) is read as a value, made safe and bounded, never as a field or a line, and
 * hostile lines around real ones hide none of them.
 */
class SmokescreenParserTest {

  /** A denial as v0.0.4's logProxy writes it (samples/README.md): host, client and names to fill in. */
  static final String DENIED = "{\"allow\":false,\"content_length\":77,\"decision_reason\":%s,\"dns_lookup_time_ms\":0,"
      + "\"enforce_would_deny\":true,\"id\":\"ctn2m4pq8h3c73b1e5b0\",\"inbound_remote_addr\":%s,"
      + "\"inbound_remote_x509_cn\":%s,\"inbound_remote_x509_ou\":\"agents\",\"level\":\"warning\","
      + "\"msg\":\"CANONICAL-PROXY-DECISION\",\"project\":\"agents\",\"proxy_type\":\"connect\",\"requested_host\":%s,"
      + "\"role\":%s,\"start_time\":\"2026-12-05T10:40:06.402117093Z\",\"time\":\"2026-12-05T10:40:06Z\","
      + "\"trace_id\":%s}";
  static final Instant NOW = Instant.parse("2026-12-06T10:00:00Z");

  private final LineParser parser = parser("""
      agents:
        - {inbound_remote_x509_cn: sandbox-runner-1, agent: sandbox-runner-1}
        - {role: webhooks, project: payments, agent: webhooks-sender}
        - {inbound_remote_addr: 10.0.4.0/24, agent: build-farm}
        - {inbound_remote_addr: "fd00:4::/64", agent: build-farm-v6}
      """);

  static LineParser parser(String yaml) {
    SmokescreenFormat f = new SmokescreenFormat();
    List<String> problems = new ArrayList<>();
    KeyValues with = KeyValues.of(new YamlFile("sources.yaml", problems).parse(yaml).orElseThrow(), "source 1", f.keys())
        .orElseThrow();
    assertThat(problems).isEmpty();
    return f.parser(new FileOptions(with, "smokescreen/smokescreen.log", "smokescreen", other -> false));
  }

  static String denied(String host, String remote, String cn, String role, String reason, String traceId) {
    return DENIED.formatted(Hostile.json(reason), Hostile.json(remote), Hostile.json(cn), Hostile.json(host),
        Hostile.json(role), Hostile.json(traceId));
  }

  static String denied(String host, String remote, String cn, String role) {
    return denied(host, remote, cn, role, "rule has enforce policy", "");
  }

  private Parsed parse(LineParser p, String line) {
    return p.parse(new SourceLine("smokescreen/smokescreen.log", 0, line, "smokescreen", null, "host-a", NOW));
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
  void aDeniedDecisionIsItsMappedAgentsWithTheRequestedHostAsTargetAndNoCommand() {
    ViolationEvent e = event(denied("github.com:443", "10.0.3.7:51234", "sandbox-runner-1", "sandbox-runner-1"));
    assertThat(e.agentId()).isEqualTo("sandbox-runner-1");
    assertThat(e.commandId()).isNull();
    assertThat(e.commandUnknown()).isTrue();
    assertThat(e.source()).isEqualTo("smokescreen");
    assertThat(e.host()).isEqualTo("github.com");
    assertThat(e.port()).isEqualTo(443);
    assertThat(e.action()).isEqualTo("http-connect");
    assertThat(e.method()).isEqualTo("CONNECT");
    assertThat(e.reason()).isEqualTo("rule has enforce policy");
    assertThat(e.sourceAddress()).isEqualTo("10.0.3.7");
    assertThat(e.sourcePort()).isEqualTo(51234);
    assertThat(e.subject()).isEqualTo(new ViolationEvent.Subject("smokescreen", "role=sandbox-runner-1"));
    assertThat(e.observedAt()).isEqualTo(Instant.parse("2026-12-05T10:40:06Z"));
    // every attribute an entry names must match: the role alone, or with another project, is not webhooks-sender
    String webhooks = denied("pastebin.com:443", "10.0.5.2:1", "webhooks", "webhooks");
    assertThat(parse(webhooks)).isInstanceOf(Parsed.Rejected.class);
    assertThat(event(webhooks.replace("\"project\":\"agents\"", "\"project\":\"payments\"")).agentId())
        .isEqualTo("webhooks-sender");
    // the client's address, v4 or v6, in a mapped block
    assertThat(event(denied("169.254.169.254:80", "10.0.4.9:40022", "", "")).agentId()).isEqualTo("build-farm");
    ViolationEvent v6 = event(denied("169.254.169.254:80", "[fd00:4::9]:40022", "", ""));
    assertThat(v6.agentId()).isEqualTo("build-farm-v6");
    assertThat(v6.sourceAddress()).isEqualTo("fd00:4::9");
    assertThat(v6.addressClass()).isEqualTo(AddressClass.CLOUD_METADATA);
    assertThat(v6.subject().identity()).isEqualTo("src=fd00:4::9");
  }

  @Test
  void v002sNamesAreReadAndItsUnknownIsNoCertificate() {
    String v002 = "{\"allow\":false,\"content_length\":95,\"decision_reason\":\"rule has enforce policy\","
        + "\"enforce_would_deny\":true,\"id\":\"x\",\"level\":\"warning\",\"msg\":\"CANONICAL-PROXY-DECISION\","
        + "\"project\":\"shared\",\"proxy_type\":\"connect\",\"requested_host\":\"github.com:443\",\"role\":\"\","
        + "\"source_addr\":\"%s\",\"src_host\":\"h\",\"src_host_common_name\":\"%s\",\"src_host_organization_unit\":\"unknown\","
        + "\"src_port\":\"1\",\"start_time\":\"2026-12-05T10:40:07.550021874Z\",\"time\":\"2026-12-05T10:40:07Z\",\"trace_id\":\"\"}";
    assertThat(event(v002.formatted("10.0.3.7:51234", "sandbox-runner-1")).agentId()).isEqualTo("sandbox-runner-1");
    ViolationEvent none = event(v002.formatted("10.0.4.9:40022", "unknown"));
    assertThat(none.agentId()).isEqualTo("build-farm");
    assertThat(none.subject().identity()).isEqualTo("src=10.0.4.9");
  }

  @Test
  void whatOnlyLooksLikeADenialIsNone() {
    String denial = denied("github.com:443", "10.0.3.7:51234", "sandbox-runner-1", "sandbox-runner-1");
    assertThat(parse(denial.replace("\"allow\":false", "\"allow\":true").replace("\"enforce_would_deny\":true",
        "\"enforce_would_deny\":false"))).isEqualTo(Parsed.skipped("allowed"));
    // report mode: let through, the denial's event as drift (enforced: false)
    unenforcedTwin(parse(denial.replace("\"allow\":false", "\"allow\":true")), parse(denial));
    // an allowed request whose lookup failed, and rejectResponse's own line beside it
    assertThat(parse(denial.replace("\"allow\":false", "\"allow\":true").replace("\"level\":\"warning\"",
        "\"level\":\"error\",\"error\":\"lookup x on 127.0.0.11:53: no such host\""))).isEqualTo(Parsed.skipped("failed"));
    assertThat(parse(denial.replace("CANONICAL-PROXY-DECISION", "Failed to resolve remote hostname: lookup x")))
        .isEqualTo(Parsed.skipped("other-message"));
    assertThat(parse(denial.replace("CANONICAL-PROXY-DECISION", "CANONICAL-PROXY-CN-CLOSE")))
        .isEqualTo(Parsed.skipped("other-message"));
    assertThat(parse("time=\"2026-12-05T10:40:00Z\" level=fatal msg=\"Could not create configuration: x\""))
        .isEqualTo(Parsed.skipped("not-json"));
    // a field smokescreen writes as a boolean, written otherwise: no guess either way
    assertThat(parse(denial.replace("\"allow\":false", "\"allow\":\"false\""))).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse(denial.substring(0, denial.length() / 2))).isInstanceOf(Parsed.Rejected.class);
    // the client's host holding a forged decision is a host, inside an allowed line's string: still allowed
    String forged = "x\",\"allow\":false,\"msg\":\"CANONICAL-PROXY-DECISION\",\"role\":\"webhooks";
    assertThat(parse(denied(forged, "10.0.3.7:1", "sandbox-runner-1", "sandbox-runner-1")
        .replace("\"allow\":false", "\"allow\":true").replace("\"enforce_would_deny\":true", "\"enforce_would_deny\":false")))
        .isEqualTo(Parsed.skipped("allowed"));
    // a refusal before any decision (the destination could not be read) is one; an error at level error is not
    String before = "{\"content_length\":80,\"dns_lookup_time_ms\":0,\"error\":\"missing port in address\",\"id\":\"x\","
        + "\"inbound_remote_addr\":\"10.0.4.9:1\",\"level\":\"%s\",\"msg\":\"CANONICAL-PROXY-DECISION\",\"proxy_type\":"
        + "\"connect\",\"requested_host\":\"github.com\",\"start_time\":\"2026-12-05T10:40:07Z\",\"time\":\"2026-12-05T10:40:07Z\","
        + "\"trace_id\":\"\"}";
    ViolationEvent noDecision = event(before.formatted("warning"));
    assertThat(noDecision.reason()).isEqualTo("missing port in address");
    assertThat(noDecision.agentId()).isEqualTo("build-farm");
    assertThat(parse(before.formatted("error"))).isEqualTo(Parsed.skipped("failed"));
  }

  @Test
  void anUnmappedClientIsRefusedWithWhoSmokescreenSaysItIs() {
    Parsed p = parse(denied("10.0.0.1:22", "172.16.0.5:45566", "", ""));
    assertThat(p).isInstanceOfSatisfying(Parsed.Rejected.class, r -> {
      assertThat(r.code().code()).isEqualTo("unmapped-identity");
      assertThat(r.identity()).isEqualTo("smokescreen src=172.16.0.5");
      assertThat(r.at()).isEqualTo(Instant.parse("2026-12-05T10:40:06Z"));
    });
    assertThat(parse(denied("x:1", "172.16.0.5:1", "ci-7", "ci-7"))).isInstanceOfSatisfying(Parsed.Rejected.class,
        r -> assertThat(r.identity()).isEqualTo("smokescreen role=ci-7"));
  }

  @Test
  void agentPerRoleNamesAnAgentAfterTheRoleButNeverKnockwatchsOwn() {
    LineParser perRole = parser("""
        agents:
          - {inbound_remote_addr: 10.0.4.0/24, agent: build-farm}
        agentPerRole: "knockwatch-"
        """);
    Parsed ci = parse(perRole, denied("x.example:443", "172.16.0.5:1", "ci-7", "ci-7"));
    assertThat(ci).isInstanceOfSatisfying(Parsed.Events.class,
        e -> assertThat(e.events().get(0).agentId()).isEqualTo("knockwatch-ci-7"));
    // the guard probes' exemption is never reached by a role, nor is an agent id made of a role that is none
    assertThat(parse(perRole, denied("x.example:443", "172.16.0.5:1", "guard", "guard"))).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse(perRole, denied("x.example:443", "172.16.0.5:1", "", "a/../b"))).isInstanceOf(Parsed.Rejected.class);
    // with no entries at all, the roles alone name the agents; a decision with no role names none
    LineParser rolesOnly = parser("""
        agents: []
        agentPerRole: "smokescreen-"
        """);
    assertThat(parse(rolesOnly, denied("x.example:443", "10.0.4.2:1", "", "webhooks"))).isInstanceOfSatisfying(
        Parsed.Events.class, e -> assertThat(e.events().get(0).agentId()).isEqualTo("smokescreen-webhooks"));
    assertThat(parse(rolesOnly, denied("x.example:443", "10.0.4.2:1", "", ""))).isInstanceOf(Parsed.Rejected.class);
    // the entries come first
    assertThat(parse(perRole, denied("x.example:443", "10.0.4.2:1", "ci-7", "ci-7"))).isInstanceOfSatisfying(
        Parsed.Events.class, e -> assertThat(e.events().get(0).agentId()).isEqualTo("build-farm"));
  }

  /**
   * Hostile values in every field the client chose (the host, the trace id, a role a header gave,
   * the reason that quotes them, the certificate's names) around the real denials of two agents:
   * every real denial is an event of its agent, a hostile denial from a mapped address is still one
   * event with safe, bounded text, and no line stops the parser.
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
        ViolationEvent e = event(first ? denied("github.com:443", "10.0.3.7:51234", "sandbox-runner-1", "sandbox-runner-1")
            : denied("pastebin.com:443", "10.0.4." + random.nextInt(256) + ":4000", "", ""));
        assertThat(e.agentId()).isEqualTo(first ? "sandbox-runner-1" : "build-farm");
        real++;
      } else if (kind == 1) {
        String line = denied(random.nextBoolean() ? h.hostPort() : h.text(), "10.0.4.7:" + random.nextInt(65_536),
            h.text(), random.nextInt(3) == 0 ? "" : h.text(), h.text(), h.text());
        Parsed p = parse(line);
        assertThat(p).as("a denial from a mapped address is one event, whatever the client chose: %s", p)
            .isInstanceOf(Parsed.Events.class);
        ViolationEvent e = ((Parsed.Events) p).events().get(0);
        assertThat(e.agentId()).isIn("build-farm", "sandbox-runner-1");
        for (String text : new String[] {e.host(), e.reason(), e.subject().identity()}) {
          if (text != null) {
            assertThat(text).doesNotContainPattern("[\\x00-\\x1f\\x7f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]");
            assertThat(text.length()).isLessThanOrEqualTo(1025);
          }
        }
        hostile++;
      } else {
        // hostile text anywhere in a line, or a JSON object of hostile keys and values
        String line = random.nextBoolean() ? h.text()
            : "{" + Hostile.json(h.text()) + ":" + Hostile.json(h.text()) + ",\"msg\":\"CANONICAL-PROXY-DECISION\"}";
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
