package dev.knockwatch.streams.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.streams.api.RawHttp.Answer;
import io.prometheus.client.CollectorRegistry;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.List;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DNS rebinding: the API and the console answer only requests naming a Host they are served on
 * (421 for any other, on every path, before the token), the names they are served on by default,
 * and what {@code alsoAllowedHosts} adds. Real HTTP on 127.0.0.1, every Host written by hand.
 */
class AllowedHostsTest {

  @TempDir Path state;

  /** The API's paths and the console's: each refuses a rebinding Host. */
  static final List<String> PATHS = List.of("/api/v1/commands", "/api/commands/x", "/api/v1/openapi.json", "/-/healthy",
      "/", "/console.js", "/vendor/uPlot.min.css", "/api/v1/plain");

  static double refusedSoFar() {
    Double v = CollectorRegistry.defaultRegistry.getSampleValue(AllowedHosts.METRIC);
    return v == null ? 0 : v;
  }

  @Test
  void aRebindingHostIsRefusedOnEveryPathAndTheServedNamesAreAnswered() throws Exception {
    try (KafkaStreams idle = RawHttp.idleTimeline(state);
         QueryApi api = new QueryApi(idle, RawHttp.TOKEN, "127.0.0.1", 0, null)) {
      api.mount("/api/plain", RawHttp.plainText("mounted"));
      int port = api.port();
      double before = refusedSoFar();
      for (String path : PATHS) {
        Answer a = RawHttp.get(port, path, "evil.example:" + port);
        assertThat(a.status()).as(path).isEqualTo(421);
        assertThat(a.body()).as(path).contains("--api-allowed-hosts").doesNotContain("evil");
        assertThat(a.header("Content-Type")).startsWith("application/json");
        assertThat(a.header("X-Content-Type-Options")).isEqualTo("nosniff");
      }
      assertThat(refusedSoFar() - before).as("each refusal counted").isEqualTo(PATHS.size());
      // refused before the token is read: a request without one is still a 421, not a 401
      assertThat(RawHttp.get(port, "/api/v1/commands", "evil.example:" + port, "Authorization: Bearer wrong").status())
          .isEqualTo(421);

      // the names a loopback bind is served on, with its port; a name's case and trailing dot do not matter
      for (String host : List.of("127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "LocalHost.:" + port,
          "[0:0:0:0:0:0:0:1]:" + port)) {
        assertThat(RawHttp.get(port, "/", host).status()).as(host).isEqualTo(200);
        assertThat(RawHttp.get(port, "/api/v1/plain", host).body()).as(host).isEqualTo("mounted");
        assertThat(RawHttp.get(port, "/api/v1/commands", host).status()).as(host + ": the idle timeline's 503")
            .isEqualTo(503);
      }
      // the right name on another port, a name without a port (80), a name that ends in a served one
      for (String host : List.of("localhost:" + (port == 1 ? 2 : port - 1), "localhost", "127.0.0.1", "localhost.evil.example:"
          + port, "127.0.0.1.evil.example:" + port, "evil.example", "127.0.0.1:" + port + "@evil.example", "")) {
        assertThat(RawHttp.get(port, "/", host).status()).as("Host: " + host).isEqualTo(421);
      }
      // two Host headers: refused, whichever of them is served
      assertThat(RawHttp.get(port, "/", "127.0.0.1:" + port, "Host: evil.example:" + port).status()).isEqualTo(421);
      assertThat(RawHttp.get(port, "/", "evil.example:" + port, "Host: 127.0.0.1:" + port).status()).isEqualTo(421);
      // no Host at all (HTTP/1.0: a shell's health check; a browser always sends one) is answered
      assertThat(RawHttp.request(port, "GET /-/ready HTTP/1.0", null).status()).isEqualTo(503);
      assertThat(RawHttp.request(port, "GET /-/healthy HTTP/1.0", null).status()).isEqualTo(200);
    }
  }

  @Test
  void hostileHostsAreRefusedAndNeverLoggedRaw() throws Exception {
    try (KafkaStreams idle = RawHttp.idleTimeline(state);
         QueryApi api = new QueryApi(idle, RawHttp.TOKEN, "127.0.0.1", 0, null)) {
      int port = api.port();
      String huge = "a".repeat(20_000) + ".example:" + port;
      for (String host : List.of("\u202Eelpmaxe.live:" + port, "evil\u0007.example:" + port, "127.0.0.1\t:" + port,
          huge, "[::1", "[::1]x", "localhost:0", "localhost:99999", "localhost:" + port + ":" + port)) {
        Answer a = RawHttp.get(port, "/api/v1/commands", host);
        assertThat(a.status()).as(AllowedHosts.escaped(host)).isEqualTo(421);
        assertThat(a.body()).doesNotContain("elpmaxe", "evil", "aaaa");
      }
    }
    String logged = AllowedHosts.escaped("\u202Eevil\u0007\n" + "x".repeat(10_000));
    assertThat(logged).doesNotContain("\u202E", "\u0007", "\n").contains("\\u202e", "\\u0007", "\\u000a", "(10007 characters)");
    assertThat(logged.length()).isLessThan(AllowedHosts.MAX_LOGGED_CHARS + 40);
  }

  @Test
  void theOptionWidensWhatIsAnswered() throws Exception {
    try (KafkaStreams idle = RawHttp.idleTimeline(state);
         QueryApi api = new QueryApi(idle, RawHttp.TOKEN, "127.0.0.1", 0, null, null,
             List.of(QueryApi.allowedHost("knockwatch.soc.example"), "Proxy.Example.:8443", "[fd00::1]:9000"))) {
      int port = api.port();
      for (String host : List.of("knockwatch.soc.example", "knockwatch.soc.example:" + port, "KNOCKWATCH.soc.example:443",
          "proxy.example:8443", "[fd00:0::1]:9000", "127.0.0.1:" + port)) {
        assertThat(RawHttp.get(port, "/", host).status()).as(host).isEqualTo(200);
      }
      for (String host : List.of("proxy.example:" + port, "proxy.example", "[fd00::1]:" + port, "evil.example:" + port,
          "soc.example:" + port)) {
        assertThat(RawHttp.get(port, "/", host).status()).as(host).isEqualTo(421);
      }
    }
    try (KafkaStreams idle = RawHttp.idleTimeline(state.resolve("any"));
         QueryApi api = new QueryApi(idle, RawHttp.TOKEN, "127.0.0.1", 0, null, null, List.of("*"))) {
      assertThat(RawHttp.get(api.port(), "/", "evil.example:" + api.port()).status()).as("* answers any Host").isEqualTo(200);
    }
  }

  @Test
  void theAddressOtherInstancesUseIsAnswered() throws Exception {
    try (KafkaStreams idle = RawHttp.idleTimeline(state);
         QueryApi api = new QueryApi(idle, RawHttp.TOKEN, "127.0.0.1", 0, new HostInfo("streams-1.corp", 8123))) {
      assertThat(RawHttp.get(api.port(), "/", "streams-1.corp:8123").status()).isEqualTo(200);
      assertThat(RawHttp.get(api.port(), "/", "streams-2.corp:8123").status()).isEqualTo(421);
    }
  }

  @Test
  void boundToEveryAddressItAnswersTheMachinesNamesAndAddresses() throws Exception {
    try (KafkaStreams idle = RawHttp.idleTimeline(state);
         QueryApi api = new QueryApi(idle, RawHttp.TOKEN, "0.0.0.0", 0, null)) {
      int port = api.port();
      InetAddress local = InetAddress.getLocalHost();
      for (String host : List.of("127.0.0.1:" + port, "localhost:" + port, local.getHostName() + ":" + port,
          AllowedHosts.literal(local) + ":" + port)) {
        assertThat(RawHttp.get(port, "/", host).status()).as(host).isEqualTo(200);
      }
      assertThat(RawHttp.get(port, "/", "evil.example:" + port).status()).isEqualTo(421);
    }
    assertThat(AllowedHosts.servedOn("0.0.0.0")).contains("127.0.0.1", "localhost", "[0:0:0:0:0:0:0:1]");
    assertThat(AllowedHosts.servedOn("127.0.0.1")).containsExactlyInAnyOrder("127.0.0.1", "localhost", "[0:0:0:0:0:0:0:1]");
  }

  @Test
  void anEntryThatIsNotAHostIsRefusedBeforeAnythingListens() {
    for (String entry : List.of("evil example", "https://evil.example", "a/b", "host:99999", "host:", "*.example", "")) {
      assertThatThrownBy(() -> new QueryApi(null, RawHttp.TOKEN, "127.0.0.1", 0, null, null, List.of(entry)))
          .as(entry).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a host name");
    }
    assertThat(AllowedHosts.parse(" Example.COM. ")).isEqualTo("example.com:*");
    assertThat(AllowedHosts.parse("[::1]:8080")).isEqualTo("[0:0:0:0:0:0:0:1]:8080");
    // the normal form reads as itself (the launcher checks the entries, then hands on their normal forms)
    for (String entry : List.of("example.com", "example.com:8443", "[fd00::1]", "[fd00::1]:9000", "*")) {
      String normal = AllowedHosts.parse(entry);
      assertThat(AllowedHosts.parse(normal)).as(entry).isEqualTo(normal);
    }
    assertThatThrownBy(() -> AllowedHosts.parse("example.com:8443:*")).isInstanceOf(IllegalArgumentException.class);
  }
}
