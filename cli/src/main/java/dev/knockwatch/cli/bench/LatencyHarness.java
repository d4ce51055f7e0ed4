package dev.knockwatch.cli.bench;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.cli.run.Pipeline;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.config.Route;
import dev.knockwatch.streams.rules.Policy;
import java.io.BufferedWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Append-to-alert latency as {@code up} runs the path (ingest, detection, the alerts topic read
 * committed) under a steady background of refusals: {@code bench streams --latency-seconds}.
 */
final class LatencyHarness {

  private static final Logger log = LoggerFactory.getLogger(LatencyHarness.class);

  static final int BACKGROUND_PER_SECOND = 5_000;
  /** srt's timestamps: JavaScript's toISOString(), milliseconds always written. */
  static final DateTimeFormatter SRT_TIME =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
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
   * command (a probe). Once the {@link WarmUp} is over, the probes count: the latency of each is
   * the time from its append to its alert on {@code knockwatch.alerts}, and to its refusal on the
   * violations topic.
   */
  static Latency measure(EmbeddedKafkaBroker broker, Path tmp, Policy policy, int seconds) throws Exception {
    Path logs = Files.createDirectories(tmp.resolve("latency-logs"));
    Probes probes = new Probes();
    Window window;
    try (Pipeline pipeline = Pipeline.start(new Pipeline.Settings(broker.bootstrapServers(), Map.of(), logs,
            tmp.resolve("latency-var"), policy, APP_ID, "bench-latency-notify", Pipeline.POLL_INTERVAL, null),
            new ReceiversConfig(List.of(), Route.root(List.of()), null), List.of());
         Watchers watchers = Watchers.start(broker.bootstrapServers(), probes)) {
      window = write(logs, probes, watchers.lag, seconds);
      probes.awaitAlerts(Duration.ofSeconds(10));
      probes.log();
    }
    return probes.latency(window);
  }

  /** The probes' window: how long the warm-up took, and what the window cost. */
  record Window(double warmUpSeconds, double seconds, long events, double detectionCpu, double ingestCpu,
      double processCpu) {}

  /**
   * Appends the background and the probes until {@code seconds} after the warm-up, the writer's
   * rate owed since the start written in one go every few milliseconds.
   */
  private static Window write(Path logs, Probes probes, AtomicLong lag, int seconds) throws Exception {
    Path bgFile = Files.createDirectories(logs.resolve("ci-runner-bg")).resolve("background.violations.jsonl");
    Path probeDir = Files.createDirectories(logs.resolve("research-latency"));
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long start = System.nanoTime();
    WarmUp warmUp = new WarmUp(start);
    CpuMark atWarm = null;
    long end = Long.MAX_VALUE;
    long bg = 0;
    int probe = 0;
    StringBuilder batch = new StringBuilder();
    try (BufferedWriter out = Files.newBufferedWriter(bgFile, StandardCharsets.UTF_8)) {
      for (long now = start; now < end; now = System.nanoTime()) {
        if (atWarm == null && warmUp.isOver(now, lag.get(), CpuAccounting::compilerCpuNanos)) {
          atWarm = CpuMark.take(threads, now, bg);
          end = now + seconds * 1_000_000_000L;
          log.info("latency: probes from now, after {} s of background ({})", String.format("%.1f", (now - start) / 1e9),
              warmUp.state(lag.get()));
        }
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
        if ((now - start) / 200_000_000L >= probe) {
          String cmd = String.format(PROBE_PREFIX + "%04d", probe++);
          if (atWarm != null) {
            probes.appended.put(cmd, System.nanoTime());
          }
          Files.writeString(probeDir.resolve(cmd + ".violations.jsonl"), srtLine("evil.example:443", cmd, ts),
              StandardCharsets.UTF_8);
        }
        Thread.sleep(5);
      }
    }
    Window w = atWarm.until(threads, System.nanoTime(), bg, (atWarm.nanos - start) / 1e9);
    log.info("latency: {} background lines in {} s; over the {} s of probes ({} lines), CPU-s: detection {}, ingest {},"
        + " the whole process {} ({} of the {} cores)", bg, String.format("%.1f", (System.nanoTime() - start) / 1e9),
        String.format("%.1f", w.seconds()), w.events(), String.format("%.2f", w.detectionCpu()),
        String.format("%.2f", w.ingestCpu()), String.format("%.2f", w.processCpu()),
        String.format("%.2f", w.processCpu() / w.seconds()), Runtime.getRuntime().availableProcessors());
    return w;
  }

  /**
   * When the probes start counting: the background alone until detection keeps up with it (a new
   * app starts behind: its JIT, its first rebalance) for {@link #KEPT_UP_FOR} and the JIT
   * compilers have settled, after {@link #WARM_UP} at least and {@link #MAX_WARM_UP} at most.
   */
  static final class WarmUp {
    private final long start;
    private final ArrayDeque<long[]> compilerCores = new ArrayDeque<>(); // {nanoTime, compilers' CPU ns}, a second apart
    private long compilerSampledAt;
    private long keptUpSince = -1;
    private boolean over;

    WarmUp(long start) {
      this.start = start;
      this.compilerSampledAt = start - 1_000_000_000L;
    }

    /** Called every few milliseconds with the time, detection's lag and the compilers' CPU; true once over. */
    boolean isOver(long now, long lag, java.util.function.LongSupplier compilerCpuNanos) {
      if (over) {
        return true;
      }
      keptUpSince = lag > KEEPING_UP_LAG ? -1 : keptUpSince < 0 ? now : keptUpSince;
      if (now - compilerSampledAt >= 1_000_000_000L) {
        compilerCores.addLast(new long[] {now, compilerCpuNanos.getAsLong()});
        compilerSampledAt = now;
        if (compilerCores.size() > JIT_WINDOW_SECONDS + 1) {
          compilerCores.removeFirst();
        }
      }
      double jit = jitCores();
      boolean keptUp = keptUpSince >= 0 && now - keptUpSince >= KEPT_UP_FOR.toNanos();
      over = now - start >= WARM_UP.toNanos()
          && (keptUp && !(jit >= JIT_SETTLED_CORES) || now - start >= MAX_WARM_UP.toNanos());
      return over;
    }

    /** The compilers' share of a core over the last {@link #JIT_WINDOW_SECONDS}; NaN until that long has passed. */
    double jitCores() {
      return compilerCores.size() <= JIT_WINDOW_SECONDS ? Double.NaN
          : (double) (compilerCores.getLast()[1] - compilerCores.getFirst()[1])
              / (compilerCores.getLast()[0] - compilerCores.getFirst()[0]);
    }

    String state(long lag) {
      double jit = jitCores();
      return "detection " + lag + " records behind" + (keptUpSince >= 0 ? ""
          : ": it did not keep up within " + MAX_WARM_UP.toSeconds() + " s") + "; the JIT compilers used "
          + (Double.isNaN(jit) ? "?" : Math.round(jit * 100)) + " % of a core over the last " + JIT_WINDOW_SECONDS + " s";
    }
  }

  /** CPU so far of detection's threads, ingest's and the whole process, at a time and a background count. */
  private record CpuMark(long nanos, long background, Map<Long, Long> detection, Map<Long, Long> ingest, long process) {
    static CpuMark take(ThreadMXBean threads, long nanos, long background) {
      return new CpuMark(nanos, background, CpuAccounting.threadCpu(threads, name -> name.contains(APP_ID)),
          CpuAccounting.threadCpu(threads, CpuAccounting::ingestThread), CpuAccounting.processCpuNanos());
    }

    Window until(ThreadMXBean threads, long now, long backgroundNow, double warmUpSeconds) {
      CpuMark later = take(threads, now, backgroundNow);
      return new Window(warmUpSeconds, (now - nanos) / 1e9, backgroundNow - background,
          CpuAccounting.cpuSince(later.detection, detection), CpuAccounting.cpuSince(later.ingest, ingest),
          (later.process - process) / 1e9);
    }
  }

  /** When each probe was appended, reached the violations topic and alerted, by command. */
  private static final class Probes {
    final Map<String, Long> appended = new ConcurrentHashMap<>();
    final Map<String, Long> alerted = new ConcurrentHashMap<>();
    final Map<String, Long> onTopic = new ConcurrentHashMap<>();

    void awaitAlerts(Duration atMost) throws InterruptedException {
      long wait = System.nanoTime() + atMost.toNanos();
      while (!alerted.keySet().containsAll(appended.keySet()) && System.nanoTime() < wait) {
        Thread.sleep(50);
      }
    }

    void log() {
      long quietAlerted = alerted.keySet().stream().filter(c -> !c.startsWith(PROBE_PREFIX)).count();
      log.info("latency: {} probes written, alerts seen for {} commands{}", appended.size(), alerted.size(),
          quietAlerted == 0 ? "" : "; " + quietAlerted + " of them background commands, which should have stayed quiet");
      log.info("latency by probe, ms (append to the violations topic + from there to the alert): {}",
          new TreeMap<>(appended).entrySet().stream()
              .map(e -> ms(e.getValue(), onTopic.get(e.getKey())) + "+" + ms(onTopic.get(e.getKey()), alerted.get(e.getKey())))
              .collect(Collectors.joining(" ")));
    }

    /** Each probe's latency to its alert and to the topic, ms, sorted; a probe never seen counts as Long.MAX_VALUE. */
    Latency latency(Window w) {
      List<Long> toAlert = new ArrayList<>();
      List<Long> toTopic = new ArrayList<>();
      appended.forEach((cmd, at) -> {
        Long got = alerted.get(cmd);
        toAlert.add(got == null ? Long.MAX_VALUE : (got - at) / 1_000_000);
        Long seen = onTopic.get(cmd);
        toTopic.add(seen == null ? Long.MAX_VALUE : (seen - at) / 1_000_000);
      });
      Collections.sort(toAlert);
      Collections.sort(toTopic);
      return new Latency(toAlert, toTopic, w.warmUpSeconds(), w.seconds(), w.events(), w.detectionCpu(),
          w.ingestCpu(), w.processCpu());
    }
  }

  /** The readers of the alerts and the violations topics and the lag watch, ready before the first append; stopped on close. */
  private record Watchers(AtomicLong lag, AtomicBoolean running, List<Thread> threads) implements AutoCloseable {
    static Watchers start(String bootstrap, Probes probes) throws InterruptedException {
      CountDownLatch ready = new CountDownLatch(2);
      AtomicLong lag = new AtomicLong(Long.MAX_VALUE);
      AtomicBoolean running = new AtomicBoolean(true);
      List<Thread> threads = List.of(
          new Thread(() -> readAlerts(bootstrap, probes.alerted, ready, running), "bench-latency-alerts"),
          new Thread(() -> readProbeEvents(bootstrap, probes.onTopic, ready, running), "bench-latency-events"),
          new Thread(() -> watchLag(bootstrap, APP_ID, lag, running), "bench-latency-lag"));
      threads.forEach(t -> {
        t.setDaemon(true);
        t.start();
      });
      ready.await(60, TimeUnit.SECONDS);
      return new Watchers(lag, running, threads);
    }

    /** Stops them at their next poll (not by interrupting: a consumer interrupted while it closes logs an error). */
    @Override
    public void close() throws InterruptedException {
      running.set(false);
      for (Thread t : threads) {
        t.join(5_000);
      }
    }
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
   * Every 250 ms until stopped: how many records of the violations topic the detection app
   * ({@code group}) has not committed yet.
   */
  private static void watchLag(String bootstrap, String group, AtomicLong lag, AtomicBoolean running) {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      while (running.get()) {
        var ends = Offsets.endOffsets(admin, Topics.VIOLATIONS);
        var committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
        long behind = 0;
        for (var e : ends.entrySet()) {
          var c = committed.get(e.getKey());
          behind += e.getValue() - (c == null ? 0 : c.offset());
        }
        lag.set(behind);
        Thread.sleep(250);
      }
    } catch (InterruptedException | InterruptException e) {
      // done
    } catch (Exception e) {
      log.warn("latency: cannot tell how far detection is behind: {}", e.toString());
    }
  }

  /** Notes when each command's first alert is readable (committed) on the alerts topic. */
  private static void readAlerts(String bootstrap, Map<String, Long> alerted, CountDownLatch ready,
      AtomicBoolean running) {
    readFirstSeen(bootstrap, Topics.ALERTS, "read_committed",
        Json.serde(Alert.class).deserializer(), r -> r.value() == null ? null : r.value().commandId(),
        alerted, ready, running);
  }

  /** Notes when each latency probe's refusal is readable on the violations topic (ingest's part of the path). */
  private static void readProbeEvents(String bootstrap, Map<String, Long> seen, CountDownLatch ready,
      AtomicBoolean running) {
    readFirstSeen(bootstrap, Topics.VIOLATIONS, "read_uncommitted",
        new ByteArrayDeserializer(),
        r -> r.key() != null && r.key().startsWith(PROBE_PREFIX) ? r.key() : null, seen, ready, running);
  }

  /**
   * Reads {@code topic} from its end (resolved before {@code ready} opens, so before the probes
   * are written) until stopped, and notes when each command {@code commandOf} names was first read.
   */
  private static <V> void readFirstSeen(String bootstrap, Topics.Topic topic, String isolation,
      Deserializer<V> values,
      Function<ConsumerRecord<String, V>, String> commandOf,
      Map<String, Long> seen, CountDownLatch ready, AtomicBoolean running) {
    Map<String, Object> p = Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
    try (KafkaConsumer<String, V> c = new KafkaConsumer<>(
        p, new StringDeserializer(), values)) {
      List<TopicPartition> parts = Offsets.partitions(topic);
      c.assign(parts);
      c.seekToEnd(parts);
      parts.forEach(c::position);
      ready.countDown();
      while (running.get()) {
        for (var r : c.poll(Duration.ofMillis(20))) {
          long now = System.nanoTime();
          String command = commandOf.apply(r);
          if (command != null) {
            seen.putIfAbsent(command, now);
          }
        }
      }
    }
  }

  private LatencyHarness() {}
}
