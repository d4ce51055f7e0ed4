package dev.knockwatch.cli.bench;

import com.sun.management.OperatingSystemMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a benchmark's CPU went: per Java thread (the JVM's thread CPU clock), and for the threads
 * no Java thread stands for — the JIT compilers, the collector — from the kernel's count per
 * thread in {@code /proc/self/task} (Linux; elsewhere they are unknown).
 */
public final class CpuAccounting {

  private static final Logger log = LoggerFactory.getLogger(CpuAccounting.class);
  /** The kernel's clock tick, in which /proc counts a thread's CPU. */
  static final long NANOS_PER_TICK = 10_000_000L;

  private CpuAccounting() {}

  /** CPU nanoseconds so far of each live thread whose name {@code name} accepts, by thread id. */
  static Map<Long, Long> threadCpu(ThreadMXBean threads, Predicate<String> name) {
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

  /** The agent's threads: the reader, the publisher, the parse helpers and the producer's I/O thread. */
  static boolean ingestThread(String name) {
    return name.startsWith("knockwatch-ingest") || name.startsWith("kafka-producer-network-thread | knockwatch-ingest");
  }

  static long processCpuNanos() {
    return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /** CPU the JIT compilers of this process used so far, ns (0 where there is no /proc). */
  static long compilerCpuNanos() {
    return compilerCpuNanos("self");
  }

  /** {@link #compilerCpuNanos()} of another process, by pid. */
  public static long compilerCpuNanos(String pid) {
    return threadCpu(pid).entrySet().stream().filter(e -> isCompiler(e.getKey()))
        .mapToLong(Map.Entry::getValue).sum();
  }

  /** Another process's CPU so far (user and system, every thread it ever ran), ns, from /proc/PID/stat. */
  public static long processCpuNanos(String pid) throws IOException {
    return cpuTicks(Files.readString(Path.of("/proc", pid, "stat"))) * NANOS_PER_TICK;
  }

  /**
   * The CPU of every thread of this process, Java's and the VM's own (compilers, collector),
   * by "tid name" from /proc/self/task (Linux; empty elsewhere), in nanoseconds at the kernel's
   * clock-tick resolution.
   */
  static Map<String, Long> vmThreadCpu() {
    return threadCpu("self");
  }

  /** {@link #vmThreadCpu()} of another process, by pid. */
  static Map<String, Long> threadCpu(String pid) {
    Map<String, Long> cpu = new HashMap<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc", pid, "task"))) {
      for (Path task : tasks.toList()) {
        try {
          long ticks = cpuTicks(Files.readString(task.resolve("stat")));
          cpu.put(task.getFileName() + " " + Files.readString(task.resolve("comm")).strip(), ticks * NANOS_PER_TICK);
        } catch (IOException | RuntimeException e) {
          // the thread ended meanwhile
        }
      }
    } catch (IOException e) {
      return Map.of();
    }
    return cpu;
  }

  /**
   * A thread's user plus system time, in clock ticks, from its {@code stat} line (proc(5): fields
   * 14 and 15). The name in parentheses may itself hold spaces and parentheses: the fields are
   * counted from the last ')'.
   */
  static long cpuTicks(String stat) {
    int close = stat.lastIndexOf(')');
    if (close < 0) {
      throw new IllegalArgumentException("not a /proc stat line: " + stat);
    }
    String[] f = stat.substring(close + 2).strip().split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }

  /**
   * Logs the whole process's CPU since {@code processBefore}, and where it went: the largest groups
   * of Java threads by name (digits folded), and what no Java thread accounts for: the JIT
   * compilers and the collector. Returns the compilers' CPU in ns (-1: unknown).
   */
  static long logProcessCpu(ThreadMXBean threads, Map<Long, Long> before, long processBefore, Map<String, Long> vmBefore) {
    long process = processCpuNanos() - processBefore;
    Map<String, Long> vm = vmThreadCpu();
    long compilers = 0;
    long collector = 0;
    for (Map.Entry<String, Long> e : vm.entrySet()) {
      long used = e.getValue() - vmBefore.getOrDefault(e.getKey(), 0L);
      if (isCompiler(e.getKey())) {
        compilers += used;
      } else if (isCollector(e.getKey())) {
        collector += used;
      }
    }
    Map<String, Long> byGroup = new HashMap<>();
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

  /** A "tid name" of {@link #vmThreadCpu} that is a JIT compiler thread (the kernel cuts names at 15 characters). */
  static boolean isCompiler(String tidAndName) {
    return name(tidAndName).contains("CompilerThre");
  }

  static boolean isCollector(String tidAndName) {
    String name = name(tidAndName);
    return name.startsWith("GC Thread") || name.startsWith("G1 ") || name.equals("VM Thread");
  }

  private static String name(String tidAndName) {
    return tidAndName.substring(tidAndName.indexOf(' ') + 1);
  }
}
