package dev.knockwatch.cli.bench;

import picocli.CommandLine;
import dev.knockwatch.ingest.LogLayout;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.EventSink;
import dev.knockwatch.ingest.IngestAgent;
import dev.knockwatch.ingest.KafkaEventSink;
import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Generates N mixed lines (srt records and Squid lines), then, after a warm-up on another tree,
 * tails, parses and publishes them to an embedded broker in this process; kafkacat publishes
 * the same bytes unparsed to the same broker before and after (the faster run is the ceiling:
 * it parses, keys and redacts nothing). CPU is counted per side: the agent's reader, publisher
 * and producer I/O threads, and kafkacat's own process.
 */
@Command(name = "ingest", mixinStandardHelpOptions = true,
    description = {"Tail -> parse -> publish N generated lines on an embedded broker, beside kafkacat -P on the same bytes."})
final class IngestBench implements Callable<Integer> {

  private static final Logger log = LoggerFactory.getLogger(IngestBench.class);

  @Mixin Report report;

  @Option(names = "--lines", defaultValue = "1000000", description = "Lines to generate (default: ${DEFAULT-VALUE}).")
  int lines;

  @Option(names = "--warmup", defaultValue = "500000", paramLabel = "N",
      description = "Lines per warm-up round: the in-process agent handles another generated tree of N lines, unmeasured,"
          + " round after round until the JIT compilers take under a tenth of a round's CPU (at most "
          + MAX_WARMUP_ROUNDS + " rounds), so the figures are the sustained rate and not the compilers' start"
          + " (default: ${DEFAULT-VALUE}; 0: a cold start).")
  int warmup;

  /** A round whose JIT compilers took less than this share of the process's CPU ends the warm-up. */
  static final double JIT_SETTLED = 0.10;
  static final int MAX_WARMUP_ROUNDS = 8;
  private int warmupRounds;

  @Option(names = "--parse-threads", paramLabel = "N",
      description = "Threads the in-process agent parses with, its reader included (default: the agent's, one a core up to 4).")
  Integer parseThreads;

  @Option(names = "--no-kafka", description = "Tail and parse only (events are counted, not published): where the time goes.")
  boolean noKafka;

  @Option(names = "--as-deployed", description = {"Also run the agent as a user does: ./knockwatch ingest, its own process"
      + " with the launcher's options, against this process's broker; cold (from its start), warm (a second backlog),"
      + " steady (--steady-rate lines/s) and idle (1,000 more watched files) figures, beside kafkacat on the same bytes,"
      + " and rsyslog and syslog-ng parsing them into JSON keyed by command id (unpacked by bench/syslogs.sh)."})
  boolean asDeployed;

  @Option(names = "--agent-java-opts", paramLabel = "OPTS",
      description = "With --as-deployed: KNOCKWATCH_JAVA_OPTS for the agent (a lever tried; default: the launcher's own).")
  String agentJavaOpts;

  @Option(names = "--steady-rate", defaultValue = "5000", description = "With --as-deployed: lines a second (default: ${DEFAULT-VALUE}).")
  int steadyRate;

  @Option(names = "--steady-seconds", defaultValue = "30", description = "With --as-deployed (default: ${DEFAULT-VALUE}).")
  int steadySeconds;

  @Option(names = "--idle-seconds", defaultValue = "60", description = "With --as-deployed (default: ${DEFAULT-VALUE}).")
  int idleSeconds;

  @Option(names = "--kafkacat", defaultValue = "kcat", description = "The kafkacat binary (default: ${DEFAULT-VALUE}, else kafkacat).")
  String kafkacat;

  @Override
  public Integer call() throws Exception {
    if (lines < 1) {
      throw new UsageException("--lines must be at least 1");
    }
    if (warmup < 0) {
      throw new UsageException("--warmup must be 0 or more");
    }
    Path tmp = Files.createTempDirectory("knockwatch-bench-");
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(tmp.resolve("kafka"), 0)) {
      broker.createTopics();
      Path logs = tmp.resolve("logs");
      List<Path> files = generate(logs, lines);
      Map<String, Object> result = new LinkedHashMap<>();
      result.put("lines", lines);
      result.put("bytes", Files.size(files.get(0)) + Files.size(files.get(1)));
      result.put("maxHeapBytes", Runtime.getRuntime().maxMemory());
      if (warmup > 0 && !asDeployed) {
        warmupRounds = warmUp(broker, tmp.resolve("warmup"));
      }
      // kafkacat runs before and after the agent, and the faster run is the ceiling: the broker
      // shares this JVM, whose compilers and collector are busier at some times than at others.
      // It reads one file, as the agent does, not a pipe: a pipe's wake-ups cost it a second per
      // 1,000,000 lines on this machine's hypervisor.
      Path joined = Kafkacat.join(files, tmp.resolve("kafkacat.input"));
      if (asDeployed) {
        return deployed(broker, tmp, joined, result);
      }
      Optional<Baseline> kcatBefore = Kafkacat.publish(broker, kafkacat, joined, "bench.raw.before", lines);
      Side ours = runIngest(broker, logs);
      result.put("published", !noKafka);
      result.put("agent", "in process");
      result.put("warmupLines", (long) warmupRounds * warmup);
      result.put("warmupRounds", warmupRounds);
      result.put("seconds", ours.seconds());
      result.put("cpuSeconds", ours.cpuSeconds());
      result.put("linesPerSecond", Math.round(lines / ours.seconds()));
      result.put("linesPerCpuSecond", Math.round(lines / ours.cpuSeconds()));
      result.put("peakHeapBytes", ours.peakHeap());
      if (!Double.isNaN(ours.jitCpuSeconds())) { // the agent in this process, on Linux
        result.put("processCpuSeconds", ours.processCpuSeconds());
        result.put("jitCpuSeconds", ours.jitCpuSeconds());
      }
      Optional<Baseline> kcatAfter = Kafkacat.publish(broker, kafkacat, joined, "bench.raw.after", lines);
      kcatBefore.ifPresent(k -> log.info("kafkacat before the agent: {} s", String.format("%.2f", k.seconds())));
      kcatAfter.ifPresent(k -> log.info("kafkacat after the agent: {} s", String.format("%.2f", k.seconds())));
      Optional<Baseline> kcat = Kafkacat.faster(kcatBefore, kcatAfter);
      kcat.ifPresent(k -> {
        result.put("kcatSeconds", k.seconds());
        result.put("kcatCpuSeconds", k.cpuSeconds());
        result.put("kcatLinesPerSecond", Math.round(lines / k.seconds()));
        result.put("kcatLinesPerCpuSecond", Math.round(lines / k.cpuSeconds()));
        result.put("ratio", Stats.speedRatio(ours.seconds(), k.seconds()));
        result.put("cpuRatio", Stats.speedRatio(ours.cpuSeconds(), k.cpuSeconds()));
      });
      if (kcat.isEmpty()) {
        result.put("kafkacat", "not found (apt-get install kafkacat): no ceiling measured");
      }
      report.print(result);
    } finally {
      EmbeddedKafkaBroker.wipe(tmp);
    }
    return CommandLine.ExitCode.OK;
  }

  /**
   * The agent as deployed ({@link AsDeployed}), between two kafkacat runs on the same bytes (the
   * faster is the ceiling); the ratios are the agent's over kafkacat's.
   */
  private int deployed(EmbeddedKafkaBroker broker, Path tmp, Path joined, Map<String, Object> result) throws Exception {
    String launcher = System.getProperty("knockwatch.launcher");
    if (launcher == null || !Files.isExecutable(Path.of(launcher))) {
      throw new UsageException("--as-deployed runs the agent through the launcher: ./knockwatch bench ingest --as-deployed");
    }
    result.remove("maxHeapBytes");
    Optional<Baseline> before = Kafkacat.publish(broker, kafkacat, joined, "bench.raw.before", lines);
    result.putAll(new AsDeployed(broker, tmp, Path.of(launcher), agentJavaOpts).run(lines, steadyRate, steadySeconds,
        idleSeconds));
    Optional<Baseline> after = Kafkacat.publish(broker, kafkacat, joined, "bench.raw.after", lines);
    Optional<Baseline> kcat = Kafkacat.faster(before, after);
    if (kcat.isPresent()) {
      Baseline k = kcat.get();
      result.put("kcatLinesPerSecond", Math.round(lines / k.seconds()));
      result.put("kcatLinesPerCpuSecond", Math.round(lines / k.cpuSeconds()));
      double cold = (double) result.get("coldSeconds");
      double warm = (double) result.get("warmSeconds");
      result.put("coldVsKcat", Stats.speedRatio(cold, k.seconds()));
      result.put("warmVsKcat", Stats.speedRatio(warm, k.seconds()));
      result.put("coldCpuVsKcat", Stats.speedRatio((double) result.get("coldCpuSeconds"), k.cpuSeconds()));
      result.put("warmCpuVsKcat", Stats.speedRatio((double) result.get("warmCpuSeconds"), k.cpuSeconds()));
    } else {
      result.put("kafkacat", "not found (apt-get install kafkacat): no ceiling measured");
    }
    // what parses as the agent does, on the same bytes: per CPU-second, the agent's over theirs
    String syslogs = System.getProperty("knockwatch.syslogs");
    if (Syslogs.present(syslogs == null ? null : Path.of(syslogs))) {
      result.putAll(Syslogs.compare(Path.of(syslogs), broker, joined, tmp, (double) result.get("coldCpuSeconds"),
          (double) result.get("warmCpuSeconds")));
    } else {
      result.put("syslogs", "rsyslog and syslog-ng not unpacked (the launcher runs bench/syslogs.sh): not compared");
    }
    report.print(result);
    return CommandLine.ExitCode.OK;
  }

  /** A run's time and CPU: its own threads', and for the agent in process the whole process's and its JIT compilers'. */
  record Side(double seconds, double cpuSeconds, long peakHeap, double processCpuSeconds, double jitCpuSeconds) {

    Side(double seconds, double cpuSeconds, long peakHeap) {
      this(seconds, cpuSeconds, peakHeap, Double.NaN, Double.NaN);
    }
  }

  /**
   * Runs the agent on generated trees of {@link #warmup} lines until a round's JIT compilers
   * take under {@link #JIT_SETTLED} of the process's CPU, at most {@link #MAX_WARMUP_ROUNDS}
   * rounds: the broker shares this JVM, and its compilations go on long after the agent's.
   */
  private int warmUp(EmbeddedKafkaBroker broker, Path warm) throws Exception {
    for (int round = 1; ; round++) {
      generate(warm, warmup);
      log.info("warm-up round {}: {} lines", round, warmup);
      Side side = runIngest(broker, warm);
      EmbeddedKafkaBroker.wipe(warm);
      double jitShare = side.jitCpuSeconds() / side.processCpuSeconds();
      if (!(jitShare >= JIT_SETTLED) || round == MAX_WARMUP_ROUNDS) { // NaN: no /proc, one round
        log.info("warm-up ends after round {}: the JIT compilers took {} % of its CPU", round,
            Double.isNaN(jitShare) ? "?" : Math.round(jitShare * 100));
        return round;
      }
    }
  }

  /** 70% srt records over 1,000 commands in 100 files, 30% Squid knock-format lines in one access.log. */
  static List<Path> generate(Path logs, int n) throws IOException {
    Random random = new Random(42);
    Path srtDir = Files.createDirectories(logs.resolve("bench-agent"));
    Path squidDir = Files.createDirectories(logs.resolve("proxy"));
    Path allSrt = logs.resolve("all-srt.txt");
    Path squid = squidDir.resolve("access.log");
    String[] ids = new String[1000];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = String.format("bench%017d", i);
    }
    String[] hosts = {"example.com:443", "evil.test:80", "registry.npmjs.org:443", "169.254.169.254:80", "bit.ly:443"};
    BufferedWriter[] srtFiles = new BufferedWriter[100];
    for (int f = 0; f < srtFiles.length; f++) {
      srtFiles[f] = Files.newBufferedWriter(srtDir.resolve(ids[f] + ".violations.jsonl"), StandardCharsets.UTF_8);
    }
    long t = Instant.parse("2026-11-29T18:00:00Z").toEpochMilli();
    try (BufferedWriter all = Files.newBufferedWriter(allSrt, StandardCharsets.UTF_8);
        BufferedWriter sq = Files.newBufferedWriter(squid, StandardCharsets.UTF_8)) {
      for (int i = 0; i < n; i++) {
        String id = ids[random.nextInt(ids.length)];
        String host = hosts[random.nextInt(hosts.length)];
        t += random.nextInt(20);
        if (random.nextInt(10) < 7) {
          // a command's records in its own file, as the bridge writes them (docs/TRUST.md)
          int f = i % srtFiles.length;
          id = ids[f];
          String line = srtRecord(id, host, "curl -s https://" + host + "/path?token=SECRET" + i, Instant.ofEpochMilli(t));
          srtFiles[f].write(line);
          all.write(line);
        } else {
          sq.write(String.format("%d.%03d %6d 127.0.0.1 TCP_DENIED/403 3495 CONNECT %s - %s HIER_NONE/- text/html%n",
              t / 1000, t % 1000, random.nextInt(5), host, id));
        }
      }
    } finally {
      for (BufferedWriter w : srtFiles) {
        w.close();
      }
    }
    return List.of(allSrt, squid);
  }

  /** One srt violation record of {@code id}'s refused {@code host}, as the bridge writes it (a line, with its newline). */
  static String srtRecord(String id, String host, String command, Instant at) {
    return "{\"line\":\"deny network-outbound " + host + " (host is not on the allow list)\",\"encodedCommand\":\""
        + Base64.getEncoder().encodeToString(id.getBytes(StandardCharsets.UTF_8)) + "\",\"command\":\"" + command
        + "\",\"timestamp\":\"" + at + "\",\"commandId\":\"" + id + "\"}\n";
  }

  private Side runIngest(EmbeddedKafkaBroker broker, Path logs) throws Exception {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream()
        .filter(p -> p.getType() == MemoryType.HEAP).toList();
    System.gc();
    heap.forEach(MemoryPoolMXBean::resetPeakUsage);
    Map<Long, Long> cpuBefore = CpuAccounting.threadCpu(threads, CpuAccounting::ingestThread);
    Map<Long, Long> allBefore = CpuAccounting.threadCpu(threads, name -> true);
    Map<String, Long> vmBefore = CpuAccounting.vmThreadCpu();
    long processBefore = CpuAccounting.processCpuNanos();
    long t0 = System.nanoTime();
    try (EventSink sink = noKafka ? new CountingSink() : KafkaEventSink.create(broker.bootstrapServers(), Map.of())) {
      IngestAgent agent = LogLayout.forLogDirectory(logs, p -> !p.getFileName().toString().startsWith("all-"),
          null, sink, "bench", Duration.ofMillis(1));
      if (parseThreads != null) {
        agent.parseThreads(parseThreads);
      }
      Thread reader = new Thread(agent, "knockwatch-ingest");
      reader.start();
      while (!agent.caughtUp()) {
        Thread.sleep(1);
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      long cpu = 0;
      StringBuilder byThread = new StringBuilder();
      for (Map.Entry<Long, Long> e : CpuAccounting.threadCpu(threads, CpuAccounting::ingestThread).entrySet()) {
        long used = e.getValue() - cpuBefore.getOrDefault(e.getKey(), 0L);
        cpu += used;
        byThread.append(String.format(" %s %.2f s;", threads.getThreadInfo(e.getKey()).getThreadName(), used / 1e9));
      }
      log.info("ingest took {} s; CPU by thread:{}", String.format("%.2f", seconds), byThread);
      long jit = CpuAccounting.logProcessCpu(threads, allBefore, processBefore, vmBefore);
      agent.close();
      long peak = heap.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
      return new Side(seconds, cpu / 1e9, peak, (CpuAccounting.processCpuNanos() - processBefore) / 1e9,
          jit < 0 ? Double.NaN : jit / 1e9);
    }
  }

  /** Counts what it is given: the benchmark without Kafka. */
  private static final class CountingSink implements EventSink {
    long events;

    @Override
    public void publish(ViolationEvent event) {
      events++;
    }

    @Override
    public void reject(RejectedLine rejected) {
      events++;
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
