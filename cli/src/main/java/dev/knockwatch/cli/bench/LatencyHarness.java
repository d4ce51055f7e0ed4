package dev.knockwatch.cli.bench;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.cli.Pipeline;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.notify.config.ReceiversConfig;
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
   * command (a probe). Once detection keeps up with the background ({@link #KEEPING_UP_LAG}) and
   * the JIT compilers have settled ({@link #JIT_SETTLED_CORES}), after {@link #WARM_UP} at least
   * and {@link #MAX_WARM_UP} at most, the probes count: the latency of each is the time from its
   * append to its alert on {@code knockwatch.alerts}, and to its refusal on the violations topic.
   */
  static Latency measure(EmbeddedKafkaBroker broker, Path tmp, Policy policy,
      int seconds) throws Exception {
    Path logs = Files.createDirectories(tmp.resolve("latency-logs"));
    Map<String, Long> appended = new ConcurrentHashMap<>();
    Map<String, Long> alerted = new ConcurrentHashMap<>();
    Map<String, Long> onTopic = new ConcurrentHashMap<>();
    double warmUpSeconds = Double.NaN;
    double detectionCpu;
    double ingestCpu;
    double processCpu;
    long windowEvents;
    double windowSeconds;
    try (Pipeline pipeline = Pipeline.start(new Pipeline.Settings(broker.bootstrapServers(), Map.of(), logs,
        tmp.resolve("latency-var"), policy, APP_ID, "bench-latency-notify", Pipeline.POLL_INTERVAL, null),
        new ReceiversConfig(List.of(), List.of(), null), List.of())) {
      CountDownLatch ready = new CountDownLatch(1);
      Thread reader = new Thread(() -> readAlerts(broker.bootstrapServers(), alerted, ready), "bench-latency-alerts");
      reader.setDaemon(true);
      reader.start();
      CountDownLatch topicReady = new CountDownLatch(1);
      Thread topicReader = new Thread(() -> readProbeEvents(broker.bootstrapServers(), onTopic, topicReady),
          "bench-latency-events");
      topicReader.setDaemon(true);
      topicReader.start();
      ready.await(60, TimeUnit.SECONDS);
      topicReady.await(60, TimeUnit.SECONDS);
      Path bgFile = Files.createDirectories(logs.resolve("ci-runner-bg")).resolve("background.violations.jsonl");
      Path probeDir = Files.createDirectories(logs.resolve("research-latency"));
      AtomicLong lag = new AtomicLong(Long.MAX_VALUE);
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
      ArrayDeque<long[]> compilerCores = new ArrayDeque<>(); // {nanoTime, compilers' CPU ns}, a second apart
      long end = Long.MAX_VALUE;
      long bg = 0;
      int probes = 0;
      StringBuilder batch = new StringBuilder();
      try (BufferedWriter out = Files.newBufferedWriter(bgFile, StandardCharsets.UTF_8)) {
        for (long now = start; now < end; now = System.nanoTime()) {
          keptUpSince = lag.get() > KEEPING_UP_LAG ? -1 : keptUpSince < 0 ? now : keptUpSince;
          if (warm < 0 && now - compilerSampledAt >= 1_000_000_000L) {
            compilerCores.addLast(new long[] {now, CpuAccounting.compilerCpuNanos()});
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
            detectionAtWarm = CpuAccounting.threadCpu(threads, name -> name.contains(APP_ID));
            ingestAtWarm = CpuAccounting.threadCpu(threads, CpuAccounting::ingestThread);
            processAtWarm = CpuAccounting.processCpuNanos();
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
      detectionCpu = CpuAccounting.cpuSince(CpuAccounting.threadCpu(threads, name -> name.contains(APP_ID)), detectionAtWarm);
      ingestCpu = CpuAccounting.cpuSince(CpuAccounting.threadCpu(threads, CpuAccounting::ingestThread), ingestAtWarm);
      processCpu = (CpuAccounting.processCpuNanos() - processAtWarm) / 1e9;
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
          new TreeMap<>(appended).entrySet().stream()
              .map(e -> ms(e.getValue(), onTopic.get(e.getKey())) + "+" + ms(onTopic.get(e.getKey()), alerted.get(e.getKey())))
              .collect(Collectors.joining(" ")));
    }
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
  private static void watchLag(String bootstrap, String group, AtomicLong lag) {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      while (!Thread.currentThread().isInterrupted()) {
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
  private static void readAlerts(String bootstrap, Map<String, Long> alerted, CountDownLatch ready) {
    readFirstSeen(bootstrap, Topics.ALERTS, "read_committed",
        Json.serde(Alert.class).deserializer(), r -> r.value() == null ? null : r.value().commandId(),
        alerted, ready);
  }

  /** Notes when each latency probe's refusal is readable on the violations topic (ingest's part of the path). */
  private static void readProbeEvents(String bootstrap, Map<String, Long> seen, CountDownLatch ready) {
    readFirstSeen(bootstrap, Topics.VIOLATIONS, "read_uncommitted",
        new ByteArrayDeserializer(),
        r -> r.key() != null && r.key().startsWith(PROBE_PREFIX) ? r.key() : null, seen, ready);
  }

  /**
   * Reads {@code topic} from its end (resolved before {@code ready} opens, so before the probes
   * are written) until interrupted, and notes when each command {@code commandOf} names was first read.
   */
  private static <V> void readFirstSeen(String bootstrap, Topics.Topic topic, String isolation,
      Deserializer<V> values,
      Function<ConsumerRecord<String, V>, String> commandOf,
      Map<String, Long> seen, CountDownLatch ready) {
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
      while (!Thread.currentThread().isInterrupted()) {
        for (var r : c.poll(Duration.ofMillis(20))) {
          long now = System.nanoTime();
          String command = commandOf.apply(r);
          if (command != null) {
            seen.putIfAbsent(command, now);
          }
        }
      }
    } catch (InterruptException e) {
      // done
    }
  }

  private LatencyHarness() {}
}
