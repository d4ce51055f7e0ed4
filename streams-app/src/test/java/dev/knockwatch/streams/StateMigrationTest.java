package dev.knockwatch.streams;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.WritableTopics;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.count.RecentRefusals;
import dev.knockwatch.streams.count.SlidingCount;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.testkit.TopicReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The upgrade to one state per key, as an operator meets it: detection of the earlier version kept
 * each stateful rule's state in a store of its own, and its changelogs hold a command four
 * refusals into a retry storm and another command's refusal. Restarted on this version, on the same
 * broker, the fifth refusal pages and a request to leave the sandbox half a minute after the
 * refusal is critical: the state came across. A second start moves nothing again.
 */
@Tag("integration")
class StateMigrationTest {

  static final String APP = "migration-test";
  static final Instant T0 = Instant.parse("2026-12-04T12:00:00Z");
  static final String RETRYING = "MigratedRetryStorm00001";
  static final String ESCAPING = "MigratedEscapeAfterNo01";

  @TempDir Path dir;

  @Test
  void anUpgradedDeploymentCarriesItsRulesStateOverAndPagesAsItWouldHave() throws Exception {
    Path rules = Files.createDirectories(dir.resolve("rules"));
    Files.writeString(rules.resolve("rules.yaml"), """
        rules:
          - {id: persistent-retry, detector: count, window: 5m, threshold: 5, severity: warning}
          - {id: sandbox-escape, detector: sandbox-escape, within: 30m, severity: page}
        """);
    Policy policy = PolicyLoader.load(rules);
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0)) {
      broker.createTopics();
      seedTheStoresOfTheEarlierVersion(broker);

      try (StreamsApp app = new StreamsApp(APP, broker.bootstrapServers(), dir.resolve("state"), policy,
          AlertLifecycleProcessor.Clock.STREAM, Map.of())) {
        app.start(Duration.ofSeconds(120));
        publish(broker, event(RETRYING, "e-5", T0.plusSeconds(10), false), event(ESCAPING, "e-escape",
            T0.plusSeconds(30), true));
        List<ConsumerRecord<String, Alert>> alerts = TopicReader.readUntil(broker, Topics.ALERTS.name(),
            Json.serde(Alert.class).deserializer(), r -> r.value() != null
                && (r.value().commandId().equals(RETRYING) || r.value().commandId().equals(ESCAPING)), 2);
        assertThat(alerts).extracting(r -> r.value().rule() + " " + r.value().commandId() + " "
            + r.value().severity() + " " + r.value().count()).containsExactlyInAnyOrder(
                "persistent-retry " + RETRYING + " WARNING 5",
                "sandbox-escape " + ESCAPING + " CRITICAL 1");
        assertThat(alerts).filteredOn(r -> r.value().rule().equals("sandbox-escape")).first()
            .satisfies(r -> assertThat(r.value().summary()).contains("30 s after the sandbox refused"));
      }
      assertThat(StateMigration.migrate(APP, broker.bootstrapServers(), Map.of(), policy).keys())
          .as("moved once: the new store's changelog exists now").isZero();
    }
  }

  /** What the stores of one rule each held: four refusals of one command, and another command's last refusal time. */
  private static void seedTheStoresOfTheEarlierVersion(EmbeddedKafkaBroker broker) throws Exception {
    String count = APP + "-count-persistent-retry-changelog";
    String escape = APP + "-escape-sandbox-escape-changelog";
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      WritableTopics.create(admin, List.of(
          new NewTopic(count, Topics.VIOLATIONS.partitions(), (short) 1)
              .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT)),
          new NewTopic(escape, Topics.VIOLATIONS.partitions(), (short) 1)
              .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT))));
    }
    List<RecentRefusals.Sighting> four = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      four.add(new RecentRefusals.Sighting(T0.plusSeconds(i).toEpochMilli(), "e-" + i, "registry.npmjs.org:443",
          "ci-runner-1"));
    }
    try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers(), ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1), new StringSerializer(),
        new ByteArraySerializer())) {
      // keyed as the violations are: a changelog's partition is its key's partition
      p.send(new ProducerRecord<>(count, RETRYING, SlidingCount.SERDE.serializer().serialize(count,
          new RecentRefusals(List.copyOf(four), null)))).get(30, TimeUnit.SECONDS);
      p.send(new ProducerRecord<>(escape, ESCAPING, Serdes.Long().serializer().serialize(escape,
          T0.toEpochMilli()))).get(30, TimeUnit.SECONDS);
    }
  }

  private static ViolationEvent event(String command, String id, Instant at, boolean sandboxOff) {
    ViolationEvent.Builder b = ViolationEvent.builder().eventId(id).commandId(command).agentId("ci-runner-1")
        .source("srt-violation").kind(Kind.NETWORK).observedAt(at);
    return sandboxOff
        ? b.source("claude-code").kind(Kind.PROCESS).action(ViolationEvent.SANDBOX_OFF_REQUEST).build()
        : b.action("network-outbound").host("registry.npmjs.org").port(443).build();
  }

  private static void publish(EmbeddedKafkaBroker broker, ViolationEvent... events) throws Exception {
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
      for (ViolationEvent e : events) {
        p.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), null, e.observedAt().toEpochMilli(), e.commandId(),
            Json.write(e))).get(30, TimeUnit.SECONDS);
      }
    }
  }
}
