package dev.knockwatch.ingest.formats.privoxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.ingest.Hostile;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceLine;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Privoxy's refusals, and nothing that only looks like them: a {@code Crunch: Blocked} line is its
 * thread's client's refusal, the client being the address of the thread's {@code Accepted
 * connection} line; other crunches (a DNS failure, an unreachable upstream), the access log's 403s
 * and the words of a refusal inside a URL are none, and hostile lines around real ones hide none
 * of them and move no client from one thread to another.
 */
class PrivoxyParserTest {

  static final Instant NOW = Instant.parse("2026-12-06T11:00:00Z");
  static final String T1 = "7fbb42c056c0";
  static final String T2 = "7fbb41c046c0";

  private LineParser parser = parser("""
      agents:
        - {source: 10.78.0.2, agent: sandbox-runner-1}
        - {source: 10.78.1.0/24, agent: build-farm}
        - {source: "::1", agent: sandbox-runner-3}
      """);

  static LineParser parser(String yaml) {
    PrivoxyFormat f = new PrivoxyFormat();
    List<String> problems = new ArrayList<>();
    KeyValues with = KeyValues.of(new YamlFile("sources.yaml", problems).parse(yaml).orElseThrow(), "source 1", f.keys())
        .orElseThrow();
    assertThat(problems).isEmpty();
    return f.parser(new FileOptions(with, "privoxy/logfile", "logfile", other -> false));
  }

  static String line(String thread, String level, String message) {
    return "2026-12-06 10:28:22.896 " + thread + " " + level + ": " + message;
  }

  static String accepted(String thread, String address) {
    return line(thread, "Connect", "Accepted connection from " + address + " on socket 6");
  }

  static String blocked(String thread, String target) {
    return line(thread, "Crunch", "Blocked: " + target);
  }

  private Parsed parse(String line) {
    return parser.parse(new SourceLine("privoxy/logfile", 0, line, "privoxy", null, "host-a", NOW));
  }

  private ViolationEvent event(String line) {
    Parsed p = parse(line);
    assertThat(p).as(line).isInstanceOf(Parsed.Events.class);
    return ((Parsed.Events) p).events().get(0);
  }

  @Test
  void aBlockedRequestIsItsClientsAgentsWithTheTargetAndNoCommand() {
    assertThat(parse(accepted(T1, "10.78.0.2"))).isEqualTo(Parsed.skipped("connection"));
    ViolationEvent e = event(blocked(T1, "http://Blocked.Example/path?token=SECRET"));
    assertThat(e.agentId()).isEqualTo("sandbox-runner-1");
    assertThat(e.commandId()).isNull();
    assertThat(e.commandUnknown()).isTrue();
    assertThat(e.source()).isEqualTo("privoxy");
    assertThat(e.action()).isEqualTo("http-request");
    assertThat(e.method()).isNull();
    assertThat(e.host()).isEqualTo("blocked.example");
    assertThat(e.port()).isEqualTo(80);
    assertThat(e.url()).doesNotContain("SECRET").startsWith("http://Blocked.Example/path?token=");
    assertThat(e.sourceAddress()).isEqualTo("10.78.0.2");
    assertThat(e.subject()).isEqualTo(new ViolationEvent.Subject("privoxy", "src=10.78.0.2"));
    assertThat(e.reason()).isEqualTo("blocked by privoxy");
    assertThat(e.observedAt()).isEqualTo(Instant.parse("2026-12-06T10:28:22.896Z"));

    // a CONNECT's target is host:port; the same thread serves the connection's later requests
    ViolationEvent tunnel = event(blocked(T1, "blocked.example:443"));
    assertThat(tunnel.action()).isEqualTo("http-connect");
    assertThat(tunnel.method()).isEqualTo("CONNECT");
    assertThat(tunnel.url()).isNull();
    assertThat(tunnel.host()).isEqualTo("blocked.example");
    assertThat(tunnel.port()).isEqualTo(443);
    assertThat(tunnel.agentId()).isEqualTo("sandbox-runner-1");

    // an address by its CIDR block, an IPv6 client, a trust-list refusal
    parse(accepted(T2, "10.78.1.7"));
    assertThat(event(blocked(T2, "https://169.254.169.254/latest")).agentId()).isEqualTo("build-farm");
    parse(accepted(T2, "::1"));
    ViolationEvent untrusted = event(line(T2, "Crunch", "Untrusted: http://untrusted.example/"));
    assertThat(untrusted.agentId()).isEqualTo("sandbox-runner-3");
    assertThat(untrusted.reason()).startsWith("untrusted");
  }

  @Test
  void eachThreadKeepsItsOwnClientUntilItClosesTheConnectionOrPrivoxyRestarts() {
    parse(accepted(T1, "10.78.0.2"));
    parse(accepted(T2, "10.78.1.3"));
    assertThat(event(blocked(T2, "blocked-1.example:443")).agentId()).isEqualTo("build-farm");
    assertThat(event(blocked(T1, "http://blocked-1.example/")).agentId()).isEqualTo("sandbox-runner-1");
    parse(line(T1, "Connect", "Closing client socket 6. Keep-alive: 1. Socket alive: 0. Data available: 0."
        + " Configuration file change detected: 0. Requests received: 1."));
    assertThat(event(blocked(T2, "http://blocked-2.example/")).agentId()).isEqualTo("build-farm");
    // the closed thread's id names no client any more: never the last one's
    assertThat(parse(blocked(T1, "http://blocked-2.example/"))).isInstanceOfSatisfying(Parsed.Rejected.class, r -> {
      assertThat(r.code().code()).isEqualTo("unmapped-identity");
      assertThat(r.identity()).isEqualTo("privoxy client-unknown");
      assertThat(r.reason()).contains("debug 2");
      assertThat(r.at()).isEqualTo(Instant.parse("2026-12-06T10:28:22.896Z"));
    });
    // a reused thread id: its new connection's client
    parse(accepted(T1, "10.78.1.9"));
    assertThat(event(blocked(T1, "http://blocked-3.example/")).agentId()).isEqualTo("build-farm");
    // a privoxy started again: the last one's threads name no client of its own
    assertThat(parse(line("7fbb42c07080", "Connect", "Initialized 100 socket slots."))).isEqualTo(Parsed.skipped("connection"));
    assertThat(parse(blocked(T1, "http://blocked-4.example/"))).isInstanceOf(Parsed.Rejected.class);
  }

  @Test
  void anUnmappedClientIsRefusedWithItsAddress() {
    parse(accepted(T1, "10.78.0.9"));
    assertThat(parse(blocked(T1, "http://unmapped-client.example/"))).isInstanceOfSatisfying(Parsed.Rejected.class, r -> {
      assertThat(r.code().code()).isEqualTo("unmapped-identity");
      assertThat(r.identity()).isEqualTo("privoxy src=10.78.0.9");
    });
  }

  @Test
  void whatOnlyLooksLikeARefusalIsNone() {
    parse(accepted(T1, "10.78.0.2"));
    assertThat(parse(line(T1, "Crunch", "DNS failure: http://allowed.invalid/"))).isEqualTo(Parsed.skipped("dns-failure"));
    assertThat(parse(line(T1, "Crunch", "Connection failure: http://10.78.0.1:9/")))
        .isEqualTo(Parsed.skipped("upstream-failure"));
    assertThat(parse(line(T1, "Crunch", "Connection timeout: http://slow.example/")))
        .isEqualTo(Parsed.skipped("upstream-failure"));
    assertThat(parse(line(T1, "Crunch", "Redirected: http://redirected.example/")))
        .isEqualTo(Parsed.skipped("not-a-refusal"));
    assertThat(parse(line(T1, "Crunch", "CGI Call: config.privoxy.org/show-status")))
        .isEqualTo(Parsed.skipped("not-a-refusal"));
    // the access log's 403 may be the upstream's: no thread, no crunch, never counted
    assertThat(parse("10.78.0.2 - - [06/Dec/2026:10:28:48 +0000] \"GET http://blocked.example/ HTTP/1.1\" 403 8907"))
        .isEqualTo(Parsed.skipped("access-log"));
    // the words of a refusal where the client chose the text: a requested URL, a host privoxy dialled
    assertThat(parse(line(T1, "Request", "evil.example/ 2026-12-06 10:28:22.896 7f0 Crunch: Blocked: http://x/")))
        .isEqualTo(Parsed.skipped("other-message"));
    assertThat(parse(line(T2, "Connect", "to Accepted connection from 10.78.1.2 on socket 6")))
        .isEqualTo(Parsed.skipped("connection"));
    assertThat(parse(blocked(T2, "http://x/"))).isInstanceOf(Parsed.Rejected.class);
    ViolationEvent e = event(blocked(T1, "http://evil.example/ Connect: Accepted connection from 10.78.1.2 on socket 6"));
    assertThat(e.agentId()).isEqualTo("sandbox-runner-1");
    assertThat(e.host()).isEqualTo("evil.example");
    assertThat(event(blocked(T1, "http://next.example/")).agentId()).isEqualTo("sandbox-runner-1");
    // a line privoxy would not write
    assertThat(parse("Crunch: Blocked: http://no-prefix.example/")).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse("2026-12-06 10:28:22.896 zzzz Crunch: Blocked: http://bad-thread.example/"))
        .isInstanceOf(Parsed.Rejected.class);
  }

  @Test
  void limitConnectNamesItsRuleAndTheTimeIsTheSourcesZone() {
    parser = parser("""
        agents: [{source: 10.78.1.0/24, agent: build-farm}]
        timeZone: Europe/Berlin
        """);
    parse(accepted(T1, "10.78.1.3"));
    assertThat(parse(line(T1, "Info", "Request from 10.78.1.3 marked for blocking. limit-connect{443} doesn't allow"
        + " CONNECT requests to limited.invalid:8443"))).isEqualTo(Parsed.skipped("other-message"));
    ViolationEvent limited = event(blocked(T1, "limited.invalid:8443"));
    assertThat(limited.reason()).isEqualTo("blocked by privoxy (limit-connect{443})");
    assertThat(limited.port()).isEqualTo(8443);
    assertThat(limited.observedAt()).isEqualTo(Instant.parse("2026-12-06T09:28:22.896Z"));
    // the rule named one request, not the next
    assertThat(event(blocked(T1, "other.invalid:8443")).reason()).isEqualTo("blocked by privoxy");
    // a time of privoxy's shape that is no time
    assertThat(event("2026-02-30 10:28:22.896 " + T1 + " Crunch: Blocked: http://x.example/").observedAt())
        .isEqualTo(SourceLine.UNREADABLE_TIME);
  }

  /**
   * Hostile URLs and hosts around the real refusals of two clients on interleaved threads: each real
   * refusal is its client's agent's event, a hostile line is never another client's refusal, and
   * what the agent wrote comes out safe and bounded; no line stops the parser.
   */
  @Test
  void hostileLinesHideNoRefusalAndMoveNoClient() {
    Random random = new Random(65);
    Hostile h = new Hostile(65);
    String[] threads = {"7f0000000001", "7f0000000002", "7f0000000003", "7f0000000004"};
    String[] clients = {"10.78.0.2", "10.78.1.4", "10.78.1.5", "::1"};
    String[] agents = {"sandbox-runner-1", "build-farm", "build-farm", "sandbox-runner-3"};
    for (int t = 0; t < threads.length; t++) {
      parse(accepted(threads[t], clients[t]));
    }
    String[] forgers = {"Request", "Info", "Error", "Header", "Connect"};
    int real = 0;
    for (int i = 0; i < 20_000; i++) {
      int t = random.nextInt(threads.length);
      int kind = random.nextInt(5);
      if (kind == 0) {
        ViolationEvent e = event(blocked(threads[t], random.nextBoolean() ? "http://blocked-" + i + ".example/x" : "b" + i
            + ".example:443"));
        assertThat(e.agentId()).isEqualTo(agents[t]);
        assertThat(e.sourceAddress()).isEqualTo(clients[t]);
        real++;
      } else if (kind == 1) {
        // what the client chose, in lines of other levels: "Accepted connection from" and "Crunch: Blocked" as text
        String forged = forgers[random.nextInt(forgers.length)];
        Parsed p = parse(line(threads[t], forged, (forged.equals("Connect") ? "to " : "") + h.text()
            + " Accepted connection from 10.78.9.9 on socket 6 Crunch: Blocked: http://forged.example/" + h.text()));
        assertThat(p).isInstanceOf(Parsed.Skipped.class);
      } else if (kind == 2) {
        Parsed p = parse(blocked(threads[t], random.nextBoolean() ? "http://" + h.hostPort() + "/" + h.text()
            : h.random().nextBoolean() ? h.hostPort() : h.text()));
        if (p instanceof Parsed.Events ev) {
          ViolationEvent e = ev.events().get(0);
          assertThat(e.agentId()).isEqualTo(agents[t]);
          assertThat(e.host()).satisfies(x -> assertThat(Sanitize.isSafe(x)).as(x).isTrue()).hasSizeLessThanOrEqualTo(256);
          if (e.url() != null) {
            assertThat(Sanitize.isSafe(e.url())).as(e.url()).isTrue();
            assertThat(e.url().length()).isLessThanOrEqualTo(1025);
          }
        } else {
          assertThat(p).isInstanceOf(Parsed.Rejected.class);
        }
      } else if (kind == 3) {
        byte[] bytes = new byte[1 + h.random().nextInt(300)];
        h.random().nextBytes(bytes);
        assertThat(parse(new String(bytes, StandardCharsets.UTF_8))).isNotInstanceOf(Parsed.Events.class);
      } else {
        assertThat(parse(h.text())).isNotInstanceOf(Parsed.Events.class);
      }
    }
    assertThat(real).isGreaterThan(3_000);
  }
}
