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
import org.apache.kafka.common.utils.Utils;
import java.nio.charset.StandardCharsets;

/**
 * What was sent where: every send, skip (silenced, grouped, throttled) and give-up is a record on
 * {@code knockwatch.notifications}. The topic is co-partitioned with the alerts topic — an alert's
 * records go to the partition number of the alert's own — and compacted: keyed by receiver,
 * fingerprint and kind (the last {@code sent}, the last {@code intent}, the last of the others).
 * When a notifier is given an alerts partition it reads that partition of the log first
 * ({@link #load}), and forgets it when the partition goes ({@link #forget}): any number of
 * notifiers in one group know what the others sent (docs/RELIABILITY.md). The last sent record of
 * each receiver and key also keeps the receiver's ref (a Slack message's ts).
 *
 * <p>Before a send its intent ({@value #INTENT}) is on the topic, flushed; its outcome follows.
 * An intent read back with no outcome after it means the notifier stopped between the two: the
 * receiver may or may not have it ({@link #openIntent}).
 */
public final class NotificationLog implements AutoCloseable {

  /** One record. {@code status} and {@code count} are the alert's when it was handled. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Entry(String receiver, String key, String outcome, String event, String status, long count,
                      Instant at, String ref, String detail) {}

  public static final String SENT = "sent";
  public static final String INTENT = "intent";
  static final Duration KEEP_RESOLVED = Duration.ofDays(1);
  private static final int FORGET_EVERY = 10_000;
  private final java.util.concurrent.atomic.AtomicLong remembered = new java.util.concurrent.atomic.AtomicLong();

  private final KafkaProducer<String, String> producer;
  private final Map<String, Entry> lastSent = new ConcurrentHashMap<>();
  /** receiver NUL key -> an intent with no outcome after it yet */
  private final Map<String, Entry> intents = new ConcurrentHashMap<>();

  private final KafkaConsumer<String, String> reader;
  private volatile boolean readWhole;
  /** The alerts topic's partitions, as the cluster has them (`topics --partitions` may have made more than its default). */
  private final int alertsPartitionCount;

  private NotificationLog(KafkaProducer<String, String> producer, KafkaConsumer<String, String> reader,
      int alertPartitions) {
    this.producer = producer;
    this.alertsPartitionCount = alertPartitions;
    this.reader = reader;
  }

  /** Appends to the topic; what it holds is read partition by partition, by {@link #load}. */
  public static NotificationLog open(String bootstrapServers, Map<String, Object> clientProps) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.putIfAbsent(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Topics.REQUEST_TIMEOUT_MS);
    Map<String, Object> c = new HashMap<>(clientProps);
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.putIfAbsent(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, Topics.REQUEST_TIMEOUT_MS);
    KafkaConsumer<String, String> reader = new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer());
    int alertPartitions = reader.partitionsFor(Topics.ALERTS.name(), Duration.ofSeconds(30)).size();
    return new NotificationLog(new KafkaProducer<>(p, new StringSerializer(), new StringSerializer()), reader,
        alertPartitions);
  }

  /** The log's partition for an alert: the partition Kafka's default partitioner gives its fingerprint on the alerts topic. */
  public int partitionOf(String fingerprint) {
    return Utils.toPositive(Utils.murmur2(fingerprint.getBytes(StandardCharsets.UTF_8))) % alertsPartitionCount;
  }

  /**
   * Reads the log's partitions of these alerts partitions from their start to their end (before
   * their alerts are handled). A log with another partition count than the alerts topic (made
   * before the two were co-partitioned) is read whole, once.
   */
  public synchronized void load(java.util.Collection<Integer> alertPartitions) {
    List<TopicPartition> all = reader.partitionsFor(Topics.NOTIFICATIONS.name(), Duration.ofSeconds(30)).stream()
        .map(i -> new TopicPartition(i.topic(), i.partition())).toList();
    List<TopicPartition> parts;
    if (all.size() == alertsPartitionCount) {
      parts = alertPartitions.stream().map(n -> new TopicPartition(Topics.NOTIFICATIONS.name(), n)).toList();
    } else if (!readWhole) {
      readWhole = true;
      parts = all;
    } else {
      return;
    }
    reader.assign(parts);
    reader.seekToBeginning(parts);
    Map<TopicPartition, Long> end = reader.endOffsets(parts);
    while (parts.stream().anyMatch(tp -> reader.position(tp) < end.get(tp))) {
      for (ConsumerRecord<String, String> r : reader.poll(Duration.ofMillis(200))) {
        try {
          remember(Json.read(r.value(), Entry.class));
        } catch (RuntimeException e) {
          // a record that is not an entry is no delivery: nothing to remember
        }
      }
    }
    reader.assign(List.of());
  }

  /** Forgets what the log said of these alerts partitions' alerts: another notifier has them now. */
  public void forget(java.util.Collection<Integer> alertPartitions) {
    if (readWhole) {
      return;
    }
    java.util.Set<Integer> gone = java.util.Set.copyOf(alertPartitions);
    lastSent.values().removeIf(e -> gone.contains(partitionOf(e.key())));
    intents.values().removeIf(e -> gone.contains(partitionOf(e.key())));
  }

  public void record(Entry e) {
    producer.send(recordOf(e));
    remember(e);
  }

  private ProducerRecord<String, String> recordOf(Entry e) {
    String kind = SENT.equals(e.outcome()) || INTENT.equals(e.outcome()) ? e.outcome() : "other";
    return new ProducerRecord<>(Topics.NOTIFICATIONS.name(), partitionOf(e.key()),
        slot(e.receiver(), e.key()) + "\u0000" + kind, Json.write(e));
  }

  /** Records that these are about to be sent (a digest: one per alert), and waits until they are on the topic. */
  public void intend(List<Entry> entries) {
    List<java.util.concurrent.Future<?>> sent = new java.util.ArrayList<>(entries.size());
    for (Entry e : entries) {
      sent.add(producer.send(recordOf(e)));
    }
    producer.flush();
    for (java.util.concurrent.Future<?> f : sent) {
      try {
        f.get();
      } catch (InterruptedException x) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while recording an intent", x);
      } catch (java.util.concurrent.ExecutionException x) {
        throw new IllegalStateException("the intent could not be recorded: " + x.getCause(), x.getCause());
      }
    }
    entries.forEach(this::remember);
  }

  /** The intent to send {@code receiver} a notification under {@code key} that has no outcome, or null. */
  public Entry openIntent(String receiver, String key) {
    return intents.get(slot(receiver, key));
  }

  /** One receiver's notifications of one key: the log's record key (before its kind) and its maps' key. */
  private static String slot(String receiver, String key) {
    return receiver + "\u0000" + key;
  }

  private void remember(Entry e) {
    String k = slot(e.receiver(), e.key());
    if (INTENT.equals(e.outcome())) {
      intents.put(k, e);
      return;
    }
    intents.remove(k); // any outcome for the key follows (and settles) its intent
    if (SENT.equals(e.outcome())) {
      lastSent.put(k, e);
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
    intents.values().removeIf(x -> x.at() != null && x.at().isBefore(before));
  }

  /** The last notification sent to {@code receiver} under {@code key}, or null. */
  public Entry lastSent(String receiver, String key) {
    return lastSent.get(slot(receiver, key));
  }

  /** Waits until every record so far is on the topic: before the alerts' offsets are committed. */
  public void flush() {
    producer.flush();
  }

  @Override
  public void close() {
    producer.close(Duration.ofSeconds(5));
    reader.close(Duration.ofSeconds(5));
  }

}
