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
import java.util.ArrayList;
import java.util.HashMap;
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
 * Issue 25: notifiers in HA. Two {@code ./knockwatch notify} in one group, a storm of 300 pages
 * (20 rules, 300 commands), one notifier killed with SIGKILL mid-storm. The survivor takes its
 * partitions and reads their part of the notification log first: every alert reaches the webhook,
 * never twice unmarked; a send the dead one intended without recording its outcome goes once more,
 * marked as a possible repeat with the same idempotency key (the only send, when the kill came
 * before the dead one's send left).
 */
@Tag("integration")
class NotifyHaTest {

  static final int ALERTS = 300;

  @TempDir Path dir;

  private static String[] with(String[] args, int port) {
    String[] out = java.util.Arrays.copyOf(args, args.length + 1);
    out[args.length] = String.valueOf(port);
    return out;
  }

  /** Waits until the notifiers' group is stable with {@code n} members, each given partitions. */
  private static void awaitMembers(EmbeddedKafkaBroker broker, int n) throws Exception {
    try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(Map.of(
        org.apache.kafka.clients.admin.AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      Instant deadline = Instant.now().plusSeconds(90);
      while (Instant.now().isBefore(deadline)) {
        org.apache.kafka.clients.admin.ConsumerGroupDescription group;
        try {
          group = admin.describeConsumerGroups(List.of("knockwatch-notify")).all().get().get("knockwatch-notify");
        } catch (java.util.concurrent.ExecutionException e) {
          if (!(e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException)) {
            throw e;
          }
          group = null; // no notifier has joined yet
        }
        if (group != null && group.groupState() == org.apache.kafka.common.GroupState.STABLE && group.members().size() == n
            && group.members().stream().allMatch(m -> !m.assignment().topicPartitions().isEmpty())) {
          return;
        }
        Thread.sleep(200);
      }
      throw new AssertionError("the notifiers' group never had " + n + " members with partitions");
    }
  }

  @Test
  void twoNotifiersOneKilledMidStormSendNoAlertTwiceUnmarked() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    Path rules = Files.createDirectories(dir.resolve("rules"));
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0);
        HttpRecorder soc = new HttpRecorder()) {
      broker.createTopics();
      Files.writeString(rules.resolve("receivers.yaml"), """
          receivers:
            - {name: hook, type: webhook, url: "%s"}
          routes:
            - receivers: [hook]
          """.formatted(soc.url("/hook")));
      for (int i = 0; i < ALERTS; i++) {
        soc.script("/hook", HttpRecorder.Answer.after(Duration.ofMillis(60), 200)); // a receiver a little slow
      }
      // the group gives the dead member's partitions to the survivor in 6 s, not Kafka's default 45
      Path fastGroup = Files.writeString(dir.resolve("group.properties"), "session.timeout.ms=6000\n");
      String[] args = {"notify", "--bootstrap-servers", broker.bootstrapServers(), "--rules", rules.toString(),
          "--kafka-config", fastGroup.toString(), "--metrics-port"};
      try (Launched a = Launched.start(checkout, dir.resolve("a"), Map.of(), with(args, Launched.freePort()));
          Launched b = Launched.start(checkout, dir.resolve("b"), Map.of(), with(args, Launched.freePort()))) {
        a.awaitLine("knockwatch notify:", Duration.ofSeconds(120));
        b.awaitLine("knockwatch notify:", Duration.ofSeconds(120));
        awaitMembers(broker, 2); // both in the group, each with its share of the partitions
        List<Alert> storm = new ArrayList<>();
        try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
          for (int i = 0; i < ALERTS; i++) {
            String cmd = String.format("NotifyHaCommandNotify%03d", i);
            String rule = "ha-rule-" + (i % 20);
            Alert page = Alert.firing(rule, cmd).fingerprint(Alert.fingerprintOf(rule, cmd))
                .severity(Alert.Severity.PAGE).agentId("ci-runner-1").role("ci").host("exfil.evil.test").port(443)
                .firstSeen(Instant.now()).lastSeen(Instant.now()).summary("tried exfil.evil.test:443")
                .sampleEventIds(List.of()).policyVersion("v1").build();
            storm.add(page);
            p.send(new ProducerRecord<>(Topics.ALERTS.name(), page.fingerprint(), Json.write(page)));
          }
          p.flush();
        }
        soc.await(r -> true, 60, Duration.ofSeconds(90));
        a.close(); // SIGKILL mid-storm
        Instant killed = Instant.now();
        for (Alert page : storm) {
          assertThat(soc.await(r -> r.body().contains(page.fingerprint()), 1, Duration.ofSeconds(180)))
              .as(page.fingerprint() + " delivered\n" + Launched.tail(b.err(), 30)).isNotEmpty();
        }
        System.out.printf("NotifyHaTest: all %d pages delivered %.1f s after the kill%n", ALERTS,
            Duration.between(killed, Instant.now()).toMillis() / 1e3);
        Thread.sleep(3_000);

        Map<String, List<HttpRecorder.Request>> byFingerprint = new HashMap<>();
        for (HttpRecorder.Request r : soc.requests("/hook")) {
          for (JsonNode alert : Json.MAPPER.readTree(r.body()).path("alerts")) {
            byFingerprint.computeIfAbsent(alert.path("fingerprint").asText(), k -> new ArrayList<>()).add(r);
          }
        }
        int repeats = 0;
        for (Alert page : storm) {
          List<HttpRecorder.Request> sends = byFingerprint.get(page.fingerprint());
          // one unmarked send at most; none when the kill fell between the intent and its send: the
          // survivor then finds the intent without an outcome and sends it marked
          assertThat(sends.stream().filter(r -> r.header(WebhookNotifier.POSSIBLE_REPEAT) == null))
              .as("unmarked sends of " + page.fingerprint()).hasSizeLessThanOrEqualTo(1);
          assertThat(sends).extracting(r -> r.header(WebhookNotifier.IDEMPOTENCY_KEY)).as(page.fingerprint())
              .containsOnly(sends.get(0).header(WebhookNotifier.IDEMPOTENCY_KEY));
          repeats += sends.size() - 1;
        }
        System.out.printf("NotifyHaTest: %d sends for %d pages, %d marked as possible repeats%n",
            soc.requests("/hook").size(), ALERTS, repeats);
      }
    }
  }
}
