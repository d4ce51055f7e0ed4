package dev.knockwatch.ingest.formats.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Json;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.Settled;
import dev.knockwatch.ingest.spi.SourceLine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Golden tests on what curl, socat and raw clients printed under srt 0.0.83 (samples/srt-0.0.83-curl-7.88.1-*). */
class CurlTranscriptParserTest {

  static final Instant NOW = Instant.parse("2026-11-29T19:00:00Z");
  static final String CMD = "FileNamedCommandId0001";
  static final String DIR = "samples/srt-0.0.83-curl-7.88.1-";

  record Result(List<ViolationEvent> events, List<Parsed.Rejected> rejected) {}

  static Result parse(String text, String commandIdInFileName) {
    CurlTranscriptParser parser = new CurlTranscriptParser();
    List<ViolationEvent> events = new ArrayList<>();
    List<Parsed.Rejected> rejected = new ArrayList<>();
    long offset = 0;
    for (String line : text.split("\n", -1)) {
      SourceLine src = new SourceLine("agent-1/x.stderr.log", offset, line, "agent-1", commandIdInFileName, "h", NOW);
      Parsed p = Settled.of(line.isBlank() ? parser.blank(src) : parser.parse(src), NOW); // as IngestAgent hands them
      offset += line.getBytes(StandardCharsets.UTF_8).length + 1;
      if (p instanceof Parsed.Events ev) {
        events.addAll(ev.events());
      } else if (p instanceof Parsed.Rejected r) {
        rejected.add(r);
      }
    }
    return new Result(events, rejected);
  }

  static String fixture(String name) throws IOException {
    try (InputStream in = CurlTranscriptParserTest.class.getResourceAsStream(DIR + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  static String summary(ViolationEvent e) {
    return e.source() + " " + e.action() + " " + e.method() + " " + e.host() + ":" + e.port()
        + " " + e.proxyError() + " " + e.reason() + " " + e.addressClass() + " " + e.observedAt();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "a-http-curl-v.txt | proxy-403 http-request GET example.com:80 blocked-by-allowlist null null 2026-11-29T18:42:13Z",
      "b-https-connect-curl-v.txt | proxy-403 http-connect CONNECT example.com:443 blocked-by-allowlist host is not on the allow list null 2026-11-29T19:00:00Z",
      "e-https-bitly.txt | proxy-403 http-connect CONNECT bit.ly:443 blocked-by-allowlist host is not on the allow list null 2026-11-29T19:00:00Z",
      "r1-resolved-loopback-http.txt | proxy-403 http-request GET loopback-alias.test:8080 blocked-by-sandbox-runtime null null 2026-11-29T18:44:04Z",
      "r2-resolved-loopback-connect.txt | proxy-403 http-connect CONNECT loopback-alias.test:8443 blocked-by-sandbox-runtime resolved to a loopback address LOOPBACK 2026-11-29T19:00:00Z",
      "r6-denied-domain-with-reason-connect.txt | proxy-403 http-connect CONNECT bit.ly:443 blocked-by-allowlist URL shorteners are blocked; use the full destination URL null 2026-11-29T19:00:00Z",
      "c-https-noproxy-direct.txt | proxy-403 dns null example.com:null null could not resolve host: a direct dial outside the proxy null 2026-11-29T19:00:00Z",
      "c2-ip-literal-noproxy-direct.txt | proxy-403 connect null 93.184.215.14:443 null Network is unreachable PUBLIC 2026-11-29T19:00:00Z",
      "s-socks5h-curl-v.txt | proxy-403 socks-tunnel null example.com:443 null SOCKS5 connection not allowed by ruleset null 2026-11-29T19:00:00Z",
      "n1-git-ssh-proxycommand-socat.txt | proxy-403 connect CONNECT github.com:22 null host is not on the allow list null 2026-11-29T18:43:30Z",
      "n2-git-ls-remote-over-ssh.txt | proxy-403 connect CONNECT github.com:22 null host is not on the allow list null 2026-11-29T18:43:39Z",
      "a3-http-raw-403.bin | proxy-403 http-request null null:null blocked-by-allowlist Connection blocked by network allowlist null 2026-11-29T18:42:56Z",
      "b3-connect-raw-403.bin | proxy-403 http-request null null:null blocked-by-allowlist host is not on the allow list null 2026-11-29T19:00:00Z",
      "b4-connect-noauth-407.bin | proxy-403 http-request null null:null null proxy authentication required null 2026-11-29T19:00:00Z"})
  void eachTranscriptYieldsItsOneRefusal(String file, String expected) throws IOException {
    Result r = parse(fixture(file), CMD);
    assertThat(r.rejected()).isEmpty();
    assertThat(r.events()).extracting(CurlTranscriptParserTest::summary).containsExactly(expected);
    assertThat(r.events().get(0).commandId()).as("srt's CLI put the command text, not an id, in the proxy user").isEqualTo(CMD);
    assertThat(r.events().get(0).agentId()).isEqualTo("agent-1");
  }

  @Test
  void theUrlOfARefusedPlainRequestIsKept() throws IOException {
    assertThat(parse(fixture("r5-resolved-metadata-http.txt"), CMD).events()).singleElement().satisfies(e -> {
      assertThat(e.url()).isEqualTo("http://metadata-alias.test/latest/meta-data/");
      assertThat(e.proxyError()).isEqualTo("blocked-by-sandbox-runtime");
    });
  }

  /** The stderr srt annotated with its violations, in a run through its API (proxy user srt.<bzw0…>). */
  private String annotatedStderr() throws IOException {
    try (InputStream in = getClass().getResourceAsStream("/dev/knockwatch/ingest/formats/srt/api/h3-api-violations-refuseOpaqueTunnels.json")) {
      return Json.MAPPER.readTree(in).get("runs").get(0).get("annotateStderrWithSandboxFailures").asText();
    }
  }

  @Test
  void theBridgesTranscriptTakesTheCommandIdFromTheProxyUserAndReadsTheViolationsBlock() throws IOException {
    Result r = parse(annotatedStderr(), "not-the-id");
    assertThat(r.events()).extracting(ViolationEvent::commandId).containsOnly("bzw0ZmdQFlmMYDlhRWO9Lg");
    assertThat(r.events()).extracting(CurlTranscriptParserTest::summary).containsExactly(
        "proxy-403 http-connect CONNECT loopback-alias.test:8443 blocked-by-sandbox-runtime null null 2026-11-29T19:00:00Z",
        "srt-violation http-request CONNECT loopback-alias.test:8443 null this proxy does not tunnel CONNECTs it cannot inspect null 2026-11-29T19:00:00Z");
    assertThat(r.events()).extracting(ViolationEvent::source).containsExactly("proxy-403", "srt-violation");
  }

  /** docs/TRUST.md: the proxy user is printed in the command's own stderr, so it is a claim; the file name decides. */
  @Test
  void aProxyUserOfAnotherCommandInTheStderrIsAConflictAndTheFileNameDecides() throws IOException {
    Result r = parse(annotatedStderr(), "xhfHytmXL-L6RsYw2CrSjA");
    assertThat(r.events()).hasSize(2).allSatisfy(e -> {
      assertThat(e.commandId()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
      assertThat(e.identityConflict()).isEqualTo(new ViolationEvent.IdentityClaim(null, "bzw0ZmdQFlmMYDlhRWO9Lg"));
    });
  }

  @Test
  void noProxyPasswordOrAuthorizationValueSurvivesIntoAnyEvent() throws IOException {
    Pattern secret = Pattern.compile("(?::([0-9a-f]{32})@|Proxy-Authorization: Basic (\\S+))");
    List<String> secrets = new ArrayList<>();
    StringBuilder all = new StringBuilder();
    for (String f : List.of("a-http-curl-v.txt", "b-https-connect-curl-v.txt", "e-https-bitly.txt", "r1-resolved-loopback-http.txt",
        "r2-resolved-loopback-connect.txt", "r5-resolved-metadata-http.txt", "r6-denied-domain-with-reason-connect.txt",
        "r7-denied-domain-with-reason-http.txt", "s-socks5h-curl-v.txt", "n1-git-ssh-proxycommand-socat.txt")) {
      String text = fixture(f);
      Matcher m = secret.matcher(text);
      while (m.find()) {
        secrets.add(m.group(1) != null ? m.group(1) : m.group(2).strip());
      }
      parse(text, CMD).events().forEach(e -> all.append(Json.write(e)).append('\n'));
    }
    assertThat(secrets).hasSizeGreaterThan(10);
    assertThat(all.toString()).isNotEmpty();
    for (String s : secrets) {
      assertThat(all.toString()).doesNotContain(s);
    }
  }

  @Test
  void aTranscriptWithoutAnyUsableIdIsRejectedWithTheRule() throws IOException {
    Result r = parse(fixture("b-https-connect-curl-v.txt"), "b-https-connect");
    assertThat(r.events()).isEmpty();
    assertThat(r.rejected()).singleElement().extracting(Parsed.Rejected::code).isEqualTo(Rejection.SHORT_COMMAND_ID);
  }

  @Test
  void aConfiguredDenyHeaderIsRead() {
    CurlTranscriptParser parser = new CurlTranscriptParser(List.of("x-blocked-by"));
    List<ViolationEvent> events = new ArrayList<>();
    long off = 0;
    for (String line : List.of("> GET http://evil.test/x?token=abc HTTP/1.1", "< HTTP/1.1 403 Forbidden", "< X-Blocked-By: policy-7", "< ")) {
      if (Settled.of(parser.parse(new SourceLine("a/x.curl.log", off++, line, "a", CMD, "h", NOW)), NOW) instanceof Parsed.Events ev) {
        events.addAll(ev.events());
      }
    }
    assertThat(events).singleElement().satisfies(e -> {
      assertThat(e.proxyError()).isEqualTo("policy-7");
      assertThat(e.url()).isEqualTo("http://evil.test/x?token=[REDACTED]");
    });
  }

  @Test
  void theProxyUserIsDecodedFromBothForms() {
    assertThat(CurlTranscriptParser.decodeProxyUser("Ynp3MFptZFFGbG1NWURsaFJXTzlMZw==")).contains("bzw0ZmdQFlmMYDlhRWO9Lg");
    assertThat(CurlTranscriptParser.decodeProxyUser("Ynp3MFptZFFGbG1NWURsaFJXTzlMZw%3D%3D")).contains("bzw0ZmdQFlmMYDlhRWO9Lg");
    assertThat(CurlTranscriptParser.decodeProxyUser("Y3VybCAtc3YgaHR0cHM6Ly9leGFtcGxlLmNvbQ==")).isEmpty();
    assertThat(CurlTranscriptParser.decodeProxyUser("%%%")).isEmpty();
  }

  /**
   * srt's refusals beyond 403 and 407 (request-filter.js respondDenied, http-proxy.js lines 287, 361,
   * 592, 688, 703: 400, 421, 503 and filterRequest's status), each marked by its deny header, and
   * the class and reason a raw response's body carries ("Connection to … blocked: resolved to …").
   */
  @Test
  void everyStatusSrtRefusesWithIsARefusalAndABodyGivesTheReasonAndTheClass() {
    String raw = "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n\r\n"
        + "Connection to loopback-alias.test blocked: resolved to a loopback address\n";
    assertThat(parse(raw, CMD).events()).extracting(CurlTranscriptParserTest::summary).containsExactly(
        "proxy-403 http-request null null:null blocked-by-sandbox-runtime Connection to loopback-alias.test blocked:"
            + " resolved to a loopback address LOOPBACK 2026-11-29T19:00:00Z");
    for (String status : new String[] {"400 Bad Request", "405 Method Not Allowed", "421 Misdirected Request",
        "503 Service Unavailable"}) {
      String transcript = "> CONNECT evil.test:443 HTTP/1.1\r\n< HTTP/1.1 " + status + "\r\n< X-Proxy-Error: too-many-tunnels\r\n"
          + "<\r\n* CONNECT tunnel failed, response " + status.substring(0, 3) + "\n";
      assertThat(parse(transcript, CMD).events()).as(status).extracting(CurlTranscriptParserTest::summary).containsExactly(
          "proxy-403 http-connect CONNECT evil.test:443 too-many-tunnels null null 2026-11-29T19:00:00Z");
    }
    // an upstream's own 404 or 502, without the proxy's mark, is no refusal
    assertThat(parse("> GET http://evil.test/ HTTP/1.1\r\n< HTTP/1.1 502 Bad Gateway\r\n<\r\n", CMD).events()).isEmpty();
  }
}
