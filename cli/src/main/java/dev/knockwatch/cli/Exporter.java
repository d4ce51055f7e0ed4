package dev.knockwatch.cli;

import dev.knockwatch.events.WritableTopics;
import dev.knockwatch.cli.run.UsageException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Durations;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.export.Ecs;
import dev.knockwatch.events.export.Ocsf;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The export stage: every refusal on {@code knockwatch.violations} and every alert record on
 * {@code knockwatch.alerts} (read committed), in OCSF or ECS, to a topic a SIEM's connector reads,
 * keyed by commandId. At least once: a batch's offsets are committed after Kafka took each of its
 * records; a record it did not take (refused, timed out) sends the batch again, later and later,
 * until it is taken, and nothing after it is committed meanwhile.
 * A record that is no event or alert is skipped and counted.
 */
final class Exporter implements Runnable, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Exporter.class);
  /** The wait before a refused batch goes again: doubling from the first to the last. */
  static final Duration MIN_BACKOFF = Duration.ofMillis(500);
  static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

  enum Format {
    OCSF, ECS;

    /** {@code ocsf} or {@code ecs}, as the options spell it. */
    String id() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The topic written unless one is named: {@code knockwatch.export.ocsf}. */
    String defaultTopic() {
      return "knockwatch.export." + id();
    }

    /** The consumer group unless one is named: {@code knockwatch-export-ocsf}. */
    String defaultGroup() {
      return "knockwatch-export-" + id();
    }

    /** The format an option names; a usage error naming {@code option} otherwise. */
    static Format of(String option, String value) {
      for (Format f : values()) {
        if (f.id().equals(value)) {
          return f;
        }
      }
      throw new UsageException(option + " " + value + " is not one of ocsf, ecs");
    }
  }

  private final KafkaConsumer<String, byte[]> consumer;
  private final KafkaProducer<String, byte[]> producer;
  private final Format format;
  private final String topic;
  final AtomicLong exported = new AtomicLong();
  final AtomicLong skipped = new AtomicLong();
  private volatile boolean running = true;

  Exporter(String bootstrap, Map<String, Object> clientProps, Format format, String topic, String group) {
    this.format = format;
    this.topic = topic;
    Map<String, Object> c = new HashMap<>(clientProps);
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    this.consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer());
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 20);
    this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
  }

  /** Creates the export topic when it is missing (the broker's defaults); a topic that exists is kept as it is. */
  static void ensureTopic(String bootstrap, Map<String, Object> clientProps, String topic)
      throws InterruptedException, ExecutionException, java.util.concurrent.TimeoutException {
    Map<String, Object> a = new HashMap<>(clientProps);
    a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(a)) {
      if (!admin.listTopics().names().get().contains(topic)) {
        WritableTopics.create(admin, List.of(new NewTopic(topic, Optional.of(Topics.VIOLATIONS.partitions()),
            Optional.empty())));
      }
    }
  }

  /** A record as the export topic takes it: keyed by its command, in the export format. */
  record Mapped(String commandId, byte[] value) {}

  /** The record in the export format; empty when it is no event or alert. */
  Optional<Mapped> map(ConsumerRecord<String, byte[]> r) {
    if (r.value() == null) {
      return Optional.empty();
    }
    try {
      ObjectNode out;
      String commandId;
      if (r.topic().equals(Topics.VIOLATIONS.name())) {
        ViolationEvent e = Json.MAPPER.readValue(r.value(), ViolationEvent.class);
        out = format == Format.OCSF ? Ocsf.event(e) : Ecs.event(e);
        commandId = e.key();
      } else {
        Alert a = Json.MAPPER.readValue(r.value(), Alert.class);
        out = format == Format.OCSF ? Ocsf.finding(a) : Ecs.alert(a);
        commandId = a.commandId(); // the alerts topic is keyed by fingerprint; a SIEM reads a command's records in order
      }
      return Optional.of(new Mapped(commandId, out.toString().getBytes(StandardCharsets.UTF_8)));
    } catch (java.io.IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  @Override
  public void run() {
    Duration backoff = Duration.ZERO;
    try {
      consumer.subscribe(List.of(Topics.VIOLATIONS.name(), Topics.ALERTS.name()));
      while (running) {
        var records = consumer.poll(Duration.ofMillis(500));
        List<Future<RecordMetadata>> sent = new ArrayList<>(records.count());
        long skippedHere = 0;
        for (ConsumerRecord<String, byte[]> r : records) {
          Optional<Mapped> mapped = map(r);
          if (mapped.isEmpty()) {
            if (skipped.get() + skippedHere++ == 0) {
              log.warn("export: {}-{}@{} is no event or alert: skipped (counted from now on)", r.topic(), r.partition(),
                  r.offset());
            }
            continue;
          }
          sent.add(producer.send(new ProducerRecord<>(topic, mapped.get().commandId(), mapped.get().value())));
        }
        if (records.isEmpty()) {
          continue;
        }
        // flush returns when every record is answered, taken or not: each answer is read here
        producer.flush();
        String refused = refusal(sent);
        if (refused == null) {
          consumer.commitSync();
          exported.addAndGet(sent.size()); // counted once, when committed: a batch read again counts once
          skipped.addAndGet(skippedHere);
          backoff = Duration.ZERO;
          continue;
        }
        // not committed: the batch is read again from its first record (the ones taken go twice: at least once)
        backoff = Durations.doubled(backoff, MIN_BACKOFF, MAX_BACKOFF);
        log.warn("export: Kafka did not take a record for {}: {}; the batch goes again in {} ms", topic, refused,
            backoff.toMillis());
        for (TopicPartition tp : records.partitions()) {
          if (consumer.assignment().contains(tp)) {
            consumer.seek(tp, records.records(tp).get(0).offset());
          }
        }
        for (long waited = 0; waited < backoff.toMillis() && running; waited += 100) {
          Thread.sleep(100); // a close does not wait out the backoff
        }
      }
    } catch (WakeupException e) {
      // closing
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      consumer.close();
      producer.close(Duration.ofSeconds(10));
    }
  }

  /** The first send Kafka did not take, as a line (null: all were taken); each is answered by now. */
  private static String refusal(List<Future<RecordMetadata>> sent) throws InterruptedException {
    for (Future<RecordMetadata> f : sent) {
      try {
        f.get();
      } catch (ExecutionException e) {
        return String.valueOf(e.getCause());
      }
    }
    return null;
  }

  @Override
  public void close() {
    running = false;
    consumer.wakeup();
  }
}
