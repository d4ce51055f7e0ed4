package dev.knockwatch.ingest.formats.ocsf;

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
 * OCSF refusals, and nothing that only looks like one: only a Network Activity or HTTP Activity event
 * Denied or Blocked is a refusal, of the agent the source maps the producer's identity to; what the
 * agent chose (the host, the URL, its command line, what the message quotes of them) is read as a
 * value, made safe and bounded, never as a field or a line, and hostile lines around real ones hide
 * none of them.
 */
class OcsfParserTest {

  /**
   * A refused CONNECT as OpenShell 0.0.111's proxy writes it (samples/README.md): the sandbox, the
   * host, the command line and the deny reason to fill in.
   */
  static final String CONNECT_DENIED = "{\"action\":\"Denied\",\"action_id\":2,\"activity_id\":1,\"activity_name\":\"Open\","
      + "\"actor\":{\"process\":{\"cmd_line\":%s,\"name\":\"/usr/bin/curl\",\"parent_process\":{\"name\":\"/usr/bin/bash\","
      + "\"pid\":0},\"pid\":64}},\"category_name\":\"Network Activity\",\"category_uid\":4,\"class_name\":\"Network Activity\","
      + "\"class_uid\":4001,\"container\":{\"image\":{\"name\":\"ghcr.io/openshell/sandbox:latest\"},\"name\":%s,"
      + "\"uid\":\"5c1f9e2a-7b3d-4e8a-9f10-2d6c4b8a1e37\"},\"device\":{\"hostname\":\"work-session\",\"os\":{\"name\":\"Linux\"}},"
      + "\"disposition\":\"Blocked\",\"disposition_id\":2,\"dst_endpoint\":{\"domain\":%s,\"port\":443},"
      + "\"firewall_rule\":{\"name\":\"-\",\"type\":\"opa\"},\"is_src_dst_assignment_known\":true,\"message\":%s,"
      + "\"metadata\":{\"product\":{\"name\":\"OpenShell Sandbox Supervisor\",\"vendor_name\":\"OpenShell\",\"version\":\"0.0.111\"},"
      + "\"profiles\":[\"security_control\",\"network_proxy\",\"container\",\"host\"],"
      + "\"uid\":\"5c1f9e2a-7b3d-4e8a-9f10-2d6c4b8a1e37\",\"version\":\"1.8.0\"},\"proxy_endpoint\":{\"ip\":\"127.0.0.1\","
      + "\"port\":3128},\"severity\":\"Medium\",\"severity_id\":3,\"src_endpoint\":{\"ip\":\"10.200.0.2\",\"port\":40118},"
      + "\"status\":\"Failure\",\"status_detail\":%s,\"status_id\":2,\"time\":1796467202000,"
      + "\"type_name\":\"Network Activity: Open\",\"type_uid\":400101}";
  /** A refused plain-HTTP request as OpenShell's proxy writes it: the URL's host and path to fill in. */
  static final String FORWARD_DENIED = "{\"action\":\"Denied\",\"action_id\":2,\"activity_id\":99,\"activity_name\":\"Other\","
      + "\"actor\":{\"process\":{\"cmd_line\":\"/usr/bin/python3.12\",\"name\":\"/usr/bin/python3.12\",\"pid\":88}},"
      + "\"category_name\":\"Network Activity\",\"category_uid\":4,\"class_name\":\"HTTP Activity\",\"class_uid\":4002,"
      + "\"container\":{\"name\":\"work-session\",\"uid\":\"5c1f9e2a-7b3d-4e8a-9f10-2d6c4b8a1e37\"},"
      + "\"disposition\":\"Blocked\",\"disposition_id\":2,\"dst_endpoint\":{\"domain\":%1$s,\"port\":80},"
      + "\"firewall_rule\":{\"name\":\"-\",\"type\":\"opa\"},\"http_request\":{\"http_method\":%3$s,\"url\":{\"hostname\":%1$s,"
      + "\"path\":%2$s,\"port\":80,\"scheme\":\"http\"}},\"message\":\"FORWARD denied\",\"observation_point_id\":2,"
      + "\"severity\":\"Medium\",\"severity_id\":3,\"status\":\"Failure\",\"status_detail\":\"denied\",\"status_id\":2,"
      + "\"time\":1796467203000,\"type_name\":\"HTTP Activity: Other\",\"type_uid\":400299}";
  static final Instant NOW = Instant.parse("2026-12-06T10:00:00Z");

  private final LineParser parser = parser("""
      agents:
        - {container.name: work-session, agent: openshell-work-session}
        - {container.name: "work-*", agent: openshell-work}
        - {container.uid: "sandbox-9*", agent: openshell-fleet}
        - {device.hostname: ci-runner-7, actor.user.name: runner, agent: ci-runners}
        - {src_endpoint.ip: 10.0.4.0/24, agent: build-farm}
      """);

  static LineParser parser(String yaml) {
    OcsfFormat f = new OcsfFormat();
    List<String> problems = new ArrayList<>();
    KeyValues with = KeyValues.of(new YamlFile("sources.yaml", problems).parse(yaml).orElseThrow(), "source 1", f.keys())
        .orElseThrow();
    assertThat(problems).isEmpty();
    return f.parser(new FileOptions(with, "openshell/openshell-ocsf.2026-12-05.log", "ocsf", other -> false));
  }

  static String connectDenied(String sandbox, String host, String cmdLine, String message, String detail) {
    return CONNECT_DENIED.formatted(Hostile.json(cmdLine), Hostile.json(sandbox), Hostile.json(host), Hostile.json(message),
        Hostile.json(detail));
  }

  static String connectDenied(String sandbox, String host) {
    return connectDenied(sandbox, host, "/usr/bin/curl", "CONNECT denied " + host + ":443",
        "endpoint " + host + ":443 is not allowed by any policy");
  }

  static String forwardDenied(String host, String path, String method) {
    return FORWARD_DENIED.formatted(Hostile.json(host), Hostile.json(path), Hostile.json(method));
  }

  private Parsed parse(String line) {
    return parser.parse(new SourceLine("openshell/openshell-ocsf.2026-12-05.log", 0, line, "ocsf", null, "host-a", NOW));
  }

  private ViolationEvent event(String line) {
    Parsed p = parse(line);
    assertThat(p).as(line).isInstanceOf(Parsed.Events.class);
    return ((Parsed.Events) p).events().get(0);
  }

  @Test
  void aRefusedConnectIsTheMappedSandboxsWithItsTargetReasonAndProcessAndNoCommand() {
    ViolationEvent e = event(connectDenied("work-session", "httpbin.org"));
    assertThat(e.agentId()).isEqualTo("openshell-work-session");
    assertThat(e.commandId()).isNull();
    assertThat(e.commandUnknown()).isTrue();
    // the sandbox is the refusal's session, and its key; a name no grain key may hold gives none
    assertThat(e.sessionId()).isEqualTo("work-session");
    assertThat(e.key()).isEqualTo("session:openshell-work-session/work-session");
    ViolationEvent odd = event(connectDenied("work-a/b\u202e", "httpbin.org"));
    assertThat(odd.agentId()).isEqualTo("openshell-work");
    assertThat(odd.sessionId()).isNull();
    assertThat(odd.key()).isEqualTo("agent:openshell-work");
    assertThat(e.source()).isEqualTo("ocsf");
    assertThat(e.action()).isEqualTo("network-outbound");
    assertThat(e.host()).isEqualTo("httpbin.org");
    assertThat(e.port()).isEqualTo(443);
    assertThat(e.method()).isNull();
    assertThat(e.reason()).isEqualTo("endpoint httpbin.org:443 is not allowed by any policy");
    assertThat(e.pid()).isEqualTo(64);
    assertThat(e.commandText()).isEqualTo("/usr/bin/curl");
    assertThat(e.sourceAddress()).isEqualTo("10.200.0.2");
    assertThat(e.sourcePort()).isEqualTo(40118);
    assertThat(e.subject()).isEqualTo(new ViolationEvent.Subject("ocsf", "container=work-session"));
    assertThat(e.observedAt()).isEqualTo(Instant.parse("2026-12-05T10:40:02Z"));
    // no status_detail: the message is the reason; OpenShell's "-" for a command line it could not read is none
    ViolationEvent bare = event(connectDenied("work-session", "pypi.org").replaceAll(",\"status_detail\":\"[^\"]*\"", "")
        .replace("\"cmd_line\":\"/usr/bin/curl\"", "\"cmd_line\":\"-\""));
    assertThat(bare.reason()).isEqualTo("CONNECT denied pypi.org:443");
    assertThat(bare.commandText()).isNull();
  }

  @Test
  void aRefusedRequestIsAnHttpRequestWithItsUrlAndARefuseIsADirectDial() {
    ViolationEvent request = event(forwardDenied("example.com", "/upload?token=sk-live-4f9a8b7c6d5e", "POST"));
    assertThat(request.action()).isEqualTo("http-request");
    assertThat(request.method()).isEqualTo("POST");
    assertThat(request.url()).isEqualTo("http://example.com:80/upload?token=[REDACTED]");
    assertThat(request.host()).isEqualTo("example.com");
    assertThat(request.port()).isEqualTo(80);
    assertThat(event(forwardDenied("example.com", "/", "CONNECT")).action()).isEqualTo("http-connect");
    // a Network Activity Refuse (OpenShell's bypass monitor: nftables refused a dial around the proxy)
    ViolationEvent dial = event(connectDenied("work-session", "93.184.216.34")
        .replace("\"activity_id\":1,\"activity_name\":\"Open\"", "\"activity_id\":5,\"activity_name\":\"Refuse\"")
        .replace("\"dst_endpoint\":{\"domain\"", "\"dst_endpoint\":{\"ip\""));
    assertThat(dial.action()).isEqualTo("connect");
    assertThat(dial.host()).isEqualTo("93.184.216.34");
    assertThat(dial.addressClass()).isEqualTo(AddressClass.PUBLIC);
    assertThat(dial.method()).isNull();
    assertThat(dial.errno()).isNull();
  }

  /**
   * The producer's own record rides on its event, every field of it, made safe: a secret the agent put
   * in its URL or command line redacted, a control or bidi character stripped from values and keys,
   * nesting, lists and length bounded, and a record too long to keep left off (the event is whole).
   * The OCSF export gives the producer's fields back, knockwatch's attribution in {@code unmapped}.
   */
  @Test
  void theProducersRecordIsKeptSafeAndTheExportGivesItBack() throws Exception {
    String line = forwardDenied("example.com", "/upload?token=sk-live-4f9a8b7c6d5e", "POST")
        .replace("\"message\":\"FORWARD denied\"", "\"message\":\"FORWARD \\u202edenied\\u0000\",\"x\\u202ey\":1");
    ViolationEvent e = event(line);
    com.fasterxml.jackson.databind.JsonNode copy = dev.knockwatch.events.Json.MAPPER.readTree(e.producer());
    com.fasterxml.jackson.databind.JsonNode original = dev.knockwatch.events.Json.MAPPER.readTree(line);
    assertThat(copy.path("metadata")).isEqualTo(original.path("metadata"));
    assertThat(copy.path("actor")).isEqualTo(original.path("actor"));
    assertThat(copy.path("firewall_rule")).isEqualTo(original.path("firewall_rule"));
    assertThat(copy.path("http_request").path("url").path("path").asText()).isEqualTo("/upload?token=[REDACTED]");
    assertThat(copy.path("message").asText()).startsWith("FORWARD ").contains("denied").doesNotContain("\u202e", "\u0000");
    assertThat(copy.fieldNames()).toIterable().anySatisfy(k -> assertThat(k).startsWith("x").endsWith("y").doesNotContain("\u202e"));
    assertThat(e.producer()).doesNotContain("sk-live", "\u202e", "\u0000");

    // the export: knockwatch's record, valid OCSF 1.3.0, and the producer's whole beside it
    com.fasterxml.jackson.databind.node.ObjectNode ocsf = dev.knockwatch.events.export.Ocsf.event(e);
    assertThat(dev.knockwatch.events.export.OcsfSchemaTest.problems(ocsf)).isEmpty();
    assertThat(ocsf.path("unmapped").path("agentId").asText()).isEqualTo("openshell-work-session");
    com.fasterxml.jackson.databind.JsonNode given = ocsf.path("unmapped").path("producer");
    assertThat(given).isEqualTo(copy);
    assertThat(given.path("class_uid").asInt()).isEqualTo(4002);
    assertThat(given.path("class_name").asText()).isEqualTo("HTTP Activity");
    assertThat(given.path("container").path("name").asText()).isEqualTo("work-session");
    assertThat(given.path("observation_point_id").asInt()).isEqualTo(2);

    // bounds: a record too long to keep is left off, and the event is whole; nesting and lists are cut
    String huge = connectDenied("work-session", "httpbin.org", "/usr/bin/curl " + "a".repeat(900), "m", "d")
        .replace("\"time\":", "\"padding\":[" + String.join(",", java.util.Collections.nCopies(20, "\"" + "p".repeat(900) + "\""))
            + "],\"time\":");
    ViolationEvent big = event(huge);
    assertThat(big.producer()).isNull();
    assertThat(big.host()).isEqualTo("httpbin.org");
    String deep = connectDenied("work-session", "httpbin.org").replace("\"time\":", "\"deep\":" + "{\"d\":".repeat(20)
        + "1" + "}".repeat(20) + ",\"list\":[" + String.join(",", java.util.Collections.nCopies(100, "1")) + "],\"time\":");
    com.fasterxml.jackson.databind.JsonNode cut = dev.knockwatch.events.Json.MAPPER.readTree(event(deep).producer());
    assertThat(cut.path("list")).hasSize(ProducerRecord.MAX_ITEMS);
    assertThat(cut.toString()).doesNotContain("{\"d\":".repeat(ProducerRecord.MAX_DEPTH + 1)).contains("{\"d\":".repeat(3));
    assertThat(e.producer().length()).isLessThanOrEqualTo(ProducerRecord.MAX_CHARS);
  }

  @Test
  void theIdentityIsTheContainerElseTheDeviceAndUserElseTheSourceAddress() {
    String other = connectDenied("scratch", "pypi.org");
    assertThat(parse(other)).isInstanceOfSatisfying(Parsed.Rejected.class, r -> {
      assertThat(r.code().code()).isEqualTo("unmapped-identity");
      assertThat(r.identity()).isEqualTo("ocsf container=scratch");
      assertThat(r.at()).isEqualTo(Instant.parse("2026-12-05T10:40:02Z"));
    });
    // the container's uid, as a glob
    assertThat(event(other.replace("5c1f9e2a-7b3d-4e8a-9f10-2d6c4b8a1e37", "sandbox-9f")).agentId())
        .isEqualTo("openshell-fleet");
    // every attribute an entry names must match: the device and the user together
    String generic = "{\"class_uid\":4002,\"activity_id\":3,\"disposition_id\":2,\"time\":1796467262000,"
        + "\"device\":{\"hostname\":\"ci-runner-7\"},\"actor\":{\"user\":{\"name\":\"%s\"}},"
        + "\"http_request\":{\"http_method\":\"GET\",\"url\":{\"url_string\":\"https://paste.example.net/raw\","
        + "\"hostname\":\"paste.example.net\",\"port\":443}}}";
    ViolationEvent byDevice = event(generic.formatted("runner"));
    assertThat(byDevice.agentId()).isEqualTo("ci-runners");
    assertThat(byDevice.host()).isEqualTo("paste.example.net");
    assertThat(byDevice.url()).isEqualTo("https://paste.example.net/raw");
    assertThat(byDevice.subject().identity()).isEqualTo("user=runner");
    assertThat(parse(generic.formatted("root"))).isInstanceOf(Parsed.Rejected.class);
    // the source address in a mapped block; a source "address" that is none is no identity
    String byAddress = "{\"class_uid\":4001,\"activity_id\":5,\"action_id\":2,\"src_endpoint\":{\"ip\":\"%s\",\"port\":1},"
        + "\"dst_endpoint\":{\"ip\":\"203.0.113.10\",\"port\":22}}";
    ViolationEvent e = event(byAddress.formatted("10.0.4.9"));
    assertThat(e.agentId()).isEqualTo("build-farm");
    assertThat(e.subject().identity()).isEqualTo("src=10.0.4.9");
    assertThat(e.observedAt()).isNull();
    // neither status_detail nor message: the rule that refused it is the reason
    assertThat(e.reason()).isNull();
    assertThat(event(byAddress.formatted("10.0.4.9").replace("}}", "},\"firewall_rule\":{\"name\":\"deny-ssh\"}}"))
        .reason()).isEqualTo("firewall rule deny-ssh");
    assertThat(parse(byAddress.formatted("10.0.4.9.evil.test"))).isInstanceOfSatisfying(Parsed.Rejected.class,
        r -> assertThat(r.identity()).isEqualTo("ocsf no-identity"));
  }

  @Test
  void whatOnlyLooksLikeARefusalIsNone() {
    String denial = connectDenied("work-session", "httpbin.org");
    assertThat(parse(denial.replace("\"action_id\":2", "\"action_id\":1").replace("\"disposition_id\":2",
        "\"disposition_id\":1"))).isEqualTo(Parsed.skipped("allowed"));
    // either says it: Denied alone, Blocked alone
    assertThat(parse(denial.replace("\"disposition_id\":2", "\"disposition_id\":1"))).isInstanceOf(Parsed.Events.class);
    assertThat(parse(denial.replace("\"action_id\":2", "\"action_id\":1"))).isInstanceOf(Parsed.Events.class);
    // the ids decide; a caption counts only where no id is written
    assertThat(parse(denial.replace("\"action_id\":2", "\"action_id\":1").replace("\"disposition_id\":2",
        "\"disposition_id\":17"))).isEqualTo(Parsed.skipped("allowed"));
    assertThat(parse(denial.replace("\"action_id\":2,", "").replace("\"disposition_id\":2,", "")))
        .isInstanceOf(Parsed.Events.class);
    assertThat(parse(denial.replace("\"action_id\":2,", "").replace("\"disposition_id\":2,", "")
        .replace("\"Denied\"", "\"Allowed\"").replace("\"Blocked\"", "\"Allowed\""))).isEqualTo(Parsed.skipped("allowed"));
    // the Proxy Bypass Detected finding is a judgement of the Refuse written beside it; other classes are no refusal
    assertThat(parse(denial.replace("\"class_uid\":4001", "\"class_uid\":2004"))).isEqualTo(Parsed.skipped("finding"));
    assertThat(parse(denial.replace("\"class_uid\":4001", "\"class_uid\":5019"))).isEqualTo(Parsed.skipped("other-class"));
    assertThat(parse(denial.replace("\"class_uid\":4001", "\"class_uid\":4007"))).isEqualTo(Parsed.skipped("other-class"));
    // OpenShell's human form, and JSON that is no OCSF event
    assertThat(parse("2026-12-05T10:40:02.000Z OCSF NET:OPEN [MED] DENIED /usr/bin/curl(64) -> httpbin.org:443"
        + " [policy:- engine:opa] [reason:endpoint httpbin.org:443 is not allowed by any policy]"))
        .isEqualTo(Parsed.skipped("not-json"));
    assertThat(parse(denial.replace("\"class_uid\":4001", "\"class_uid\":\"4001\""))).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse(denial.replace("\"class_uid\":4001", "\"class_uid\":4001.5"))).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse("{\"msg\":\"CONNECT denied\"}")).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse("[" + denial + "]")).isEqualTo(Parsed.skipped("not-json"));
    assertThat(parse(denial.substring(0, denial.length() / 2))).isInstanceOf(Parsed.Rejected.class);
    // the host the agent chose holding a forged refusal is a host, inside an allowed event's string: still allowed
    String forged = "x\",\"action_id\":2,\"disposition_id\":2,\"container\":{\"name\":\"work-session\"},\"y\":\"";
    assertThat(parse(connectDenied("work-session", forged).replace("\"action_id\":2", "\"action_id\":1")
        .replace("\"disposition_id\":2", "\"disposition_id\":1"))).isEqualTo(Parsed.skipped("allowed"));
    // a time that is none: the line's time is unreadable, the refusal still read
    assertThat(event(denial.replace("1796467202000", "\"yesterday\"")).observedAt()).isEqualTo(SourceLine.UNREADABLE_TIME);
    assertThat(event(denial.replace("1796467202000", "99999999999999999999")).observedAt())
        .isEqualTo(SourceLine.UNREADABLE_TIME);
    // no destination: a refusal of an unknown target
    assertThat(event(denial.replace("\"domain\":\"httpbin.org\",", "")).targetUnknown()).isTrue();
  }

  /**
   * Hostile values in every field the agent chose (the host, the URL's path, the method, its command
   * line, what the message and the reason quote of them) and in the sandbox's name, around the real
   * refusals of two agents: every real refusal is an event of its agent, a hostile refusal of a mapped
   * sandbox is still one event with safe, bounded text, and no line stops the parser.
   */
  @Test
  void hostileValuesHideNoRefusalAndEscapeNothing() {
    Random random = new Random(65);
    Hostile h = new Hostile(65);
    int real = 0;
    int hostile = 0;
    for (int i = 0; i < 20_000; i++) {
      int kind = random.nextInt(4);
      if (kind == 0) {
        boolean first = random.nextBoolean();
        ViolationEvent e = event(first ? connectDenied("work-session", "httpbin.org")
            : connectDenied("scratch", "pypi.org").replace("\"ip\":\"10.200.0.2\"", "\"ip\":\"10.0.4." + random.nextInt(256)
                + "\"").replace("\"name\":\"scratch\",", "").replace("\"uid\":\"5c1f9e2a-7b3d-4e8a-9f10-2d6c4b8a1e37\"},",
                "\"uid\":\"-\"},").replace("\"device\":{\"hostname\":\"work-session\",", "\"device\":{"));
        assertThat(e.agentId()).isEqualTo(first ? "openshell-work-session" : "build-farm");
        real++;
      } else if (kind == 1) {
        String line = random.nextBoolean()
            ? connectDenied("work-session", random.nextBoolean() ? h.hostPort() : h.text(), h.text(), h.text(), h.text())
            : forwardDenied(h.text(), h.text(), h.text()).replace("\"cmd_line\":\"/usr/bin/python3.12\"",
                "\"cmd_line\":" + Hostile.json(h.text()));
        Parsed p = parse(line);
        assertThat(p).as("a refusal of a mapped sandbox is one event, whatever the agent chose: %s", p)
            .isInstanceOf(Parsed.Events.class);
        ViolationEvent e = ((Parsed.Events) p).events().get(0);
        assertThat(e.agentId()).isEqualTo("openshell-work-session");
        for (String text : new String[] {e.host(), e.reason(), e.method(), e.subject().identity()}) {
          if (text != null) {
            assertThat(text).doesNotContainPattern("[\\x00-\\x1f\\x7f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]");
            assertThat(text.length()).isLessThanOrEqualTo(1025);
          }
        }
        for (String text : new String[] {e.url(), e.commandText()}) {
          if (text != null) {
            assertThat(text).doesNotContainPattern("[\\x00-\\x1f\\x7f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]");
            assertThat(text.length()).isLessThanOrEqualTo(2049);
          }
        }
        hostile++;
      } else if (kind == 2) {
        // a hostile sandbox name: mapped by a glob, or by none; either way the identity it shows is safe and bounded
        boolean globbed = random.nextBoolean();
        Parsed p = parse(connectDenied((globbed ? "work-" : "") + h.text(), "httpbin.org"));
        String identity;
        if (globbed) {
          assertThat(p).isInstanceOf(Parsed.Events.class);
          ViolationEvent e = ((Parsed.Events) p).events().get(0);
          assertThat(e.agentId()).isIn("openshell-work", "openshell-work-session");
          identity = e.subject().identity();
        } else if (p instanceof Parsed.Rejected r) {
          identity = r.identity();
        } else {
          assertThat(p).isInstanceOfSatisfying(Parsed.Events.class,
              e -> assertThat(e.events().get(0).agentId()).isIn("openshell-work", "openshell-work-session"));
          identity = ((Parsed.Events) p).events().get(0).subject().identity();
        }
        assertThat(identity).doesNotContainPattern("[\\x00-\\x1f\\x7f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]");
        assertThat(identity.length()).isLessThanOrEqualTo(200);
      } else {
        // hostile text anywhere in a line, a JSON object of hostile keys and values, or deeply nested arrays
        int roll = random.nextInt(3);
        String line = roll == 0 ? h.text()
            : roll == 1 ? "{" + Hostile.json(h.text()) + ":" + Hostile.json(h.text()) + ",\"class_uid\":4001}"
            : "{\"class_uid\":4001,\"action_id\":2,\"x\":" + "[".repeat(2_000 + random.nextInt(50_000)) + "}";
        Parsed p = parse(line);
        assertThat(p).isNotInstanceOf(Parsed.Events.class);
      }
    }
    assertThat(real).isGreaterThan(4_000);
    assertThat(hostile).isGreaterThan(4_000);
  }
}
