package dev.knockwatch.streams;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.count.RecentRefusals;
import dev.knockwatch.streams.detect.DetectProcessor;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.testkit.TopicReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rules' state is held as objects between commits and written when Kafka Streams commits
 * ({@code WriteBackStore}): once detection has committed its position past four refusals of a
 * command, their state is on the store's changelog, and another instance, with no state of its own,
 * restores it from there and pages at the fifth.
 */
@Tag("integration")
class DetectStateCommitTest {

  static final String APP = "detect-state-commit-test";
  static final Instant T0 = Instant.parse("2026-12-04T12:00:00Z");
  static final String CMD = "CommittedRetryStorm0001";

  @TempDir Path dir;

  @Test
  void whatIsCommittedHasItsStateOnTheChangelogAndAnotherInstanceCountsOnFromIt() throws Exception {
    Path rules = Files.createDirectories(dir.resolve("rules"));
    Files.writeString(rules.resolve("rules.yaml"),
        "rules:\n  - {id: persistent-retry, detector: count, window: 5m, threshold: 5, severity: warning}\n");
    Policy policy = PolicyLoader.load(rules);
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0)) {
      broker.createTopics();
      try (StreamsApp first = new StreamsApp(APP, broker.bootstrapServers(), dir.resolve("first"), policy,
          AlertLifecycleProcessor.Clock.STREAM, Map.of())) {
        first.start(Duration.ofSeconds(120));
        for (int i = 1; i <= 4; i++) {
          publish(broker, refusal("e-" + i, T0.plusSeconds(i)));
        }
        first.awaitCaughtUp(Duration.ofSeconds(60));
        // committed: the four refusals' state is on the changelog, whatever happens to this instance now
        String changelog = APP + "-" + DetectionTopology.DETECT_STORE + "-changelog";
        List<ConsumerRecord<String, byte[]>> state = TopicReader.readToEnd(broker, changelog,
            new ByteArrayDeserializer(), r -> CMD.equals(r.key()));
        assertThat(state).isNotEmpty();
        DetectProcessor.Slices last = DetectProcessor.serde(policy.rules().stream()
            .filter(r -> r.per() != Grain.AGENT).toList()).deserializer().deserialize(changelog,
                state.get(state.size() - 1).value());
        assertThat(((RecentRefusals) last.slice(0)).recent()).extracting(RecentRefusals.Sighting::eventId)
            .containsExactly("e-1", "e-2", "e-3", "e-4");
      }
      // another instance, its state directory empty: the store comes back from the changelog alone
      try (StreamsApp second = new StreamsApp(APP, broker.bootstrapServers(), dir.resolve("second"), policy,
          AlertLifecycleProcessor.Clock.STREAM, Map.of())) {
        second.start(Duration.ofSeconds(120));
        publish(broker, refusal("e-5", T0.plusSeconds(10)));
        List<ConsumerRecord<String, Alert>> alerts = TopicReader.readUntil(broker, Topics.ALERTS.name(),
            Json.serde(Alert.class).deserializer(), r -> r.value() != null && CMD.equals(r.value().commandId()), 1);
        assertThat(alerts).singleElement().satisfies(r -> {
          assertThat(r.value().rule()).isEqualTo("persistent-retry");
          assertThat(r.value().count()).isEqualTo(5);
          assertThat(r.value().sampleEventIds()).containsExactly("e-1", "e-2", "e-3", "e-4", "e-5");
        });
      }
    }
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
