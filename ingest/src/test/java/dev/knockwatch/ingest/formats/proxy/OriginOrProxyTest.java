package dev.knockwatch.ingest.formats.proxy;

import static dev.knockwatch.ingest.formats.proxy.CurlTranscriptParserTest.CMD;
import static dev.knockwatch.ingest.formats.proxy.CurlTranscriptParserTest.fixture;
import static dev.knockwatch.ingest.formats.proxy.CurlTranscriptParserTest.parse;
import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Rejection;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Issue 43: only the sandbox's refusals count. A status after {@code 200 Connection established}
 * is the origin's (curl -v over HTTP/1.1 and HTTP/2, curl --trace, a raw client); a URL path is
 * never a host; a proxy answer with no request line is still a refusal, its target unknown.
 */
class OriginOrProxyTest {

  /** curl -v through srt's proxy to an allowed host whose server answers {@code status}. */
  static String allowedTunnel(String version, int status) {
    return "* Uses proxy env variable https_proxy == 'http://srt.eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ%3D%3D:0123456789abcdef0123456789abcdef@localhost:3128'\n"
        + "*   Trying 127.0.0.1:3128...\n"
        + "* Connected to localhost (127.0.0.1) port 3128 (#0)\n"
        + "* allocate connect buffer\n"
        + "* Establish HTTP proxy tunnel to api.github.com:443\n"
        + "> CONNECT api.github.com:443 HTTP/1.1\r\n"
        + "> Host: api.github.com:443\r\n"
        + "> User-Agent: curl/7.88.1\r\n"
        + ">\r\n"
        + "< HTTP/1.1 200 Connection established\r\n"
        + "<\r\n"
        + "* CONNECT phase completed\n"
        + "* CONNECT tunnel established, response 200\n"
        + "* ALPN: offers h2,http/1.1\n"
        + "* SSL connection using TLSv1.3 / TLS_AES_128_GCM_SHA256\n"
        + "> GET /repos/acme/app/actions/runs?page=0 " + version + "\r\n"
        + "> Host: api.github.com\r\n"
        + "> accept: */*\r\n"
        + ">\r\n"
        + "< " + version + " " + status + (version.equals("HTTP/2") ? "" : " Whatever The Origin Says") + "\r\n"
        + "< content-type: application/json; charset=utf-8\r\n"
        + "< x-proxy-error: blocked-by-allowlist\r\n" // an origin can send any header: inside the tunnel it is the origin's
        + "<\r\n"
        + "{\"message\":\"API rate limit exceeded for 192.0.2.1.\"}\n"
        + "* Connection #0 to host localhost left intact\n";
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"HTTP/2, 401", "HTTP/2, 403", "HTTP/2, 404", "HTTP/2, 429", "HTTP/2, 500", "HTTP/2, 503",
      "HTTP/1.1, 401", "HTTP/1.1, 403", "HTTP/1.1, 404", "HTTP/1.1, 429", "HTTP/1.1, 502"})
  void anOriginsAnswerInsideAnAllowedTunnelIsNoRefusal(String version, int status) {
    CurlTranscriptParserTest.Result r = parse(allowedTunnel(version, status), CMD);
    assertThat(r.events()).isEmpty();
    assertThat(r.rejected()).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(ints = {401, 403, 404, 429, 500})
  void theSameInCurlsTraceForm(int status) {
    String t = "== Info: Establish HTTP proxy tunnel to api.github.com:443\n"
        + dump(true, "CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n")
        + dump(false, "HTTP/1.1 200 Connection established\r\n") + dump(false, "\r\n")
        + "== Info: CONNECT phase completed\n"
        + dump(true, "GET /repos/acme/app HTTP/1.1\r\nHost: api.github.com\r\n\r\n")
        + dump(false, "HTTP/1.1 " + status + " Forbidden\r\n") + dump(false, "X-Proxy-Error: blocked-by-allowlist\r\n")
        + dump(false, "\r\n");
    assertThat(parse(t, CMD).events()).isEmpty();
  }

  @Test
  void aRawClientsTunnelIsTheOriginsToo() {
    String raw = "HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 403 Forbidden\r\nContent-Type: text/html\r\n"
        + "X-Proxy-Error: blocked-by-allowlist\r\n\r\n<html>no</html>\r\n";
    assertThat(parse(raw, CMD).events()).isEmpty();
  }

  @Test
  void aRefusedTunnelAfterAnAllowedOneOnANewConnectionIsTheProxysAgain() {
    String t = allowedTunnel("HTTP/2", 403)
        + "*   Trying 127.0.0.1:3128...\n* Connected to localhost (127.0.0.1) port 3128 (#1)\n"
        + "* Establish HTTP proxy tunnel to pastebin.com:443\n> CONNECT pastebin.com:443 HTTP/1.1\r\n"
        + "> Host: pastebin.com:443\r\n>\r\n< HTTP/1.1 403 host is not on the allow list\r\n"
        + "< X-Proxy-Error: blocked-by-allowlist\r\n<\r\n* CONNECT tunnel failed, response 403\n";
    assertThat(parse(t, CMD).events()).singleElement().satisfies(e -> {
      assertThat(e.host()).isEqualTo("pastebin.com");
      assertThat(e.port()).isEqualTo(443);
      assertThat(e.reason()).isEqualTo("host is not on the allow list");
    });
  }

  @Test
  void theTraceFixturesYieldTheRefusalTheirVerboseTwinsDo() throws IOException {
    assertThat(parse(fixture("b2-https-connect-trace-hex.txt"), CMD).events()).singleElement().satisfies(e -> {
      assertThat(CurlTranscriptParserTest.summary(e)).isEqualTo("proxy-403 http-connect CONNECT example.com:443"
          + " blocked-by-allowlist host is not on the allow list null 2026-11-29T19:00:00Z");
    });
    assertThat(parse(fixture("a2-http-trace-hex.txt"), CMD).events()).singleElement().satisfies(e -> {
      assertThat(e.host()).isEqualTo("example.com");
      assertThat(e.proxyError()).isEqualTo("blocked-by-allowlist");
    });
  }

  @Test
  void aPathIsNeverAHost() {
    String noHost = "> GET /repos/acme/app?page=0 HTTP/1.1\r\n>\r\n< HTTP/1.1 403 Forbidden\r\n"
        + "< X-Proxy-Error: blocked-by-allowlist\r\n<\r\n";
    CurlTranscriptParserTest.Result r = parse(noHost, CMD);
    assertThat(r.events()).isEmpty();
    assertThat(r.rejected()).singleElement().satisfies(x -> {
      assertThat(x.code()).isEqualTo(Rejection.BAD_TARGET);
      assertThat(x.reason()).contains("/repos/acme/app?page=0", "is a path");
    });
    String withHost = "> GET /x HTTP/1.1\r\n> Host: evil.test:8080\r\n>\r\n< HTTP/1.1 403 Forbidden\r\n"
        + "< X-Proxy-Error: blocked-by-allowlist\r\n<\r\n";
    assertThat(parse(withHost, CMD).events()).singleElement().satisfies(e -> {
      assertThat(e.host()).isEqualTo("evil.test");
      assertThat(e.port()).isEqualTo(8080);
    });
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"a3-http-raw-403.bin", "b3-connect-raw-403.bin"})
  void aRawProxyAnswerWithNoRequestLineIsARefusalWhoseTargetIsUnknown(String file) throws IOException {
    ViolationEvent e = parse(fixture(file), CMD).events().get(0);
    assertThat(e.targetUnknown()).isTrue();
    assertThat(e.host()).isNull();
    assertThat(e.proxyError()).isEqualTo("blocked-by-allowlist");
    assertThat(e.commandId()).isEqualTo(CMD);
  }

  @Test
  void aRawBodyNamingTheClassKeepsIt() {
    String raw = "HTTP/1.1 403 Forbidden\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n\r\n"
        + "Connection to loopback-alias.test blocked: resolved to a loopback address";
    assertThat(parse(raw, CMD).events()).singleElement().satisfies(e -> {
      assertThat(e.targetUnknown()).isTrue();
      assertThat(e.addressClass()).hasToString("LOOPBACK");
    });
  }

  @Test
  void curlsOwnErrorIsTheRefusalWhenItPrintedNoAnswerAndARestatementWhenItDid() {
    // curl -sS: no transcript, only its error
    CurlTranscriptParserTest.Result silent = parse("curl: (56) CONNECT tunnel failed, response 403\n"
        + "curl: (6) Could not resolve host: pastebin.com\ncurl: (6) Could not resolve host: pastebin.com\n", CMD);
    assertThat(silent.events()).extracting(ViolationEvent::action, ViolationEvent::host, ViolationEvent::targetUnknown)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("http-connect", null, true),
            org.assertj.core.groups.Tuple.tuple("dns", "pastebin.com", null),
            org.assertj.core.groups.Tuple.tuple("dns", "pastebin.com", null));
    // curl -v: the answer and the '*' line came first; curl's closing words add nothing
    String verbose = "* Establish HTTP proxy tunnel to example.com:443\n> CONNECT example.com:443 HTTP/1.1\r\n"
        + "< HTTP/1.1 403 host is not on the allow list\r\n< X-Proxy-Error: blocked-by-allowlist\r\n<\r\n"
        + "* CONNECT tunnel failed, response 403\ncurl: (56) CONNECT tunnel failed, response 403\n"
        + "* Could not resolve host: pastebin.com\ncurl: (6) Could not resolve host: pastebin.com\n";
    assertThat(parse(verbose, CMD).events()).extracting(ViolationEvent::action, ViolationEvent::host).containsExactly(
        org.assertj.core.groups.Tuple.tuple("http-connect", "example.com"), org.assertj.core.groups.Tuple.tuple("dns", "pastebin.com"));
  }

  /** An answer whose headers never end (the log cut, an interleaved write) cannot swallow the attempts after it. */
  @Test
  void anAnswerCutBeforeItsEmptyLineIsJudgedAndWhatFollowsIsReadAnew() {
    String t = "> CONNECT evil.example:443 HTTP/1.1\r\n< HTTP/1.1 403 host is not on the allow list\r\n"
        + "< X-Proxy-Error: blocked-by-allowlist\r\n"
        + "* Establish HTTP proxy tunnel to pastebin.com:443\n> CONNECT pastebin.com:443 HTTP/1.1\r\n"
        + "< HTTP/1.1 403 host is not on the allow list\r\n< X-Proxy-Error: blocked-by-allowlist\r\n<\r\n";
    assertThat(parse(t, CMD).events()).extracting(ViolationEvent::host).containsExactly("evil.example", "pastebin.com");
  }

  /** What curl --trace prints for {@code text} sent ({@code =>}) or received ({@code <=}): hex rows of 16 bytes. */
  static String dump(boolean sent, String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    StringBuilder s = new StringBuilder(sent ? "=> Send header, " : "<= Recv header, ")
        .append(b.length).append(" bytes (0x").append(Integer.toHexString(b.length)).append(")\n");
    for (int row = 0; row < b.length; row += 16) {
      s.append(String.format("%04x: ", row));
      StringBuilder ascii = new StringBuilder();
      for (int i = row; i < row + 16; i++) {
        if (i < b.length) {
          s.append(String.format("%02x ", b[i] & 0xff));
          ascii.append(b[i] >= 0x20 && b[i] < 0x7f ? (char) b[i] : '.');
        } else {
          s.append("   ");
        }
      }
      s.append(ascii).append('\n');
    }
    return s.toString();
  }

}
