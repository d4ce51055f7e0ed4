package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.testkit.HttpRecorder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One off-role refusal through everything {@code up} offers. {@code KNOCKWATCH_EXPORT=ocsf ./knockwatch up}
 * with the shipped example receivers (Slack and PagerDuty, played by a local server): a responder
 * clicks the link of each page, and the exact timeline URL it carries, opened in a fresh headless
 * Chromium context, must show that command's timeline (the {@code #/commands/ID} form that pages
 * carried before opens it too); the export stage runs beside the pipeline, and the refusal reaches
 * {@code knockwatch.export.ocsf} as a Network Activity record and its page as a Detection Finding,
 * keyed by the command.
 */
@Tag("integration")
class RefusalJourneyTest {

  static final String COMMAND = "LinkClickedFromAPage001";
  static final String TOKEN = "console-link-test-token-0123456789";
  static final Path BROWSER = Launched.REPO.resolve("streams-app/src/test/browser");
  static final Pattern SLACK_LINK = Pattern.compile("<([^|>]+)\\|Open the timeline>");

  @TempDir Path dir;

  @Test
  void aRefusalsPagesLinkItsTimelineAndTheExportCarriesItAndItsFinding() throws Exception {
    assertThat(BROWSER.resolve("node_modules/playwright-core")).as("npm ci in " + BROWSER + " (./knockwatch test does it)")
        .exists();
    Path rules = Files.createDirectories(dir.resolve("rules"));
    try (Stream<Path> shipped = Files.list(Launched.REPO.resolve("alert-rules"))) {
      for (Path f : shipped.toList()) {
        Files.copy(f, rules.resolve(f.getFileName().toString()));
      }
    }
    // what the README tells an operator to do: copy the example, set the variables
    Files.copy(rules.resolve("receivers.example.yaml"), rules.resolve("receivers.yaml"), StandardCopyOption.REPLACE_EXISTING);
    Path token = Files.writeString(dir.resolve("token"), TOKEN);
    int api = Launched.freePort();
    int kafka = Launched.freePort();
    try (HttpRecorder pages = new HttpRecorder();
        Launched up = Launched.start(Launched.REPO, dir.resolve("run"), Map.of(
            "KNOCKWATCH_SLACK_WEBHOOK", pages.url("/services/T0/B0/slack-secret"),
            "KNOCKWATCH_PD_ROUTING_KEY", "pd-routing-key-0123456789abcdef",
            "KNOCKWATCH_PD_URL", pages.url("/v2/enqueue"),
            "KNOCKWATCH_PUBLIC_URL", "http://127.0.0.1:" + api, "KNOCKWATCH_EXPORT", "ocsf"),
            "up", "--no-probes", "--rules", rules.toString(), "--var", dir.resolve("var").toString(),
            "--logs", dir.resolve("logs").toString(), "--api-token-file", token.toString(),
            "--api-port", String.valueOf(api), "--kafka-port", String.valueOf(kafka),
            "--metrics-port", String.valueOf(Launched.freePort()))) {
      assertThat(up.awaitLine("  export   ", FirstRunTest.FIRST_START))
          .isEqualTo("  export   refusals and alerts as ocsf to knockwatch.export.ocsf");
      up.awaitLine("Ctrl-C to stop.", Duration.ofMinutes(2));
      Path agent = Files.createDirectories(dir.resolve("logs/ci-runner-1"));
      Files.writeString(agent.resolve(COMMAND + ".violations.jsonl"),
          "{\"line\":\"deny network-outbound evil.example:443 (host is not on the allow list)\",\"commandId\":\"" + COMMAND
              + "\",\"timestamp\":\"" + Instant.now() + "\"}\n");

      JsonNode slack = Json.MAPPER.readTree(pages.await(r -> r.path().startsWith("/services/"), 1, Duration.ofMinutes(1))
          .get(0).body());
      Matcher m = SLACK_LINK.matcher(slack.toString());
      assertThat(m.find()).as("the Slack message links the timeline: " + slack).isTrue();
      String fromSlack = m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
      JsonNode pagerDuty = Json.MAPPER.readTree(pages.await(r -> r.path().equals("/v2/enqueue"), 1, Duration.ofMinutes(1))
          .get(0).body());
      String fromPagerDuty = pagerDuty.path("links").get(0).path("href").asText();

      assertThat(fromSlack).isEqualTo(fromPagerDuty).startsWith("http://127.0.0.1:" + api + "/");
      awaitTimeline(api);
      opens(Map.of("slack", fromSlack, "pagerduty", fromPagerDuty,
          "old-form", "http://127.0.0.1:" + api + "/#/commands/" + COMMAND));
      exported(kafka);
      up.stop(Duration.ofSeconds(90));
    }
  }

  /** The page may reach the receivers before the timeline has the refusal: wait until the API has it. */
  private static void awaitTimeline(int api) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api + "/api/v1/commands/" + COMMAND))
        .header("Authorization", "Bearer " + TOKEN).build();
    Instant deadline = Instant.now().plusSeconds(60);
    while (http.send(get, HttpResponse.BodyHandlers.discarding()).statusCode() != 200) {
      assertThat(Instant.now()).as("the timeline has " + COMMAND + " within 60 s").isBefore(deadline);
      Thread.sleep(200);
    }
  }

  /** The refusal and its page on the export topic, as OCSF, keyed by the command. */
  private static void exported(int kafka) throws Exception {
    List<JsonNode> exported = new ArrayList<>();
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + kafka, ConsumerConfig.GROUP_ID_CONFIG, "journey-test",
        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(), new StringDeserializer())) {
      c.subscribe(List.of("knockwatch.export.ocsf"));
      long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
      while (System.nanoTime() < deadline && exported.stream().noneMatch(r -> r.path("class_uid").asInt() == 2004)) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
          assertThat(r.key()).isEqualTo(COMMAND);
          exported.add(Json.MAPPER.readTree(r.value()));
        }
      }
    }
    assertThat(exported).anySatisfy(r -> {
      assertThat(r.path("class_uid").asInt()).isEqualTo(4001);
      assertThat(r.path("dst_endpoint").path("hostname").asText()).isEqualTo("evil.example");
      assertThat(r.path("disposition").asText()).isEqualTo("Blocked");
    });
    assertThat(exported).anySatisfy(r -> {
      assertThat(r.path("class_uid").asInt()).isEqualTo(2004);
      assertThat(r.path("finding_info").path("title").asText()).contains("off-role-host");
    });
  }

  /** Chromium opens each link (name to URL) in a fresh context of its own, signs in, and sees {@link #COMMAND}'s timeline. */
  private void opens(Map<String, String> links) throws Exception {
    List<String> command = new ArrayList<>(List.of("node", BROWSER.resolve("open-link.test.mjs").toString(), TOKEN, COMMAND));
    links.forEach((name, url) -> {
      command.add(url);
      command.add(Path.of("target/console-link-" + name + ".png").toAbsolutePath().toString());
    });
    Process node = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(node.waitFor(120, TimeUnit.SECONDS)).isTrue();
    assertThat(node.exitValue()).as(output).isZero();
    for (String url : links.values()) {
      assertThat(output).contains("link ok: " + url + " shows " + COMMAND);
    }
    assertThat(output.lines().filter(l -> l.startsWith("link ok: "))).as(output).hasSize(links.size());
  }
}
