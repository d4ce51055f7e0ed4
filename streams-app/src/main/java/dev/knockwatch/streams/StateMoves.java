package dev.knockwatch.streams;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.streams.detect.ExactDuplicateProcessor;
import dev.knockwatch.streams.detect.SandboxEscapeDetector;
import dev.knockwatch.streams.discover.DiscoverProcessor;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.lifecycle.AlertState;
import dev.knockwatch.streams.lifecycle.AlertStateSerde;
import dev.knockwatch.streams.timeline.TimelineIndex;
import dev.knockwatch.streams.timeline.TimelineProcessor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.common.utils.Utils;

/**
 * How {@link PartitionGrowth} moves one topic's state: each store's kind of key (how its changelog
 * key names the key its record was routed by), each partition read as it was before the run, each
 * live key's last value copied to the partition its key goes to now, and only once every copy is
 * written, a tombstone where it was.
 */
final class StateMoves {

  static final Duration WAIT = Duration.ofSeconds(60);
  /**
   * A read's poll: a partition ending in a transaction's marker gives no record for its last fetch,
   * and a poll with none waits out its whole timeout.
   */
  static final Duration POLL = Duration.ofMillis(20);
  static final String CHANGELOG = "-changelog";

  private StateMoves() {}

  /** How a store's changelog key names the key its record was routed by. */
  enum Kind {
    /** the key itself: rules' state, the exact duplicates' digests, the timeline's commands */
    WHOLE,
    /** a window store's: the key, then the window's start (8 bytes) and a sequence number (4) */
    WINDOW,
    /** the timeline's events: the command id, NUL and 12 digits */
    EVENT,
    /** a firing alert's state, keyed by its command and fingerprint: the key whose hash(rule, key) is the fingerprint */
    LIFECYCLE,
    /** seen event ids (hashes): copied to each partition the old one's keys can go to; they expire within minutes */
    SIBLINGS,
    /** the timeline's index: emptied, then built again from the commands at the timeline's next start */
    REBUILD,
    /** tallies per partition that the query API adds up: they stay */
    STAY,
    /** the notification log: its partition is its entry's alert key's */
    NOTIFICATION
  }

  /** The kind of {@code store}'s changelog; null for a store this release does not have. */
  static Kind kindOf(String store) {
    if (store.equals(ExactDuplicateProcessor.idStore(DetectionTopology.EXACT_DUPLICATES_STORE))
        || store.equals(ExactDuplicateProcessor.idStore(TimelineTopology.EXACT_DUPLICATES))
        || store.equals(DetectionTopology.DEDUP_STORE)) {
      return Kind.SIBLINGS; // the sightings' key ends in what an agent wrote (host, port): copied too, they live a minute
    }
    if (store.startsWith("count-")) {
      return Kind.WINDOW; // a count in aligned windows, at the command's grain or -by-grain (CountDetector)
    }
    if (store.equals(DetectionTopology.DETECT_STORE) || store.equals(DetectionTopology.DETECT_STORE + DetectionTopology.BY_GRAIN)
        || store.equals(DetectionTopology.EXACT_DUPLICATES_STORE) || store.equals(TimelineTopology.EXACT_DUPLICATES)
        || store.equals(TimelineProcessor.COMMANDS)) {
      return Kind.WHOLE;
    }
    if (store.equals(TimelineProcessor.EVENTS)) {
      return Kind.EVENT;
    }
    if (store.equals(AlertLifecycleProcessor.STORE) || store.equals(DetectionTopology.BY_GRAIN_LIFECYCLE_STORE)) {
      return Kind.LIFECYCLE;
    }
    if (store.equals(TimelineIndex.STORE)) {
      return Kind.REBUILD;
    }
    if (store.equals(DiscoverProcessor.ROLE_HOURS) || store.equals(DiscoverProcessor.OVERVIEW)) {
      return Kind.STAY;
    }
    return null;
  }

  /** The partition of {@code key}'s records among {@code partitions}: Kafka's default partitioner's. */
  static int partitionOf(byte[] key, int partitions) {
    return Utils.toPositive(Utils.murmur2(key)) % partitions;
  }

  record Moves(int live, int moved, int left) {}

  /** A key to delete from the partition it was in, at its last record's time. */
  private record Tombstone(int partition, byte[] key, long timestamp) {}

  /** Moves {@code topic}'s live keys, partition by partition, to where their keys go among {@code to}. */
  static Moves move(KafkaConsumer<byte[], byte[]> reader, KafkaProducer<byte[], byte[]> producer,
      String topic, Kind kind, int from, int to, GrainKeys grainKeys) throws InterruptedException, ExecutionException,
      java.util.concurrent.TimeoutException {
    if (kind == Kind.STAY) {
      return new Moves(0, 0, 0);
    }
    int live = 0;
    int moved = 0;
    int left = 0;
    AlertStateSerde states = new AlertStateSerde();
    // each partition as it was before this run wrote to any: a moved key is not read again where it went
    Map<TopicPartition, Long> before = ends(reader, topic);
    List<Future<RecordMetadata>> copies = new ArrayList<>();
    List<Tombstone> tombstones = new ArrayList<>();
    for (int part = 0; part < to; part++) {
      TopicPartition tp = new TopicPartition(topic, part);
      long end = before.get(tp);
      // first each key's last offset (its value held only while it is sent), then its last record again
      Map<Bytes, Long> last = new HashMap<>();
      scan(reader, tp, end, r -> {
        if (r.value() == null) {
          last.remove(Bytes.wrap(r.key()));
        } else {
          last.put(Bytes.wrap(r.key()), r.offset());
        }
      });
      live += last.size();
      int[] counts = new int[2];
      int here = part;
      scan(reader, tp, end, r -> {
        Long newest = last.get(Bytes.wrap(r.key()));
        if (newest == null || newest != r.offset()) {
          return;
        }
        byte[] key = r.key();
        if (kind == Kind.REBUILD) {
          tombstones.add(new Tombstone(here, key, r.timestamp()));
          return;
        }
        if (kind == Kind.SIBLINGS) {
          if (here < from) { // the copies of a run before are not copied again
            for (int q = here + from; q < to; q += from) {
              copies.add(producer.send(new ProducerRecord<>(topic, q, r.timestamp(), key, r.value(), r.headers())));
            }
          }
          return;
        }
        Integer target = switch (kind) {
          case WHOLE -> partitionOf(key, to);
          case WINDOW -> key.length < 12 ? null : partitionOf(Arrays.copyOf(key, key.length - 12), to);
          case EVENT -> key.length < 13 ? null : partitionOf(Arrays.copyOf(key, key.length - 13), to);
          case NOTIFICATION -> {
            String alertKey = notificationKey(r.value());
            yield alertKey == null ? null : partitionOf(alertKey.getBytes(StandardCharsets.UTF_8), to);
          }
          case LIFECYCLE -> {
            AlertState s = states.deserializer().deserialize(topic, r.value());
            String routed = s == null || s.alert() == null ? null : keyOf(s.alert(), new String(key, StandardCharsets.UTF_8),
                topic.endsWith(DetectionTopology.BY_GRAIN_LIFECYCLE_STORE + CHANGELOG) ? grainKeys.of(here % from) : Set.of());
            if (routed == null) {
              counts[1]++;
            }
            yield routed == null ? null : partitionOf(routed.getBytes(StandardCharsets.UTF_8), to);
          }
          default -> null;
        };
        if (target != null && target != here) {
          copies.add(producer.send(new ProducerRecord<>(topic, target, r.timestamp(), key, r.value(), r.headers())));
          tombstones.add(new Tombstone(here, key, r.timestamp()));
          counts[0]++;
        }
      });
      moved += counts[0];
      left += counts[1];
    }
    // a key's tombstone only once its copy is written: a run that stops between the two leaves both, and
    // the run after it copies the same value again
    await(producer, copies);
    List<Future<RecordMetadata>> deleted = new ArrayList<>();
    for (Tombstone t : tombstones) {
      deleted.add(producer.send(new ProducerRecord<>(topic, t.partition(), t.timestamp(), t.key(), (byte[]) null)));
    }
    await(producer, deleted);
    return new Moves(live, moved, left);
  }

  private static void await(KafkaProducer<byte[], byte[]> producer, List<Future<RecordMetadata>> sent)
      throws InterruptedException, ExecutionException, java.util.concurrent.TimeoutException {
    producer.flush();
    for (Future<RecordMetadata> f : sent) {
      f.get(WAIT.toSeconds(), TimeUnit.SECONDS); // every record is written, or the growth stops here (run it again)
    }
  }

  /** The alert key of a notification log entry (its partition's), or null for a value that is no entry. */
  private static String notificationKey(byte[] value) {
    try {
      JsonNode entry = Json.MAPPER.readTree(new String(value, StandardCharsets.UTF_8));
      return entry.hasNonNull("key") ? entry.get("key").asText() : null;
    } catch (java.io.IOException e) {
      return null;
    }
  }

  /**
   * The key an alert's state was kept under: its fingerprint is hash(rule, key) (with the escape
   * rule's suffixes); on the command's path the key is what the store's key starts with, on the
   * by-grain path one of the grain keys of its partition. Null when none matches.
   */
  static String keyOf(Alert alert, String storeKey, Set<String> grainKeys) {
    Set<String> candidates = new LinkedHashSet<>();
    int sep = storeKey.lastIndexOf('|');
    if (sep > 0) {
      candidates.add(storeKey.substring(0, sep));
    }
    candidates.addAll(grainKeys);
    for (String c : candidates) {
      for (String suffix : List.of("", SandboxEscapeDetector.APPROVED, SandboxEscapeDetector.UNANSWERED)) {
        if (Alert.fingerprintOf(alert.rule() + suffix, c).equals(alert.fingerprint())) {
          return c;
        }
      }
    }
    return null;
  }

  /** Every key on the by-grain topic's partitions, read once a partition when first asked. */
  static final class GrainKeys {
    private final KafkaConsumer<byte[], byte[]> reader;
    private final Map<Integer, Set<String>> byPartition = new HashMap<>();

    GrainKeys(KafkaConsumer<byte[], byte[]> reader) {
      this.reader = reader;
    }

    Set<String> of(int partition) {
      return byPartition.computeIfAbsent(partition, p -> {
        Set<String> keys = new java.util.HashSet<>();
        TopicPartition tp = new TopicPartition(Topics.BY_GRAIN.name(), p);
        scan(reader, tp, ends(reader, tp.topic()).get(tp),
            r -> keys.add(new String(r.key(), StandardCharsets.UTF_8)));
        return keys;
      });
    }
  }

  static KafkaConsumer<byte[], byte[]> reader(String bootstrap, Map<String, Object> clientProps) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // a committed offset that retention passed: what follows it from the log's start is still unread
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    // partition after partition from one consumer: the fetch it sends ahead at a partition's end would
    // hold the next partition's first fetch for the broker's whole wait (500 ms by default)
    p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 10);
    return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /** The end of each partition of {@code topic} (the last stable offset: what a committed read reaches). */
  private static Map<TopicPartition, Long> ends(KafkaConsumer<byte[], byte[]> c, String topic) {
    return c.endOffsets(c.partitionsFor(topic).stream().map(i -> new TopicPartition(topic, i.partition())).toList());
  }

  /** Every keyed record of one partition below {@code end}, in order. */
  private static void scan(KafkaConsumer<byte[], byte[]> c, TopicPartition tp, long end,
      Consumer<ConsumerRecord<byte[], byte[]>> each) {
    if (end <= 0) {
      return;
    }
    c.assign(List.of(tp));
    c.seekToBeginning(List.of(tp));
    Instant stalled = Instant.now().plus(WAIT);
    while (c.position(tp) < end) {
      var records = c.poll(POLL);
      if (!records.isEmpty()) {
        stalled = Instant.now().plus(WAIT);
      } else if (Instant.now().isAfter(stalled)) {
        throw new IllegalStateException(tp + " gave nothing for " + WAIT.toSeconds() + " s at " + c.position(tp)
            + " of " + end);
      }
      for (ConsumerRecord<byte[], byte[]> r : records) {
        if (r.key() != null && r.offset() < end) {
          each.accept(r);
        }
      }
    }
  }
}
