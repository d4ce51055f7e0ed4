package dev.knockwatch.cli;

import dev.knockwatch.events.WritableTopics;
import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.testkit.TopicReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A record the export topic refuses (here: larger than the topic takes, as a SIEM team's topic
 * limits may make it) is not lost: the exporter commits nothing past it and sends its batch again
 * until Kafka takes it (the batch's other records go more than once: at least once); once the
 * limit is raised, it arrives and the position moves past it. A broker of its own: the export
 * reads the whole violations topic.
 */
@Tag("integration")
class ExportRefusedRecordTest {

  private static final String TOPIC = "siem.small";
  private static final String GROUP = "export-refused-test";
  private static final String CMD = "ExportRefusedCommand00001";
  private static final Instant T0 = Instant.parse("2026-12-03T10:00:00Z");

  @TempDir Path dir;

  private static ViolationEvent event(String id, String commandText) {
    return ViolationEvent.builder().eventId(id).commandId(CMD).agentId("ci-runner-1").source("srt-violation")
        .kind(Kind.NETWORK).action("network-outbound").host("evil.example").port(443).observedAt(T0)
        .commandText(commandText).build();
  }

  /** Where the refused record stands on the violations topic. */
  private record Refused(TopicPartition partition, long offset) {}

  /**
   * A topic that takes records of 8,000 bytes at most (the export keeps a topic that exists as it
   * is), and on the violations topic, in one command's order: a refusal, a record that is no event,
   * a refusal too large for that topic, and a refusal after it.
   */
  private static Refused smallTopicAndAHugeRefusal(EmbeddedKafkaBroker broker, Admin admin) throws Exception {
    broker.createTopics();
    WritableTopics.create(admin, List.of(new NewTopic(TOPIC, 1, (short) 1)
        .configs(Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "8000"))));
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
      p.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), CMD, Json.write(event("before", "curl evil.example"))))
          .get(30, TimeUnit.SECONDS);
      p.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), CMD, "{not an event")).get(30, TimeUnit.SECONDS);
      RecordMetadata m = p.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), CMD,
          Json.write(event("huge", "curl " + "x".repeat(20_000))))).get(30, TimeUnit.SECONDS);
      p.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), CMD, Json.write(event("after", "curl evil.example"))))
          .get(30, TimeUnit.SECONDS);
      return new Refused(new TopicPartition(m.topic(), m.partition()), m.offset());
    }
  }

  /** The topic's owner raises its limit to the broker's default. */
  private static void raiseTheLimit(Admin admin) throws Exception {
    admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, TOPIC), List.of(
        new AlterConfigOp(new ConfigEntry(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "1048588"),
            AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
  }

  @Test
  void aRecordTheTopicRefusesIsSentAgainUntilTakenAndNothingPastItIsCommitted() throws Exception {
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(Files.createDirectories(dir.resolve("kafka")), 0);
         Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      Refused refused = smallTopicAndAHugeRefusal(broker, admin);
      long huge = refused.offset();
      TopicPartition violations = refused.partition();
      Exporter.ensureTopic(broker.bootstrapServers(), Map.of(), TOPIC);
      try (Exporter exporter = new Exporter(broker.bootstrapServers(), Map.of(), Exporter.Format.OCSF, TOPIC, GROUP)) {
        Thread t = new Thread(exporter, "export-refused-test");
        t.start();
        // the record before it is taken (its batch may go more than once); the refused one holds the position
        assertThat(ids(TopicReader.readUntil(broker, TOPIC, new StringDeserializer(), r -> true, 1))).contains("before");
        Thread.sleep(3_000);
        assertThat(committed(admin, GROUP, violations)).as("committed past the refused record")
            .isLessThanOrEqualTo(huge);
        // the records of its batch that were taken may be there (more than once), the refused one is not
        assertThat(ids(TopicReader.readToEnd(broker, TOPIC, new StringDeserializer(), r -> true)))
            .doesNotContain("huge");

        // the topic's owner raises the limit: the record and the one after it arrive, and the position moves on
        raiseTheLimit(admin);
        assertThat(TopicReader.readUntil(broker, TOPIC, new StringDeserializer(),
            r -> r.value().contains("\"huge\""), 1)).as("the refused record, the limit raised").hasSize(1);
        assertThat(ids(TopicReader.readToEnd(broker, TOPIC, new StringDeserializer(), r -> true)))
            .contains("before", "huge", "after");
        Instant deadline = Instant.now().plusSeconds(60);
        while (committed(admin, GROUP, violations) <= huge && Instant.now().isBefore(deadline)) {
          Thread.sleep(200);
        }
        assertThat(committed(admin, GROUP, violations)).isGreaterThan(huge);
        exporter.close();
        t.join(30_000);
        assertThat(t.isAlive()).as("stopped when told, whatever its backoff").isFalse();
        // each record counted once, however often its batch was read
        assertThat(exporter.exported.get()).isEqualTo(3);
        assertThat(exporter.skipped.get()).isEqualTo(1);
      }
    }
  }

  /** The same, as a user runs it: {@code ./knockwatch export} says why it waits, and stops when told. */
  @Test
  void theLauncherSaysKafkaRefusedARecordAndSendsItOnceTheTopicTakesIt() throws Exception {
    String group = GROUP + "-launcher";
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(Files.createDirectories(dir.resolve("kafka")), 0);
         Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      Refused refused = smallTopicAndAHugeRefusal(broker, admin);
      try (Launched export = Launched.start(Launched.REPO, dir.resolve("launched"), Map.of(), "export", "--topic",
          TOPIC, "--group", group, "--bootstrap-servers", broker.bootstrapServers())) {
        export.awaitLogLine("Kafka did not take a record for " + TOPIC, Duration.ofMinutes(2));
        assertThat(committed(admin, group, refused.partition())).isLessThanOrEqualTo(refused.offset());
        assertThat(ids(TopicReader.readToEnd(broker, TOPIC, new StringDeserializer(), r -> true)))
            .doesNotContain("huge");
        raiseTheLimit(admin);
        assertThat(TopicReader.readUntil(broker, TOPIC, new StringDeserializer(),
            r -> r.value().contains("\"huge\""), 1)).as("the refused record, the limit raised").hasSize(1);
        Instant deadline = Instant.now().plusSeconds(60);
        while (committed(admin, group, refused.partition()) <= refused.offset() && Instant.now().isBefore(deadline)) {
          Thread.sleep(200);
        }
        assertThat(committed(admin, group, refused.partition())).isGreaterThan(refused.offset());
        assertThat(export.stop(Duration.ofSeconds(60))).isIn(0, 143);
      }
    }
  }

  /** The event ids of exported OCSF records, in order. */
  private static List<String> ids(Collection<ConsumerRecord<String, String>> records) {
    return records.stream().map(r -> {
      try {
        return Json.MAPPER.readTree(r.value()).at("/metadata/uid").asText();
      } catch (java.io.IOException e) {
        throw new AssertionError(r.value(), e);
      }
    }).toList();
  }

  private static long committed(Admin admin, String group, TopicPartition tp) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
        .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
    OffsetAndMetadata o = offsets.get(tp);
    return o == null ? 0 : o.offset();
  }
}
