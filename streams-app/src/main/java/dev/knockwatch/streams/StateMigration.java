package dev.knockwatch.streams;

import dev.knockwatch.events.WritableTopics;
import dev.knockwatch.streams.detect.BypassDetector;
import dev.knockwatch.streams.detect.CountDetector;
import dev.knockwatch.streams.detect.DetectProcessor;
import dev.knockwatch.streams.detect.SandboxEscapeDetector;
import dev.knockwatch.streams.detect.ValueCountDetector;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The upgrade to one state per key. Up to this version each stateful rule kept its own store
 * ({@code count-<rule>}, {@code bypass-<rule>}, {@code escape-<rule>}, each with {@code -by-grain} on
 * that path); now a path keeps one ({@code detect}, {@code detect-by-grain}) whose value holds every
 * rule's slice, in the same bytes the old stores held. Before the app first starts with the new
 * store, each key's values are read from the old stores' changelogs and written, as one value, to
 * the new store's changelog, partition for partition: Kafka Streams then restores the new store
 * from it, and a command three refusals into a retry storm at the upgrade pages at its fifth, as it
 * would have. A new store's changelog that exists already (a migrated or a new deployment) is left
 * as it is; the old changelogs are left too (an operator may delete them,
 * docs/OPERATIONS.md).
 */
public final class StateMigration {

  private static final Logger log = LoggerFactory.getLogger(StateMigration.class);
  private static final Duration WAIT = Duration.ofSeconds(60);

  private StateMigration() {}

  /** What was migrated: keys written to the new changelogs, and the old changelogs read. */
  public record Result(int keys, List<String> from) {}

  /** The old store of {@code rule}: where its slices were kept before one state per key; null for none. */
  static String formerStore(Rule rule, String suffix) {
    String prefix = rule.is(CountDetector.Settings.class) || rule.is(ValueCountDetector.Settings.class) ? "count-"
        : rule.is(BypassDetector.Settings.class) ? "bypass-"
        : rule.is(SandboxEscapeDetector.Settings.class) ? "escape-" : null;
    return prefix == null ? null : prefix + rule.id() + suffix;
  }

  private static String changelog(String applicationId, String store) {
    return applicationId + "-" + store + "-changelog";
  }

  /** Migrates the command's path and the by-grain path of {@code policy}'s rules, if their old stores exist and the new ones do not. */
  public static Result migrate(String applicationId, String bootstrapServers, Map<String, Object> clientProps,
      Policy policy) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    try (Admin admin = Admin.create(p)) {
      Set<String> topics = admin.listTopics().names().get(WAIT.toSeconds(), TimeUnit.SECONDS);
      int keys = 0;
      List<String> from = new ArrayList<>();
      for (boolean byGrain : new boolean[] {false, true}) {
        String suffix = byGrain ? DetectionTopology.BY_GRAIN : "";
        List<Rule> rules = policy.rules().stream()
            .filter(r -> byGrain ? r.per() != Grain.COMMAND : r.per() != Grain.AGENT)
            .filter(DetectProcessor::judgesHere).toList();
        String target = changelog(applicationId, DetectionTopology.DETECT_STORE + suffix);
        Map<Rule, String> old = new LinkedHashMap<>();
        for (Rule r : rules) {
          String store = formerStore(r, suffix);
          if (store != null && topics.contains(changelog(applicationId, store))) {
            old.put(r, changelog(applicationId, store));
          }
        }
        if (old.isEmpty() || topics.contains(target)) {
          continue;
        }
        keys += migrate(admin, bootstrapServers, clientProps, rules, old, target);
        from.addAll(old.values());
      }
      if (!from.isEmpty()) {
        log.info("{}: moved the state of {} keys from the stores of one rule each ({}) to one state per key",
            applicationId, keys, String.join(", ", from));
      }
      return new Result(keys, List.copyOf(from));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while moving detection's state", e);
    } catch (Exception e) {
      throw new IllegalStateException("could not move detection's state to one state per key: " + e.getMessage(), e);
    }
  }

  private static int migrate(Admin admin, String bootstrap, Map<String, Object> clientProps, List<Rule> rules,
      Map<Rule, String> old, String target) throws Exception {
    Map<String, TopicDescription> described = admin.describeTopics(old.values()).allTopicNames()
        .get(WAIT.toSeconds(), TimeUnit.SECONDS);
    TopicDescription first = described.values().iterator().next();
    int partitions = first.partitions().size();
    short replicas = (short) first.partitions().get(0).replicas().size();
    // partition -> key -> rule -> the rule's last value of the key (a tombstone removes it)
    Map<Integer, Map<String, Map<Rule, byte[]>>> state = new HashMap<>();
    for (Map.Entry<Rule, String> e : old.entrySet()) {
      readAll(bootstrap, clientProps, e.getValue(), (partition, key, value) -> {
        Map<Rule, byte[]> slices = state.computeIfAbsent(partition, k -> new HashMap<>())
            .computeIfAbsent(key, k -> new LinkedHashMap<>());
        if (value == null) {
          slices.remove(e.getKey());
        } else {
          slices.put(e.getKey(), value);
        }
      });
    }
    WritableTopics.create(admin, List.of(new NewTopic(target, partitions, replicas)
        .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT))));
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
    int keys = 0;
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
        new ByteArraySerializer())) {
      for (Map.Entry<Integer, Map<String, Map<Rule, byte[]>>> part : state.entrySet()) {
        for (Map.Entry<String, Map<Rule, byte[]>> key : part.getValue().entrySet()) {
          if (key.getValue().isEmpty()) {
            continue;
          }
          List<DetectProcessor.Slices.Raw> raw = new ArrayList<>();
          key.getValue().forEach((rule, bytes) -> raw.add(new DetectProcessor.Slices.Raw(rule.id(),
              rule.detector().spec().name(), bytes)));
          sent.add(producer.send(new ProducerRecord<>(target, part.getKey(),
              key.getKey().getBytes(java.nio.charset.StandardCharsets.UTF_8), DetectProcessor.Slices.encode(raw))));
          keys++;
        }
      }
      producer.flush();
    }
    for (Future<RecordMetadata> f : sent) {
      f.get(WAIT.toSeconds(), TimeUnit.SECONDS); // every value is written, or the upgrade stops here
    }
    return keys;
  }

  interface Visitor {
    void accept(int partition, String key, byte[] value);
  }

  /** Every record of {@code topic}, in order per partition, up to its end when read. */
  private static void readAll(String bootstrap, Map<String, Object> clientProps, String topic, Visitor visitor) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> parts = c.partitionsFor(topic).stream()
          .map(i -> new TopicPartition(topic, i.partition())).toList();
      c.assign(parts);
      c.seekToBeginning(parts);
      Map<TopicPartition, Long> end = c.endOffsets(parts);
      Instant deadline = Instant.now().plus(WAIT);
      while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
        if (Instant.now().isAfter(deadline)) {
          throw new IllegalStateException(topic + " was not read to its end within " + WAIT.toSeconds() + " s");
        }
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
          if (r.key() != null) {
            visitor.accept(r.partition(), new String(r.key(), java.nio.charset.StandardCharsets.UTF_8), r.value());
          }
        }
      }
    }
  }
}
