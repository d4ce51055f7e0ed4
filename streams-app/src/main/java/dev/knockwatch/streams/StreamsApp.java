package dev.knockwatch.streams;

import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Policy;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import dev.knockwatch.events.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs the detection topology: start, wait until it processes, close cleanly. */
public final class StreamsApp implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(StreamsApp.class);
  private final KafkaStreams streams;
  private final String applicationId;
  private final String bootstrapServers;
  private final Map<String, Object> clientProps;
  private long launchedAt;
  /** Detection's policy, whose state an upgrade may move ({@link StateMigration}); null for another topology. */
  private Policy policy;
  private volatile String refused;
  /** The topics its sources read: the violations, and the by-grain copies when a rule counts per task, session or agent. */
  private final List<String> sourceTopics;

  /**
   * @param clock the wall clock when live; stream time for replay (whose end of input advances
   *     it, so resolutions are deterministic)
   */
  public StreamsApp(String applicationId, String bootstrapServers, Path stateDir, Policy policy,
      AlertLifecycleProcessor.Clock clock, Map<String, Object> clientProps) {
    this(applicationId, bootstrapServers, stateDir, DetectionTopology.buildTopology(policy, clock), clientProps);
    this.policy = policy;
  }

  /** Any topology over the violations topic, with the detection app's settings (the benchmark's pass-through). */
  public StreamsApp(String applicationId, String bootstrapServers, Path stateDir, Topology topology,
      Map<String, Object> clientProps) {
    this.applicationId = applicationId;
    this.bootstrapServers = bootstrapServers;
    this.clientProps = clientProps;
    this.sourceTopics = topology.describe().subtopologies().stream().flatMap(s -> s.nodes().stream())
        .filter(n -> n instanceof org.apache.kafka.streams.TopologyDescription.Source)
        .flatMap(n -> ((org.apache.kafka.streams.TopologyDescription.Source) n).topicSet().stream())
        .filter(t -> t.equals(Topics.VIOLATIONS.name()) || t.equals(Topics.BY_GRAIN.name())).sorted(
            java.util.Comparator.comparing(t -> t.equals(Topics.BY_GRAIN.name()))).distinct().toList();
    this.streams = new KafkaStreams(topology,
        DetectionTopology.streamsConfig(applicationId, bootstrapServers, stateDir, clientProps),
        new IdlePolls(this::running));
    KafkaStreamsMetrics.add(applicationId, streams, topology.describe());
    streams.setUncaughtExceptionHandler(e -> {
      String refused = refusal(e);
      if (refused != null) {
        // a login or an ACL that refuses now refuses the replacement thread too
        this.refused = refused;
        log.error("{} stopped: {}", applicationId, refused);
        return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
      }
      log.error("detection stopped on an error; replacing the stream thread", e);
      return StreamThreadExceptionResponse.REPLACE_THREAD;
    });
  }

  /** Whether the app runs: started, its tasks assigned and restored, not rebalancing or stopping. */
  private boolean running() {
    return streams.state() == KafkaStreams.State.RUNNING;
  }

  /**
   * Starts and waits until the app is RUNNING (tasks assigned, state restored), saying every few
   * seconds what it waits for.
   */
  public StreamsApp start(Duration timeout) {
    return launch().awaitRunning(timeout);
  }

  /** Starts the app without waiting: {@link #awaitRunning} waits, so two apps can start side by side. */
  public StreamsApp launch() {
    launchedAt = System.nanoTime();
    if (policy != null) {
      StateMigration.migrate(applicationId, bootstrapServers, clientProps, policy);
    }
    streams.start();
    return this;
  }

  /** Waits until the {@link #launch launched} app is RUNNING, saying every few seconds what it waits for. */
  public StreamsApp awaitRunning(Duration timeout) {
    Instant deadline = Instant.now().plus(timeout);
    Instant nextWord = Instant.now().plus(WAITING_SAID_EVERY);
    while (streams.state() != KafkaStreams.State.RUNNING) {
      if (refused != null) {
        throw new IllegalStateException(refused);
      }
      if (Instant.now().isAfter(deadline) || !streams.state().isRunningOrRebalancing()) {
        throw new IllegalStateException("Kafka Streams did not reach RUNNING within " + timeout.toSeconds()
            + " s (state " + streams.state() + ")");
      }
      if (Instant.now().isAfter(nextWord)) {
        log.info("{}: waiting {} s so far for {}", applicationId, (System.nanoTime() - launchedAt) / 1_000_000_000,
            waitingFor());
        nextWord = Instant.now().plus(WAITING_SAID_EVERY);
      }
      sleep(50);
    }
    log.info("{} running after {} ms", applicationId, (System.nanoTime() - launchedAt) / 1_000_000);
    return this;
  }

  private static final Duration WAITING_SAID_EVERY = Duration.ofSeconds(5);

  /** What a starting app waits for, from its stream threads' states. */
  private String waitingFor() {
    java.util.Set<String> threads = new java.util.TreeSet<>();
    streams.metadataForLocalThreads().forEach(t -> threads.add(t.threadState()));
    if (threads.contains("PARTITIONS_ASSIGNED")) {
      return "its state stores to be restored from their changelogs";
    }
    return "its consumer group to assign its partitions (threads " + threads + ")";
  }

  /**
   * Waits until the app has committed its position at the current end of the violations topic:
   * with exactly-once, every alert those events caused is then committed too.
   */
  public void awaitCaughtUp(Duration timeout) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    Instant deadline = Instant.now().plus(timeout);
    try (Admin admin = Admin.create(p)) {
      // the refusals, then their copies by grain: those only grow while the refusals are read
      for (String topic : sourceTopics) {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        int partitions = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic)
            .partitions().size();
        for (int i = 0; i < partitions; i++) {
          latest.put(new TopicPartition(topic, i), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).forEach((tp, info) -> ends.put(tp, info.offset()));
        while (true) {
          Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(applicationId)
              .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
          boolean done = ends.entrySet().stream().allMatch(e -> e.getValue() == 0
              || (committed.get(e.getKey()) != null && committed.get(e.getKey()).offset() >= e.getValue()));
          if (done) {
            break;
          }
          if (Instant.now().isAfter(deadline)) {
            throw new IllegalStateException("detection did not catch up with " + topic + " within "
                + timeout.toSeconds() + " s");
          }
          sleep(50);
        }
      }
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot read offsets from Kafka: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  public KafkaStreams.State state() {
    return streams.state();
  }

  /** The running app, for interactive queries of its stores. */
  public KafkaStreams streams() {
    return streams;
  }

  /** Null while the app is RUNNING, else its state in words (for a readiness check). */
  public String notRunning() {
    KafkaStreams.State state = streams.state();
    return state == KafkaStreams.State.RUNNING ? null : applicationId + " is " + state;
  }

  /**
   * Why Kafka stopped this app for good (a refused login, an operation its ACLs do not allow), in
   * one line naming the address; null while it was not.
   */
  public String refused() {
    return refused;
  }

  private String refusal(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof AuthorizationException || t instanceof AuthenticationException) {
        String m = t.getMessage() == null ? "" : ": " + t.getMessage().replaceAll("\\s+", " ").trim();
        return "Kafka at " + bootstrapServers + " refused " + applicationId + " (" + t.getClass().getSimpleName() + m
            + "); its ACLs must allow it: docs/OPERATIONS.md lists them";
      }
    }
    return null;
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /**
   * Commits what was processed, closes the state stores and leaves the consumer group, so a
   * restart is not held up until the old member's session times out (45 s by default).
   */
  @Override
  public void close() {
    KafkaStreamsMetrics.remove(applicationId);
    streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
        .withTimeout(Duration.ofSeconds(30)));
  }
}
