package dev.knockwatch.notify.pipeline;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What was sent where: every send, skip (silenced, grouped, throttled) and give-up is a record on
 * {@code knockwatch.notifications}, keyed by the alert's fingerprint. At start the notifier reads
 * the topic back, so what was sent before a restart is not sent again; the last sent record of
 * each receiver and key also keeps the receiver's ref (a Slack message's ts).
 */
public final class NotificationLog implements AutoCloseable {

  /** One record. {@code status} and {@code count} are the alert's when it was handled. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Entry(String receiver, String key, String outcome, String event, String status, long count,
                      Instant at, String ref, String detail) {}

  public static final String SENT = "sent";
  static final Duration KEEP_RESOLVED = Duration.ofDays(1);
  private static final int FORGET_EVERY = 10_000;
  private final java.util.concurrent.atomic.AtomicLong remembered = new java.util.concurrent.atomic.AtomicLong();

  private final KafkaProducer<String, String> producer;
  private final Map<String, Entry> lastSent = new ConcurrentHashMap<>();

  private NotificationLog(KafkaProducer<String, String> producer) {
    this.producer = producer;
  }

  /** Reads the topic from its start to its end, then appends to it. */
  public static NotificationLog open(String bootstrapServers, Map<String, Object> clientProps) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    NotificationLog log = new NotificationLog(new KafkaProducer<>(p, new StringSerializer(), new StringSerializer()));
    log.replay(bootstrapServers, clientProps);
    return log;
  }

  private void replay(String bootstrapServers, Map<String, Object> clientProps) {
    Map<String, Object> c = new HashMap<>(clientProps);
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> parts = consumer.partitionsFor(Topics.NOTIFICATIONS.name(), Duration.ofSeconds(30)).stream()
          .map(i -> new TopicPartition(i.topic(), i.partition())).toList();
      consumer.assign(parts);
      consumer.seekToBeginning(parts);
      Map<TopicPartition, Long> end = consumer.endOffsets(parts);
      while (parts.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          try {
            remember(Json.read(r.value(), Entry.class));
          } catch (RuntimeException e) {
            // a record that is not an entry is no delivery: nothing to remember
          }
        }
      }
    }
  }

  public void record(Entry e) {
    producer.send(new ProducerRecord<>(Topics.NOTIFICATIONS.name(), e.key(), Json.write(e)));
    remember(e);
  }

  private void remember(Entry e) {
    if (SENT.equals(e.outcome())) {
      lastSent.put(e.receiver() + "\u0000" + e.key(), e);
      if (remembered.incrementAndGet() % FORGET_EVERY == 0) {
        forgetResolved(e.at() == null ? Instant.now() : e.at());
      }
    }
  }

  /**
   * Alerts resolved more than {@link #KEEP_RESOLVED} ago are forgotten, so the log in memory stays
   * the size of what is live: a resolution read again after that long is skipped anyway (a
   * resolution with no sent record is not sent).
   */
  private void forgetResolved(Instant now) {
    Instant before = now.minus(KEEP_RESOLVED);
    lastSent.values().removeIf(x -> "resolved".equals(x.status()) && x.at() != null && x.at().isBefore(before));
  }

  /** The last notification sent to {@code receiver} under {@code key}, or null. */
  public Entry lastSent(String receiver, String key) {
    return lastSent.get(receiver + "\u0000" + key);
  }

  /** Waits until every record so far is on the topic: before the alerts' offsets are committed. */
  public void flush() {
    producer.flush();
  }

  @Override
  public void close() {
    producer.close(Duration.ofSeconds(5));
  }

}
