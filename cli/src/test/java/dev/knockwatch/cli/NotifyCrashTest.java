package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.notify.webhook.WebhookNotifier;
import dev.knockwatch.testkit.HttpRecorder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25: {@code ./knockwatch notify} killed with SIGKILL while its receivers hold the requests
 * of a page (between the send and its record), then started again. Its intent is on the
 * notification log, so the second send says what it is: the webhook gets the same
 * {@code Idempotency-Key} with {@code X-Knockwatch-Possible-Repeat: true}, PagerDuty the same
 * {@code dedup_key} (a repeat PagerDuty folds into the same incident), a Slack webhook a message
 * marked as a possible repeat, and a Slack bot finds the message it posted by the key in its
 * metadata and updates it instead of posting again. The first sends carry no such mark.
 */
@Tag("integration")
class NotifyCrashTest {

  static final String CMD = "NotifyCrashCommandNot1";
  static final String POST = "/api/chat.postMessage";

  @TempDir Path dir;

  @Test
  void aNotifierKilledBetweenSendAndRecordMarksItsSecondSendAsAPossibleRepeat() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    Path rules = Files.createDirectories(dir.resolve("rules"));
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0);
        HttpRecorder soc = new HttpRecorder()) {
      broker.createTopics();
      Files.writeString(rules.resolve("receivers.yaml"), """
          receivers:
            - {name: hook, type: webhook, url: "%s"}
            - {name: oncall, type: pagerduty, routingKey: "R0UT1NG", url: "%s"}
            - {name: soc-slack, type: slack, webhookUrl: "%s", minInterval: 0s}
            - {name: soc-bot, type: slack, botToken: "xoxb-crash-test", channel: "C0KNOCK", apiUrl: "%s", minInterval: 0s}
          routes:
            - receivers: [hook, oncall, soc-slack, soc-bot]
          """.formatted(soc.url("/hook"), soc.url("/v2/enqueue"), soc.url("/services/T/B/x"), soc.url("/api/")));
      for (String path : List.of("/hook", "/v2/enqueue", "/services/T/B/x", POST)) {
        soc.script(path, HttpRecorder.Answer.after(Duration.ofSeconds(30), 200)); // held while notify dies
      }
      Alert page = Alert.firing("off-role-host", CMD).fingerprint(Alert.fingerprintOf("off-role-host", CMD))
          .severity(Alert.Severity.PAGE).agentId("ci-runner-1").role("ci").host("exfil.evil.test").port(443)
          .firstSeen(Instant.now()).lastSeen(Instant.now())
          .summary("agent ci-runner-1 (role ci) tried exfil.evil.test:443").sampleEventIds(List.of("e1"))
          .policyVersion("v1").build();
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
        p.send(new ProducerRecord<>(Topics.ALERTS.name(), page.fingerprint(), Json.write(page))).get();
      }
      // the group gives the dead member's partitions to the next in 6 s, not Kafka's default 45
      Path fastGroup = Files.writeString(dir.resolve("group.properties"), "session.timeout.ms=6000\n");
      String[] args = {"notify", "--bootstrap-servers", broker.bootstrapServers(), "--rules", rules.toString(),
          "--kafka-config", fastGroup.toString(), "--metrics-port", String.valueOf(Launched.freePort())};
      try (Launched first = Launched.start(checkout, dir.resolve("first"), Map.of(), args)) {
        for (String path : List.of("/hook", "/v2/enqueue", "/services/T/B/x", POST)) {
          assertThat(soc.await(r -> r.path().equals(path), 1, Duration.ofSeconds(90))).as(path).hasSize(1);
        }
      } // SIGKILL while the three requests are held: sent, not recorded

      try (Launched second = Launched.start(checkout, dir.resolve("second"), Map.of(), args)) {
        for (String path : List.of("/hook", "/v2/enqueue", "/services/T/B/x")) {
          assertThat(soc.await(r -> r.path().equals(path), 2, Duration.ofSeconds(150)))
              .as(path + "\n" + Launched.tail(second.err(), 30)).hasSize(2);
        }
        List<HttpRecorder.Request> hook = soc.requests("/hook");
        assertThat(hook.get(0).header(WebhookNotifier.IDEMPOTENCY_KEY)).isNotBlank()
            .isEqualTo(hook.get(1).header(WebhookNotifier.IDEMPOTENCY_KEY));
        assertThat(hook.get(0).header(WebhookNotifier.POSSIBLE_REPEAT)).isNull();
        assertThat(hook.get(1).header(WebhookNotifier.POSSIBLE_REPEAT)).isEqualTo("true");
        assertThat(hook.get(1).json().path("possibleRepeat").asBoolean()).isTrue();

        List<JsonNode> pd = soc.requests("/v2/enqueue").stream().map(HttpRecorder.Request::json).toList();
        assertThat(pd).extracting(b -> b.path("dedup_key").asText()).containsOnly(page.fingerprint());
        assertThat(pd).extracting(b -> b.path("event_action").asText()).containsOnly("trigger");

        List<JsonNode> slack = soc.requests("/services/T/B/x").stream().map(HttpRecorder.Request::json).toList();
        assertThat(slack.get(0).path("text").asText()).doesNotContain("possibly a repeat");
        assertThat(slack.get(1).path("text").asText()).startsWith("(possibly a repeat)");
        // the bot finds its message by the key it carries, and updates it instead of posting again
        assertThat(soc.await(r -> r.path().equals("/api/chat.update"), 1, Duration.ofSeconds(60))).hasSize(1);
        assertThat(soc.requests(POST)).hasSize(1);
        assertThat(soc.requests("/api/conversations.history")).hasSize(1);
        assertThat(soc.requests("/api/chat.update").get(0).body()).contains("ts=1764460800.");
        Thread.sleep(2_000);
        assertThat(soc.requests()).hasSize(9); // nothing a third time

      }
    }
  }
}
