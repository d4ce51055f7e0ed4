package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * Issue 48, as a user meets it: {@code ./knockwatch up} on a copy of the checkout (its token
 * generated), the README's "Try it" and its discovery block run verbatim, then the README's
 * {@code ./knockwatch allowlist suggest --role ci}: the narrow list (the exact release host,
 * proposed; the metadata address, never), as YAML that parses, and as srt's and Claude Code's
 * settings; roles.yaml untouched. Then {@code overview.test.mjs} in Debian's Chromium on the same
 * {@code up}, with a hostile host and a critical alert among the seeded traffic: the overview is
 * the landing view, its chart and counts agree with the API, a severity opens the filtered alerts,
 * Discover shows the same list; screenshots, light and dark, to {@code target/console/}.
 */
@Tag("integration")
class DiscoverJourneyTest {

  static final String HOSTILE = "<img src=x onerror=alert(1)>\u202egro.live";

  @TempDir Path dir;

  @Test
  void theReadmesDemoGivesTheNarrowListAndTheOverviewShowsIt() throws Exception {
    Path browser = Launched.REPO.resolve("streams-app/src/test/browser");
    assertThat(browser.resolve("node_modules/playwright-core")).as("npm ci in " + browser + " (./knockwatch test does it)")
        .exists();
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    String rolesBefore = Files.readString(checkout.resolve("alert-rules/roles.yaml"));
    int kafka = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of(), "up", "--no-probes", "--api-port",
        String.valueOf(Launched.freePort()), "--kafka-port", String.valueOf(kafka), "--metrics-port",
        String.valueOf(Launched.freePort()))) {
      up.awaitLine("Ctrl-C to stop.", FirstRunTest.FIRST_START);
      ReadmeBlocks readme = ReadmeBlocks.read();
      Map<String, String> env = Map.of();
      for (String block : List.of("mkdir -p var/logs/ci-runner-1", "mkdir -p var/logs/ci-runner-2")) {
        ReadmeBlocks.Ran ran = ReadmeBlocks.run(readme.starting("sh", block), checkout, env);
        assertThat(ran.exit()).as(ran.output()).isZero();
      }
      String api = Files.readString(checkout.resolve("var/api-url")).strip();
      String token = Files.readString(checkout.resolve("var/api-token")).strip();
      assertThat(java.nio.file.attribute.PosixFilePermissions.toString(
          Files.getPosixFilePermissions(checkout.resolve("var/api-token")))).isEqualTo("rw-------");
      awaitDestinations(api, token, 3);

      List<String> counted = List.of(
          "- \"objects.githubusercontent.com:443\"  # proposed: 3 commands, 3 tasks, 1 agent, 3 refusals",
          "- \"evil.example:443\"  # proposed: 1 command, 1 task, 1 agent, 6 refusals",
          "# never proposed: 169.254.169.254:80 (1 command, 1 task, 1 agent, 1 refusal");
      ReadmeBlocks.Block suggest = readme.starting("sh", "./knockwatch allowlist suggest");
      // a destination's later refusals reach the counts a commit or two after its first
      ReadmeBlocks.Ran suggested = ReadmeBlocks.runUntil(suggest, checkout, env, counted, Duration.ofSeconds(60));
      assertThat(suggested.exit()).as(suggested.output()).isZero();
      String out = suggested.output();
      assertThat(out).contains(counted.get(0)).contains(counted.get(1)).contains(counted.get(2))
          .doesNotContain("- \"githubusercontent.com").doesNotContain("*.githubusercontent.com");
      Map<String, Object> yaml = new Yaml().load(out.substring(out.indexOf("roles:")));
      @SuppressWarnings("unchecked")
      List<String> hosts = (List<String>) ((Map<String, Map<String, Object>>) yaml.get("roles")).get("ci").get("hosts");
      assertThat(hosts).startsWith("registry.npmjs.org").contains("api.github.com:443")
          .endsWith("objects.githubusercontent.com:443", "evil.example:443");

      for (String format : List.of("srt", "claude-code")) {
        Launched ran = Launched.start(checkout, dir.resolve(format), Map.of(), "allowlist", "suggest", "--role", "ci",
            "--format", format);
        assertThat(ran.awaitExit(Duration.ofSeconds(60))).as(ran.err()).isZero();
        JsonNode settings = Json.MAPPER.readTree(ran.out());
        JsonNode domains = format.equals("srt") ? settings.path("network").path("allowedDomains")
            : settings.path("sandbox").path("network").path("allowedDomains");
        assertThat(domains.toString()).isEqualTo("[\"objects.githubusercontent.com\",\"evil.example\"]");
        assertThat(ran.err()).contains("never proposed: 169.254.169.254:80");
      }
      Launched mixed = Launched.start(checkout, dir.resolve("mixed"), Map.of(), "allowlist", "suggest", "--format", "srt",
          "--since", "1h");
      assertThat(mixed.awaitExit(Duration.ofSeconds(60))).as(mixed.out() + mixed.err()).isZero(); // one role so far: ci
      assertThat(Files.readString(checkout.resolve("alert-rules/roles.yaml"))).as("knockwatch applies nothing")
          .isEqualTo(rolesBefore);

      // a hostile host reaches the overview's top destinations as ingest would publish it
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          "127.0.0.1:" + kafka), new StringSerializer(), new StringSerializer())) {
        for (int i = 0; i < 8; i++) {
          ViolationEvent hostile = Sanitize.event(ViolationEvent.builder().eventId("discover-hostile-" + i)
              .commandId("DiscoverHostileCommand").agentId("hostile-agent-6").source("srt-violation")
              .kind(Kind.NETWORK).action("network-outbound").host(HOSTILE + "W".repeat(300)).port(443)
              .reason("host is not on the allow list").observedAt(Instant.now().plusMillis(i)).build());
          p.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), hostile.commandId(), Json.write(hostile))).get();
        }
      }
      awaitDestinations(api, token, 4);
      Path shots = Files.createDirectories(Path.of("target/console").toAbsolutePath());
      Process node = new ProcessBuilder("node", browser.resolve("overview.test.mjs").toString(), api, token,
          shots.toString(), "<img src=x onerror=alert(1)>").redirectErrorStream(true).start();
      String output = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(node.waitFor(5, TimeUnit.MINUTES)).isTrue();
      assertThat(node.exitValue()).as(output).isZero();
      assertThat(output).contains("overview ok");
      up.stop(Duration.ofSeconds(90));
    }
  }

  /** Until the allowlist API, over every role, lists at least {@code n} destinations. */
  private static void awaitDestinations(String api, String token, int n) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    HttpRequest get = HttpRequest.newBuilder(URI.create(api + "/api/v1/allowlist?since=1h"))
        .header("Authorization", "Bearer " + token).build();
    Instant deadline = Instant.now().plusSeconds(120);
    while (true) {
      HttpResponse<String> r = http.send(get, HttpResponse.BodyHandlers.ofString());
      int seen = 0;
      if (r.statusCode() == 200) {
        for (JsonNode role : Json.MAPPER.readTree(r.body()).path("roles")) {
          seen += role.path("destinations").asInt();
        }
      }
      if (seen >= n) {
        return;
      }
      assertThat(Instant.now()).as("%d destinations within 120 s: %s", n, r.body()).isBefore(deadline);
      Thread.sleep(300);
    }
  }
}
