package dev.knockwatch.cli;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.EventSink;
import dev.knockwatch.ingest.IngestAgent;
import dev.knockwatch.ingest.KafkaEventSink;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Benchmarks that run the real parts: {@code bench ingest}, {@code bench streams}. */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Measure knockwatch on this machine.",
    subcommands = {BenchCommand.Ingest.class, BenchCommand.Streams.class, BenchCommand.Query.class,
        BenchCommand.Emitter.class})
final class BenchCommand implements Callable<Integer> {

  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(BenchCommand.class);

  /** The {@code p}-th percentile of sorted values (nearest rank), or null when there are none. */
  static Long percentile(List<Long> sorted, int p) {
    if (sorted.isEmpty()) {
      return null;
    }
    int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
  }

  /** A benchmark's result: one JSON object, or one {@code name: value} line each. */
  static void print(CommandSpec spec, Map<String, Object> result, boolean json) {
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(Json.write(result));
    } else {
      result.forEach((k, v) -> out.println(k + ": " + v));
    }
    out.flush();
  }

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return Knockwatch.USAGE;
  }

  /** CPU nanoseconds so far of each live thread whose name {@code name} accepts, by thread id. */
  static Map<Long, Long> threadCpu(ThreadMXBean threads, java.util.function.Predicate<String> name) {
    Map<Long, Long> out = new LinkedHashMap<>();
    for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info != null && name.test(info.getThreadName())) {
        out.put(info.getThreadId(), threads.getThreadCpuTime(info.getThreadId()));
      }
    }
    return out;
  }

  /** CPU seconds the threads of {@code now} used since {@code before} (both from {@link #threadCpu}). */
  static double cpuSince(Map<Long, Long> now, Map<Long, Long> before) {
    long nanos = 0;
    for (Map.Entry<Long, Long> e : now.entrySet()) {
      nanos += e.getValue() - before.getOrDefault(e.getKey(), 0L);
    }
    return nanos / 1e9;
  }

  /** Every partition of these topics, as declared in {@link dev.knockwatch.events.Topics}. */
  static List<org.apache.kafka.common.TopicPartition> partitions(dev.knockwatch.events.Topics.Topic... topics) {
    List<org.apache.kafka.common.TopicPartition> parts = new java.util.ArrayList<>();
    for (var t : topics) {
      for (int i = 0; i < t.partitions(); i++) {
        parts.add(new org.apache.kafka.common.TopicPartition(t.name(), i));
      }
    }
    return parts;
  }

  /** The log end offset of every partition of these topics. */
  static Map<org.apache.kafka.common.TopicPartition, Long> endOffsets(Admin admin, dev.knockwatch.events.Topics.Topic... topics)
      throws Exception {
    Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new java.util.HashMap<>();
    partitions(topics).forEach(tp -> latest.put(tp, org.apache.kafka.clients.admin.OffsetSpec.latest()));
    Map<org.apache.kafka.common.TopicPartition, Long> ends = new java.util.HashMap<>();
    admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).forEach((tp, info) -> ends.put(tp, info.offset()));
    return ends;
  }

  /**
   * Generates N mixed lines (srt records and Squid lines), then, after a warm-up on another tree,
   * tails, parses and publishes them to an embedded broker in this process; kafkacat publishes
   * the same bytes unparsed to the same broker before and after (the faster run is the ceiling:
   * it parses, keys and redacts nothing). CPU is counted per side: the agent's reader, publisher
   * and producer I/O threads, and kafkacat's own process.
   */
  @Command(name = "ingest", mixinStandardHelpOptions = true,
      description = {"Tail -> parse -> publish N generated lines on an embedded broker, beside kafkacat -P on the same bytes."})
  static final class Ingest implements Callable<Integer> {

    @Spec CommandSpec spec;

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

    @Option(names = "--agent-jvm", paramLabel = "JAVA_OPTS", arity = "0..1", fallbackValue = "-Xmx256m",
        description = "Run the agent as `knockwatch ingest` in its own JVM (default options: ${FALLBACK-VALUE}) against this"
            + " process's broker, instead of in this process.")
    String agentJvm;

    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

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
        if (warmup > 0 && agentJvm == null) {
          warmupRounds = warmUp(broker, tmp.resolve("warmup"));
        }
        // kafkacat runs before and after the agent, and the faster run is the ceiling: the broker
        // shares this JVM, whose compilers and collector are busier at some times than at others.
        // It reads one file, as the agent does, not a pipe: a pipe's wake-ups cost it a second per
        // 1,000,000 lines on this machine's hypervisor.
        Path joined = join(files, tmp.resolve("kafkacat.input"));
        Optional<Side> kcatBefore = runKafkacat(broker, joined, "bench.raw.before");
        Side ours = agentJvm != null ? runAgentJvm(broker, logs, tmp, lines, agentJvm) : runIngest(broker, logs);
        result.put("published", !noKafka);
        result.put("agent", agentJvm != null ? "own JVM " + agentJvm : "in process");
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
        Optional<Side> kcatAfter = runKafkacat(broker, joined, "bench.raw.after");
        kcatBefore.ifPresent(k -> log.info("kafkacat before the agent: {} s", String.format("%.2f", k.seconds())));
        kcatAfter.ifPresent(k -> log.info("kafkacat after the agent: {} s", String.format("%.2f", k.seconds())));
        Optional<Side> kcat = kcatBefore.isEmpty() ? kcatAfter : kcatAfter.isEmpty() ? kcatBefore
            : Optional.of(kcatBefore.get().seconds() <= kcatAfter.get().seconds() ? kcatBefore.get() : kcatAfter.get());
        kcat.ifPresent(k -> {
          result.put("kcatSeconds", k.seconds());
          result.put("kcatCpuSeconds", k.cpuSeconds());
          result.put("kcatLinesPerSecond", Math.round(lines / k.seconds()));
          result.put("kcatLinesPerCpuSecond", Math.round(lines / k.cpuSeconds()));
          result.put("ratio", round((lines / ours.seconds()) / (lines / k.seconds())));
          result.put("cpuRatio", round((lines / ours.cpuSeconds()) / (lines / k.cpuSeconds())));
        });
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
          out.println(Json.write(result));
        } else {
          result.forEach((k, v) -> out.println(k + ": " + v));
          if (kcat.isEmpty()) {
            out.println("kafkacat: not found (apt-get install kafkacat) — no ceiling measured");
          }
        }
        out.flush();
      } finally {
        EmbeddedKafkaBroker.wipe(tmp);
      }
      return Knockwatch.OK;
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

    private static double round(double v) {
      return Math.round(v * 1000) / 1000.0;
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
            String line = "{\"line\":\"deny network-outbound " + host + " (host is not on the allow list)\",\"encodedCommand\":\""
                + Base64.getEncoder().encodeToString(id.getBytes(StandardCharsets.UTF_8))
                + "\",\"command\":\"curl -s https://" + host + "/path?token=SECRET" + i + "\",\"timestamp\":\""
                + Instant.ofEpochMilli(t) + "\",\"commandId\":\"" + id + "\"}\n";
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

    private Side runIngest(EmbeddedKafkaBroker broker, Path logs) throws Exception {
      ThreadMXBean threads = ManagementFactory.getThreadMXBean();
      List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream()
          .filter(p -> p.getType() == MemoryType.HEAP).toList();
      System.gc();
      heap.forEach(MemoryPoolMXBean::resetPeakUsage);
      Map<Long, Long> cpuBefore = threadCpu(threads, Ingest::ingestThread);
      Map<Long, Long> allBefore = threadCpu(threads, name -> true);
      Map<String, Long> vmBefore = vmThreadCpu();
      long processBefore = processCpuNanos();
      long t0 = System.nanoTime();
      try (EventSink sink = noKafka ? new CountingSink() : KafkaEventSink.create(broker.bootstrapServers(), Map.of())) {
        IngestAgent agent = IngestAgent.forLogDirectory(logs, p -> !p.getFileName().toString().startsWith("all-"),
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
        for (Map.Entry<Long, Long> e : threadCpu(threads, Ingest::ingestThread).entrySet()) {
          long used = e.getValue() - cpuBefore.getOrDefault(e.getKey(), 0L);
          cpu += used;
          byThread.append(String.format(" %s %.2f s;", threads.getThreadInfo(e.getKey()).getThreadName(), used / 1e9));
        }
        log.info("ingest took {} s; CPU by thread:{}", String.format("%.2f", seconds), byThread);
        long jit = logProcessCpu(threads, allBefore, processBefore, vmBefore);
        agent.close();
        long peak = heap.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
        return new Side(seconds, cpu / 1e9, peak, (processCpuNanos() - processBefore) / 1e9,
            jit < 0 ? Double.NaN : jit / 1e9);
      }
    }

    /**
     * The agent as it runs in production: {@code knockwatch ingest} in its own JVM. Time runs from
     * its start banner to the moment every line is on the topics; CPU is the child's own.
     */
    private static Side runAgentJvm(EmbeddedKafkaBroker broker, Path logs, Path tmp, int lines, String javaOpts)
        throws Exception {
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      List<String> cmd = new java.util.ArrayList<>(List.of(java));
      cmd.addAll(List.of(javaOpts.strip().split("\\s+")));
      cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Knockwatch.class.getName(), "ingest",
          "--logs", logs.toString(), "--var", tmp.resolve("agent-var").toString(),
          "--bootstrap-servers", broker.bootstrapServers()));
      Files.writeString(tmp.resolve("agent.out"), "");
      Process agent = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(tmp.resolve("agent.out").toFile()).start();
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
        Instant deadline = Instant.now().plusSeconds(600);
        while (!Files.readString(tmp.resolve("agent.out")).contains("knockwatch ingest: watching")) {
          if (!agent.isAlive() || Instant.now().isAfter(deadline)) {
            throw new IllegalStateException("the agent did not start: " + Files.readString(tmp.resolve("agent.out")));
          }
          Thread.sleep(10);
        }
        long t0 = System.nanoTime();
        while (published(admin) < lines) {
          if (!agent.isAlive() || Instant.now().isAfter(deadline)) {
            throw new IllegalStateException("the agent stopped before publishing everything");
          }
          Thread.sleep(20);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        double cpu = agent.info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(Double.NaN);
        return new Side(seconds, cpu, 0);
      } finally {
        agent.destroy();
        agent.waitFor(30, TimeUnit.SECONDS);
      }
    }

    private static long published(Admin admin) throws Exception {
      return endOffsets(admin, dev.knockwatch.events.Topics.VIOLATIONS, dev.knockwatch.events.Topics.REJECTED)
          .values().stream().mapToLong(Long::longValue).sum();
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

    /**
     * The whole process's CPU over the run, and where it went: the largest groups of threads by
     * name (digits folded), and what no Java thread accounts for: the JIT compilers and the
     * collector, from the kernel's count per thread. Returns the compilers' CPU in ns (-1: unknown).
     */
    private static long logProcessCpu(ThreadMXBean threads, Map<Long, Long> before, long processBefore,
        Map<String, Long> vmBefore) {
      long process = processCpuNanos() - processBefore;
      Map<String, Long> vm = vmThreadCpu();
      long compilers = 0;
      long collector = 0;
      for (Map.Entry<String, Long> e : vm.entrySet()) {
        long used = e.getValue() - vmBefore.getOrDefault(e.getKey(), 0L);
        String name = e.getKey().substring(e.getKey().indexOf(' ') + 1);
        if (name.contains("CompilerThre")) {
          compilers += used;
        } else if (name.startsWith("GC Thread") || name.startsWith("G1 ") || name.equals("VM Thread")) {
          collector += used;
        }
      }
      Map<String, Long> byGroup = new java.util.HashMap<>();
      long java = 0;
      for (Map.Entry<Long, Long> e : threadCpu(threads, name -> true).entrySet()) {
        ThreadInfo info = threads.getThreadInfo(e.getKey());
        long used = e.getValue() - before.getOrDefault(e.getKey(), 0L);
        if (info != null && used > 0) {
          java += used;
          byGroup.merge(info.getThreadName().replaceAll("\\d+", "N"), used, Long::sum);
        }
      }
      StringBuilder top = new StringBuilder();
      byGroup.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(8)
          .forEach(e -> top.append(String.format(" %s %.2f s;", e.getKey(), e.getValue() / 1e9)));
      log.info("process CPU {} s: Java threads {} s, the rest {} s (JIT compilers {} s, collector and VM thread {} s);"
              + " largest:{}",
          String.format("%.2f", process / 1e9), String.format("%.2f", java / 1e9),
          String.format("%.2f", (process - java) / 1e9), String.format("%.2f", compilers / 1e9),
          String.format("%.2f", collector / 1e9), top);
      return vm.isEmpty() ? -1 : compilers;
    }

    /** CPU the JIT compilers of this process used so far, ns (0 where there is no /proc). */
    static long compilerCpuNanos() {
      return vmThreadCpu().entrySet().stream().filter(e -> e.getKey().contains("CompilerThre"))
          .mapToLong(Map.Entry::getValue).sum();
    }

    /**
     * The CPU of every thread of this process, Java's and the VM's own (compilers, collector),
     * by "tid name" from /proc/self/task (Linux; empty elsewhere), in nanoseconds at the kernel's
     * clock-tick resolution (10 ms).
     */
    private static Map<String, Long> vmThreadCpu() {
      Map<String, Long> cpu = new java.util.HashMap<>();
      try (java.util.stream.Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
        for (Path task : tasks.toList()) {
          try {
            String stat = Files.readString(task.resolve("stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
            cpu.put(task.getFileName() + " " + Files.readString(task.resolve("comm")).strip(), ticks * 10_000_000L);
          } catch (IOException | RuntimeException e) {
            // the thread ended meanwhile
          }
        }
      } catch (IOException e) {
        return Map.of();
      }
      return cpu;
    }

    private static long processCpuNanos() {
      return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** The agent's threads: the reader, the publisher, and the producer's I/O thread. */
    private static boolean ingestThread(String name) {
      return name.startsWith("knockwatch-ingest") || name.startsWith("kafka-producer-network-thread | knockwatch-ingest");
    }

    /** The generated files one after the other, in one file: kafkacat's input. */
    private static Path join(List<Path> files, Path joined) throws IOException {
      try (OutputStream out = Files.newOutputStream(joined)) {
        for (Path file : files) {
          Files.copy(file, out);
        }
      }
      return joined;
    }

    private Optional<Side> runKafkacat(EmbeddedKafkaBroker broker, Path input, String topic) throws Exception {
      // as many partitions as the agent's topic
      dev.knockwatch.events.Topics.Topic raw = new dev.knockwatch.events.Topics.Topic(topic,
          dev.knockwatch.events.Topics.VIOLATIONS.partitions(), Map.of(), null, "the generated lines, unparsed");
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
        admin.createTopics(List.of(new NewTopic(topic, raw.partitions(), (short) 1))).all().get(30, TimeUnit.SECONDS);
      }
      String bin = "$(command -v " + kafkacat + " || command -v kafkacat)";
      String script = bin + " -P -b " + broker.bootstrapServers()
          + " -t " + topic + " -z lz4 -X acks=all -X linger.ms=5 < '" + input + "'; rc=$?; times; exit $rc";
      long t0 = System.nanoTime();
      Process p;
      try {
        p = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true).start();
      } catch (IOException e) {
        return Optional.empty();
      }
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      int rc = p.waitFor();
      double seconds = (System.nanoTime() - t0) / 1e9;
      if (rc != 0) {
        if (output.contains("not found")) {
          return Optional.empty();
        }
        throw new IllegalStateException("kafkacat failed: " + output.strip());
      }
      // the ceiling counts only if every line is on the topic
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
        long onTopic = endOffsets(admin, raw).values().stream().mapToLong(Long::longValue).sum();
        if (onTopic != lines) {
          throw new IllegalStateException("kafkacat put " + onTopic + " of " + lines + " lines on " + topic + ": " + output.strip());
        }
      }
      // `times` prints the shell's, then its children's user and system time: "0m1.234s 0m0.100s".
      List<String> timeLines = output.lines().filter(l -> l.matches("\\d+m[\\d.]+s \\d+m[\\d.]+s")).toList();
      String[] children = timeLines.get(timeLines.size() - 1).split(" ");
      return Optional.of(new Side(seconds, seconds(children[0]) + seconds(children[1]), 0));
    }

    private static double seconds(String mAndS) {
      String[] parts = mAndS.replace("s", "").split("m");
      return Integer.parseInt(parts[0]) * 60 + Double.parseDouble(parts[1]);
    }
  }

  /**
   * Publishes N generated events (1,000 commands, a mix of in-role, off-role, sensitive and
   * filesystem refusals) to an embedded broker, then runs the full detection topology with
   * exactly-once and, side by side, a pass-through topology (source to sink, same settings)
   * over the same topic, each timed from RUNNING until its committed position reaches the end.
   */
  @Command(name = "streams", mixinStandardHelpOptions = true,
      description = "Events per second of the detection topology (EOS) beside a pass-through topology on the same input.")
  static final class Streams implements Callable<Integer> {

    @Spec CommandSpec spec;

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

    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    @Override
    public Integer call() throws Exception {
      if (events < 1 || rounds < 1) {
        throw new UsageException("--events and --rounds must be at least 1");
      }
      dev.knockwatch.streams.rules.Policy policy = Rules.load(rules);
      Path tmp = Files.createTempDirectory("knockwatch-bench-streams-");
      try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(tmp.resolve("kafka"), 0)) {
        broker.createTopics();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
          admin.createTopics(List.of(new NewTopic("bench.pass-through", 6, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        publish(broker.bootstrapServers(), events);
        // Rounds alternate the two topologies, each on a fresh application id (so from the first
        // event); only the last round counts: the first ones pay for the JIT, which on two cores
        // competes with the work measured.
        Run passThroughRun = null;
        Run detectionRun = null;
        for (int round = 1; round <= rounds; round++) {
          passThroughRun = run(broker, tmp, "bench-pass-through-" + round,
              dev.knockwatch.streams.DetectionTopology.passThrough("bench.pass-through"));
          detectionRun = run(broker, tmp, "bench-detection-" + round,
              dev.knockwatch.streams.DetectionTopology.buildTopology(policy,
                  dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor.Clock.WALL));
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
        result.put("ratio", Math.round(passThrough / detection * 1000) / 1000.0);
        // CPU of the app's own threads (stream thread, its producer): steadier than wall time on a shared VM
        result.put("eventsPerCpuSecond", Math.round(events / detectionRun.cpuSeconds()));
        result.put("passThroughEventsPerCpuSecond", Math.round(events / passThroughRun.cpuSeconds()));
        result.put("cpuRatio", Math.round(passThroughRun.cpuSeconds() / detectionRun.cpuSeconds() * 1000) / 1000.0);
        // the count rules' store cost: what their stores wrote to the changelogs
        result.put("countChangelogRecords", detectionRun.countChangelogRecords());
        result.put("countChangelogBytes", detectionRun.countChangelogBytes());
        if (latencySeconds > 0) {
          Latency l;
          // its own broker: the events of the throughput phase must not be a backlog here
          try (EmbeddedKafkaBroker quiet = EmbeddedKafkaBroker.start(tmp.resolve("latency-kafka"), 0)) {
            quiet.createTopics();
            l = latency(quiet, tmp, policy, latencySeconds);
          }
          List<Long> ms = l.toAlert();
          result.put("latencySamples", ms.size());
          result.put("latencyP50Ms", percentile(ms, 50));
          result.put("latencyP99Ms", percentile(ms, 99));
          result.put("latencyMaxMs", ms.isEmpty() ? null : ms.get(ms.size() - 1));
          // the first stage alone: the append to the event on the violations topic (ingest)
          result.put("latencyToTopicP50Ms", percentile(l.toTopic(), 50));
          result.put("latencyToTopicP99Ms", percentile(l.toTopic(), 99));
          // what the probes' window cost: detection's events per CPU-second, and the cores the process kept busy
          result.put("latencyWarmUpSeconds", Math.round(l.warmUpSeconds() * 10) / 10.0);
          result.put("latencyDetectionEventsPerCpuSecond", Math.round(l.events() / l.detectionCpu()));
          result.put("latencyProcessCores", Math.round(l.processCpu() / l.seconds() * 100) / 100.0);
        }
        print(spec, result, json);
      } finally {
        EmbeddedKafkaBroker.wipe(tmp);
      }
      return Knockwatch.OK;
    }

    record Run(double seconds, double cpuSeconds, long countChangelogRecords, long countChangelogBytes) {}

    /**
     * Seconds from RUNNING until the app's committed position is at the end of the violations
     * topic, and the CPU its own threads (named after the application id) used meanwhile.
     */
    private static Run run(EmbeddedKafkaBroker broker, Path tmp, String appId, org.apache.kafka.streams.Topology topology) {
      try (dev.knockwatch.streams.StreamsApp app = new dev.knockwatch.streams.StreamsApp(appId, broker.bootstrapServers(),
          tmp.resolve(appId), topology, Map.of())) {
        app.start(Duration.ofSeconds(120));
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<Long, Long> before = threadCpu(threads, name -> name.contains(appId));
        long t0 = System.nanoTime();
        app.awaitCaughtUp(Duration.ofMinutes(20));
        double seconds = (System.nanoTime() - t0) / 1e9;
        double cpu = cpuSince(threadCpu(threads, name -> name.contains(appId)), before);
        log.info("{}: {} s, {} CPU-s on its threads", appId, String.format("%.2f", seconds), String.format("%.2f", cpu));
        long[] count = countChangelog(broker, appId);
        return new Run(seconds, cpu, count[0], count[1]);
      } catch (Exception e) {
        throw new IllegalStateException("bench run " + appId + " failed: " + e, e);
      }
    }

    /**
     * What the count stores wrote to their changelogs (records, transaction markers included, and
     * bytes on disk): the store cost of the count rules, whichever way they count.
     */
    private static long[] countChangelog(EmbeddedKafkaBroker broker, String appId) throws Exception {
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
        List<String> topics = admin.listTopics().names().get(30, TimeUnit.SECONDS).stream()
            .filter(t -> t.startsWith(appId + "-count-") && t.endsWith("-changelog")).toList();
        if (topics.isEmpty()) {
          return new long[] {0, 0};
        }
        Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new java.util.HashMap<>();
        admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS).forEach((name, d) -> d.partitions()
            .forEach(p -> latest.put(new org.apache.kafka.common.TopicPartition(name, p.partition()),
                org.apache.kafka.clients.admin.OffsetSpec.latest())));
        long records = admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).values().stream()
            .mapToLong(org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo::offset).sum();
        long bytes = 0;
        List<Integer> nodes = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).stream()
            .map(org.apache.kafka.common.Node::id).toList();
        var dirs = admin.describeLogDirs(nodes).allDescriptions().get(30, TimeUnit.SECONDS);
        for (var byDir : dirs.values()) {
          for (var dir : byDir.values()) {
            for (var r : dir.replicaInfos().entrySet()) {
              if (topics.contains(r.getKey().topic())) {
                bytes += r.getValue().size();
              }
            }
          }
        }
        return new long[] {records, bytes};
      }
    }

    /** Event time moves as it would at 50,000 refusals a second (window stores roll segments by event time). */
    static final int EVENTS_PER_EVENT_MS = 50;

    private static void publish(String bootstrap, int n) throws EventSink.PublishException {
      Random random = new Random(42);
      String[] hosts = {"registry.npmjs.org", "evil.example", "169.254.169.254", "api.github.com", "pastebin.com"};
      Instant t0 = Instant.parse("2026-11-29T18:00:00Z");
      try (KafkaEventSink sink = KafkaEventSink.create(bootstrap, Map.of())) {
        for (int i = 0; i < n; i++) {
          int c = random.nextInt(1000);
          String commandId = String.format("BenchCommand%010d", c);
          ViolationEvent.Builder b = ViolationEvent.builder().eventId("bench-" + i).commandId(commandId)
              .agentId(c % 2 == 0 ? "ci-runner-" + c : "research-" + c).source(dev.knockwatch.events.Source.SRT_VIOLATION)
              .observedAt(t0.plusMillis(i / EVENTS_PER_EVENT_MS)).reason("host is not on the allow list");
          if (i % 10 == 9) {
            b.kind(dev.knockwatch.events.Kind.FILESYSTEM).action("openat").path(i % 20 == 19 ? "/home/agent/.bashrc" : "/tmp/x");
          } else {
            b.kind(dev.knockwatch.events.Kind.NETWORK).action("network-outbound").host(hosts[random.nextInt(hosts.length)])
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

    static final int BACKGROUND_PER_SECOND = 5_000;
    /** srt's timestamps: JavaScript's toISOString(), milliseconds always written. */
    static final java.time.format.DateTimeFormatter SRT_TIME =
        java.time.format.DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(java.time.ZoneOffset.UTC);
    static final Duration WARM_UP = Duration.ofSeconds(10);
    static final Duration MAX_WARM_UP = Duration.ofSeconds(120);
    /**
     * Detection keeps up when it stays at most this far behind the background (half a second of
     * it) for {@link #KEPT_UP_FOR} in a row.
     */
    static final long KEEPING_UP_LAG = BACKGROUND_PER_SECOND / 2;
    static final Duration KEPT_UP_FOR = Duration.ofSeconds(2);
    /**
     * The probes also wait for the JIT compilers to settle: under this share of a core over the
     * last {@link #JIT_WINDOW_SECONDS}. A new pipeline's compilers kept half a core busy for a
     * minute (a fresh broker, ingest agent and app), and the latency measured then was theirs.
     */
    static final double JIT_SETTLED_CORES = 0.10;
    static final int JIT_WINDOW_SECONDS = 5;
    private static final String APP_ID = "bench-latency";

    private static final String PROBE_PREFIX = "LatencyProbeCommand";

    /** Per probe, sorted, in ms: append to alert, and append to the event on the violations topic. */
    /**
     * Append-to-alert and append-to-topic latencies, ms, and what the probes' window cost: CPU
     * seconds of detection's threads, of ingest's and of the whole process, over its wall seconds
     * and the background events written meanwhile.
     */
    record Latency(List<Long> toAlert, List<Long> toTopic, double warmUpSeconds, double seconds, long events,
        double detectionCpu, double ingestCpu, double processCpu) {}

    /**
     * The whole path as {@code up} runs it (ingest, detection, the alerts topic read committed), on
     * a broker of its own: a writer appends 5,000 srt records a second for commands that stay quiet
     * (an in-role host, four refusals each) and, five times a second, one off-role refusal of a new
     * command (a probe). Once detection keeps up with the background ({@link #KEEPING_UP_LAG}) and
     * the JIT compilers have settled ({@link #JIT_SETTLED_CORES}), after {@link #WARM_UP} at least
     * and {@link #MAX_WARM_UP} at most, the probes count: the latency of each is the time from its
     * append to its alert on {@code knockwatch.alerts}, and to its refusal on the violations topic.
     */
    private static Latency latency(EmbeddedKafkaBroker broker, Path tmp, dev.knockwatch.streams.rules.Policy policy,
        int seconds) throws Exception {
      Path logs = Files.createDirectories(tmp.resolve("latency-logs"));
      Map<String, Long> appended = new java.util.concurrent.ConcurrentHashMap<>();
      Map<String, Long> alerted = new java.util.concurrent.ConcurrentHashMap<>();
      Map<String, Long> onTopic = new java.util.concurrent.ConcurrentHashMap<>();
      double warmUpSeconds = Double.NaN;
      double detectionCpu;
      double ingestCpu;
      double processCpu;
      long windowEvents;
      double windowSeconds;
      try (Pipeline pipeline = Pipeline.start(new Pipeline.Settings(broker.bootstrapServers(), Map.of(), logs,
          tmp.resolve("latency-var"), policy, APP_ID, "bench-latency-notify", Pipeline.POLL_INTERVAL, null),
          new dev.knockwatch.notify.config.ReceiversConfig(List.of(), List.of(), null), List.of())) {
        java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(1);
        Thread reader = new Thread(() -> readAlerts(broker.bootstrapServers(), alerted, ready), "bench-latency-alerts");
        reader.setDaemon(true);
        reader.start();
        java.util.concurrent.CountDownLatch topicReady = new java.util.concurrent.CountDownLatch(1);
        Thread topicReader = new Thread(() -> readProbeEvents(broker.bootstrapServers(), onTopic, topicReady),
            "bench-latency-events");
        topicReader.setDaemon(true);
        topicReader.start();
        ready.await(60, TimeUnit.SECONDS);
        topicReady.await(60, TimeUnit.SECONDS);
        Path bgFile = Files.createDirectories(logs.resolve("ci-runner-bg")).resolve("background.violations.jsonl");
        Path probeDir = Files.createDirectories(logs.resolve("research-latency"));
        java.util.concurrent.atomic.AtomicLong lag = new java.util.concurrent.atomic.AtomicLong(Long.MAX_VALUE);
        Thread lagWatch = new Thread(() -> watchLag(broker.bootstrapServers(), APP_ID, lag), "bench-latency-lag");
        lagWatch.setDaemon(true);
        lagWatch.start();
        long start = System.nanoTime();
        long compilerSampledAt = start - 1_000_000_000L;
        // background only until detection keeps up with it (a new app starts behind: its JIT, its
        // first rebalance), at least WARM_UP and at most MAX_WARM_UP; then the probes
        long warm = -1;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<Long, Long> detectionAtWarm = Map.of();
        Map<Long, Long> ingestAtWarm = Map.of();
        long processAtWarm = 0;
        long bgAtWarm = 0;
        long keptUpSince = -1;
        java.util.ArrayDeque<long[]> compilerCores = new java.util.ArrayDeque<>(); // {nanoTime, compilers' CPU ns}, a second apart
        long end = Long.MAX_VALUE;
        long bg = 0;
        int probes = 0;
        StringBuilder batch = new StringBuilder();
        try (BufferedWriter out = Files.newBufferedWriter(bgFile, StandardCharsets.UTF_8)) {
          for (long now = start; now < end; now = System.nanoTime()) {
            keptUpSince = lag.get() > KEEPING_UP_LAG ? -1 : keptUpSince < 0 ? now : keptUpSince;
            if (warm < 0 && now - compilerSampledAt >= 1_000_000_000L) {
              compilerCores.addLast(new long[] {now, Ingest.compilerCpuNanos()});
              compilerSampledAt = now;
              if (compilerCores.size() > JIT_WINDOW_SECONDS + 1) {
                compilerCores.removeFirst();
              }
            }
            double jit = compilerCores.size() <= JIT_WINDOW_SECONDS ? Double.NaN
                : (double) (compilerCores.getLast()[1] - compilerCores.getFirst()[1])
                    / (compilerCores.getLast()[0] - compilerCores.getFirst()[0]);
            if (warm < 0 && now - start >= WARM_UP.toNanos()
                && ((keptUpSince >= 0 && now - keptUpSince >= KEPT_UP_FOR.toNanos() && !(jit >= JIT_SETTLED_CORES))
                    || now - start >= MAX_WARM_UP.toNanos())) {
              warm = now;
              end = warm + seconds * 1_000_000_000L;
              detectionAtWarm = threadCpu(threads, name -> name.contains(APP_ID));
              ingestAtWarm = threadCpu(threads, Ingest::ingestThread);
              processAtWarm = Ingest.processCpuNanos();
              bgAtWarm = bg;
              warmUpSeconds = (now - start) / 1e9;
              log.info("latency: probes from now, after {} s of background (detection {} records behind{}; the JIT"
                      + " compilers used {} % of a core over the last {} s)",
                  String.format("%.1f", warmUpSeconds), lag.get(),
                  keptUpSince >= 0 ? "" : ": it did not keep up within " + MAX_WARM_UP.toSeconds() + " s",
                  Double.isNaN(jit) ? "?" : Math.round(jit * 100), JIT_WINDOW_SECONDS);
            }
            // what the rate owes since the start, written in one go every few milliseconds
            long owed = (now - start) * BACKGROUND_PER_SECOND / 1_000_000_000L;
            String ts = SRT_TIME.format(Instant.now());
            batch.setLength(0);
            for (; bg < owed; bg++) {
              batch.append(srtLine("registry.npmjs.org:443", String.format("BackgroundCommand%07d", bg / 4), ts));
            }
            out.write(batch.toString());
            out.flush();
            // five probes a second from the start: the warm-up compiles the alert path too (the
            // compilers were busy again when probes first came after it); only later ones count
            if ((now - start) / 200_000_000L >= probes) {
              String cmd = String.format(PROBE_PREFIX + "%04d", probes++);
              if (warm >= 0) {
                appended.put(cmd, System.nanoTime());
              }
              Files.writeString(probeDir.resolve(cmd + ".violations.jsonl"), srtLine("evil.example:443", cmd, ts),
                  StandardCharsets.UTF_8);
            }
            Thread.sleep(5);
          }
        }
        lagWatch.interrupt();
        double window = (System.nanoTime() - warm) / 1e9;
        detectionCpu = cpuSince(threadCpu(threads, name -> name.contains(APP_ID)), detectionAtWarm);
        ingestCpu = cpuSince(threadCpu(threads, Ingest::ingestThread), ingestAtWarm);
        processCpu = (Ingest.processCpuNanos() - processAtWarm) / 1e9;
        windowEvents = bg - bgAtWarm;
        windowSeconds = window;
        log.info("latency: {} background lines in {} s; over the {} s of probes ({} lines), CPU-s: detection {}, ingest {},"
            + " the whole process {} ({} of the {} cores)", bg, String.format("%.1f", (System.nanoTime() - start) / 1e9),
            String.format("%.1f", window), windowEvents, String.format("%.2f", detectionCpu), String.format("%.2f", ingestCpu),
            String.format("%.2f", processCpu), String.format("%.2f", processCpu / window),
            Runtime.getRuntime().availableProcessors());
        long wait = System.nanoTime() + 10_000_000_000L;
        while (alerted.keySet().containsAll(appended.keySet()) == false && System.nanoTime() < wait) {
          Thread.sleep(50);
        }
        reader.interrupt();
        topicReader.interrupt();
        long quietAlerted = alerted.keySet().stream().filter(c -> !c.startsWith(PROBE_PREFIX)).count();
        log.info("latency: {} probes written, alerts seen for {} commands{}", appended.size(), alerted.size(),
            quietAlerted == 0 ? "" : "; " + quietAlerted + " of them background commands, which should have stayed quiet");
        log.info("latency by probe, ms (append to the violations topic + from there to the alert): {}",
            new java.util.TreeMap<>(appended).entrySet().stream()
                .map(e -> ms(e.getValue(), onTopic.get(e.getKey())) + "+" + ms(onTopic.get(e.getKey()), alerted.get(e.getKey())))
                .collect(java.util.stream.Collectors.joining(" ")));
      }
      List<Long> toAlert = new java.util.ArrayList<>();
      List<Long> toTopic = new java.util.ArrayList<>();
      appended.forEach((cmd, at) -> {
        Long got = alerted.get(cmd);
        toAlert.add(got == null ? Long.MAX_VALUE : (got - at) / 1_000_000);
        Long seen = onTopic.get(cmd);
        toTopic.add(seen == null ? Long.MAX_VALUE : (seen - at) / 1_000_000);
      });
      java.util.Collections.sort(toAlert);
      java.util.Collections.sort(toTopic);
      return new Latency(toAlert, toTopic, warmUpSeconds, windowSeconds, windowEvents, detectionCpu, ingestCpu, processCpu);
    }

    /** Milliseconds from one nanoTime to another, or "-" when either is missing. */
    private static String ms(Long from, Long to) {
      return from == null || to == null ? "-" : String.valueOf((to - from) / 1_000_000);
    }

    private static String srtLine(String target, String commandId, String timestamp) {
      return "{\"line\":\"deny network-outbound " + target + " (host is not on the allow list)\",\"commandId\":\""
          + commandId + "\",\"command\":\"curl -s https://" + target + "\",\"timestamp\":\"" + timestamp + "\"}\n";
    }

    /**
     * Every 250 ms until interrupted: how many records of the violations topic the detection app
     * ({@code group}) has not committed yet.
     */
    private static void watchLag(String bootstrap, String group, java.util.concurrent.atomic.AtomicLong lag) {
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        while (!Thread.currentThread().isInterrupted()) {
          var ends = endOffsets(admin, dev.knockwatch.events.Topics.VIOLATIONS);
          var committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
          long behind = 0;
          for (var e : ends.entrySet()) {
            var c = committed.get(e.getKey());
            behind += e.getValue() - (c == null ? 0 : c.offset());
          }
          lag.set(behind);
          Thread.sleep(250);
        }
      } catch (InterruptedException | org.apache.kafka.common.errors.InterruptException e) {
        // done
      } catch (Exception e) {
        log.warn("latency: cannot tell how far detection is behind: {}", e.toString());
      }
    }

    /** Notes when each command's first alert is readable (committed) on the alerts topic. */
    private static void readAlerts(String bootstrap, Map<String, Long> alerted, java.util.concurrent.CountDownLatch ready) {
      readFirstSeen(bootstrap, dev.knockwatch.events.Topics.ALERTS, "read_committed",
          Json.serde(dev.knockwatch.events.Alert.class).deserializer(), r -> r.value() == null ? null : r.value().commandId(),
          alerted, ready);
    }

    /** Notes when each latency probe's refusal is readable on the violations topic (ingest's part of the path). */
    private static void readProbeEvents(String bootstrap, Map<String, Long> seen, java.util.concurrent.CountDownLatch ready) {
      readFirstSeen(bootstrap, dev.knockwatch.events.Topics.VIOLATIONS, "read_uncommitted",
          new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
          r -> r.key() != null && r.key().startsWith(PROBE_PREFIX) ? r.key() : null, seen, ready);
    }

    /**
     * Reads {@code topic} from its end (resolved before {@code ready} opens, so before the probes
     * are written) until interrupted, and notes when each command {@code commandOf} names was first read.
     */
    private static <V> void readFirstSeen(String bootstrap, dev.knockwatch.events.Topics.Topic topic, String isolation,
        org.apache.kafka.common.serialization.Deserializer<V> values,
        java.util.function.Function<org.apache.kafka.clients.consumer.ConsumerRecord<String, V>, String> commandOf,
        Map<String, Long> seen, java.util.concurrent.CountDownLatch ready) {
      Map<String, Object> p = Map.of(
          org.apache.kafka.clients.consumer.ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
          org.apache.kafka.clients.consumer.ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
      try (org.apache.kafka.clients.consumer.KafkaConsumer<String, V> c = new org.apache.kafka.clients.consumer.KafkaConsumer<>(
          p, new org.apache.kafka.common.serialization.StringDeserializer(), values)) {
        List<org.apache.kafka.common.TopicPartition> parts = partitions(topic);
        c.assign(parts);
        c.seekToEnd(parts);
        parts.forEach(c::position);
        ready.countDown();
        while (!Thread.currentThread().isInterrupted()) {
          for (var r : c.poll(Duration.ofMillis(20))) {
            long now = System.nanoTime();
            String command = commandOf.apply(r);
            if (command != null) {
              seen.putIfAbsent(command, now);
            }
          }
        }
      } catch (org.apache.kafka.common.errors.InterruptException e) {
        // done
      }
    }

  }

  @Command(name = "query", mixinStandardHelpOptions = true,
      description = {"Latency of GET /api/commands/{id} with N commands in the timeline store: loads N commands (one",
          "event each) through the timeline app, then times random queries one after another."})
  static final class Query implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Option(names = "--commands", defaultValue = "1000000", description = "Commands to load (default: ${DEFAULT-VALUE}).")
    int commands;

    @Option(names = "--queries", defaultValue = "2000", description = "Queries to time (default: ${DEFAULT-VALUE}).")
    int queries;

    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    static String id(int i) {
      return String.format("BenchQueryCommand%05d", i);
    }

    @Override
    public Integer call() throws Exception {
      if (commands < 1 || queries < 1) {
        throw new UsageException("--commands and --queries must be at least 1");
      }
      Path tmp = Files.createTempDirectory("knockwatch-bench-query-");
      try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(tmp.resolve("kafka"), 0)) {
        broker.createTopics();
        long t0 = System.nanoTime();
        Instant base = Instant.parse("2026-11-30T00:00:00Z");
        try (KafkaEventSink sink = KafkaEventSink.create(broker.bootstrapServers(), Map.of())) {
          for (int i = 0; i < commands; i++) {
            sink.publish(dev.knockwatch.events.ViolationEvent.builder().eventId("q" + i).commandId(id(i))
                .agentId("ci-runner-" + (i % 100)).source(dev.knockwatch.events.Source.SRT_VIOLATION)
                .kind(dev.knockwatch.events.Kind.NETWORK).action("network-outbound").host("evil.example").port(443)
                .reason("host is not on the allow list").observedAt(base.plusMillis(i)).ingestedAt(base).build());
          }
          sink.flush();
        }
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
          port = s.getLocalPort();
        }
        String token = "bench-query-token-0123456789";
        try (dev.knockwatch.streams.StreamsApp app = new dev.knockwatch.streams.StreamsApp("bench-timeline",
                broker.bootstrapServers(), tmp.resolve("timeline"),
                dev.knockwatch.streams.timeline.TimelineTopology.build(
                    dev.knockwatch.streams.rules.Policy.ofRules(List.of()), Duration.ofDays(3650)),
                Map.of(org.apache.kafka.streams.StreamsConfig.APPLICATION_SERVER_CONFIG, "127.0.0.1:" + port));
             dev.knockwatch.streams.api.QueryApi api = new dev.knockwatch.streams.api.QueryApi(app.streams(), token,
                 "127.0.0.1", port, new org.apache.kafka.streams.state.HostInfo("127.0.0.1", port))) {
          app.start(Duration.ofSeconds(120));
          app.awaitCaughtUp(Duration.ofMinutes(30));
          double loadSeconds = (System.nanoTime() - t0) / 1e9;
          java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
          java.util.Random random = new java.util.Random(1);
          List<Long> micros = new ArrayList<>();
          for (int q = -200; q < queries; q++) { // the first 200 warm up the JIT and are not counted
            java.net.http.HttpRequest req = java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + port + "/api/v1/commands/" + id(random.nextInt(commands))))
                .header("Authorization", "Bearer " + token).GET().build();
            long s0 = System.nanoTime();
            java.net.http.HttpResponse<String> r = http.send(req, java.net.http.HttpResponse.BodyHandlers.ofString());
            long us = (System.nanoTime() - s0) / 1000;
            if (r.statusCode() != 200) {
              throw new IllegalStateException("query answered " + r.statusCode() + ": " + r.body());
            }
            if (q >= 0) {
              micros.add(us);
            }
          }
          java.util.Collections.sort(micros);
          Map<String, Object> result = new LinkedHashMap<>();
          result.put("commands", commands);
          result.put("queries", queries);
          result.put("loadSeconds", Math.round(loadSeconds * 10) / 10.0);
          result.put("p50Ms", percentile(micros, 50) / 1000.0);
          result.put("p99Ms", percentile(micros, 99) / 1000.0);
          result.put("maxMs", micros.get(micros.size() - 1) / 1000.0);
          print(spec, result, json);
        }
      } finally {
        EmbeddedKafkaBroker.wipe(tmp);
      }
      return Knockwatch.OK;
    }
  }

  /**
   * The limit probes' two engines: the emitter's lines per second (as fast as it can, spread over
   * many commands, to a fresh directory each run), and with --srt what the real sandbox gives.
   */
  @Command(name = "emitter", mixinStandardHelpOptions = true,
      description = {"Lines/s the limit emitter writes (srt records, as the bridge writes them); --srt: refusals/s through the real srt."})
  static final class Emitter implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Option(names = "--lines", defaultValue = "2000000", description = "Lines a run (default: ${DEFAULT-VALUE}).")
    long lines;

    @Option(names = "--commands", defaultValue = "100", description = "Commands the lines are spread over (default: ${DEFAULT-VALUE}).")
    int commands;

    @Option(names = "--runs", defaultValue = "5", description = "Runs; the median is reported (default: ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--srt", description = "Also time the real srt: 4 commands of 10 retries each, and the 10 guard probes.")
    boolean srt;

    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    @Override
    public Integer call() throws Exception {
      if (lines < 1 || commands < 1 || runs < 1) {
        throw new UsageException("--lines, --commands and --runs must be at least 1");
      }
      Path tmp = Files.createTempDirectory("knockwatch-bench-emitter-");
      try {
        List<Long> perSecond = new ArrayList<>();
        long bytes = 0;
        for (int i = 0; i < runs; i++) {
          Path logs = tmp.resolve("run-" + i);
          dev.knockwatch.probes.limit.LimitEmitter.Result r = new dev.knockwatch.probes.limit.LimitEmitter(logs,
              java.time.Clock.systemUTC()).run(new dev.knockwatch.probes.limit.LimitPlan(
                  dev.knockwatch.probes.limit.LimitPlan.Pattern.STEADY, 0, Duration.ZERO, lines, commands,
                  List.of("example.com:443", "169.254.169.254:80", "registry.npmjs.org:443"),
                  List.of("ci-runner-1", "assistant-1", "unknown-agent"), Duration.ofMinutes(5), 4));
          perSecond.add(Math.round(r.perSecond()));
          try (java.util.stream.Stream<Path> files = Files.walk(logs)) {
            bytes = files.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
          }
          log.info("emitter run {}: {} lines/s", i + 1, Math.round(r.perSecond()));
          deleteTree(logs);
        }
        List<Long> sorted = perSecond.stream().sorted().toList();
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("lines", lines);
        result.put("commands", commands);
        result.put("bytesPerRun", bytes);
        result.put("linesPerSecondRuns", perSecond);
        result.put("linesPerSecondMedian", percentile(sorted, 50));
        result.put("linesPerSecondMin", sorted.get(0));
        if (srt) {
          dev.knockwatch.probes.sandbox.SrtBridge bridge = dev.knockwatch.probes.sandbox.RealSandbox.prepare(System.err);
          long t0 = System.nanoTime();
          List<String> ids = new dev.knockwatch.probes.limit.SrtLimitProbe(bridge, tmp.resolve("srt-logs"),
              tmp.resolve("srt-work")).run(new dev.knockwatch.probes.limit.LimitPlan(
                  dev.knockwatch.probes.limit.LimitPlan.Pattern.BURST, 0, Duration.ZERO, 40, 4, List.of("example.com:443"),
                  List.of("ci-runner-1"), Duration.ofMinutes(5), 4));
          double srtSeconds = (System.nanoTime() - t0) / 1e9;
          long refusals = 0;
          for (String id : ids) {
            refusals += Files.readAllLines(tmp.resolve("srt-logs/ci-runner-1").resolve(id + ".violations.jsonl")).size();
          }
          result.put("srtRefusals", refusals);
          result.put("srtSeconds", Math.round(srtSeconds * 100) / 100.0);
          result.put("srtRefusalsPerSecond", Math.round(refusals / srtSeconds * 10) / 10.0);
          long g0 = System.nanoTime();
          List<dev.knockwatch.probes.guard.ProbeOutcome> guard = new dev.knockwatch.probes.guard.GuardRunner(bridge,
              tmp.resolve("guard-logs"), tmp.resolve("guard-work"), java.time.Clock.systemUTC())
              .run(dev.knockwatch.probes.guard.GuardProbes.all(), p -> null);
          result.put("guardProbes", guard.size());
          result.put("guardRefused", guard.stream().filter(o -> o.ran() && o.refused()).count());
          result.put("guardSeconds", Math.round((System.nanoTime() - g0) / 1e7) / 100.0);
        }
        print(spec, result, json);
        return Knockwatch.OK;
      } finally {
        deleteTree(tmp);
      }
    }

    private static void deleteTree(Path root) throws IOException {
      if (!Files.exists(root)) {
        return;
      }
      try (java.util.stream.Stream<Path> s = Files.walk(root)) {
        for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }
}
