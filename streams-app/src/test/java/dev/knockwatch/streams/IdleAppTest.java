package dev.knockwatch.streams;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.testkit.TopicReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Idle, detection costs little and writes nothing (docs/PERFORMANCE.md, "up idle"): its threads turn
 * about once in five seconds, not fifty times, its consumer heartbeats as often and fetches every 2 s, and a
 * refusal still pages; with an alert firing and no
 * refusal coming, no transaction is committed (each would be a round of requests and appends at
 * the broker, every second, for as long as the alert fires), and the alert still resolves when its
 * {@code resolveAfter} has passed.
 */
@Tag("integration")
class IdleAppTest {

  static final String APP = "idle-app-test";
  static final String CMD = "IdleAfterItsAlert000001";

  @TempDir Path dir;

  @Test
  void anIdleAppsThreadTurnsAndItsConsumerAsksTheBrokerAboutOnceInFiveSecondsAndARefusalStillPagesIt() throws Exception {
    Path rules = Files.createDirectories(dir.resolve("rules"));
    Files.writeString(rules.resolve("rules.yaml"), "rules:\n  - {id: persistent-retry, detector: count, window: 5m,"
        + " threshold: 1, severity: warning}\n");
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0)) {
      broker.createTopics();
      try (StreamsApp app = new StreamsApp(APP + "-turns", broker.bootstrapServers(), dir.resolve("state"),
          PolicyLoader.load(rules), AlertLifecycleProcessor.Clock.WALL, Map.of())) {
        app.start(Duration.ofSeconds(120));
        Thread.sleep(2_000); // settled: the start's last turns behind it
        double polls = metric(app, "stream-thread-metrics", "poll-total");
        double fetches = metric(app, "consumer-fetch-manager-metrics", "fetch-total");
        double heartbeats = metric(app, "consumer-coordinator-metrics", "heartbeat-total");
        Thread.sleep(15_000);
        // ten polls a second at poll.ms; a long poll after an empty one makes it one in five seconds (three or four
        // in the window; at three seconds, five or six). Detection's main consumer's fetches wait 2 s at the broker
        // (at Kafka's 500 ms, thirty in the window), its heartbeats go every 5 s (at Kafka's 3 s, five)
        assertThat(metric(app, "stream-thread-metrics", "poll-total") - polls)
            .as("the stream thread's polls in 15 idle seconds").isPositive().isLessThanOrEqualTo(4);
        assertThat(metric(app, "consumer-fetch-manager-metrics", "fetch-total") - fetches)
            .as("the main consumer's fetches in 15 idle seconds").isPositive().isLessThanOrEqualTo(9);
        assertThat(metric(app, "consumer-coordinator-metrics", "heartbeat-total") - heartbeats)
            .as("the main consumer's heartbeats in 15 idle seconds").isPositive().isLessThanOrEqualTo(4);
        publish(broker, refusal("turns-1", Instant.now()));
        assertThat(TopicReader.readUntil(broker, Topics.ALERTS.name(), Json.serde(Alert.class).deserializer(),
            r -> r.value() != null && CMD.equals(r.value().commandId()), 1)).as("the page of a refusal sent while idle")
            .hasSize(1);
      }
    }
  }

  /** One metric of the app's (its stream thread's, or its main consumer's: the one client of that group's). */
  private static double metric(StreamsApp app, String group, String name) {
    return app.streams().metrics().values().stream()
        .filter(m -> m.metricName().group().equals(group) && m.metricName().name().equals(name)
            && !m.metricName().tags().getOrDefault("client-id", "").contains("restore")
            && !m.metricName().tags().getOrDefault("client-id", "").contains("global"))
        .mapToDouble(m -> ((Number) m.metricValue()).doubleValue()).findFirst()
        .orElseThrow(() -> new AssertionError("no " + name + " among the app's " + group));
  }

  @Test
  void anIdleAppWithAFiringAlertCommitsNoTransactionAndStillResolvesItWhenDue() throws Exception {
    Path rules = Files.createDirectories(dir.resolve("rules"));
    Files.writeString(rules.resolve("rules.yaml"), "rules:\n  - {id: persistent-retry, detector: count, window: 5m,"
        + " threshold: 3, severity: warning, resolveAfter: 20s}\n");
    Policy policy = PolicyLoader.load(rules);
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0);
         Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      broker.createTopics();
      try (StreamsApp app = new StreamsApp(APP, broker.bootstrapServers(), dir.resolve("state"), policy,
          AlertLifecycleProcessor.Clock.WALL, Map.of())) {
        app.start(Duration.ofSeconds(120));
        Instant t0 = Instant.now();
        for (int i = 1; i <= 3; i++) {
          publish(broker, refusal("idle-" + i, t0.plusMillis(i)));
        }
        List<ConsumerRecord<String, Alert>> fired = TopicReader.readUntil(broker, Topics.ALERTS.name(),
            Json.serde(Alert.class).deserializer(), r -> r.value() != null && CMD.equals(r.value().commandId()), 1);
        assertThat(fired).singleElement().satisfies(r -> assertThat(r.value().status()).isEqualTo(Alert.Status.FIRING));

        // the sweep a hit asks for (within a second), and its commit at the next turn (5 s); the resolve's
        // commit, 20 s after the last refusal, comes after the 6 s watched below even on a loaded machine
        Thread.sleep(7_500);
        long before = transactionRecords(admin);
        Thread.sleep(6_000);
        long after = transactionRecords(admin);
        assertThat(after - before).as("records the transaction coordinator wrote in 6 idle seconds, the alert firing")
            .isZero();

        List<ConsumerRecord<String, Alert>> resolved = TopicReader.readUntil(broker, Topics.ALERTS.name(),
            Json.serde(Alert.class).deserializer(), r -> r.value() != null && CMD.equals(r.value().commandId())
                && r.value().status() == Alert.Status.RESOLVED, 1);
        assertThat(resolved).as("the alert resolved, with no refusal to wake the app").hasSize(1);
      }
    }
  }

  /** What the transaction coordinator has written: one record or more for each transaction's every step. */
  private static long transactionRecords(Admin admin) throws Exception {
    String log = "__transaction_state";
    int partitions = admin.describeTopics(List.of(log)).allTopicNames().get(30, TimeUnit.SECONDS).get(log)
        .partitions().size();
    Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      ends.put(new TopicPartition(log, p), OffsetSpec.latest());
    }
    return admin.listOffsets(ends).all().get(30, TimeUnit.SECONDS).values().stream().mapToLong(i -> i.offset()).sum();
  }

  private static ViolationEvent refusal(String id, Instant at) {
    return ViolationEvent.builder().eventId(id).commandId(CMD).agentId("ci-runner-1").source("srt-violation")
        .kind(Kind.NETWORK).action("network-outbound").host("registry.npmjs.org").port(443).observedAt(at).build();
  }

  private static void publish(EmbeddedKafkaBroker broker, ViolationEvent e) throws Exception {
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
      p.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), null, e.observedAt().toEpochMilli(), e.commandId(),
          Json.write(e))).get(30, TimeUnit.SECONDS);
    }
  }
}
