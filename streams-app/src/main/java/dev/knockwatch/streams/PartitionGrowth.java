package dev.knockwatch.streams;

import dev.knockwatch.events.Topics;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The keyed topics grown past the partition count they were made with, state and all. A key's
 * records go to {@code murmur2(key) % partitions}, and Kafka Streams keeps a key's state with the
 * task of that partition: at k times the count, a key of partition p goes to one of p, p + n, ...,
 * p + (k - 1)n, and its state must go with it. With every streams and notify instance stopped and
 * the sources read to their end, this raises the changelogs, the timeline's repartition topic and
 * the notification log to the new count; writes each key's last value to the partition its key goes
 * to now, and a tombstone where it was; then raises the sources (violations, by-grain, alerts). A
 * run that stops midway is run again: each step finds what is done (the sources, raised last, hold
 * the old count until the end). docs/OPERATIONS.md, "Past the partition count".
 */
public final class PartitionGrowth {

  static final List<String> APPS = List.of(DetectionTopology.DEFAULT_APPLICATION_ID, TimelineTopology.DEFAULT_APPLICATION_ID);
  static final List<String> SOURCES = List.of(Topics.VIOLATIONS.name(), Topics.BY_GRAIN.name(), Topics.ALERTS.name());

  private PartitionGrowth() {}

  /** Why the growth did not start: nothing was changed. */
  public static final class Refused extends RuntimeException {
    Refused(String message) {
      super(message);
    }
  }

  /** What a run did: the count before and after, each topic's keys moved, alerts' states left where they were. */
  public record Result(int from, int to, Map<String, Integer> moved, int left, List<String> warnings) {}


  /** Grows the keyed topics and their state to {@code to} partitions; {@code notifyGroups}: the notifiers' groups. */
  public static Result grow(String bootstrap, Map<String, Object> clientProps, int to, List<String> notifyGroups,
      Consumer<String> say) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(p)) {
      Set<String> names = admin.listTopics().names().get(StateMoves.WAIT.toSeconds(), TimeUnit.SECONDS);
      List<String> missing = SOURCES.stream().filter(t -> !names.contains(t)).toList();
      if (!missing.isEmpty()) {
        throw new Refused("the cluster has no topic " + String.join(", ", missing) + ": run `knockwatch topics` first");
      }
      Map<String, StateMoves.Kind> changelogs = new TreeMap<>();
      List<String> unknown = new ArrayList<>();
      List<String> repartitions = new ArrayList<>();
      for (String name : new TreeSet<>(names)) {
        for (String app : APPS) {
          if (name.startsWith(app + "-") && name.endsWith(StateMoves.CHANGELOG)) {
            String store = name.substring(app.length() + 1, name.length() - StateMoves.CHANGELOG.length());
            StateMoves.Kind kind = StateMoves.kindOf(store);
            if (kind == null) {
              unknown.add(name);
            } else {
              changelogs.put(name, kind);
            }
          } else if (name.startsWith(app + "-") && name.endsWith("-repartition")) {
            repartitions.add(name);
          }
        }
      }
      if (!unknown.isEmpty()) {
        throw new Refused("the changelog(s) " + String.join(", ", unknown) + " belong to no store of this release:"
            + " delete them if no instance uses them (docs/OPERATIONS.md, \"Upgrades\"), then run this again");
      }
      if (names.contains(Topics.NOTIFICATIONS.name())) {
        changelogs.put(Topics.NOTIFICATIONS.name(), StateMoves.Kind.NOTIFICATION);
      }
      List<String> all = new ArrayList<>(SOURCES);
      all.addAll(repartitions);
      all.addAll(changelogs.keySet());
      Map<String, Integer> counts = new TreeMap<>();
      admin.describeTopics(all).allTopicNames().get(StateMoves.WAIT.toSeconds(), TimeUnit.SECONDS)
          .forEach((name, d) -> counts.put(name, d.partitions().size()));
      int from = SOURCES.stream().mapToInt(counts::get).min().orElseThrow();
      if (to < from || to % from != 0) {
        throw new Refused("--grow-to " + to + " is not a multiple of the keyed topics' " + from
            + " partitions: a key's state can move only where its records go, which a multiple keeps (a key of"
            + " partition p goes to p, p + " + from + ", ...)");
      }
      List<String> odd = counts.entrySet().stream().filter(e -> e.getValue() != from && e.getValue() != to)
          .map(e -> e.getKey() + " (" + e.getValue() + ")").toList();
      if (!odd.isEmpty()) {
        throw new Refused("the topic(s) " + String.join(", ", odd) + " have neither " + from + " nor " + to
            + " partitions: they were not made for this deployment's count");
      }
      if (counts.values().stream().allMatch(c -> c == to)) {
        say.accept("every keyed topic has " + to + " partitions already: nothing to do");
        return new Result(from, to, Map.of(), 0, List.of());
      }
      List<String> groups = new ArrayList<>(APPS);
      groups.addAll(notifyGroups);
      long checking = System.nanoTime();
      Map<TopicPartition, Long> ends = awaitStopped(admin, bootstrap, clientProps, groups);
      say.accept(String.format("every group stopped and read to its end (checked in %.1f s)",
          (System.nanoTime() - checking) / 1e9));

      // 1. every topic but the sources to the new count: Kafka Streams refuses to start until the sources follow
      List<String> first = new ArrayList<>(repartitions);
      first.addAll(changelogs.keySet());
      raise(admin, first, counts, to, say);
      // 2. each key's last value to the partition its key goes to now
      Map<String, Integer> moved = new LinkedHashMap<>();
      int left = 0;
      Map<String, Object> pp = new HashMap<>(clientProps);
      pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      pp.put(ProducerConfig.ACKS_CONFIG, "all");
      pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
      try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp, new ByteArraySerializer(),
          new ByteArraySerializer()); KafkaConsumer<byte[], byte[]> reader = StateMoves.reader(bootstrap, clientProps)) {
        StateMoves.GrainKeys grainKeys = new StateMoves.GrainKeys(reader);
        for (Map.Entry<String, StateMoves.Kind> c : changelogs.entrySet()) {
          long started = System.nanoTime();
          StateMoves.Moves m = StateMoves.move(reader, producer, c.getKey(), c.getValue(), from, to, grainKeys);
          String took = String.format(" (%.1f s)", (System.nanoTime() - started) / 1e9);
          moved.put(c.getKey(), m.moved());
          left += m.left();
          say.accept(c.getKey() + ": " + switch (c.getValue()) {
            case SIBLINGS -> m.live() + " keys, copied to each partition their keys can go to";
            case REBUILD -> m.live() + " entries emptied, built again at the timeline's start";
            case STAY -> "stays (tallies of a partition each, which the query API adds up)";
            default -> m.live() + " keys, " + m.moved() + " moved" + (m.left() > 0 ? ", " + m.left() + " alert states matched"
                + " to no key, left where they were (each may page again once)" : "");
          } + took);
        }
      }
      // 3. the sources last
      raise(admin, SOURCES, counts, to, say);
      List<String> warnings = new ArrayList<>();
      Map<TopicPartition, Long> now = endOffsets(admin, ends.keySet());
      for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
        if (!now.get(e.getKey()).equals(e.getValue())) {
          warnings.add(e.getKey() + " took " + (now.get(e.getKey()) - e.getValue()) + " record(s) while its state moved"
              + " (was ingest stopped?): their keys' counts may start again");
        }
      }
      warnings.forEach(say);
      return new Result(from, to, moved, left, warnings);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while growing the partitions", e);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("could not grow the partitions: " + e.getMessage(), e);
    }
  }

  private static void raise(Admin admin, List<String> topics, Map<String, Integer> counts, int to, Consumer<String> say)
      throws InterruptedException, ExecutionException, java.util.concurrent.TimeoutException {
    Map<String, NewPartitions> raise = new LinkedHashMap<>();
    for (String t : topics) {
      if (counts.get(t) != to) {
        raise.put(t, NewPartitions.increaseTo(to));
      }
    }
    if (!raise.isEmpty()) {
      admin.createPartitions(raise).all().get(StateMoves.WAIT.toSeconds(), TimeUnit.SECONDS);
      say.accept("raised to " + to + " partitions: " + String.join(", ", raise.keySet()));
    }
  }

  /**
   * Refuses unless every group has no member and has read every partition of the topics it reads
   * to its end; returns those partitions' ends.
   */
  private static Map<TopicPartition, Long> awaitStopped(Admin admin, String bootstrap, Map<String, Object> clientProps,
      List<String> groups) throws InterruptedException, ExecutionException, java.util.concurrent.TimeoutException {
    Map<String, ConsumerGroupDescription> described = describe(admin, groups);
    List<String> running = described.values().stream().filter(d -> !d.members().isEmpty())
        .map(d -> d.groupId() + " (" + d.members().size() + " member(s): " + String.join(", ", d.members().stream()
            .map(m -> m.clientId() + "@" + m.host()).toList()) + ")").toList();
    if (!running.isEmpty()) {
      throw new Refused("still running: " + String.join("; ", running) + ". Stop ingest, let streams and notify read"
          + " everything, then stop every streams and notify instance, and run this again");
    }
    Map<TopicPartition, Long> ends = new HashMap<>();
    List<String> behind = unread(admin, bootstrap, clientProps, described.keySet(), ends);
    if (!behind.isEmpty()) {
      throw new Refused("not read to the end: " + String.join("; ", behind) + ". Stop ingest, start streams and"
          + " notify until they have read everything, stop them, and run this again");
    }
    return ends;
  }

  private static Map<String, ConsumerGroupDescription> describe(Admin admin, List<String> groups)
      throws InterruptedException, ExecutionException, java.util.concurrent.TimeoutException {
    Map<String, ConsumerGroupDescription> described = new LinkedHashMap<>();
    for (String g : groups) {
      try {
        described.put(g, admin.describeConsumerGroups(List.of(g)).all().get(StateMoves.WAIT.toSeconds(), TimeUnit.SECONDS).get(g));
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof GroupIdNotFoundException)) {
          throw e;
        }
      }
    }
    return described;
  }

  /**
   * Whether {@code group} must have read {@code topic} to its end before the keys move: a record left
   * on a source is read after the growth by the task of its old partition, whose key's state has
   * moved. Not the timeline's alerts: it keys them by command again through its repartition topic,
   * which then has the new count, before any state sees them (detection's last alerts, written as it
   * stops, may be left there).
   */
  static boolean mustRead(String group, String topic) {
    if (group.equals(DetectionTopology.DEFAULT_APPLICATION_ID)) {
      return topic.equals(Topics.VIOLATIONS.name()) || topic.equals(Topics.BY_GRAIN.name());
    }
    if (group.equals(TimelineTopology.DEFAULT_APPLICATION_ID)) {
      return topic.equals(Topics.VIOLATIONS.name()) || topic.endsWith("-repartition");
    }
    return topic.equals(Topics.ALERTS.name()); // a notifier: the notification log's entries move by alert key
  }

  /**
   * What {@code groups} have not read yet of what they must ({@link #mustRead}): "group on
   * topic-partition (at offset of end)" each; empty once they have read it. A group that does not
   * exist has nothing to read.
   */
  public static List<String> unread(String bootstrap, Map<String, Object> clientProps, List<String> groups) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(p)) {
      return unread(admin, bootstrap, clientProps, describe(admin, groups).keySet(), new HashMap<>());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("could not read the groups' offsets: " + e.getMessage(), e);
    }
  }

  private static List<String> unread(Admin admin, String bootstrap, Map<String, Object> clientProps,
      java.util.Collection<String> groups, Map<TopicPartition, Long> ends)
      throws InterruptedException, ExecutionException, java.util.concurrent.TimeoutException {
    List<String> behind = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = StateMoves.reader(bootstrap, clientProps)) {
      for (String g : groups) {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(g)
            .partitionsToOffsetAndMetadata().get(StateMoves.WAIT.toSeconds(), TimeUnit.SECONDS);
        Set<String> read = new TreeSet<>();
        committed.keySet().forEach(tp -> read.add(tp.topic()));
        read.removeIf(t -> !mustRead(g, t));
        for (String t : read) {
          List<TopicPartition> parts = c.partitionsFor(t).stream().map(i -> new TopicPartition(t, i.partition())).toList();
          Map<TopicPartition, Long> end = endOffsets(admin, parts);
          ends.putAll(end);
          for (TopicPartition tp : parts) {
            OffsetAndMetadata at = committed.get(tp);
            long from = at == null ? 0 : at.offset();
            // a transactional write ends in a marker, which no one commits past: read what lies between
            if (from < end.get(tp) && hasRecords(c, tp, from, end.get(tp))) {
              behind.add(g + " on " + tp + " (at " + from + " of " + end.get(tp) + ")");
            }
          }
        }
      }
    }
    return behind;
  }

  private static Map<TopicPartition, Long> endOffsets(Admin admin, java.util.Collection<TopicPartition> parts)
      throws InterruptedException, ExecutionException, java.util.concurrent.TimeoutException {
    Map<TopicPartition, OffsetSpec> spec = new HashMap<>();
    parts.forEach(tp -> spec.put(tp, OffsetSpec.latest()));
    Map<TopicPartition, Long> out = new HashMap<>();
    admin.listOffsets(spec, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all()
        .get(StateMoves.WAIT.toSeconds(), TimeUnit.SECONDS).forEach((tp, i) -> out.put(tp, i.offset()));
    return out;
  }

  private static boolean hasRecords(KafkaConsumer<byte[], byte[]> c, TopicPartition tp, long from, long end) {
    c.assign(List.of(tp));
    c.seek(tp, from);
    Instant deadline = Instant.now().plus(StateMoves.WAIT);
    while (c.position(tp) < end) {
      if (!c.poll(StateMoves.POLL).isEmpty()) {
        return true;
      }
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException(tp + " was not read from " + from + " to " + end + " within " + StateMoves.WAIT.toSeconds() + " s");
      }
    }
    return false;
  }

}
