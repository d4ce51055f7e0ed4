package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.testkit.HttpRecorder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * End to end: log lines in, pages out. {@code replay --deliver} over the doors scenario with the
 * shipped rules and a receivers.yaml whose Slack and PagerDuty are a local server: exactly one
 * PagerDuty trigger per paged alert, its fingerprint as dedup_key, one resolve each, and a Slack
 * message per notification.
 */
@Tag("integration")
class DeliveryTest {

  static final Path DOORS = Path.of("../streams-app/src/test/resources/scenarios/doors/input");

  @TempDir Path rules;

  @Test
  void logLinesInOnePagePerAlertOutAndOneResolveEach() throws IOException {
    for (String f : List.of("rules.yaml", "roles.yaml")) {
      Files.copy(Path.of("../alert-rules", f), rules.resolve(f));
    }
    try (HttpRecorder server = new HttpRecorder()) {
      Files.writeString(rules.resolve("receivers.yaml"), """
          publicUrl: https://knockwatch.soc.test
          receivers:
            - {name: soc-slack, type: slack, webhookUrl: "%s", minInterval: 0s}
            - {name: oncall, type: pagerduty, routingKey: "R0UT1NG", url: "%s"}
          routes:
            - match: {severity: [page, critical]}
              receivers: [oncall, soc-slack]
            - match: {severity: [warning, info]}
              receivers: [soc-slack]
          """.formatted(server.url("/services/T/B/hook"), server.url("/v2/enqueue")));
      KnockwatchTest.Run r = KnockwatchTest.run("replay", "--rules", rules.toString(), "--input", DOORS.toString(),
          "--deliver");
      assertThat(r.code()).as(r.err()).isZero();
      List<Alert> alerts = r.out().lines().map(l -> Json.read(l, Alert.class)).toList();
      List<Alert> paged = alerts.stream().filter(a -> a.status() == Alert.Status.FIRING
          && (a.severity() == Alert.Severity.PAGE || a.severity() == Alert.Severity.CRITICAL)).toList();
      assertThat(paged).isNotEmpty();

      List<JsonNode> pd = server.requests("/v2/enqueue").stream().map(HttpRecorder.Request::json).toList();
      Map<String, Long> triggers = count(pd, "trigger");
      Map<String, Long> resolves = count(pd, "resolve");
      Map<String, Long> expected = paged.stream().collect(Collectors.groupingBy(Alert::fingerprint, Collectors.counting()));
      assertThat(triggers).isEqualTo(expected.keySet().stream().collect(Collectors.toMap(Function.identity(), k -> 1L)));
      assertThat(resolves).isEqualTo(triggers);
      assertThat(pd).allSatisfy(b -> assertThat(b.get("routing_key").asText()).isEqualTo("R0UT1NG"));
      JsonNode wall = pd.stream().filter(b -> b.path("payload").path("class").asText().equals("wall-breach"))
          .findFirst().orElseThrow();
      assertThat(wall.get("payload").get("severity").asText()).isEqualTo("critical");

      List<JsonNode> slack = server.requests("/services/T/B/hook").stream().map(HttpRecorder.Request::json).toList();
      long slackFiring = alerts.stream().filter(a -> a.status() == Alert.Status.FIRING).map(Alert::fingerprint)
          .distinct().count();
      assertThat(slack).hasSize((int) (slackFiring + resolves.size()));
      assertThat(slack).allSatisfy(m -> assertThat(m.get("blocks").size()).isBetween(1, 50));
      Alert breach = paged.stream().filter(a -> a.rule().equals("wall-breach")).findFirst().orElseThrow();
      String breachMessage = slack.stream().map(JsonNode::toString)
          .filter(m -> m.contains("fingerprint `" + breach.fingerprint() + "`") && m.contains("*firing*"))
          .findFirst().orElseThrow();
      assertThat(breachMessage).contains(":rotating_light: *CRITICAL* · `wall-breach` · *firing*",
          "*Command*\\n`" + breach.commandId() + "`", "*Agent / role*\\n`probe-runner` / `default`",
          "<https://knockwatch.soc.test/#command=" + breach.commandId() + "|Open the timeline>",
          "guard probe touch-home was not refused");
      assertThat(r.err()).contains("delivered " + alerts.size() + " alert record(s) to soc-slack (slack), oncall (pagerduty)");
    }
  }

  private static Map<String, Long> count(List<JsonNode> bodies, String action) {
    return bodies.stream().filter(b -> b.get("event_action").asText().equals(action))
        .collect(Collectors.groupingBy(b -> b.get("dedup_key").asText(), Collectors.counting()));
  }
}
