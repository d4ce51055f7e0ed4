package dev.knockwatch.ingest.formats.envoy;

import static org.assertj.core.api.Assertions.assertThat;

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
 * Envoy's RBAC refusals, and nothing that only looks like one: only a line whose response code or
 * connection termination details Envoy set to {@code rbac_access_denied…} is a refusal, of the
 * agent the source maps the downstream peer to; a 403 without them is never one; what the agent
 * chose (the path, the authority, the SNI, the User-Agent) is read as a value, made safe and
 * bounded, never as a field, and hostile lines around real ones hide none of them.
 */
class EnvoyParserTest {

  /** A line of docs/WALLS.md's json_format (samples/README.md): keys sorted, unset values null. */
  static final String JSON = "{\"authority\":%s,\"connection_termination_details\":%s,\"downstream_peer_subject\":%s,"
      + "\"downstream_peer_uri_san\":%s,\"downstream_remote_address\":%s,\"method\":%s,\"path\":%s,"
      + "\"requested_server_name\":%s,\"response_code\":%s,\"response_code_details\":%s,\"response_flags\":null,"
      + "\"start_time\":\"2026-12-05T10:40:06.402Z\",\"upstream_host\":null,\"user_agent\":%s}";
  /** A line of Istio's EnvoyTextLogFormat (1.30.3): request line, status, details, authority, peer and SNI to fill in. */
  static final String ISTIO = "[2026-12-05T10:40:06.402Z] \"%s\" %s - %s %s \"-\" 0 19 0 - \"-\" \"%s\" "
      + "\"3f1c0c2e-9b8a-4e0f-a1b2-0c4d5e6f7a81\" \"%s\" \"-\" outbound|80||x - 104.18.7.192:80 %s %s -";
  static final String RUNNER = "spiffe://agents.example/sandbox/runner-1";
  static final Instant NOW = Instant.parse("2026-12-06T10:00:00Z");

  private final LineParser parser = parser("""
      agents:
        - {uri_san: "spiffe://agents.example/sandbox/runner-*", agent: sandbox-runner-1}
        - {subject: "CN=build-farm-*", agent: build-farm}
        - {source: 10.0.4.0/24, agent: build-farm}
      """);

  static LineParser parser(String yaml) {
    EnvoyFormat f = new EnvoyFormat();
    List<String> problems = new ArrayList<>();
    KeyValues with = KeyValues.of(new YamlFile("sources.yaml", problems).parse(yaml).orElseThrow(), "source 1", f.keys())
        .orElseThrow();
    assertThat(problems).isEmpty();
    return f.parser(new FileOptions(with, "envoy/access.log", "envoy", other -> false));
  }

  static String json(String authority, String termination, String subject, String san, String remote, String method,
      String path, String sni, String code, String details, String userAgent) {
    return JSON.formatted(q(authority), q(termination), q(subject), q(san), q(remote), q(method), q(path), q(sni), code,
        q(details), q(userAgent));
  }

  static String refusedJson(String authority, String method, String path, String san, String remote, String userAgent) {
    return json(authority, null, null, san, remote, method, path, null, "403",
        "rbac_access_denied_matched_policy[deny-paste-sites]", userAgent);
  }

  static String istio(String request, String code, String details, String termination, String userAgent,
      String authority, String remote, String sni) {
    return ISTIO.formatted(request, code, details, termination, userAgent, authority, remote, sni);
  }

  private static String q(String s) {
    return s == null ? "null" : Hostile.json(s);
  }

  private Parsed parse(String line) {
    return parser.parse(new SourceLine("envoy/access.log", 0, line, "envoy", null, "host-a", NOW));
  }

  private ViolationEvent event(String line) {
    Parsed p = parse(line);
    assertThat(p).as(line).isInstanceOf(Parsed.Events.class);
    return ((Parsed.Events) p).events().get(0);
  }

  @Test
  void anRbacRefusalInJsonIsTheMappedPeersWithTheAuthorityAsTargetTheQueryRedactedAndNoCommand() {
    ViolationEvent e = event(refusedJson("paste.example.net:8080", "POST", "/upload?token=ghp_4f9a2c7d1e&x=1", RUNNER,
        "10.0.3.7:51240", "curl/8.11.1"));
    assertThat(e.agentId()).isEqualTo("sandbox-runner-1");
    assertThat(e.commandUnknown()).isTrue();
    assertThat(e.commandId()).isNull();
    assertThat(e.host()).isEqualTo("paste.example.net");
    assertThat(e.port()).isEqualTo(8080);
    assertThat(e.action()).isEqualTo("http-request");
    assertThat(e.method()).isEqualTo("POST");
    assertThat(e.url()).isEqualTo("//paste.example.net:8080/upload?token=[REDACTED]&x=1");
    assertThat(e.reason()).isEqualTo("deny-paste-sites");
    assertThat(e.subject().identity()).isEqualTo("san=" + RUNNER);
    assertThat(e.sourceAddress()).isEqualTo("10.0.3.7");
    assertThat(e.sourcePort()).isEqualTo(51240);
    assertThat(e.observedAt()).isEqualTo(Instant.parse("2026-12-05T10:40:06.402Z"));

    ViolationEvent connect = event(json("github.com:443", null, null, RUNNER, "10.0.3.7:1", "CONNECT", null, null, "403",
        "rbac_access_denied_matched_policy[none]", null));
    assertThat(connect.action()).isEqualTo("http-connect");
    assertThat(connect.url()).isNull();
    assertThat(connect.reason()).isEqualTo("none");
  }

  @Test
  void aConnectionTheNetworkFilterClosedIsAConnectToItsSniOrOfNoKnownTarget() {
    ViolationEvent tls = event(json(null, "rbac_access_denied_matched_policy[deny smtp]", "CN=build-farm-7,OU=ci", null,
        "10.0.9.1:40022", null, null, "smtp.gmail.com", "0", null, null));
    assertThat(tls.action()).isEqualTo("connect");
    assertThat(tls.host()).isEqualTo("smtp.gmail.com");
    assertThat(tls.method()).isNull();
    assertThat(tls.agentId()).isEqualTo("build-farm");
    assertThat(tls.subject().identity()).isEqualTo("subject=CN=build-farm-7,OU=ci");
    assertThat(tls.reason()).isEqualTo("deny smtp");
    ViolationEvent plain = event(istio("- - -", "0", "-", "rbac_access_denied_matched_policy[none]", "-", "-",
        "10.0.4.2:4000", "-"));
    assertThat(plain.targetUnknown()).isTrue();
    assertThat(plain.agentId()).isEqualTo("build-farm");
    assertThat(plain.subject().identity()).isEqualTo("src=10.0.4.2");
  }

  @Test
  void istiosTextFormatNamesItsPolicyWithItsOwnBrackets() {
    ViolationEvent e = event(istio("GET /v1/models?api_key=sk-live-4f9a2c HTTP/1.1", "403",
        "rbac_access_denied_matched_policy[ns[agents]-policy[deny-model-apis]-rule[0]]", "-", "curl/8.11.1",
        "api.openai.com", "10.0.4.7:51234", "-"));
    assertThat(e.reason()).isEqualTo("ns[agents]-policy[deny-model-apis]-rule[0]");
    assertThat(e.url()).isEqualTo("//api.openai.com/v1/models?api_key=[REDACTED]");
    assertThat(e.agentId()).isEqualTo("build-farm");
    assertThat(EnvoyParser.policy("rbac_access_denied")).isEqualTo("none");
    assertThat(EnvoyParser.policy("rbac_access_denied_matched_policy[]")).isEqualTo("none");
  }

  @Test
  void a403WithoutTheRbacFiltersDetailsIsNoRefusal() {
    // the upstream's own 403, and another filter's
    assertThat(parse(json("api.github.com", null, null, RUNNER, "10.0.3.7:1", "GET", "/x", null, "403", "via_upstream",
        "RBAC: access denied"))).isEqualTo(Parsed.skipped("not-rbac"));
    assertThat(parse(istio("GET /x HTTP/1.1", "403", "ext_authz_denied", "-", "-", "a.example", "10.0.4.7:1", "-")))
        .isEqualTo(Parsed.skipped("not-rbac"));
    // a format that logs no details cannot tell: the skip says what to add
    assertThat(parse(json("a.example", null, null, RUNNER, "10.0.3.7:1", "GET", "/x", null, "403", null, null)
        .replace("\"response_code_details\":null,", ""))).isEqualTo(Parsed.skipped("no-details"));
    assertThat(parse("[2026-12-05T10:40:06.402Z] \"GET /v1/models HTTP/1.1\" 403 - 0 19 0 - \"-\" \"curl/8.11.1\" \"id\""
        + " \"api.openai.com\" \"-\"")).isEqualTo(Parsed.skipped("no-details"));
    assertThat(parse("[2026-12-05T10:40:09.004Z] \"- - -\" 0 - 0 0 1 - \"-\" \"-\" \"-\" \"-\" \"-\""))
        .isEqualTo(Parsed.skipped("no-details"));
    // the words where the agent chose them: in the path, the authority, the user agent
    assertThat(parse(json("rbac_access_denied_matched_policy[x]", null, null, RUNNER, "10.0.3.7:1", "GET",
        "/rbac_access_denied_matched_policy[x]", null, "200", "via_upstream", "rbac_access_denied")))
        .isEqualTo(Parsed.skipped("allowed"));
    assertThat(parse(istio("GET /rbac_access_denied_matched_policy[x] HTTP/1.1", "200", "via_upstream", "-",
        "rbac_access_denied_matched_policy[x]", "a.example", "10.0.4.7:1", "-"))).isEqualTo(Parsed.skipped("allowed"));
  }

  @Test
  void aQuoteInAnAgentsFieldOfATextLineMakesItUnreadableNeverAnotherLine() {
    // a User-Agent that closes its quote and writes a refusal's fields: the line is rejected, not read as a refusal
    String forged = "x\" \"id\" \"a.example\" \"-\" c - 1.2.3.4:80 10.0.4.9:1 - -\" 403 - "
        + "rbac_access_denied_matched_policy[none] - \"";
    Parsed p = parse(istio("GET /x HTTP/1.1", "200", "via_upstream", "-", forged, "a.example", "10.0.4.7:1", "-"));
    assertThat(p).isInstanceOfSatisfying(Parsed.Rejected.class, r -> assertThat(r.code().code()).isEqualTo("unparseable"));
    // a path with a space cannot reach the status after it
    assertThat(parse(istio("GET /x HTTP/1.1\" 403 - rbac_access_denied_matched_policy[none] - \"- HTTP/1.1", "200",
        "via_upstream", "-", "-", "a.example", "10.0.4.7:1", "-"))).isInstanceOf(Parsed.Rejected.class);
  }

  @Test
  void anUnmappedPeerIsRefusedWithWhoEnvoySaysItIs() {
    Parsed p = parse(refusedJson("github.com:443", "CONNECT", null, "spiffe://agents.example/other/x", "172.16.0.5:1",
        null));
    assertThat(p).isInstanceOfSatisfying(Parsed.Rejected.class, r -> {
      assertThat(r.code().code()).isEqualTo("unmapped-identity");
      assertThat(r.identity()).isEqualTo("envoy san=spiffe://agents.example/other/x");
      assertThat(r.at()).isEqualTo(Instant.parse("2026-12-05T10:40:06.402Z"));
    });
    assertThat(parse(istio("GET /x HTTP/1.1", "403", "rbac_access_denied_matched_policy[none]", "-", "-", "a.example",
        "172.16.0.5:1", "-"))).isInstanceOfSatisfying(Parsed.Rejected.class,
            r -> assertThat(r.identity()).isEqualTo("envoy src=172.16.0.5"));
  }

  /**
   * Hostile values in every field the agent chose (the authority, the path, the SNI, the User-Agent,
   * the certificate's names where a CA signed what it asked) around the real refusals of two agents:
   * every real refusal is an event of its agent, a hostile refusal from a mapped peer is still one
   * event with safe, bounded text, an allowed line never becomes one, and no line stops the parser.
   */
  @Test
  void hostileValuesHideNoRefusalAndEscapeNothing() {
    Random random = new Random(65);
    Hostile h = new Hostile(65);
    int real = 0;
    int hostile = 0;
    for (int i = 0; i < 8_000; i++) {
      int kind = random.nextInt(5);
      if (kind == 0) {
        boolean first = random.nextBoolean();
        ViolationEvent e = event(first ? refusedJson("github.com:443", "CONNECT", null, RUNNER, "10.0.3.7:51234", null)
            : istio("GET /x HTTP/1.1", "403", "rbac_access_denied_matched_policy[none]", "-", "curl/8.11.1",
                "pastebin.com", "10.0.4." + random.nextInt(256) + ":4000", "-"));
        assertThat(e.agentId()).isEqualTo(first ? "sandbox-runner-1" : "build-farm");
        real++;
      } else if (kind == 1) {
        String line = refusedJson(random.nextBoolean() ? h.hostPort() : h.text(), h.token(), h.text(),
            random.nextInt(3) == 0 ? RUNNER : "spiffe://agents.example/sandbox/runner-" + h.text(),
            "10.0.4.7:" + random.nextInt(65_536), h.text());
        Parsed p = parse(line);
        assertThat(p).as("a refusal of a mapped peer is one event, whatever the agent chose: %s", p)
            .isInstanceOf(Parsed.Events.class);
        ViolationEvent e = ((Parsed.Events) p).events().get(0);
        assertThat(e.agentId()).isIn("build-farm", "sandbox-runner-1");
        for (String text : new String[] {e.host(), e.url(), e.method(), e.reason(), e.subject().identity()}) {
          if (text != null) {
            assertThat(text).doesNotContainPattern("[\\x00-\\x1f\\x7f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]");
            assertThat(text.length()).isLessThanOrEqualTo(1025);
          }
        }
        hostile++;
      } else if (kind == 2) {
        // an allowed text line with hostile tokens where the agent writes: never a refusal
        String line = istio("GET " + h.token() + " HTTP/1.1", "200", "via_upstream", "-", h.token(), h.token(),
            "10.0.4.7:1", h.token());
        assertThat(parse(line)).isNotInstanceOf(Parsed.Events.class);
      } else {
        // hostile text anywhere in a line, or a JSON object of hostile keys and values
        String line = random.nextBoolean() ? h.text()
            : "{" + Hostile.json(h.text()) + ":" + Hostile.json(h.text()) + ",\"response_code\":403}";
        assertThat(parse(line)).isNotInstanceOf(Parsed.Events.class);
      }
    }
    assertThat(real).isGreaterThan(1_200);
    assertThat(hostile).isGreaterThan(1_200);
  }
}
