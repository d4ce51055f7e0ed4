package dev.knockwatch.cli.bench;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Topics;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent as a user runs it: {@code ./knockwatch ingest} started by the launcher, with the
 * launcher's options, as its own process, against the broker of the bench's process. One agent
 * process goes through four phases, each timed and its CPU read from the process (all its
 * threads, the JVM's own included):
 * <ol>
 *   <li>cold: from the launcher's start to the last line of a backlog on the topics;</li>
 *   <li>warm: a second backlog of as many lines, moved into its log directory at once;</li>
 *   <li>steady: lines appended at a fixed rate (5,000 a second), the CPU share of a core;</li>
 *   <li>idle: 1,000 more watched files, then nothing: resident memory, and CPU a minute.</li>
 * </ol>
 * Every phase waits for its exact count of records on the topics (none missing, none twice).
 */
final class AsDeployed {

  private static final Logger log = LoggerFactory.getLogger(AsDeployed.class);
  static final int IDLE_FILES = 1_000;

  private final EmbeddedKafkaBroker broker;
  private final Path tmp;
  private final Path launcher;
  private final String javaOpts;

  /**
   * @param launcher the {@code knockwatch} launcher; {@code javaOpts} null: the launcher's own
   *     options (KNOCKWATCH_JAVA_OPTS unset), else set as KNOCKWATCH_JAVA_OPTS (a lever tried)
   */
  AsDeployed(EmbeddedKafkaBroker broker, Path tmp, Path launcher, String javaOpts) {
    this.broker = broker;
    this.tmp = tmp;
    this.launcher = launcher;
    this.javaOpts = javaOpts;
  }

  Map<String, Object> run(int lines, int steadyRate, int steadySeconds, int idleSeconds) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    Path logs = Files.createDirectories(tmp.resolve("deployed-logs"));
    IngestBench.generate(logs, lines);
    Files.delete(logs.resolve("all-srt.txt"));
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      LongSupplier published = () -> {
        try {
          return Offsets.records(admin, Topics.VIOLATIONS, Topics.REJECTED);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      };
      long base = published.getAsLong();
      List<String> cmd = List.of(launcher.toString(), "ingest", "--logs", logs.toString(), "--var",
          tmp.resolve("deployed-var").toString(), "--bootstrap-servers", broker.bootstrapServers());
      Path agentOut = tmp.resolve("deployed-agent.out");
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(agentOut.toFile());
      pb.environment().remove("KNOCKWATCH_JAVA_OPTS");
      if (javaOpts != null) {
        pb.environment().put("KNOCKWATCH_JAVA_OPTS", javaOpts);
      }
      out.put("agentJavaOpts", javaOpts == null ? "the launcher's" : javaOpts);
      long t0 = System.nanoTime();
      Process agent = pb.start();
      try {
        // 1. cold: the launcher, the JVM's start, the backlog
        await(published, base + lines, agent, agentOut);
        double coldSeconds = (System.nanoTime() - t0) / 1e9;
        double coldCpu = cpu(agent);
        out.put("coldSeconds", round(coldSeconds));
        out.put("coldCpuSeconds", round(coldCpu));
        out.put("coldLinesPerSecond", Math.round(lines / coldSeconds));
        out.put("coldLinesPerCpuSecond", Math.round(lines / coldCpu));
        out.put("rssAfterColdMb", rssMb(agent));
        logThreads("cold", Map.of(), CpuAccounting.threadCpu(String.valueOf(agent.pid())));

        // 2. warm: as many lines again, in new directories moved in at once
        Path second = tmp.resolve("deployed-second");
        IngestBench.generate(second, lines);
        long t1 = System.nanoTime();
        Files.move(second.resolve("bench-agent"), logs.resolve("bench-agent-2"));
        Files.move(second.resolve("proxy"), logs.resolve("proxy-2"));
        await(published, base + 2L * lines, agent, agentOut);
        double warmSeconds = (System.nanoTime() - t1) / 1e9;
        double warmCpu = cpu(agent) - coldCpu;
        out.put("warmSeconds", round(warmSeconds));
        out.put("warmCpuSeconds", round(warmCpu));
        out.put("warmLinesPerSecond", Math.round(lines / warmSeconds));
        out.put("warmLinesPerCpuSecond", Math.round(lines / warmCpu));

        // 3. steady: appended at a fixed rate, as sandboxes write
        long steadyLines = steady(logs.resolve("bench-steady"), steadyRate, steadySeconds, agent, published,
            base + 2L * lines, out, agentOut);

        // 4. idle: 1,000 more watched files, then nothing
        long before = base + 2L * lines + steadyLines;
        idleFiles(logs);
        await(published, before + IDLE_FILES, agent, agentOut);
        Thread.sleep(5_000); // the last batch's send and the collector settle
        double idle0 = cpu(agent);
        Map<String, Long> threads0 = CpuAccounting.threadCpu(String.valueOf(agent.pid()));
        Thread.sleep(idleSeconds * 1000L);
        double idleCpu = cpu(agent) - idle0;
        logThreads("idle", threads0, CpuAccounting.threadCpu(String.valueOf(agent.pid())));
        out.put("idleSeconds", idleSeconds);
        out.put("idleWatchedFiles", files(logs));
        out.put("idleCpuSecondsPerMinute", round(idleCpu * 60 / idleSeconds));
        out.put("idleCpuPercentOfCore", round(100 * idleCpu / idleSeconds));
        out.put("idleRssMb", rssMb(agent));
        Thread.sleep(2_000);
        long total = published.getAsLong() - base;
        if (total != 2L * lines + steadyLines + IDLE_FILES) {
          throw new IllegalStateException("the topics hold " + total + " records, not " + (2L * lines + steadyLines
              + IDLE_FILES) + ": a line lost or sent twice");
        }
        out.put("recordsVerified", total);
      } finally {
        agent.destroy();
        agent.waitFor(30, TimeUnit.SECONDS);
      }
    }
    return out;
  }

  /** Appends srt records at {@code rate} a second for {@code seconds}; the CPU {@code agent} took meanwhile. */
  static long steady(Path dir, int rate, int seconds, Process agent, LongSupplier published, long before,
      Map<String, Object> out, Path agentOut) throws Exception {
    Files.createDirectories(dir);
    String id = "steady0000000000000000";
    int perTick = Math.max(1, rate / 10);
    long n = 0;
    double cpu0 = cpu(agent);
    long t0 = System.nanoTime();
    try (BufferedWriter w = Files.newBufferedWriter(dir.resolve(id + ".violations.jsonl"), StandardCharsets.UTF_8)) {
      for (int tick = 0; tick < seconds * 10; tick++) {
        for (int i = 0; i < perTick; i++, n++) {
          w.write(IngestBench.srtRecord(id, "evil.test:443", "curl -s https://evil.test/?n=" + n, Instant.now()));
        }
        w.flush();
        long next = t0 + (tick + 1) * 100_000_000L;
        long wait = next - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
      }
    }
    await(published, before + n, agent, agentOut);
    double secs = (System.nanoTime() - t0) / 1e9;
    double used = cpu(agent) - cpu0;
    out.put("steadyLinesPerSecond", Math.round(n / secs));
    out.put("steadySeconds", round(secs));
    out.put("steadyCpuPercentOfCore", round(100 * used / secs));
    return n;
  }

  /** 1,000 files of one srt record each, in 10 agents' directories. */
  static void idleFiles(Path logs) throws IOException {
    Path staging = Files.createDirectories(logs.getParent().resolve("deployed-idle"));
    for (int a = 0; a < 10; a++) {
      Path dir = Files.createDirectories(staging.resolve("idle-agent-" + a));
      for (int c = 0; c < IDLE_FILES / 10; c++) {
        String id = String.format("idle%02d%016d", a, c);
        Files.writeString(dir.resolve(id + ".violations.jsonl"),
            IngestBench.srtRecord(id, "evil.test:443", "true", Instant.now()));
      }
      Files.move(dir, logs.resolve("idle-agent-" + a));
    }
  }

  /** Waits until {@code published} reaches {@code target}, exactly; {@code agentOut} is what the process said. */
  static void await(LongSupplier published, long target, Process agent, Path agentOut) throws Exception {
    Instant deadline = Instant.now().plus(Duration.ofMinutes(20));
    long seen;
    while ((seen = published.getAsLong()) < target) {
      if (!agent.isAlive()) {
        throw new IllegalStateException("the process exited: " + Files.readString(agentOut));
      }
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException("after 20 minutes " + seen + " of " + target + " records");
      }
      Thread.sleep(20);
    }
    if (seen > target) {
      throw new IllegalStateException(seen + " records where " + target + " were written: some sent twice");
    }
  }

  /** The process's CPU so far, every thread of it (the launcher's exec makes it the JVM itself). */
  static double cpu(Process p) {
    Optional<Duration> d = p.toHandle().info().totalCpuDuration();
    return d.map(x -> x.toNanos() / 1e9).orElse(Double.NaN);
  }

  /** Resident memory, MB, from /proc (NaN elsewhere). */
  static double rssMb(Process p) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(p.pid()), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return round(Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0);
        }
      }
    } catch (IOException | NumberFormatException e) {
      log.warn("no resident size for {}: {}", p.pid(), e.toString());
    }
    return Double.NaN;
  }

  static double round(double v) {
    return Math.round(v * 100) / 100.0;
  }

  /** Where a phase's CPU went: the threads that used any, most first. */
  private static void logThreads(String phase, Map<String, Long> before, Map<String, Long> after) {
    StringBuilder by = new StringBuilder();
    after.entrySet().stream()
        .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
        .filter(e -> e.getValue() > 0).sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .forEach(e -> by.append(String.format(" %s %.2f s;", e.getKey(), e.getValue() / 1e9)));
    log.info("{} CPU by thread:{}", phase, by.length() == 0 ? " none" : by);
  }

  static long files(Path root) throws IOException {
    try (var walk = Files.walk(root)) {
      return walk.filter(Files::isRegularFile).count();
    }
  }
}
