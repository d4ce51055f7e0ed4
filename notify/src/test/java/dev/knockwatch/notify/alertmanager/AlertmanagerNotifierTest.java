package dev.knockwatch.notify.alertmanager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.notify.Fixtures;
import dev.knockwatch.notify.spi.AlertmanagerPayload;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.testkit.HttpRecorder;
import dev.knockwatch.testkit.HttpRecorder.Answer;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The alertmanager receiver against a local server playing Alertmanager: the exact body of
 * {@code POST /api/v2/alerts} for a firing and a resolved alert, labels from what the agent wrote
 * made safe, and the retry contract (5xx again, 400 final). The webhook's Alertmanager format
 * (version 4) is checked against its written-out body too.
 */
class AlertmanagerNotifierTest {

  static final Instant NOW = Instant.parse("2026-11-29T18:46:00Z");
  static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

  HttpRecorder am;

  @BeforeEach
  void start() throws IOException {
    am = new HttpRecorder();
  }

  @AfterEach
  void stop() {
    am.close();
  }

  private AlertmanagerNotifier notifier(String prefix) {
    return new AlertmanagerNotifier(new AlertmanagerReceiver("am", URI.create(am.url(prefix))), Fixtures.PUBLIC_URL,
        CLOCK);
  }

  private static JsonNode golden(String name) throws IOException {
    try (InputStream in = AlertmanagerNotifierTest.class.getResourceAsStream("/payloads/" + name + ".json")) {
      return Json.MAPPER.readTree(in);
    }
  }

  @Test
  void aFiringAndAResolvedAlertArePostedToApiV2Alerts() throws Exception {
    Notifier n = notifier("/am");
    assertThat(n.notify(Notification.of("am", Notification.Event.FIRING, Fixtures.offRole(), null)).delivered()).isTrue();
    assertThat(n.notify(Notification.of("am", Notification.Event.RESOLVED, Fixtures.offRole().resolved(), null))
        .delivered()).isTrue();
    List<HttpRecorder.Request> posts = am.requests("/am/api/v2/alerts");
    assertThat(posts).hasSize(2).allSatisfy(r -> {
      assertThat(r.method()).isEqualTo("POST");
      assertThat(r.header("Content-Type")).isEqualTo("application/json");
    });
    assertThat(Json.MAPPER.readTree(posts.get(0).body())).isEqualTo(golden("alertmanager-firing"));
    JsonNode resolved = Json.MAPPER.readTree(posts.get(1).body()).get(0);
    assertThat(resolved.get("endsAt").asText()).as("a resolved alert ends now").isEqualTo(NOW.toString());
    assertThat(resolved.get("labels")).isEqualTo(golden("alertmanager-firing").get(0).get("labels"));
  }

  @Test
  void whatTheAgentWroteIsMadeSafeInLabelsAndAnnotations() {
    Alert hostile = Fixtures.hostile();
    JsonNode a = AlertmanagerPayload.alert(hostile, Fixtures.PUBLIC_URL, NOW);
    String text = a.toString();
    assertThat(text).doesNotContain("\u202E", "\u0007");
    assertThat(a.get("labels").get("agent").asText()).isEqualTo("<!channel> `agent`");
    assertThat(a.get("annotations").get("target").asText()).isEqualTo("<http://evil.test|click>:80");
    Alert huge = Alert.firing("r".repeat(10_000), hostile.commandId()).fingerprint(hostile.fingerprint())
        .severity(hostile.severity()).status(hostile.status()).agentId("a".repeat(100_000))
        .summary("s".repeat(100_000)).sampleEventIds(List.of()).sources(List.of()).build();
    JsonNode bounded = AlertmanagerPayload.alert(huge, null, NOW);
    // cut to the bound, the cut marked with an ellipsis
    assertThat(bounded.get("labels").get("agent").asText()).hasSize(AlertmanagerPayload.MAX_LABEL_CHARS + 1).endsWith("…");
    assertThat(bounded.get("labels").get("alertname").asText()).hasSize(AlertmanagerPayload.MAX_LABEL_CHARS + 1);
    assertThat(bounded.get("annotations").get("summary").asText()).hasSize(AlertmanagerPayload.MAX_ANNOTATION_CHARS + 1);
    assertThat(bounded.has("generatorURL")).as("no console: no link").isFalse();
  }

  @Test
  void aServerErrorIsRetriedAndABadRequestIsFinal() {
    am.script("/api/v2/alerts", Answer.of(503), Answer.of(400));
    Notifier n = notifier("");
    Notifier.Result unavailable = n.notify(Notification.of("am", Notification.Event.FIRING, Fixtures.offRole(), null));
    assertThat(unavailable.delivered()).isFalse();
    assertThat(unavailable.retryable()).isTrue();
    Notifier.Result refused = n.notify(Notification.of("am", Notification.Event.FIRING, Fixtures.offRole(), null));
    assertThat(refused.retryable()).isFalse();
  }

  @Test
  void theWebhooksAlertmanagerFormatIsVersionFour() throws Exception {
    Notification digest = new Notification("soc-hook", Notification.Event.FIRING, "group-x",
        List.of(Fixtures.offRole(), Fixtures.hostile()), null);
    assertThat(Json.MAPPER.readTree(AlertmanagerPayload.webhook(digest, Fixtures.PUBLIC_URL, NOW).toString()))
        .isEqualTo(golden("alertmanager-webhook-v4"));
  }
}
