package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.testkit.HttpRecorder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25: no agent can bury another's page. {@code ./knockwatch up} with the shipped rules and a
 * receivers.yaml whose Slack and PagerDuty are a local server; one command refused on 20,000
 * distinct hosts, then one off-role refusal of another command. That command's page reaches Slack
 * and PagerDuty once each; the flood is one off-role page, not 20,000; every refusal is counted.
 * The page's delay and how much of the flood was counted by then are printed, not asserted.
 */
@Tag("integration")
class BuriedPageTest {

  static final int HOSTS = 20_000;
  static final String FLOOD = "BuriedPageFloodFlood01";
  static final String VICTIM = "BuriedPageVictimVicti1";

  @TempDir Path dir;

  @Test
  void twentyThousandHostsOfOneCommandDoNotBuryAnotherCommandsPage() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    int kafka = Launched.freePort();
    int metrics = Launched.freePort();
    try (HttpRecorder soc = new HttpRecorder()) {
      Files.writeString(checkout.resolve("alert-rules/receivers.yaml"), """
          receivers:
            - {name: soc-slack, type: slack, webhookUrl: "%s"}
            - {name: oncall, type: pagerduty, routingKey: "R0UT1NG", url: "%s"}
          routes:
            - match: {severity: [page, critical]}
              receivers: [oncall, soc-slack]
            - match: {severity: [warning, info]}
              receivers: [soc-slack]
          """.formatted(soc.url("/services/T/B/hook"), soc.url("/v2/enqueue")));
      try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of(), "up", "--no-probes",
          "--kafka-port", String.valueOf(kafka), "--metrics-port", String.valueOf(metrics),
          "--api-port", String.valueOf(Launched.freePort()))) {
        up.awaitLine("Ctrl-C to stop.", FirstRunTest.FIRST_START);
        Path logs = checkout.resolve("var/logs/dev-bot-scan");
        Files.createDirectories(logs);
        Instant base = Instant.now().minusSeconds(60);
        StringBuilder text = new StringBuilder(HOSTS * 240);
        for (int i = 0; i < HOSTS; i++) {
          text.append(FloodFairnessTest.record(FLOOD, "h" + i + ".scan.example:443", base.plusMillis(i))).append('\n');
        }
        Files.writeString(logs.resolve(FLOOD + ".violations.jsonl"), text, StandardCharsets.UTF_8);
        Thread.sleep(500); // the flood is being read
        long t0 = System.nanoTime();
        Files.writeString(logs.resolve(VICTIM + ".violations.jsonl"),
            FloodFairnessTest.record(VICTIM, "exfil.evil.test:443", Instant.now()) + "\n", StandardCharsets.UTF_8,
            StandardOpenOption.CREATE, StandardOpenOption.APPEND);

        soc.await(r -> r.path().equals("/v2/enqueue") && r.body().contains(VICTIM), 1, Duration.ofMinutes(4));
        double pagerDuty = (System.nanoTime() - t0) / 1e9;
        long countedAtPage = FloodFairnessTest.sum(FloodFairnessTest.COUNTED, FloodFairnessTest.scrape(metrics));
        soc.await(r -> r.path().equals("/services/T/B/hook") && r.body().contains(VICTIM), 1, Duration.ofMinutes(4));
        double slack = (System.nanoTime() - t0) / 1e9;

        Instant deadline = Instant.now().plus(Duration.ofMinutes(4));
        while (FloodFairnessTest.sum(FloodFairnessTest.COUNTED, FloodFairnessTest.scrape(metrics)) < HOSTS + 1
            && Instant.now().isBefore(deadline)) {
          Thread.sleep(500);
        }
        assertThat(FloodFairnessTest.sum(FloodFairnessTest.COUNTED, FloodFairnessTest.scrape(metrics)))
            .isGreaterThanOrEqualTo(HOSTS + 1);
        soc.await(r -> r.path().equals("/v2/enqueue") && r.body().contains(FLOOD), 1, Duration.ofMinutes(2));
        Thread.sleep(2_000); // anything sent late would be recorded by now

        List<JsonNode> triggers = soc.requests("/v2/enqueue").stream().map(r -> read(r.body()))
            .filter(b -> b.path("event_action").asText().equals("trigger")).toList();
        assertThat(triggers.stream().filter(b -> b.toString().contains(VICTIM))).hasSize(1);
        // the flood pages once per rule it breaks: a host outside its role, and a scan of many hosts
        assertThat(triggers.stream().filter(b -> b.toString().contains(FLOOD)).map(b -> b.at("/payload/class").asText()))
            .containsExactlyInAnyOrder("off-role-host", "scanning");
        assertThat(soc.requests("/services/T/B/hook").stream().filter(r -> r.body().contains(VICTIM))).hasSize(1);
        assertThat(soc.requests("/services/T/B/hook").stream().filter(r -> r.body().contains(FLOOD)))
            .hasSizeLessThanOrEqualTo(6); // off-role, scanning and persistent-retry firing, an update or two
        System.out.printf("BuriedPageTest: the other command's page reached PagerDuty %.2f s and Slack %.2f s after "
            + "its line, %,d of %,d refusals counted at the PagerDuty page%n", pagerDuty, slack, countedAtPage, HOSTS + 1);
      }
    }
  }

  private static JsonNode read(String body) {
    try {
      return Json.MAPPER.readTree(body);
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }
}
