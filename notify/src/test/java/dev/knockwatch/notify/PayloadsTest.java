package dev.knockwatch.notify;

import dev.knockwatch.events.Alert;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.notify.pagerduty.PagerDutyEvent;
import dev.knockwatch.notify.slack.SlackMessage;
import dev.knockwatch.notify.spi.AlertmanagerPayload;
import dev.knockwatch.notify.spi.Notification;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every channel's payload for the fixture alerts, against the written-out payloads in test resources. */
class PayloadsTest {

  /** Read back from its text, so that numbers compare by value (a long 1 equals the file's 1). */
  private static JsonNode tree(JsonNode built) throws IOException {
    return Json.MAPPER.readTree(built.toString());
  }

  private static JsonNode golden(String name) throws IOException {
    try (InputStream in = PayloadsTest.class.getResourceAsStream("/payloads/" + name + ".json")) {
      return Json.MAPPER.readTree(in);
    }
  }

  @Test
  void slackFiring() throws IOException {
    assertThat(SlackMessage.payload(Notification.of("soc-slack", Notification.Event.FIRING, Fixtures.offRole(), null),
        Fixtures.PUBLIC_URL)).isEqualTo(golden("slack-firing"));
  }

  @Test
  void slackWithHostileFieldsEscapesDefangsAndStrips() throws IOException {
    JsonNode payload = SlackMessage.payload(Notification.of("soc-slack", Notification.Event.FIRING, Fixtures.hostile(),
        null), Fixtures.PUBLIC_URL);
    assertThat(payload).isEqualTo(golden("slack-hostile"));
    String text = payload.toString();
    // nothing Slack would read as a mention, a link or a command: only the timeline link has '<'
    assertThat(text).doesNotContain("<!channel>", "<!here>", "<@U123>", "<http://evil", "\u202E", "\u0007");
    assertThat(text.split("<", -1)).hasSize(2);
  }

  @Test
  void slackDigest() throws IOException {
    assertThat(SlackMessage.payload(new Notification("soc-slack", Notification.Event.FIRING, "group-x",
        List.of(Fixtures.offRole(), Fixtures.hostile()), null), Fixtures.PUBLIC_URL)).isEqualTo(golden("slack-digest"));
  }

  @Test
  void pagerDutyTriggerAndResolve() throws IOException {
    assertThat(tree(PagerDutyEvent.body(Notification.of("oncall", Notification.Event.FIRING, Fixtures.offRole(), null),
        "ROUTINGKEY", Fixtures.PUBLIC_URL))).isEqualTo(golden("pagerduty-trigger"));
    assertThat(PagerDutyEvent.body(Notification.of("oncall", Notification.Event.RESOLVED, Fixtures.offRole().resolved(),
        null), "ROUTINGKEY", Fixtures.PUBLIC_URL)).isEqualTo(golden("pagerduty-resolve"));
  }

  /**
   * PagerDuty's summary is read by people, in PagerDuty and the chats it posts to, which link what
   * looks like a host: what the agent wrote there is defanged as in Slack, cleaned and bounded.
   */
  @Test
  void pagerDutysSummaryDefangsWhatTheAgentWrote() {
    String huge = "a.".repeat(100_000) + "evil.example";
    List<Alert> hostile = List.of(Fixtures.hostile(),
        Fixtures.offRole().toBuilder().host("evil\u202E.example").summary("agent tried evil\u202E.example\u0000:443 and "
            + "https://evil.example/x?y=1 then \u2066EVIL.Example.\u2069 \u0007").build(),
        Fixtures.offRole().toBuilder().host(huge).summary("agent ci-runner-2 tried " + huge + ":443").build(),
        Fixtures.offRole().toBuilder().commandId("click.evil.example.Doors01").build());
    for (Alert a : hostile) {
      String summary = PagerDutyEvent.body(Notification.of("oncall", Notification.Event.FIRING, a, null), "ROUTINGKEY",
          Fixtures.PUBLIC_URL).at("/payload/summary").asText();
      assertThat(summary).as(summary).hasSizeLessThanOrEqualTo(1024).startsWith("[")
          .doesNotContainPattern("(?i)[a-z0-9_-]\\.[a-z0-9_-]").doesNotContainPattern("(?<!\\[)://")
          .doesNotContain("\u202E", "\u2066", "\u2069", "\u0007", "\u0000");
    }
    assertThat(PagerDutyEvent.body(Notification.of("oncall", Notification.Event.FIRING, hostile.get(0), null), "K", null)
        .at("/payload/summary").asText()).isEqualTo("[WARNING] persistent-retry: command refused 7 times; last: "
            + "<hxxp[://]evil[.]test|click here> <!here> <@U123> &  exe[.]txt  (command xhfHytmXL-L6RsYw2CrSjA)");
    assertThat(PagerDutyEvent.body(Notification.of("oncall", Notification.Event.FIRING, hostile.get(1), null), "K", null)
        .at("/payload/summary").asText()).contains("hxxps[://]evil[.]example/x?y=1", "EVIL[.]Example[.]");
    assertThat(PagerDutyEvent.body(Notification.of("oncall", Notification.Event.FIRING, hostile.get(3), null), "K", null)
        .at("/payload/summary").asText()).endsWith("(command click[.]evil[.]example[.]Doors01)");
    // the facts stay as they were refused, for whoever reads them as data
    assertThat(PagerDutyEvent.body(Notification.of("oncall", Notification.Event.FIRING, Fixtures.offRole(), null), "K", null)
        .at("/payload/custom_details/refused").fieldNames().next()).isEqualTo("evil.example:443");
  }

  @Test
  void slacksLimitsHoldForAHugeSummaryAndTenThousandAlerts() {
    dev.knockwatch.events.Alert big = Fixtures.offRole().updated(1, Fixtures.T0, "x".repeat(10_000), List.of(), List.of(),
        null);
    JsonNode one = SlackMessage.payload(Notification.of("s", Notification.Event.FIRING, big, null), null);
    assertThat(one.get("blocks").get(0).get("text").get("text").asText()).hasSizeLessThanOrEqualTo(3000)
        .endsWith("… [truncated]");
    List<dev.knockwatch.events.Alert> many = java.util.stream.IntStream.range(0, 10_000)
        .mapToObj(i -> Fixtures.offRole()).toList();
    JsonNode digest = SlackMessage.payload(new Notification("s", Notification.Event.FIRING, "g", many, null), null);
    assertThat(digest.get("blocks").size()).isLessThanOrEqualTo(50);
    digest.get("blocks").forEach(b -> assertThat(b.path("text").path("text").asText()).hasSizeLessThanOrEqualTo(3000));
    assertThat(digest.toString()).contains("…and 9960 more");
  }

  /** A rule's tags, runbook, labels and annotations reach every payload. */
  @Test
  void theRulesRunbookAndTagsReachEveryPayload() {
    Alert plain = Fixtures.offRole();
    Alert a = plain.toBuilder().shadow(null).targets(null).distinctTargets(null).lastTarget(null)
        .meta(new Alert.Meta(List.of("exfiltration", "attack.t1041"), "https://runbooks.example/off-role",
            java.util.Map.of("team", "soc", "severity", "low"), java.util.Map.of("owner", "SOC on-call")))
        .build();
    Notification n = Notification.of("r", Notification.Event.FIRING, a, null);
    String slack = SlackMessage.payload(n, Fixtures.PUBLIC_URL).toString();
    assertThat(slack).contains("<https://runbooks.example/off-role|Runbook>", "tags exfiltration, attack.t1041");
    JsonNode pd = PagerDutyEvent.body(n, "ROUTINGKEY", Fixtures.PUBLIC_URL);
    assertThat(pd.get("links").findValuesAsText("href")).contains("https://runbooks.example/off-role");
    assertThat(pd.at("/payload/custom_details/rule_meta/tags").toString()).isEqualTo("[\"exfiltration\",\"attack.t1041\"]");
    JsonNode am = dev.knockwatch.notify.spi.AlertmanagerPayload.alert(a, Fixtures.PUBLIC_URL, Fixtures.T0);
    assertThat(am.at("/labels/team").asText()).isEqualTo("soc");
    assertThat(am.at("/labels/severity").asText()).as("the rule's labels never override knockwatch's").isEqualTo("page");
    assertThat(am.at("/annotations/runbook_url").asText()).isEqualTo("https://runbooks.example/off-role");
    assertThat(am.at("/annotations/tags").asText()).isEqualTo("exfiltration,attack.t1041");
    assertThat(am.at("/annotations/owner").asText()).isEqualTo("SOC on-call");
    assertThat(dev.knockwatch.notify.webhook.WebhookNotifier.body(n, Fixtures.PUBLIC_URL))
        .asString(java.nio.charset.StandardCharsets.UTF_8).contains("\"meta\":{\"tags\":[\"exfiltration\",\"attack.t1041\"]");
  }
}
