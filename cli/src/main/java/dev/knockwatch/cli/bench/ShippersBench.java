package dev.knockwatch.cli.bench;

import dev.knockwatch.events.WritableTopics;
import picocli.CommandLine;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The agent or your shipper, per sandbox host, side by side in one run: the agent
 * ({@code ./knockwatch ingest}, through the launcher), rsyslog and syslog-ng (Debian's, unpacked by
 * {@code bench/syslogs.sh}, with {@code config/shippers/}), each on a layout of its own with the
 * same lines, through the same phases, each waiting for its exact count of records: a backlog
 * (cold, from the process's start), a second one (warm), a steady rate, then idle with 1,203
 * watched files. Then the central stage ({@code ./knockwatch ingest --raw-topic}, through the
 * launcher) on the same backlogs as raw lines: its lines per CPU-second beside the agent's.
 */
@Command(name = "shippers", mixinStandardHelpOptions = true,
    description = {"The agent or your shipper, per host: rsyslog's and syslog-ng's (config/shippers/) resident memory "
        + "and CPU at a steady rate and idle with 1,203 watched files, beside the agent's; and the central "
        + "stage (ingest --raw-topic) per CPU-second beside the agent."})
final class ShippersBench implements Callable<Integer> {

  private static final Logger log = LoggerFactory.getLogger(ShippersBench.class);

  @Mixin Report report;

  @Option(names = "--lines", defaultValue = "200000", description = "The backlog's lines (default: ${DEFAULT-VALUE}).")
  int lines;

  @Option(names = "--steady-rate", defaultValue = "5000", description = "Lines a second (default: ${DEFAULT-VALUE}).")
  int steadyRate;

  @Option(names = "--steady-seconds", defaultValue = "30", description = "(default: ${DEFAULT-VALUE})")
  int steadySeconds;

  @Option(names = "--idle-seconds", defaultValue = "60", description = "(default: ${DEFAULT-VALUE})")
  int idleSeconds;

  /** One process under measurement: how it starts on a layout, and how many records it has published. */
  private interface Subject {
    String name();

    Process start(Path logs, Path dir) throws Exception;

    long published() throws Exception;
  }

  @Override
  public Integer call() throws Exception {
    if (lines < 1 || steadyRate < 10 || steadySeconds < 1 || idleSeconds < 1) {
      throw new UsageException("--lines, --steady-rate (10 or more), --steady-seconds and --idle-seconds must be positive");
    }
    String launcher = System.getProperty("knockwatch.launcher");
    if (launcher == null || !Files.isExecutable(Path.of(launcher))) {
      throw new UsageException("bench shippers runs the agent through the launcher: ./knockwatch bench shippers");
    }
    String syslogs = System.getProperty("knockwatch.syslogs");
    if (!Syslogs.present(syslogs == null ? null : Path.of(syslogs))) {
      throw new UsageException("rsyslog and syslog-ng are not unpacked in " + syslogs
          + ": the launcher unpacks them with bench/syslogs.sh when run as root");
    }
    Path repo = Path.of(launcher).toAbsolutePath().getParent();
    Path tmp = Files.createTempDirectory("knockwatch-bench-shippers-");
    Map<String, Object> result = new LinkedHashMap<>();
    result.put("lines", lines);
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(tmp.resolve("kafka"), 0);
        Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      broker.createTopics();
      Subject agent = new Subject() {
        public String name() {
          return "agent";
        }

        public Process start(Path logs, Path dir) throws Exception {
          return launch(List.of(launcher, "ingest", "--logs", logs.toString(), "--var", dir.resolve("var").toString(),
              "--bootstrap-servers", broker.bootstrapServers()), dir, Map.of());
        }

        public long published() throws Exception {
          return Offsets.records(admin, Topics.VIOLATIONS, Topics.REJECTED);
        }
      };
      result.putAll(phases(agent, tmp.resolve("agent")));
      for (Syslogs.Tool tool : Syslogs.Tool.values()) {
        Topics.Topic topic = new Topics.Topic("bench.raw." + tool.label, Topics.RAW.partitions(), Map.of(), null, "raw");
        WritableTopics.create(admin, List.of(new NewTopic(topic.name(), topic.partitions(), (short) 1)));
        Subject shipper = new Subject() {
          public String name() {
            return tool.field.substring(0, 1).toLowerCase() + tool.field.substring(1);
          }

          public Process start(Path logs, Path dir) throws Exception {
            Path conf = repo.resolve("config/shippers").resolve(tool == Syslogs.Tool.RSYSLOG ? "rsyslog.conf" : "syslog-ng.conf");
            Files.createDirectories(dir.resolve("work"));
            List<String> cmd = tool.command(Path.of(syslogs), dir.resolve("work"), conf);
            return launch(cmd, dir, Map.of("KNOCKWATCH_LOGS", logs.toAbsolutePath().toString(),
                "KNOCKWATCH_BOOTSTRAP_SERVERS", broker.bootstrapServers(), "KNOCKWATCH_RAW_TOPIC", topic.name(),
                "KNOCKWATCH_RSYSLOG_WORK", dir.resolve("work").toAbsolutePath().toString(),
                "LD_LIBRARY_PATH", Syslogs.libraryPath(Path.of(syslogs))));
          }

          public long published() throws Exception {
            return Offsets.records(admin, topic);
          }
        };
        result.putAll(phases(shipper, tmp.resolve(tool.label)));
      }
      result.putAll(stage(launcher, broker, admin, tmp.resolve("stage")));
      // per CPU-second, the stage's over the agent's (2: the stage does a line's work on half the CPU)
      result.put("stageColdCpuVsAgent", Stats.speedRatio((double) result.get("stageColdCpuSeconds"),
          (double) result.get("agentColdCpuSeconds")));
      report.print(result);
    } finally {
      EmbeddedKafkaBroker.wipe(tmp);
    }
    return CommandLine.ExitCode.OK;
  }

  private static Process launch(List<String> cmd, Path dir, Map<String, String> env) throws Exception {
    Files.createDirectories(dir);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("out").toFile());
    pb.environment().remove("KNOCKWATCH_JAVA_OPTS");
    pb.environment().putAll(env);
    return pb.start();
  }

  /** The backlog, the steady rate and idle, for one subject on a layout of its own; figures prefixed with its name. */
  private Map<String, Object> phases(Subject s, Path dir) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    Path logs = Files.createDirectories(dir.resolve("logs"));
    IngestBench.generate(logs, lines);
    Files.delete(logs.resolve("all-srt.txt"));
    Path said = dir.resolve("out");
    LongSupplier published = () -> {
      try {
        return s.published();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    };
    long base = published.getAsLong();
    long t0 = System.nanoTime();
    Process p = s.start(logs, dir);
    String n = s.name();
    try {
      AsDeployed.await(published, base + lines, p, said);
      double coldSeconds = (System.nanoTime() - t0) / 1e9;
      double coldCpu = AsDeployed.cpu(p);
      out.put(n + "ColdLinesPerSecond", Math.round(lines / coldSeconds));
      out.put(n + "ColdCpuSeconds", AsDeployed.round(coldCpu));
      out.put(n + "ColdLinesPerCpuSecond", Math.round(lines / coldCpu));

      // warm: as many lines again, in new directories moved in at once
      Path second = dir.resolve("second");
      IngestBench.generate(second, lines);
      long t1 = System.nanoTime();
      Files.move(second.resolve("bench-agent"), logs.resolve("bench-agent-2"));
      Files.move(second.resolve("proxy"), logs.resolve("proxy-2"));
      AsDeployed.await(published, base + 2L * lines, p, said);
      double warmCpu = AsDeployed.cpu(p) - coldCpu;
      out.put(n + "WarmLinesPerSecond", Math.round(lines / ((System.nanoTime() - t1) / 1e9)));
      out.put(n + "WarmLinesPerCpuSecond", Math.round(lines / warmCpu));

      Map<String, Object> steady = new LinkedHashMap<>();
      long steadyLines = AsDeployed.steady(logs.resolve("bench-steady"), steadyRate, steadySeconds, p, published,
          base + 2L * lines, steady, said);
      out.put(n + "SteadyLinesPerSecond", steady.get("steadyLinesPerSecond"));
      out.put(n + "SteadyCpuPercentOfCore", steady.get("steadyCpuPercentOfCore"));
      out.put(n + "SteadyRssMb", AsDeployed.rssMb(p));

      long before = base + 2L * lines + steadyLines;
      AsDeployed.idleFiles(logs);
      AsDeployed.await(published, before + AsDeployed.IDLE_FILES, p, said);
      Thread.sleep(5_000); // the last sends and any collector settle
      double idle0 = AsDeployed.cpu(p);
      Thread.sleep(idleSeconds * 1000L);
      double idleCpu = AsDeployed.cpu(p) - idle0;
      out.put(n + "IdleWatchedFiles", AsDeployed.files(logs));
      out.put(n + "IdleCpuPercentOfCore", AsDeployed.round(100 * idleCpu / idleSeconds));
      out.put(n + "IdleCpuSecondsPerMinute", AsDeployed.round(idleCpu * 60 / idleSeconds));
      out.put(n + "IdleRssMb", AsDeployed.rssMb(p));
      Thread.sleep(2_000);
      long total = published.getAsLong() - base;
      if (total != 2L * lines + steadyLines + AsDeployed.IDLE_FILES) {
        throw new IllegalStateException(n + " published " + total + " records, not " + (2L * lines + steadyLines
            + AsDeployed.IDLE_FILES) + ": a line lost or sent twice");
      }
      out.put(n + "RecordsVerified", total);
      log.info("{}: {}", n, out);
    } finally {
      p.destroy();
      p.waitFor(30, TimeUnit.SECONDS);
    }
    return out;
  }

  /**
   * {@code ./knockwatch ingest --raw-topic} as deployed, on the agent's backlog as a shipper with
   * offsets puts it on the raw topic (the contract's names; written here, so that only the stage's
   * own work is measured): cold, from its start, to the last of the backlog's events; then warm, a
   * second backlog. Each waits for its exact count.
   */
  private Map<String, Object> stage(String launcher, EmbeddedKafkaBroker broker, Admin admin, Path dir) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    Topics.Topic topic = new Topics.Topic("bench.raw.stage", Topics.RAW.partitions(), Map.of(), null, "raw");
    WritableTopics.create(admin, List.of(new NewTopic(topic.name(), topic.partitions(), (short) 1)));
    Path logs = Files.createDirectories(dir.resolve("logs"));
    ship(broker, topic, logs, IngestBench.generate(logs.resolve("first"), lines));
    // records, not offsets: each transaction's commit marker takes an offset of every partition it wrote
    CommittedCount counted = new CommittedCount(broker, List.of(Topics.VIOLATIONS, Topics.REJECTED));
    LongSupplier published = counted::count;
    long base = 0;
    long t0 = System.nanoTime();
    Process p = launch(List.of(launcher, "ingest", "--raw-topic", topic.name(), "--logs", logs.toString(),
        "--var", dir.resolve("var").toString(), "--bootstrap-servers", broker.bootstrapServers()), dir, Map.of());
    try {
      AsDeployed.await(published, base + lines, p, dir.resolve("out"));
      double seconds = (System.nanoTime() - t0) / 1e9;
      double cpu = AsDeployed.cpu(p);
      out.put("stageColdLinesPerSecond", Math.round(lines / seconds));
      out.put("stageColdCpuSeconds", AsDeployed.round(cpu));
      out.put("stageColdLinesPerCpuSecond", Math.round(lines / cpu));
      long t1 = System.nanoTime();
      ship(broker, topic, logs, IngestBench.generate(logs.resolve("second"), lines));
      AsDeployed.await(published, base + 2L * lines, p, dir.resolve("out"));
      out.put("stageWarmLinesPerSecond", Math.round(lines / ((System.nanoTime() - t1) / 1e9)));
      out.put("stageWarmLinesPerCpuSecond", Math.round(lines / (AsDeployed.cpu(p) - cpu)));
      out.put("stageRssMb", AsDeployed.rssMb(p));
      Thread.sleep(2_000);
      long total = published.getAsLong() - base;
      if (total != 2L * lines) {
        throw new IllegalStateException("the stage published " + total + " records for " + 2L * lines + " raw lines");
      }
      out.put("stageRecordsVerified", total);
    } finally {
      p.destroy();
      p.waitFor(30, TimeUnit.SECONDS);
      counted.close();
    }
    return out;
  }

  /** The committed records published to {@code topics} from its making on (read_committed, control records skipped). */
  private static final class CommittedCount implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private long count;

    CommittedCount(EmbeddedKafkaBroker broker, List<Topics.Topic> topics) {
      consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
          ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed", ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000),
          new ByteArrayDeserializer(), new ByteArrayDeserializer());
      List<TopicPartition> parts = topics.stream().flatMap(t -> java.util.stream.IntStream.range(0, t.partitions())
          .mapToObj(i -> new TopicPartition(t.name(), i))).toList();
      consumer.assign(parts);
      consumer.seekToEnd(parts);
      parts.forEach(consumer::position); // the end now, not when first polled
    }

    long count() {
      count += consumer.poll(Duration.ofMillis(10)).count();
      return count;
    }

    @Override
    public void close() {
      consumer.close();
    }
  }

  /** Every line of {@code files} (under {@code logs}) on {@code topic} as a shipper with offsets sends it, keyed by its path. */
  private static void ship(EmbeddedKafkaBroker broker, Topics.Topic topic, Path logs, List<Path> files) throws Exception {
    Files.delete(files.get(0)); // the joined copy of the srt records: not under the layout's own names
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, 20,
        ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4", ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024),
        new StringSerializer(), new StringSerializer());
        var walk = Files.walk(files.get(1).getParent().getParent())) {
      for (Path f : walk.filter(Files::isRegularFile).sorted().toList()) {
        String path = f.toAbsolutePath().toString();
        String quoted = Json.MAPPER.writeValueAsString(path);
        long offset = 0;
        for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
          producer.send(new ProducerRecord<>(topic.name(), path, "{\"line\":" + Json.MAPPER.writeValueAsString(line)
              + ",\"path\":" + quoted + ",\"host\":\"bench\",\"offset\":" + offset + "}"));
          offset += line.getBytes(StandardCharsets.UTF_8).length + 1;
        }
      }
    }
  }
}
