package dev.knockwatch.testkit;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Reads a topic from its start (committed records only), without a consumer group. */
public final class TopicReader {

  private TopicReader() {}

  /**
   * Reads until {@code count} records match {@code wanted} or 60 s pass, and returns the matches.
   * Tests assert on the size, so a missing record fails with the topic named.
   */
  public static <V> List<ConsumerRecord<String, V>> readUntil(EmbeddedKafkaBroker broker, String topic,
      Deserializer<V> values, Predicate<ConsumerRecord<String, V>> wanted, int count) {
    return read(broker, topic, values, wanted, count, Duration.ofSeconds(60));
  }

  /** Every record on {@code topic} up to its current end that matches {@code wanted}. */
  public static <V> List<ConsumerRecord<String, V>> readToEnd(EmbeddedKafkaBroker broker, String topic,
      Deserializer<V> values, Predicate<ConsumerRecord<String, V>> wanted) {
    return read(broker, topic, values, wanted, Integer.MAX_VALUE, Duration.ofSeconds(60));
  }

  /** How many records {@code topic} holds so far (the sum of its partitions' end offsets). */
  public static long recordCount(EmbeddedKafkaBroker broker, String topic) {
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(Map.<String, Object>of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()), new StringDeserializer(),
        new StringDeserializer())) {
      List<TopicPartition> parts = partitions(c, topic, Instant.now().plusSeconds(60));
      return c.endOffsets(parts).values().stream().mapToLong(Long::longValue).sum();
    }
  }

  private static <V> List<ConsumerRecord<String, V>> read(EmbeddedKafkaBroker broker, String topic,
      Deserializer<V> values, Predicate<ConsumerRecord<String, V>> wanted, int count, Duration timeout) {
    Map<String, Object> p = Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
        ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    List<ConsumerRecord<String, V>> out = new ArrayList<>();
    try (KafkaConsumer<String, V> c = new KafkaConsumer<>(p, new StringDeserializer(), values)) {
      Instant deadline = Instant.now().plus(timeout);
      List<TopicPartition> parts = partitions(c, topic, deadline);
      c.assign(parts);
      c.seekToBeginning(parts);
      Map<TopicPartition, Long> ends = c.endOffsets(parts);
      while (out.size() < count && Instant.now().isBefore(deadline)) {
        if (count == Integer.MAX_VALUE && parts.stream().allMatch(tp -> c.position(tp) >= ends.get(tp))) {
          break;
        }
        for (ConsumerRecord<String, V> r : c.poll(Duration.ofMillis(100))) {
          if (wanted.test(r)) {
            out.add(r);
          }
        }
      }
    }
    return out;
  }

  /**
   * The topic's partitions, once the broker's metadata names them: a topic created a moment ago
   * may not be in it yet, and a consumer assigned no partition cannot poll.
   */
  private static List<TopicPartition> partitions(KafkaConsumer<?, ?> c, String topic, Instant deadline) {
    while (true) {
      List<TopicPartition> parts = c.partitionsFor(topic).stream()
          .map(info -> new TopicPartition(topic, info.partition())).toList();
      if (!parts.isEmpty()) {
        return parts;
      }
      if (Instant.now().isAfter(deadline)) {
        throw new AssertionError("topic " + topic + " has no partitions in the broker's metadata");
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for topic " + topic, e);
      }
    }
  }
}
