package dev.knockwatch.cli.bench;

import dev.knockwatch.events.WritableTopics;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Topics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run of rsyslog or syslog-ng counts only if its topic holds every line once, keyed by the
 * line's command id: the check that makes their figures comparable with the agent's. The tools
 * themselves run in {@code ShippersBenchLauncherTest} and {@code IngestAsDeployedBenchLauncherTest},
 * through the launcher.
 */
@Tag("integration")
class SyslogsTest {

  @TempDir static Path dir;
  static EmbeddedKafkaBroker broker;

  @BeforeAll
  static void start() throws Exception {
    broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0);
  }

  @AfterAll
  static void stop() {
    broker.close();
  }

  @Test
  void theExpectedKeysAreEachLinesCommandIdSrtOrSquid() throws Exception {
    Path input = dir.resolve("input");
    Files.writeString(input, IngestBench.srtRecord("a0000000000000000000000", "evil.test:443", "curl", Instant.EPOCH)
        + "1796061600.016      3 127.0.0.1 TCP_DENIED/403 3495 CONNECT evil.test:80 - b0000000000000000000000 HIER_NONE/- text/html\n"
        + IngestBench.srtRecord("a0000000000000000000000", "bit.ly:443", "curl", Instant.EPOCH));
    assertThat(Syslogs.expectedKeys(input))
        .isEqualTo(Map.of("a0000000000000000000000", 2L, "b0000000000000000000000", 1L));
  }

  @Test
  void aRecordSentTwiceLostOrMisKeyedFailsTheRun() throws Exception {
    Map<String, Long> expected = Map.of("a0000000000000000000000", 2L, "b0000000000000000000000", 1L);
    String a = "{\"commandId\":\"a0000000000000000000000\"}";
    String b = "{\"squid\":{\"commandId\":\"b0000000000000000000000\"}}";

    Topics.Topic exact = topic("exact", List.of(a, a, b), List.of("a0000000000000000000000", "a0000000000000000000000",
        "b0000000000000000000000"));
    assertThatCode(() -> Syslogs.verify("t", broker, exact, expected)).doesNotThrowAnyException();

    Topics.Topic twice = topic("twice", List.of(a, a, a, b), List.of("a0000000000000000000000",
        "a0000000000000000000000", "a0000000000000000000000", "b0000000000000000000000"));
    assertThatThrownBy(() -> Syslogs.verify("t", broker, twice, expected)).hasMessageContaining("sent twice");

    Topics.Topic lost = topic("lost", List.of(a, b), List.of("a0000000000000000000000", "b0000000000000000000000"));
    assertThatThrownBy(() -> Syslogs.verify("t", broker, lost, expected)).hasMessageContaining("a line lost");

    Topics.Topic misKeyed = topic("miskeyed", List.of(a, a, b), List.of("a0000000000000000000000",
        "b0000000000000000000000", "b0000000000000000000000"));
    assertThatThrownBy(() -> Syslogs.verify("t", broker, misKeyed, expected)).hasMessageContaining("not keyed");

    Topics.Topic notJson = topic("notjson", List.of(a, "a0000000000000000000000", b),
        List.of("a0000000000000000000000", "a0000000000000000000000", "b0000000000000000000000"));
    assertThatThrownBy(() -> Syslogs.verify("t", broker, notJson, expected)).hasMessageContaining("not keyed");
  }

  private static Topics.Topic topic(String name, List<String> values, List<String> keys) throws Exception {
    Topics.Topic topic = new Topics.Topic("syslogs." + name, 3, Map.of(), null, "a test's");
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      WritableTopics.create(admin, List.of(new NewTopic(topic.name(), 3, (short) 1)));
    }
    try (KafkaProducer<String, String> p = new KafkaProducer<>(
        Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()), new StringSerializer(),
        new StringSerializer())) {
      for (int i = 0; i < values.size(); i++) {
        p.send(new ProducerRecord<>(topic.name(), keys.get(i), values.get(i))).get();
      }
    }
    return topic;
  }
}
