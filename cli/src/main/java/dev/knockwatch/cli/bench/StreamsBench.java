package dev.knockwatch.cli.bench;

import dev.knockwatch.events.WritableTopics;
import picocli.CommandLine;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.cli.run.Rules;
import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.EventSink;
import dev.knockwatch.ingest.KafkaEventSink;
import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.StreamsApp;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Policy;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.Topology;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Publishes N generated events (1,000 commands, a mix of in-role, off-role, sensitive and
 * filesystem refusals) to an embedded broker, then runs the full detection topology with
 * exactly-once and, side by side, a pass-through topology (source to sink, same settings)
 * over the same topic, each timed from RUNNING until its committed position reaches the end.
 */
@Command(name = "streams", mixinStandardHelpOptions = true,
    description = "Events per second of the detection topology (EOS) beside a pass-through topology on the same input.")
final class StreamsBench implements Callable<Integer> {

  private static final Logger log = LoggerFactory.getLogger(StreamsBench.class);

  @Mixin Report report;

  @Option(names = "--events", defaultValue = "300000", description = "Events to generate (default: ${DEFAULT-VALUE}).")
  int events;

  @Option(names = "--rules", defaultValue = "alert-rules", description = "The alert-rules directory (default: ${DEFAULT-VALUE}).")
  Path rules;

  @Option(names = "--latency-seconds", defaultValue = "30",
      description = "How long to measure append-to-alert latency under 5,000 events/s of background load; 0 skips it"
          + " (default: ${DEFAULT-VALUE}).")
  int latencySeconds;

  @Option(names = "--rounds", defaultValue = "2",
      description = "Rounds of both topologies; the last one is reported (default: ${DEFAULT-VALUE}).")
  int rounds;

  @Override
  public Integer call() throws Exception {
    if (events < 1 || rounds < 1) {
      throw new UsageException("--events and --rounds must be at least 1");
    }
    Policy policy = Rules.load(rules);
    Path tmp = Files.createTempDirectory("knockwatch-bench-streams-");
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(tmp.resolve("kafka"), 0)) {
      broker.createTopics();
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
        WritableTopics.create(admin, List.of(new NewTopic("bench.pass-through", 6, (short) 1)));
      }
      publish(broker.bootstrapServers(), events);
      // Rounds alternate the two topologies, each on a fresh application id (so from the first
      // event); only the last round counts: the first ones pay for the JIT, which on two cores
      // competes with the work measured.
      Run passThroughRun = null;
      Run detectionRun = null;
      for (int round = 1; round <= rounds; round++) {
        passThroughRun = run(broker, tmp, "bench-pass-through-" + round,
            DetectionTopology.passThrough("bench.pass-through"));
        detectionRun = run(broker, tmp, "bench-detection-" + round,
            DetectionTopology.buildTopology(policy,
                AlertLifecycleProcessor.Clock.WALL));
      }
      double passThrough = passThroughRun.seconds();
      double detection = detectionRun.seconds();
      Map<String, Object> result = new LinkedHashMap<>();
      result.put("events", events);
      result.put("rounds", rounds);
      result.put("seconds", detection);
      result.put("eventsPerSecond", Math.round(events / detection));
      result.put("passThroughSeconds", passThrough);
      result.put("passThroughEventsPerSecond", Math.round(events / passThrough));
      result.put("ratio", Stats.speedRatio(detection, passThrough));
      // CPU of the app's own threads (stream thread, its producer): steadier than wall time on a shared VM
      result.put("eventsPerCpuSecond", Math.round(events / detectionRun.cpuSeconds()));
      result.put("passThroughEventsPerCpuSecond", Math.round(events / passThroughRun.cpuSeconds()));
      result.put("cpuRatio", Stats.speedRatio(detectionRun.cpuSeconds(), passThroughRun.cpuSeconds()));
      // the rules' state: what its store (every stateful rule's slices, one value per key) wrote to its changelog
      result.put("stateChangelogRecords", detectionRun.stateChangelogRecords());
      result.put("stateChangelogBytes", detectionRun.stateChangelogBytes());
      // every store's: what detection's state costs the broker per event
      result.put("changelogRecords", detectionRun.changelogRecords());
      result.put("changelogBytes", detectionRun.changelogBytes());
      result.put("changelogBytesPerEvent", Stats.round((double) detectionRun.changelogBytes() / events, 1));
      // cost linear in events: the detection topology again, as warm, over the first tenth of the
      // same events on a broker of its own; the CPU of all events over the CPU of a tenth (10 or less: linear)
      int tenth = Math.max(1, events / 10);
      Run tenthRun;
      try (EmbeddedKafkaBroker small = EmbeddedKafkaBroker.start(tmp.resolve("tenth-kafka"), 0)) {
        small.createTopics();
        publish(small.bootstrapServers(), tenth);
        tenthRun = run(small, tmp, "bench-detection-tenth", DetectionTopology.buildTopology(policy,
            AlertLifecycleProcessor.Clock.WALL));
      }
      result.put("tenthEvents", tenth);
      result.put("tenthCpuSeconds", tenthRun.cpuSeconds());
      result.put("tenthEventsPerCpuSecond", Math.round(tenth / tenthRun.cpuSeconds()));
      result.put("cpuGrowth", Stats.round(detectionRun.cpuSeconds() / tenthRun.cpuSeconds(), 2));
      result.put("eventsGrowth", Stats.round((double) events / tenth, 2));
      if (latencySeconds > 0) {
        LatencyHarness.Latency l;
        // its own broker: the events of the throughput phase must not be a backlog here
        try (EmbeddedKafkaBroker quiet = EmbeddedKafkaBroker.start(tmp.resolve("latency-kafka"), 0)) {
          quiet.createTopics();
          l = LatencyHarness.measure(quiet, tmp, policy, latencySeconds);
        }
        List<Long> ms = l.toAlert();
        result.put("latencySamples", ms.size());
        result.put("latencyP50Ms", Stats.percentile(ms, 50));
        result.put("latencyP99Ms", Stats.percentile(ms, 99));
        result.put("latencyMaxMs", ms.isEmpty() ? null : ms.get(ms.size() - 1));
        // the first stage alone: the append to the event on the violations topic (ingest)
        result.put("latencyToTopicP50Ms", Stats.percentile(l.toTopic(), 50));
        result.put("latencyToTopicP99Ms", Stats.percentile(l.toTopic(), 99));
        // what the probes' window cost: detection's events per CPU-second, and the cores the process kept busy
        result.put("latencyWarmUpSeconds", Math.round(l.warmUpSeconds() * 10) / 10.0);
        result.put("latencyDetectionEventsPerCpuSecond", Math.round(l.events() / l.detectionCpu()));
        result.put("latencyProcessCores", Math.round(l.processCpu() / l.seconds() * 100) / 100.0);
      }
      report.print(result);
    } finally {
      EmbeddedKafkaBroker.wipe(tmp);
    }
    return CommandLine.ExitCode.OK;
  }

  record Run(double seconds, double cpuSeconds, long stateChangelogRecords, long stateChangelogBytes,
      long changelogRecords, long changelogBytes) {}

  /**
   * Seconds from RUNNING until the app's committed position is at the end of the violations
   * topic, and the CPU its own threads (named after the application id) used meanwhile.
   */
  private static Run run(EmbeddedKafkaBroker broker, Path tmp, String appId, Topology topology) {
    try (StreamsApp app = new StreamsApp(appId, broker.bootstrapServers(),
        tmp.resolve(appId), topology, Map.of())) {
      app.start(Duration.ofSeconds(120));
      ThreadMXBean threads = ManagementFactory.getThreadMXBean();
      Map<Long, Long> before = CpuAccounting.threadCpu(threads, name -> name.contains(appId));
      long t0 = System.nanoTime();
      app.awaitCaughtUp(Duration.ofMinutes(20));
      double seconds = (System.nanoTime() - t0) / 1e9;
      double cpu = CpuAccounting.cpuSince(CpuAccounting.threadCpu(threads, name -> name.contains(appId)), before);
      log.info("{}: {} s, {} CPU-s on its threads", appId, String.format("%.2f", seconds), String.format("%.2f", cpu));
      long[] count = changelog(broker, appId, appId + "-" + DetectionTopology.DETECT_STORE + "-");
      long[] all = changelog(broker, appId, appId + "-");
      return new Run(seconds, cpu, count[0], count[1], all[0], all[1]);
    } catch (Exception e) {
      throw new IllegalStateException("bench run " + appId + " failed: " + e, e);
    }
  }

  /**
   * What the stores whose changelogs start with {@code prefix} wrote to them (records, transaction
   * markers included, and bytes on disk): {@code APP-detect-}, the rules' state (by-grain too);
   * {@code APP-}, every store's.
   */
  private static long[] changelog(EmbeddedKafkaBroker broker, String appId, String prefix) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      List<String> topics = admin.listTopics().names().get(30, TimeUnit.SECONDS).stream()
          .filter(t -> t.startsWith(prefix) && t.endsWith("-changelog")).toList();
      if (topics.isEmpty()) {
        return new long[] {0, 0};
      }
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS).forEach((name, d) -> d.partitions()
          .forEach(p -> latest.put(new TopicPartition(name, p.partition()),
              OffsetSpec.latest())));
      Map<String, Long> recordsByTopic = new java.util.TreeMap<>();
      admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).forEach((tp, info) ->
          recordsByTopic.merge(tp.topic(), info.offset(), Long::sum));
      long records = recordsByTopic.values().stream().mapToLong(Long::longValue).sum();
      Map<String, Long> bytesByTopic = new java.util.TreeMap<>();
      long bytes = 0;
      List<Integer> nodes = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).stream()
          .map(Node::id).toList();
      var dirs = admin.describeLogDirs(nodes).allDescriptions().get(30, TimeUnit.SECONDS);
      for (var byDir : dirs.values()) {
        for (var dir : byDir.values()) {
          for (var r : dir.replicaInfos().entrySet()) {
            if (topics.contains(r.getKey().topic())) {
              bytes += r.getValue().size();
              bytesByTopic.merge(r.getKey().topic(), r.getValue().size(), Long::sum);
            }
          }
        }
      }
      recordsByTopic.forEach((t, n) -> log.info("{}: {} records, {} bytes", t, n, bytesByTopic.get(t)));
      return new long[] {records, bytes};
    }
  }

  /** Event time moves as it would at 50,000 refusals a second (window stores roll segments by event time). */
  static final int EVENTS_PER_EVENT_MS = 50;

  private static void publish(String bootstrap, int n) throws EventSink.PublishException {
    Random random = new Random(42);
    String[] hosts = {"registry.npmjs.org", "evil.example", "169.254.169.254", "api.github.com", "pastebin.com"};
    Instant t0 = Instant.parse("2026-11-29T18:00:00Z");
    // one request in flight: on a topic its broker has just made, a first batch refused NOT_LEADER_OR_FOLLOWER can be
    // overtaken by the next ones, and its retry is then refused OUT_OF_ORDER_SEQUENCE_NUMBER for good (Kafka 4.4, seen
    // here on a loaded machine though every partition had its leader); the publishing is not what is measured
    try (KafkaEventSink sink = KafkaEventSink.create(bootstrap,
        Map.of(org.apache.kafka.clients.producer.ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1))) {
      for (int i = 0; i < n; i++) {
        int c = random.nextInt(1000);
        String commandId = String.format("BenchCommand%010d", c);
        ViolationEvent.Builder b = ViolationEvent.builder().eventId("bench-" + i).commandId(commandId)
            .agentId(c % 2 == 0 ? "ci-runner-" + c : "research-" + c).source("srt-violation")
            .observedAt(t0.plusMillis(i / EVENTS_PER_EVENT_MS)).reason("host is not on the allow list");
        if (i % 10 == 9) {
          b.kind(Kind.FILESYSTEM).action("openat").path(i % 20 == 19 ? "/home/agent/.bashrc" : "/tmp/x");
        } else {
          b.kind(Kind.NETWORK).action("network-outbound").host(hosts[random.nextInt(hosts.length)])
              .port(443);
        }
        sink.publish(b.build());
        if (i % 50_000 == 49_999) {
          sink.flush();
        }
      }
      sink.flush();
    }
  }

}
