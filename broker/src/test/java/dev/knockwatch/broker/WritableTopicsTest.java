package dev.knockwatch.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.WritableTopics;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A topic {@link WritableTopics} made keeps the first records written to it: an idempotent
 * producer that writes at once, several requests in flight to each partition, loses none
 * (KAFKA-15591: a first request refused NOT_LEADER_OR_FOLLOWER by a broker that has not applied
 * the new partition, a later one taken, and the first's retries refused out of sequence).
 */
@Tag("integration")
class WritableTopicsTest {

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

  private static Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
  }

  @Test
  void everyRecordWrittenTheMomentTheTopicIsMadeIsKept() throws Exception {
    int topics = 30;
    int partitions = 6;
    int perPartition = 200;
    try (Admin admin = admin();
         KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(
             ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
             ProducerConfig.LINGER_MS_CONFIG, 0,
             ProducerConfig.BATCH_SIZE_CONFIG, 512,
             ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5,
             ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 20_000,
             ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000), new StringSerializer(), new StringSerializer())) {
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      for (int t = 0; t < topics; t++) {
        String name = "made-" + t;
        WritableTopics.create(admin, List.of(new NewTopic(name, partitions, (short) 1)));
        for (int i = 0; i < perPartition; i++) {
          for (int part = 0; part < partitions; part++) {
            sent.add(p.send(new ProducerRecord<>(name, part, null, "record " + i + " of a partition")));
          }
        }
      }
      List<String> lost = new ArrayList<>();
      for (Future<RecordMetadata> f : sent) {
        try {
          f.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
          lost.add(e.getCause().toString());
        }
      }
      assertThat(lost).as("records refused of " + sent.size()).isEmpty();
    }
  }

  @Test
  void aTopicThatExistsIsLeftAsItIsAndARefusalThatWaitingCannotChangeEndsTheWaitAtOnce() throws Exception {
    try (Admin admin = admin()) {
      WritableTopics.create(admin, List.of(new NewTopic("made-twice", 2, (short) 1)));
      WritableTopics.create(admin, List.of(new NewTopic("made-twice", 5, (short) 1)));
      assertThat(admin.describeTopics(List.of("made-twice")).allTopicNames().get(30, TimeUnit.SECONDS)
          .get("made-twice").partitions()).hasSize(2);
      assertThatThrownBy(() -> WritableTopics.create(admin, List.of(new NewTopic("needs-three-brokers", 1, (short) 3))))
          .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InvalidReplicationFactorException.class);
    }
  }
}
