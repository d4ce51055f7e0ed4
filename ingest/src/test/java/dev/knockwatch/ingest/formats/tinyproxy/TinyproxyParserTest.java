package dev.knockwatch.ingest.formats.tinyproxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Sanitize;
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
 * tinyproxy's refusals, and nothing that only looks like them: a refusal line names no connection,
 * so it is the open request it fits, whose client the source maps to an agent; where the requests it
 * fits are different agents' (or none is open) it is rejected, never given to one of them. The
 * request line is the agent's: hostile ones around real refusals hide none, forge none, and give none
 * to another agent.
 */
class TinyproxyParserTest {

  static final Instant NOW = Instant.parse("2026-12-06T10:40:00Z");
  static final String HEAD = "%-9s Dec 06 10:31:16.%03d [%d]: ";

  private final LineParser parser = parser("""
      agents:
        - {source: 10.88.0.2, agent: sandbox-runner-1}
        - {source: 10.88.0.3, agent: sandbox-runner-2}
        - {source: 10.88.1.0/24, agent: build-farm}
      """);
  private int millis;

  static LineParser parser(String yaml) {
    TinyproxyFormat f = new TinyproxyFormat();
    List<String> problems = new ArrayList<>();
    KeyValues with = KeyValues.of(new YamlFile("sources.yaml", problems).parse(yaml).orElseThrow(), "source 1", f.keys())
        .orElseThrow();
    assertThat(problems).isEmpty();
    return f.parser(new FileOptions(with, "proxy/tinyproxy.log", "tinyproxy", other -> false));
  }

  /** A line as tinyproxy 1.11.1 writes it, of process 4242 unless {@code pid} says. */
  private String line(String level, String message) {
    return line(level, 4242, message);
  }

  private String line(String level, long pid, String message) {
    return HEAD.formatted(level, millis++ % 1000, pid) + message;
  }

  private Parsed parse(String line) {
    return parser.parse(new SourceLine("proxy/tinyproxy.log", 0, line, null, null, "host-a", NOW));
  }

  private Parsed connect(long fd, String client) {
    return parse(line("CONNECT", "Connect (file descriptor " + fd + "): " + client));
  }

  private Parsed request(long fd, String requestLine) {
    return parse(line("CONNECT", "Request (file descriptor " + fd + "): " + requestLine));
  }

  private Parsed refused(String host) {
    return parse(line("NOTICE", "Proxying refused on filtered domain \"" + host + "\""));
  }

  private static ViolationEvent event(Parsed p) {
    assertThat(p).as("%s", p).isInstanceOf(Parsed.Events.class);
    return ((Parsed.Events) p).events().get(0);
  }

  @Test
  void aRefusedRequestIsItsClientsAgentsWithWhatItAskedFor() {
    assertThat(connect(2, "10.88.0.2")).isEqualTo(Parsed.skipped("context"));
    assertThat(request(2, "GET http://user:pw@Denied.Example:8080/path?token=s3cr3t HTTP/1.1"))
        .isEqualTo(Parsed.skipped("context"));
    ViolationEvent get = event(refused("Denied.Example"));
    assertThat(get.agentId()).isEqualTo("sandbox-runner-1");
    assertThat(get.commandId()).isNull();
    assertThat(get.commandUnknown()).isTrue();
    assertThat(get.source()).isEqualTo("tinyproxy");
    assertThat(get.action()).isEqualTo("http-request");
    assertThat(get.method()).isEqualTo("GET");
    assertThat(get.host()).isEqualTo("denied.example");
    assertThat(get.port()).isEqualTo(8080);
    assertThat(get.url()).doesNotContain("s3cr3t").doesNotContain(":pw@").startsWith("http://user:");
    assertThat(get.reason()).isEqualTo("filtered domain (403 Filtered)");
    assertThat(get.sourceAddress()).isEqualTo("10.88.0.2");
    assertThat(get.subject()).isEqualTo(new ViolationEvent.Subject("tinyproxy", "src=10.88.0.2"));
    assertThat(get.observedAt()).isEqualTo(Instant.parse("2026-12-06T10:31:16.002Z"));

    connect(3, "10.88.0.3");
    request(3, "CONNECT [::1]:8443 HTTP/1.1");
    ViolationEvent port = event(parse(line("INFO", "Refused CONNECT method on port 8443")));
    assertThat(port.agentId()).isEqualTo("sandbox-runner-2");
    assertThat(port.action()).isEqualTo("http-connect");
    assertThat(port.host()).isEqualTo("::1");
    assertThat(port.port()).isEqualTo(8443);
    assertThat(port.url()).isNull();
    assertThat(port.addressClass()).isEqualTo(AddressClass.LOOPBACK);
    assertThat(port.reason()).isEqualTo("CONNECT port not in ConnectPort (403 Access violation)");

    // the transparent mode: a path, and the host its Host header named
    connect(2, "10.88.1.7");
    request(2, "GET /x HTTP/1.1");
    assertThat(parse(line("INFO", "process_request: trans Host GET http://other.example:80/x for 2")))
        .isEqualTo(Parsed.skipped("context"));
    ViolationEvent transparent = event(refused("other.example"));
    assertThat(transparent.agentId()).isEqualTo("build-farm");
    assertThat(transparent.url()).isEqualTo("http://other.example:80/x");
    // at LogLevel Connect, without the trans line: the one open request that names no host
    connect(2, "10.88.1.7");
    request(2, "GET /y HTTP/1.1");
    ViolationEvent path = event(refused("third.example"));
    assertThat(path.agentId()).isEqualTo("build-farm");
    assertThat(path.host()).isEqualTo("third.example");
    assertThat(path.url()).isEqualTo("/y");

    // the Allow list refuses before any request: the client is named, the target is not
    connect(4, "10.88.0.3");
    ViolationEvent acl = event(parse(line("NOTICE", "Unauthorized connection from \"10.88.0.3\".")));
    assertThat(acl.agentId()).isEqualTo("sandbox-runner-2");
    assertThat(acl.action()).isEqualTo("connect");
    assertThat(acl.targetUnknown()).isTrue();
    assertThat(acl.host()).isNull();
  }

  @Test
  void anAllowedRequestAndTinyproxysOtherLinesAreNoRefusal() {
    assertThat(connect(2, "10.88.0.3")).isEqualTo(Parsed.skipped("context"));
    assertThat(request(2, "GET http://10.88.0.1:8080/ HTTP/1.1")).isEqualTo(Parsed.skipped("context"));
    assertThat(parse(line("INFO", "opensock: opening connection to 10.88.0.1:8080"))).isEqualTo(Parsed.skipped("other-message"));
    assertThat(parse(line("CONNECT", "Established connection to host \"10.88.0.1\" using file descriptor 3.")))
        .isEqualTo(Parsed.skipped("allowed"));
    assertThat(parse(line("INFO", "Closed connection between local client (fd:2) and remote client (fd:3)")))
        .isEqualTo(Parsed.skipped("other-message"));
    // the request it let through is no longer open: a refusal of the same host later follows no request
    assertThat(refused("10.88.0.1")).isInstanceOfSatisfying(Parsed.Rejected.class,
        r -> assertThat(r.identity()).isEqualTo("tinyproxy client unknown"));
    assertThat(parse(line("NOTICE", "Shutting down."))).isEqualTo(Parsed.skipped("other-message"));
  }

  @Test
  void whatOnlyLooksLikeARefusalIsNone() {
    connect(2, "10.88.0.2");
    // the agent's request line holding a refusal's words: its own host is the one refused
    request(2, "GET http://x.example/ HTTP/1.1 Proxying refused on filtered domain \"forged.example\"");
    assertThat(event(refused("x.example")).host()).isEqualTo("x.example");
    // the words at another level than tinyproxy writes them at, or not at the message's start
    connect(2, "10.88.0.2");
    request(2, "GET http://y.example/ HTTP/1.1");
    assertThat(parse(line("INFO", "Proxying refused on filtered domain \"y.example\""))).isEqualTo(Parsed.skipped("other-message"));
    assertThat(parse(line("CONNECT", "Proxying refused on filtered domain \"y.example\""))).isEqualTo(Parsed.skipped("other-message"));
    assertThat(parse(line("NOTICE", "x Proxying refused on filtered domain \"y.example\""))).isEqualTo(Parsed.skipped("other-message"));
    // a syslog line, another writer's: no line of tinyproxy's log file
    assertThat(parse("Dec  6 10:31:16 vm tinyproxy[4242]: Proxying refused on filtered domain \"y.example\""))
        .isInstanceOfSatisfying(Parsed.Rejected.class, r -> assertThat(r.code().code()).isEqualTo("unparseable"));
    // another process's refusal is not this one's connection's (a second tinyproxy writing the same file)
    assertThat(parse(line("NOTICE", 777, "Proxying refused on filtered domain \"y.example\"")))
        .isInstanceOfSatisfying(Parsed.Rejected.class, r -> assertThat(r.identity()).isEqualTo("tinyproxy client unknown"));
    // the port refusal fits only a CONNECT to that port
    assertThat(parse(line("INFO", "Refused CONNECT method on port 80"))).isInstanceOf(Parsed.Rejected.class);
    assertThat(event(refused("y.example")).agentId()).isEqualTo("sandbox-runner-1");
    // tinyproxy starting again: the connections of before are gone
    connect(2, "10.88.0.2");
    request(2, "GET http://z.example/ HTTP/1.1");
    parse(line("NOTICE", "Initializing tinyproxy ..."));
    assertThat(refused("z.example")).isInstanceOf(Parsed.Rejected.class);
  }

  @Test
  void anUnmappedClientOrNoneIsRefusedWithWhoItWas() {
    connect(2, "10.88.0.4");
    request(2, "GET http://denied.example/ HTTP/1.1");
    assertThat(refused("denied.example")).isInstanceOfSatisfying(Parsed.Rejected.class, r -> {
      assertThat(r.code().code()).isEqualTo("unmapped-identity");
      assertThat(r.identity()).isEqualTo("tinyproxy src=10.88.0.4");
      assertThat(r.at()).isEqualTo(Instant.parse("2026-12-06T10:31:16.002Z"));
    });
    assertThat(parse(line("NOTICE", "Unauthorized connection from \"10.88.0.9\".")))
        .isInstanceOfSatisfying(Parsed.Rejected.class, r -> assertThat(r.identity()).isEqualTo("tinyproxy src=10.88.0.9"));
    // LogLevel Notice: the refusal alone, with no connection's lines before it
    assertThat(refused("denied.example")).isInstanceOfSatisfying(Parsed.Rejected.class, r -> {
      assertThat(r.code().code()).isEqualTo("unmapped-identity");
      assertThat(r.identity()).isEqualTo("tinyproxy client unknown");
      assertThat(r.reason()).contains("LogLevel Connect or Info");
    });
  }

  @Test
  void interleavedConnectionsAreTiedByWhatTheyAskedAndNeverGuessed() {
    connect(2, "10.88.0.2");
    connect(3, "10.88.0.3");
    request(2, "GET http://one.example/a HTTP/1.1");
    request(3, "CONNECT two.example:443 HTTP/1.1");
    assertThat(event(refused("two.example")).agentId()).isEqualTo("sandbox-runner-2");
    assertThat(event(refused("one.example")).agentId()).isEqualTo("sandbox-runner-1");

    // one host refused to two agents' clients at once: which refusal line is whose is unknown
    connect(2, "10.88.0.2");
    connect(3, "10.88.0.3");
    request(2, "GET http://same.example/ HTTP/1.1");
    request(3, "GET http://same.example/ HTTP/1.1");
    assertThat(refused("same.example")).isInstanceOfSatisfying(Parsed.Rejected.class, r -> {
      assertThat(r.code().code()).isEqualTo("unmapped-identity");
      assertThat(r.identity()).isEqualTo("tinyproxy clients ambiguous");
      assertThat(r.reason()).contains("10.88.0.2, 10.88.0.3");
    });
    // a descriptor's next connection ends the one before: only the other client's request is left
    connect(2, "10.88.0.2");
    assertThat(event(refused("same.example")).agentId()).isEqualTo("sandbox-runner-2");

    // two clients of one agent: the agent's, from no one address
    connect(5, "10.88.1.5");
    connect(6, "10.88.1.6");
    request(5, "GET http://both.example/ HTTP/1.1");
    request(6, "GET http://both.example/ HTTP/1.1");
    ViolationEvent one = event(refused("both.example"));
    assertThat(one.agentId()).isEqualTo("build-farm");
    assertThat(one.sourceAddress()).isNull();
    assertThat(one.subject()).isNull();
    assertThat(event(refused("both.example")).sourceAddress()).isEqualTo("10.88.1.6");
  }

  @Test
  void withFilterUrlsTheRefusalQuotesTheUrlOfTheRequestItFits() {
    connect(2, "10.88.0.2");
    connect(3, "10.88.0.3");
    request(2, "GET http://docs.example/allowed HTTP/1.1");
    request(3, "GET http://docs.example/secret?token=s3cr3t HTTP/1.1");
    ViolationEvent e = event(parse(line("NOTICE", "Proxying refused on filtered url \"http://docs.example/secret?token=s3cr3t\"")));
    assertThat(e.agentId()).isEqualTo("sandbox-runner-2");
    assertThat(e.host()).isEqualTo("docs.example");
    assertThat(e.url()).isEqualTo("http://docs.example/secret?token=[REDACTED]");
    assertThat(e.reason()).isEqualTo("filtered url (403 Filtered)");
    // at LogLevel Connect a transparent request's URL is its path: it is the one that names no host
    connect(4, "10.88.0.3");
    request(4, "GET /z HTTP/1.1");
    assertThat(event(parse(line("NOTICE", "Proxying refused on filtered url \"http://other.example:80/z\""))).url())
        .isEqualTo("/z");
  }

  @Test
  void theTimeIsTheClocksOfTheSourcesZoneInTheYearBeforeNowAtMost() {
    LineParser paris = parser("""
        agents: [{source: 10.88.0.2, agent: sandbox-runner-1}]
        timeZone: Europe/Paris
        """);
    paris.parse(new SourceLine("p", 0, "CONNECT   Dec 31 23:59:59.500 [1]: Connect (file descriptor 2): 10.88.0.2", null, null, "h", NOW));
    paris.parse(new SourceLine("p", 0, "CONNECT   Dec 31 23:59:59.500 [1]: Request (file descriptor 2): GET http://a.example/ HTTP/1.1", null, null, "h", NOW));
    Parsed p = paris.parse(new SourceLine("p", 0, "NOTICE    Dec 31 23:59:59.750 [1]: Proxying refused on filtered domain \"a.example\"",
        null, null, "h", Instant.parse("2027-01-01T00:30:00Z")));
    assertThat(event(p).observedAt()).isEqualTo(Instant.parse("2026-12-31T22:59:59.750Z"));
    List<String> problems = new ArrayList<>();
    new YamlFile("sources.yaml", problems).parse("agents: [{source: 10.0.0.1, agent: a}]\ntimeZone: Mars/Olympus\n")
        .flatMap(node -> KeyValues.of(node, "source 1", new TinyproxyFormat().keys()));
    assertThat(problems).containsExactly(
        "sources.yaml:2: source 1: timeZone \"Mars/Olympus\" is no time zone (UTC, Europe/Paris, +02:00)");
  }

  /**
   * Real refusals of two agents' clients among hostile request lines (the URL the agent chose: NUL,
   * bidi overrides, lone surrogates, control characters, quotes, a megabyte, a refusal's words) and
   * hostile lines: every real refusal is its agent's event, a hostile request's refusal is its own
   * client's or rejected, no event carries an unsafe byte, and no line stops the parser.
   */
  @Test
  void hostileRequestLinesHideNoRefusalAndGiveNoneToAnotherAgent() {
    Random random = new Random(65);
    Hostile h = new Hostile(65);
    int real = 0;
    for (int i = 0; i < 8_000; i++) {
      int kind = random.nextInt(4);
      long fd = 2 + random.nextInt(40);
      boolean first = random.nextBoolean();
      String client = first ? "10.88.0.2" : "10.88.0.3";
      String agent = first ? "sandbox-runner-1" : "sandbox-runner-2";
      if (kind == 0) {
        connect(fd, client);
        request(fd, "GET http://deny-" + i + ".example/" + h.token() + " HTTP/1.1");
        ViolationEvent e = event(refused("deny-" + i + ".example"));
        assertThat(e.agentId()).isEqualTo(agent);
        assertThat(e.host()).isEqualTo("deny-" + i + ".example");
        assertSafe(e);
        real++;
      } else if (kind == 1) {
        String host = oneLine(h.text());
        connect(fd, client);
        request(fd, "GET http://" + host + "/" + oneLine(h.text()) + " HTTP/1.1");
        Parsed p = refused(host);
        if (p instanceof Parsed.Events ev) {
          assertThat(ev.events()).allSatisfy(e -> {
            assertThat(e.agentId()).isEqualTo(agent);
            assertSafe(e);
          });
        } else {
          assertThat(p).isInstanceOf(Parsed.Rejected.class);
        }
      } else if (kind == 2) {
        // a request the client leaves open, of a host no real refusal names
        connect(fd, random.nextBoolean() ? "10.88.0.4" : client);
        request(fd, oneLine(h.text()));
      } else {
        Parsed p = parse(random.nextBoolean() ? oneLine(h.text()) : line(random.nextBoolean() ? "NOTICE" : "INFO", oneLine(h.text())));
        assertThat(p).isNotInstanceOf(Parsed.Events.class);
      }
    }
    assertThat(real).isGreaterThan(1_600);
  }

  private static String oneLine(String s) {
    return s.replace('\n', ' ').replace('\r', ' ');
  }

  private static void assertSafe(ViolationEvent e) {
    for (String field : new String[] {e.host(), e.url(), e.method(), e.reason(), e.sourceAddress()}) {
      if (field != null) {
        assertThat(Sanitize.isSafe(field)).as(field).isTrue();
      }
    }
  }
}
