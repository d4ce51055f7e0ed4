package dev.knockwatch.notify.silence;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Silence;
import dev.knockwatch.events.Topics;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The silences on {@code knockwatch.silences} (compacted), read from its start and kept current:
 * the muter stage of the notifier, and what {@code knockwatch silence} writes and lists.
 */
public final class Silences implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Silences.class);
  private final KafkaConsumer<String, String> consumer;
  private final Map<String, Silence> byId = new LinkedHashMap<>();

  /** The notifier's silences, refreshed while it runs: an idle fetch waits long at the broker. */
  public Silences(String bootstrapServers, Map<String, Object> clientProps) {
    this(bootstrapServers, clientProps, dev.knockwatch.events.Topics.ASSIGNED_FETCH_WAIT_MS);
  }

  /**
   * Silences read on demand ({@link #catchUp} for each request of the API or the CLI): a fetch left
   * waiting at the broker holds the consumer's connection, and the next request's end offsets wait
   * behind it (the broker answers a connection's requests in order), so such a reader's fetch waits
   * {@value #ON_DEMAND_FETCH_WAIT_MS} ms at most.
   */
  public static Silences onDemand(String bootstrapServers, Map<String, Object> clientProps) {
    return new Silences(bootstrapServers, clientProps, ON_DEMAND_FETCH_WAIT_MS);
  }

  static final int ON_DEMAND_FETCH_WAIT_MS = 50;

  private Silences(String bootstrapServers, Map<String, Object> clientProps, int fetchWaitMs) {
    Map<String, Object> c = new HashMap<>(clientProps);
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, fetchWaitMs);
    consumer = new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer());
    List<TopicPartition> parts = consumer.partitionsFor(Topics.SILENCES.name(), Duration.ofSeconds(30)).stream()
        .map(i -> new TopicPartition(i.topic(), i.partition())).toList();
    consumer.assign(parts);
    consumer.seekToBeginning(parts);
    catchUp();
  }

  /** Reads to the topic's current end: what was written before this call is then known. */
  public void catchUp() {
    Map<TopicPartition, Long> end = consumer.endOffsets(consumer.assignment());
    while (end.entrySet().stream().anyMatch(e -> consumer.position(e.getKey()) < e.getValue())) {
      apply(consumer.poll(Duration.ofMillis(200)));
    }
  }

  /** Takes in what was written since the last call, without waiting. */
  public void refresh() {
    apply(consumer.poll(Duration.ZERO));
  }

  private void apply(Iterable<ConsumerRecord<String, String>> records) {
    for (ConsumerRecord<String, String> r : records) {
      if (r.value() == null) {
        byId.remove(r.key());
        continue;
      }
      try {
        Silence s = Json.read(r.value(), Silence.class);
        byId.put(s.id(), s);
      } catch (RuntimeException e) {
        log.warn("skipping a value on {} offset {} that is not a silence", r.topic(), r.offset());
      }
    }
  }

  /** The active silence that mutes {@code alert} at {@code now}, if any. */
  public Optional<Silence> muting(Alert alert, Instant now) {
    return byId.values().stream().filter(s -> s.activeAt(now) && s.matches(alert)).findFirst();
  }

  public List<Silence> all() {
    List<Silence> out = new ArrayList<>(byId.values());
    out.sort(Comparator.comparing(Silence::startsAt).thenComparing(Silence::id));
    return out;
  }

  public Optional<Silence> get(String id) {
    return Optional.ofNullable(byId.get(id));
  }

  /** Writes a silence (new, or expired) and waits until Kafka has it. */
  public static void write(String bootstrapServers, Map<String, Object> clientProps, Silence silence) throws Exception {
    try (KafkaProducer<String, String> p = producer(bootstrapServers, clientProps)) {
      write(p, silence);
    }
  }

  /** Writes a silence with {@code p} (one of {@link #producer}) and waits until Kafka has it. */
  public static void write(KafkaProducer<String, String> p, Silence silence) throws Exception {
    p.send(new ProducerRecord<>(Topics.SILENCES.name(), silence.id(), Json.write(silence))).get(30, TimeUnit.SECONDS);
  }

  /** A producer of silences: every write acknowledged by every in-sync replica. */
  public static KafkaProducer<String, String> producer(String bootstrapServers, Map<String, Object> clientProps) {
    Map<String, Object> c = new HashMap<>(clientProps);
    c.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    c.put(ProducerConfig.ACKS_CONFIG, "all");
    return new KafkaProducer<>(c, new StringSerializer(), new StringSerializer());
  }

  @Override
  public void close() {
    consumer.close(Duration.ofSeconds(5));
  }
}
