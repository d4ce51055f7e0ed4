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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A responder clicks the link of a page: {@code up} with the shipped example receivers (Slack and
 * PagerDuty, played by a local server), an off-role refusal, and the exact timeline URL each page
 * carries opened in a fresh headless Chromium tab, which must show that command's timeline. The
 * {@code #/commands/ID} form that pages carried before opens it too.
 */
@Tag("integration")
class ConsoleLinkTest {

  static final String COMMAND = "LinkClickedFromAPage001";
  static final String TOKEN = "console-link-test-token-0123456789";
  static final Path BROWSER = Launched.REPO.resolve("streams-app/src/test/browser");
  static final Pattern SLACK_LINK = Pattern.compile("<([^|>]+)\\|Open the timeline>");

  @TempDir Path dir;

  @Test
  void theTimelineLinkOfASlackAndAPagerDutyPageOpensThatCommandsTimeline() throws Exception {
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
    try (HttpRecorder pages = new HttpRecorder();
        Launched up = Launched.start(Launched.REPO, dir.resolve("run"), Map.of(
            "KNOCKWATCH_SLACK_WEBHOOK", pages.url("/services/T0/B0/slack-secret"),
            "KNOCKWATCH_PD_ROUTING_KEY", "pd-routing-key-0123456789abcdef",
            "KNOCKWATCH_PD_URL", pages.url("/v2/enqueue"),
            "KNOCKWATCH_PUBLIC_URL", "http://127.0.0.1:" + api),
            "up", "--no-probes", "--rules", rules.toString(), "--var", dir.resolve("var").toString(),
            "--logs", dir.resolve("logs").toString(), "--api-token-file", token.toString(),
            "--api-port", String.valueOf(api), "--kafka-port", String.valueOf(Launched.freePort()),
            "--metrics-port", String.valueOf(Launched.freePort()))) {
      up.awaitLine("Ctrl-C to stop.", Duration.ofMinutes(3));
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
