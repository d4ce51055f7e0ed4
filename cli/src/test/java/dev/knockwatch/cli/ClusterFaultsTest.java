package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.notify.webhook.WebhookNotifier;
import dev.knockwatch.testkit.HttpRecorder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Past one machine (issue 66), each fault on its own deployment: the three-node cluster
 * docker-compose.yml declares ({@link KafkaCluster}), its topics made by {@code ./knockwatch
 * topics} as for production, and knockwatch as separate processes against it, as a deployment
 * runs them: {@code ingest}, two {@code streams} instances with a standby replica each, two
 * {@code notify} instances in one group, a webhook receiver. 60 commands are refused at 1,500
 * lines/s for 24 s (5,000 lines/s in the first fault), and the fault comes 4 s in. The faults: a
 * node killed, hung, rolled, its disk filled, or the active controller killed; a node killed and
 * with it a Streams or notify instance; a node killed under the raw-topic stage. Whatever the
 * fault, every line reaches the violations topic once, every refusal the timeline once; each
 * command's off-role page and retry warning are on the alerts topic with no value written twice
 * and reach the receiver, each notification once and none marked a possible repeat. The time
 * from the fault to the next page and the time the topics stayed under-replicated are printed
 * (docs/RELIABILITY.md).
 */
@Tag("integration")
@Tag("cluster")
class ClusterFaultsTest {

  static final String TOKEN = "cluster-faults-token-000001";
  static final int COMMANDS = 60;
  /** The load most faults run under: one line a command a round, a round every 40 ms. */
  static final int LINES_PER_SECOND = 1_500;
  /** The load runs this long, the fault this far into it. */
  static final int LOAD_SECONDS = 24;
  static final int FAULT_AT_SECOND = 4;

  @TempDir Path dir;

  @Test
  void theViolationsLeaderKilledUnderLoadLosesNothingWritesNothingTwiceAndPagesOnce() throws Exception {
    try (Deployment d = Deployment.start(dir, false, null, 5_000)) {
      d.run("at 5,000 lines/s, kill -9 of the node leading the most violations partitions, started again 15 s later",
          d.leaderKilledFor15s(round -> { }));
      d.verify(d.streams.get(0));
    }
  }

  @Test
  void aStreamsInstanceKilledInAStormWhileANodeIsDownLeavesTheOtherToCountEachRefusalOnce() throws Exception {
    try (Deployment d = Deployment.start(dir)) {
      d.run("kill -9 of the violations leader, then of a streams instance 2 s later; the node started again 15 s"
          + " after its kill, the instance never", d.leaderKilledFor15s(d.killed2sLater(d.streams.get(1)))); // its transactions open
      d.verify(d.streams.get(0));
    }
  }

  @Test
  void aNodeStoppedForFortyFiveSecondsIsFencedAsAZombieAndComesBackWithNothingLost() throws Exception {
    try (Deployment d = Deployment.start(dir)) {
      AtomicReference<Integer> node = new AtomicReference<>();
      AtomicReference<Instant> stopped = new AtomicReference<>();
      d.run("SIGSTOP of the node leading the most violations partitions for 45 s, then SIGCONT", round -> {
        if (round == d.faultRound()) {
          node.set(d.kafka.leaderOfMost(d.admin, Topics.VIOLATIONS.name()));
          d.kafka.signal(node.get(), "STOP");
          stopped.set(Instant.now());
          return true;
        }
        return false;
      });
      Thread.sleep(Math.max(0, stopped.get().plusSeconds(45).toEpochMilli() - System.currentTimeMillis()));
      d.kafka.signal(node.get(), "CONT");
      d.verify(d.streams.get(0));
    }
  }

  @Test
  void aNotifierKilledMidDeliveryWhileANodeIsDownLeavesTheOtherToSendEachPageOnceUnmarked() throws Exception {
    try (Deployment d = Deployment.start(dir)) {
      d.run("kill -9 of the violations leader, then of a notifier 2 s later; the node started again 15 s after its"
          + " kill, the notifier never", d.leaderKilledFor15s(d.killed2sLater(d.stages.get(3)))); // notify-b, between sends and their records perhaps
      d.verify(d.streams.get(0), true);
    }
  }

  @Test
  void theActiveControllerKilledLeavesTwoVotersThatElectAnotherAndLoseNothing() throws Exception {
    try (Deployment d = Deployment.start(dir)) {
      AtomicReference<Integer> node = new AtomicReference<>();
      AtomicReference<Instant> killed = new AtomicReference<>();
      AtomicReference<Instant> elected = new AtomicReference<>();
      AtomicReference<Integer> successor = new AtomicReference<>();
      Thread election = new Thread(() -> {
        while (elected.get() == null && !Thread.currentThread().isInterrupted()) {
          try {
            int leader = d.kafka.quorumLeader(d.admin);
            if (leader >= 0 && leader != node.get()) {
              successor.set(leader);
              elected.set(Instant.now());
            }
          } catch (InterruptedException e) {
            return;
          } catch (Exception noAnswerYet) {
            // no leader, or the node asked forwards to none yet
          }
          try {
            Thread.sleep(100);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "election");
      election.setDaemon(true);
      d.run("kill -9 of the active controller (the quorum's leader, a broker too), started again 18 s later", round -> {
        if (round == d.faultRound()) {
          node.set(d.kafka.quorumLeader(d.admin));
          d.kafka.kill(node.get());
          killed.set(Instant.now());
          election.start();
          return true;
        }
        if (round == d.faultRound() + d.rounds(18)) { // as the load ends
          d.kafka.restart(node.get());
        }
        return false;
      });
      election.join(Duration.ofMinutes(1).toMillis());
      assertThat(elected.get()).as("another voter elected controller after node %s was killed", node.get()).isNotNull();
      System.out.printf("ClusterFaultsTest: node %d, the active controller, killed; node %d elected %.1f s later%n",
          node.get(), successor.get(), Duration.between(killed.get(), elected.get()).toMillis() / 1e3);
      d.verify(d.streams.get(0));
    }
  }

  @Test
  void theRawStagesLeaderKilledMidTransactionLeavesEachShippedLineOneEvent() throws Exception {
    try (Deployment d = Deployment.start(dir, true, null, LINES_PER_SECOND)) {
      d.run("with the raw topic (the load a shipper, ingest --raw-topic the stage): kill -9 of the node leading the"
          + " most knockwatch.raw partitions, the stage's transactions open, started again 15 s later",
          d.leaderKilledFor15s(Topics.RAW.name(), round -> { }));
      d.verify(d.streams.get(0));
    }
  }

  @Test
  void aNodeWhoseDiskFillsUpIsGivenRoomAndComesBackWithNothingLost() throws Exception {
    try (Deployment d = Deployment.start(dir, false, "1g", LINES_PER_SECOND)) {
      AtomicReference<Integer> node = new AtomicReference<>();
      AtomicReference<String> met = new AtomicReference<>();
      d.run("the log directory (a 1 GiB tmpfs) of the node leading the most violations partitions filled to its last"
          + " byte; room given 15 s later and the node started again", round -> {
            if (round == d.faultRound()) {
              node.set(d.kafka.leaderOfMost(d.admin, Topics.VIOLATIONS.name()));
              d.kafka.fill(node.get());
              return true;
            }
            if (round == d.faultRound() + d.rounds(15)) {
              Process p = d.kafka.node(node.get()).process;
              met.set(p.isAlive() ? "still running" : "exited " + p.exitValue());
              d.kafka.makeRoom(node.get());
              if (p.isAlive()) {
                d.kafka.stop(node.get());
              }
              d.kafka.restart(node.get());
            }
            return false;
          });
      System.out.printf("ClusterFaultsTest: node %d, its disk full: %s 15 s later%n", node.get(), met.get());
      d.verify(d.streams.get(0));
    }
  }

  @Test
  void aRollingRestartOfTheThreeNodesUnderLoadLosesNothingWritesNothingTwiceAndPagesOnce() throws Exception {
    try (Deployment d = Deployment.start(dir)) {
      List<String> all = Topics.ALL.stream().map(Topics.Topic::name).toList();
      AtomicReference<Throwable> failed = new AtomicReference<>();
      Thread rolling = new Thread(() -> {
        try {
          for (KafkaCluster.Node n : d.kafka.nodes()) {
            d.kafka.stop(n.id); // SIGTERM: a controlled shutdown, its leaderships moved first
            d.kafka.restart(n.id);
            d.kafka.awaitInSync(d.admin, all, Duration.ofMinutes(2));
          }
        } catch (Throwable t) {
          failed.set(t);
        }
      }, "rolling-restart");
      d.run(d.rounds(60), "a rolling restart of the three nodes, each stopped (SIGTERM), started and back in sync before the"
          + " next", round -> {
            if (round == d.faultRound()) {
              rolling.start();
              return true;
            }
            return false;
          });
      rolling.join(Duration.ofMinutes(6).toMillis());
      assertThat(failed.get()).as("the rolling restart").isNull();
      assertThat(rolling.isAlive()).as("the rolling restart still under way").isFalse();
      d.verify(d.streams.get(0));
    }
  }

  /** A step of the load: what happens at a round; true when it is the fault the figures count from. */
  @FunctionalInterface
  interface AtRound {
    boolean at(int round) throws Exception;
  }

  /** What else happens at a round, after the fault. */
  @FunctionalInterface
  interface Then {
    void at(int round) throws Exception;
  }

  /** The cluster, the topics, knockwatch's stages, the receiver, and the load and checks every fault shares. */
  static final class Deployment implements AutoCloseable {
    final KafkaCluster kafka;
    final HttpRecorder soc;
    final Admin admin;
    final List<Launched> streams = new ArrayList<>();
    final List<Launched> stages = new ArrayList<>();
    final List<String> commands = new ArrayList<>();
    final Path logs;
    final int api;
    Path checkout;
    Path dir;
    String fault;
    int rounds;
    Instant faultAt;
    /** How long writing the load took: its rate as written. */
    Duration loaded;
    final AtomicReference<Instant> inSync = new AtomicReference<>();
    Thread replicas;
    /** With the raw topic: the shipper, each file's next byte offset, its first failure. */
    KafkaProducer<String, String> shipper;
    final Map<String, Long> offsets = new HashMap<>();
    final AtomicReference<Exception> shipped = new AtomicReference<>();

    /** How often the load writes its line a command: COMMANDS lines a round make its rate. */
    final Duration round;

    private Deployment(KafkaCluster kafka, HttpRecorder soc, Path logs, int api, int linesPerSecond) {
      this.kafka = kafka;
      this.round = Duration.ofNanos(COMMANDS * 1_000_000_000L / linesPerSecond);
      this.soc = soc;
      this.admin = kafka.admin();
      this.logs = logs;
      this.api = api;
      for (int c = 0; c < COMMANDS; c++) {
        commands.add(String.format("ClusterFaults%09d", c));
      }
    }

    static Deployment start(Path dir) throws Exception {
      return start(dir, false, null, LINES_PER_SECOND);
    }

    /** The round {@code seconds} into the load, or that many rounds. */
    int rounds(double seconds) {
      return (int) Math.round(seconds * 1e9 / round.toNanos());
    }

    /** The round the fault comes at. */
    int faultRound() {
      return rounds(FAULT_AT_SECOND);
    }

    /**
     * With {@code raw}, the lines go as a shipper's records to {@code knockwatch.raw} (the load is
     * the shipper, one record a line with its path, host and byte offset), and ingest is the stage
     * that reads them ({@code ingest --raw-topic}); without it, to files ingest tails.
     */
    static Deployment start(Path dir, boolean raw, String tmpfsSize, int linesPerSecond) throws Exception {
      return start(dir, raw, tmpfsSize, linesPerSecond, 2);
    }

    /** As {@link #start(Path, boolean, String, int)}, with {@code streamsInstances} instances of {@code streams}. */
    static Deployment start(Path dir, boolean raw, String tmpfsSize, int linesPerSecond, int streamsInstances)
        throws Exception {
      Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
      Path receivers = Files.createDirectories(dir.resolve("receivers"));
      Path logs = Files.createDirectories(dir.resolve("logs/ci-runner-1"));
      KafkaCluster kafka = KafkaCluster.start(dir.resolve("kafka"), tmpfsSize);
      Deployment d = new Deployment(kafka, new HttpRecorder(), logs, Launched.freePort(), linesPerSecond);
      d.checkout = checkout;
      d.dir = dir;
      try {
        String bootstrap = kafka.bootstrapServers();
        try (Launched topics = Launched.start(checkout, dir.resolve("topics"), Map.of(), "topics",
            "--bootstrap-servers", bootstrap)) {
          assertThat(topics.awaitExit(Duration.ofMinutes(2))).as(topics.err()).isZero();
        }
        List<String> keyed = List.of(Topics.VIOLATIONS.name(), Topics.ALERTS.name(), Topics.NOTIFICATIONS.name());
        Map<String, TopicDescription> described = d.admin.describeTopics(keyed).allTopicNames().get(30, TimeUnit.SECONDS);
        assertThat(described.values()).allSatisfy(t -> assertThat(t.partitions()).allSatisfy(p ->
            assertThat(p.replicas()).as(t.name()).hasSize(3)));
        Config config = d.admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC,
            Topics.VIOLATIONS.name()))).all().get(30, TimeUnit.SECONDS).values().iterator().next();
        assertThat(config.get("min.insync.replicas").value()).isEqualTo("2");

        Files.writeString(receivers.resolve("receivers.yaml"), """
            receivers:
              - {name: hook, type: webhook, url: "%s"}
            routes:
              - receivers: [hook]
            """.formatted(d.soc.url("/hook")));
        for (int i = 0; i < streamsInstances; i++) {
          d.addStreams();
        }
        for (String name : List.of("notify-a", "notify-b")) {
          d.stages.add(d.startNotify(name));
        }
        if (raw) {
          d.shipper = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
              ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
              ProducerConfig.LINGER_MS_CONFIG, 5), new StringSerializer(), new StringSerializer());
        }
        d.stages.add(d.startIngest("ingest"));
        for (Launched stage : d.stages) {
          stage.awaitLine(d.streams.contains(stage) ? "knockwatch streams:" : stage == d.stages.get(d.stages.size() - 1)
              ? "knockwatch ingest:" : "knockwatch notify:", Duration.ofMinutes(3));
        }
        return d;
      } catch (Throwable t) {
        d.close();
        throw t;
      }
    }

    /**
     * Starts one more {@code streams} instance (a standby replica of each task); the first serves the
     * query API on {@link #api}. Its banner is the caller's to await.
     */
    Launched addStreams() throws Exception {
      String name = "streams-" + (char) ('a' + streams.size());
      Launched s = startStreams(name, name + "-var", streams.isEmpty() ? api : Launched.freePort());
      streams.add(s);
      stages.add(s);
      return s;
    }

    /** A {@code streams} process on {@code var}, its output in {@code name}: the stage's arguments. */
    Launched startStreams(String name, String var, int apiPort) throws Exception {
      return Launched.start(checkout, dir.resolve(name), Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "streams",
          "--bootstrap-servers", kafka.bootstrapServers(), "--var", dir.resolve(var).toString(), "--api-port",
          String.valueOf(apiPort), "--metrics-port", String.valueOf(Launched.freePort()), "--streams-config",
          "num.standby.replicas=1");
    }

    /** A notifier sending to the webhook, its output in {@code name}. */
    Launched startNotify(String name) throws Exception {
      return Launched.start(checkout, dir.resolve(name), Map.of(), "notify", "--bootstrap-servers",
          kafka.bootstrapServers(), "--rules", dir.resolve("receivers").toString(), "--metrics-port",
          String.valueOf(Launched.freePort()));
    }

    /** Ingest of the load's log files (of the raw topic when the load is a shipper's), its output in {@code name}. */
    Launched startIngest(String name) throws Exception {
      List<String> ingest = new ArrayList<>(List.of("ingest", "--bootstrap-servers", kafka.bootstrapServers(), "--logs",
          logs.getParent().toString(), "--var", dir.resolve("ingest-var").toString(), "--metrics-port", "0"));
      if (shipper != null) {
        ingest.addAll(List.of("--raw-topic", Topics.RAW.name()));
      }
      return Launched.start(checkout, dir.resolve(name), Map.of(), ingest.toArray(String[]::new));
    }

    /**
     * The fault most cases share: the node leading the most violations partitions killed with
     * SIGKILL at {@link #faultRound()}, started again 15 s later; {@code also} at every round.
     */
    AtRound leaderKilledFor15s(Then also) {
      return leaderKilledFor15s(Topics.VIOLATIONS.name(), also);
    }

    /** As {@link #leaderKilledFor15s(Then)}, the node leading the most partitions of {@code topic}. */
    AtRound leaderKilledFor15s(String topic, Then also) {
      AtomicReference<Integer> node = new AtomicReference<>();
      return round -> {
        if (round == faultRound()) {
          node.set(kafka.leaderOfMost(admin, topic));
          kafka.kill(node.get());
          return true;
        }
        if (round == faultRound() + rounds(15)) {
          kafka.restart(node.get());
        }
        also.at(round);
        return false;
      };
    }

    /** {@code stage} killed with SIGKILL 2 s after the fault, never started again. */
    Then killed2sLater(Launched stage) {
      return round -> {
        if (round == faultRound() + rounds(2)) {
          stage.close();
        }
      };
    }

    /** The load, one line a command a round, with {@code steps} taken at their rounds. */
    void run(String fault, AtRound steps) throws Exception {
      run(rounds(LOAD_SECONDS), fault, steps);
    }

    void run(int rounds, String fault, AtRound steps) throws Exception {
      this.fault = fault;
      this.rounds = rounds;
      Instant started = Instant.now();
      for (int round = 0; round < rounds; round++) {
        if (steps.at(round)) {
          faultAt = Instant.now();
          watchReplicas();
        }
        Instant at = Instant.now();
        for (String cmd : commands) {
          String line = "{\"line\":\"deny network-outbound evil.example:443 (host is not on the allow list)\","
              + "\"commandId\":\"" + cmd + "\",\"timestamp\":\"" + at + "\"}";
          Path file = logs.resolve(cmd + ".violations.jsonl");
          if (shipper == null) {
            Files.writeString(file, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
          } else {
            long offset = offsets.getOrDefault(cmd, 0L);
            offsets.put(cmd, offset + line.getBytes(StandardCharsets.UTF_8).length + 1);
            ObjectNode record = Json.MAPPER.createObjectNode().put("line", line).put("path", file.toString())
                .put("host", logs.getFileName().toString()).put("offset", offset);
            shipper.send(new ProducerRecord<>(Topics.RAW.name(), file.toString(), record.toString()), (meta, e) -> {
              if (e != null) {
                shipped.compareAndSet(null, e);
              }
            });
          }
        }
        Thread.sleep(Math.max(0, started.plus(this.round.multipliedBy(round + 1)).toEpochMilli() - System.currentTimeMillis()));
      }
      loaded = Duration.between(started, Instant.now());
      if (shipper != null) {
        shipper.flush();
        assertThat(shipped.get()).as("a raw line the shipper could not send").isNull();
      }
    }

    /** From the fault: when every partition of knockwatch's topics has all its replicas in sync again. */
    private void watchReplicas() {
      List<String> all = Topics.ALL.stream().map(Topics.Topic::name).toList();
      replicas = new Thread(() -> {
        try {
          Instant giveUp = Instant.now().plusSeconds(30);
          // the controller takes a lost node out of the in-sync replicas once it fences it
          while (!underReplicated(all) && Instant.now().isBefore(giveUp)) {
            Thread.sleep(250);
          }
          while (underReplicated(all)) {
            Thread.sleep(250);
          }
          inSync.set(Instant.now());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt(); // the test ended first; its figure is then missing
        }
      }, "under-replicated");
      replicas.setDaemon(true);
      replicas.start();
    }

    /** Whether a partition of {@code topics} lacks an in-sync replica; a question the cluster does not answer (a node stopped) counts as yes. */
    private boolean underReplicated(List<String> topics) {
      try {
        return !kafka.underReplicated(admin, topics).isEmpty();
      } catch (Exception unanswered) {
        return true;
      }
    }

    /** What every fault must leave: each line once, each refusal once, each alert once, each notification once. */
    void verify(Launched survivor) throws Exception {
      verify(survivor, false);
    }

    /**
     * As {@link #verify(Launched)}; with {@code notifierKilled}, a notification the dead notifier
     * sent without recording it may go once more, marked as a possible repeat with its key: never
     * twice unmarked.
     */
    void verify(Launched survivor, boolean notifierKilled) throws Exception {
      int lines = COMMANDS * rounds;
      List<ConsumerRecord<String, String>> violations = readAll(kafka.bootstrapServers(), Topics.VIOLATIONS.name(), lines,
          Duration.ofMinutes(3));
      Map<String, Integer> byEventId = new HashMap<>();
      Map<String, Integer> perCommand = new TreeMap<>();
      for (ConsumerRecord<String, String> r : violations) {
        JsonNode e = Json.MAPPER.readTree(r.value());
        byEventId.merge(e.path("eventId").asText(), 1, Integer::sum);
        perCommand.merge(e.path("commandId").asText(), 1, Integer::sum);
      }
      assertThat(byEventId).as("events on the violations topic").hasSize(lines);
      assertThat(byEventId.values()).as("events written twice").allMatch(n -> n == 1);
      assertThat(perCommand).hasSize(COMMANDS).allSatisfy((cmd, n) -> assertThat(n).as(cmd).isEqualTo(rounds));

      Launched.awaitCaughtUp(admin, survivor);
      for (String cmd : commands) {
        assertThat(Launched.command(api, TOKEN, cmd, rounds).path("events").asInt()).as(cmd).isEqualTo(rounds);
      }

      List<ConsumerRecord<String, String>> alerts = readAll(kafka.bootstrapServers(), Topics.ALERTS.name(), 2 * COMMANDS,
          Duration.ofMinutes(2));
      Set<String> values = new HashSet<>();
      Map<String, Set<String>> rules = new TreeMap<>();
      Set<String> fingerprints = new HashSet<>();
      for (ConsumerRecord<String, String> r : alerts) {
        assertThat(values.add(r.value())).as("an alert written twice: %s", r.value()).isTrue();
        JsonNode a = Json.MAPPER.readTree(r.value());
        rules.computeIfAbsent(a.path("commandId").asText(), k -> new TreeSet<>()).add(a.path("rule").asText());
        fingerprints.add(a.path("fingerprint").asText());
      }
      for (String cmd : commands) {
        assertThat(rules.get(cmd)).as(cmd).contains("off-role-host", "persistent-retry");
      }

      for (String fingerprint : fingerprints) {
        assertThat(soc.await(r -> r.body().contains(fingerprint), 1, Duration.ofMinutes(2)))
            .as(fingerprint + " delivered").isNotEmpty();
      }
      Thread.sleep(3_000);
      List<HttpRecorder.Request> sent = soc.requests("/hook");
      Map<String, Integer> byKey = new HashMap<>();
      int repeats = 0;
      for (HttpRecorder.Request r : sent) {
        boolean marked = r.header(WebhookNotifier.POSSIBLE_REPEAT) != null;
        if (!marked) {
          byKey.merge(r.header(WebhookNotifier.IDEMPOTENCY_KEY), 1, Integer::sum);
        }
        repeats += marked ? 1 : 0;
        assertThat(marked && !notifierKilled).as("a send marked as a possible repeat, no notifier killed").isFalse();
      }
      assertThat(byKey.values()).as("notifications sent twice unmarked").allMatch(n -> n == 1);

      Instant firstAfter = sent.stream().map(HttpRecorder.Request::at).filter(t -> t.isAfter(faultAt))
          .min(Instant::compareTo).orElse(null);
      replicas.join(Duration.ofMinutes(3).toMillis());
      assertThat(inSync.get()).as("every partition in sync again after the fault").isNotNull();
      System.out.printf("ClusterFaultsTest: %s: %d lines (written at %.0f/s), %d events, %d alert records, %d notifications (%d marked"
          + " possible repeats); the first page %.1f s after the fault; under-replicated until %.1f s after it%n", fault,
          lines, lines * 1e3 / loaded.toMillis(), violations.size(), alerts.size(), sent.size(), repeats, firstAfter == null ? -1 : Duration.between(faultAt, firstAfter).toMillis() / 1e3,
          Duration.between(faultAt, inSync.get()).toMillis() / 1e3);
      assertThat(firstAfter).as("a page after the fault").isNotNull();
    }

    @Override
    public void close() {
      for (Launched s : stages) {
        s.close();
      }
      if (shipper != null) {
        shipper.close(Duration.ofSeconds(5));
      }
      admin.close();
      soc.close();
      kafka.close();
    }
  }

  /** Every record of {@code topic}, read committed, once at least {@code atLeast} are there and 3 s bring no more. */
  static List<ConsumerRecord<String, String>> readAll(String bootstrap, String topic, int atLeast, Duration within) {
    Map<String, Object> props = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    List<ConsumerRecord<String, String>> out = new ArrayList<>();
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> parts = c.partitionsFor(topic, Duration.ofSeconds(30)).stream()
          .map(p -> new TopicPartition(topic, p.partition())).toList();
      c.assign(parts);
      c.seekToBeginning(parts);
      Instant deadline = Instant.now().plus(within);
      Instant quietSince = Instant.now();
      while (Instant.now().isBefore(deadline)) {
        int before = out.size();
        c.poll(Duration.ofMillis(500)).forEach(out::add);
        if (out.size() > before) {
          quietSince = Instant.now();
        } else if (out.size() >= atLeast && Instant.now().isAfter(quietSince.plusSeconds(3))) {
          return out;
        }
      }
    }
    throw new AssertionError(out.size() + " records of " + topic + " read, " + atLeast + " awaited");
  }
}
