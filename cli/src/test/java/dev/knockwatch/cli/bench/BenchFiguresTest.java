package dev.knockwatch.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** The parts of the benchmarks that compute the figures docs/PERFORMANCE.md reports. */
class BenchFiguresTest {

  private static final List<Long> ONE_TO_HUNDRED = LongStream.rangeClosed(1, 100).boxed().toList();

  @Test
  void percentilesAreNearestRank() {
    assertThat(Stats.percentile(ONE_TO_HUNDRED, 50)).isEqualTo(50L);
    assertThat(Stats.percentile(ONE_TO_HUNDRED, 99)).isEqualTo(99L);
    assertThat(Stats.percentile(ONE_TO_HUNDRED, 100)).isEqualTo(100L);
    assertThat(Stats.percentile(ONE_TO_HUNDRED, 0)).isEqualTo(1L);
    // ten samples: p99 is the largest, p50 the fifth
    List<Long> ten = LongStream.rangeClosed(11, 20).boxed().toList();
    assertThat(Stats.percentile(ten, 99)).isEqualTo(20L);
    assertThat(Stats.percentile(ten, 50)).isEqualTo(15L);
    assertThat(Stats.percentile(List.of(7L), 99)).isEqualTo(7L);
    assertThat(Stats.percentile(List.of(), 50)).isNull();
    assertThatThrownBy(() -> Stats.percentile(ONE_TO_HUNDRED, 101)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void speedRatioIsTheBaselinesTimeOverOurs() {
    assertThat(Stats.speedRatio(2.0, 1.0)).isEqualTo(0.5); // twice as long: half as fast
    assertThat(Stats.speedRatio(1.0, 3.0)).isEqualTo(3.0);
    assertThat(Stats.speedRatio(3.0, 1.0)).isEqualTo(0.333);
  }

  @Test
  void procStatCountsUserAndSystemTicksPastTheLastParenthesis() {
    // proc(5): pid (comm) state ppid ... utime(14) stime(15); a thread may name itself ") 1 2 ("
    String stat = "4242 (C2 CompilerThre) S 1 1 1 0 -1 1077936192 0 0 0 0 1234 56 0 0 20 0 30 0 100 0 0";
    assertThat(CpuAccounting.cpuTicks(stat)).isEqualTo(1290);
    String hostile = "4243 (a) 9 9 (b) S 1 1 1 0 -1 1077936192 0 0 0 0 7 8 0 0 20 0 30 0 100 0 0";
    assertThat(CpuAccounting.cpuTicks(hostile)).isEqualTo(15);
    assertThatThrownBy(() -> CpuAccounting.cpuTicks("no parenthesis")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void compilerAndCollectorThreadsAreToldByTheirKernelNames() {
    assertThat(CpuAccounting.isCompiler("17 C2 CompilerThre")).isTrue();
    assertThat(CpuAccounting.isCompiler("18 C1 CompilerThre")).isTrue();
    assertThat(CpuAccounting.isCompiler("19 knockwatch-inge")).isFalse();
    assertThat(CpuAccounting.isCollector("12 GC Thread#0")).isTrue();
    assertThat(CpuAccounting.isCollector("13 G1 Conc#0")).isTrue();
    assertThat(CpuAccounting.isCollector("14 VM Thread")).isTrue();
    assertThat(CpuAccounting.isCollector("15 VM Periodic Tas")).isFalse();
  }

  @Test
  @EnabledOnOs(OS.LINUX)
  void thisProcessesThreadsHaveTheirCpuInProc() throws Exception {
    assertThat(CpuAccounting.cpuTicks(Files.readString(Path.of("/proc/self/stat")))).isGreaterThanOrEqualTo(0);
    Map<String, Long> vm = CpuAccounting.vmThreadCpu();
    assertThat(vm).isNotEmpty();
    assertThat(vm.keySet()).anyMatch(k -> k.endsWith(" main") || k.contains("java"));
    assertThat(vm.values()).allMatch(ns -> ns >= 0 && ns % CpuAccounting.NANOS_PER_TICK == 0);
  }

  @Test
  void cpuSinceSumsOnlyWhatEachThreadUsedMeanwhile() {
    Map<Long, Long> before = Map.of(1L, 1_000_000_000L, 2L, 500_000_000L);
    Map<Long, Long> now = Map.of(1L, 1_500_000_000L, 2L, 500_000_000L, 3L, 250_000_000L); // 3: started meanwhile
    assertThat(CpuAccounting.cpuSince(now, before)).isEqualTo(0.75);
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    Map<Long, Long> mine = CpuAccounting.threadCpu(threads, name -> name.equals(Thread.currentThread().getName()));
    assertThat(mine).containsKey(Thread.currentThread().getId());
  }

  @Test
  void kafkacatsCpuIsItsChildrensTimesLine() {
    // bash's `times`: the shell's user and system time, then its children's
    String output = "% Reached end of input\n0m0.003s 0m0.001s\n1m2.500s 0m0.250s\n";
    assertThat(Kafkacat.childCpuSeconds(output)).isEqualTo(62.75);
    assertThat(Kafkacat.seconds("0m0.010s")).isEqualTo(0.01);
    assertThatThrownBy(() -> Kafkacat.childCpuSeconds("kcat: command not found")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void ingestThreadsAreTheAgentsOwn() {
    assertThat(CpuAccounting.ingestThread("knockwatch-ingest")).isTrue();
    assertThat(CpuAccounting.ingestThread("knockwatch-ingest-parse-1")).isTrue();
    assertThat(CpuAccounting.ingestThread("kafka-producer-network-thread | knockwatch-ingest-3")).isTrue();
    assertThat(CpuAccounting.ingestThread("kafka-producer-network-thread | bench-latency-producer")).isFalse();
  }

  /** The latency probes start once detection keeps up and the compilers settle, between the least and the most warm-up. */
  @Test
  void theLatencyWarmUpWaitsForDetectionAndTheCompilers() {
    long step = 5_000_000L; // the writer's loop: every 5 ms
    long keptUp = LatencyHarness.KEEPING_UP_LAG;
    // keeping up from the start, compilers idle: over at WARM_UP, not before
    assertThat(overAt(step, t -> keptUp, t -> 0L)).isEqualTo(LatencyHarness.WARM_UP.toNanos());
    // behind until 30 s, then keeping up: over KEPT_UP_FOR later
    long caughtUp = 30_000_000_000L;
    assertThat(overAt(step, t -> t < caughtUp ? keptUp + 1 : 0, t -> 0L))
        .isEqualTo(caughtUp + LatencyHarness.KEPT_UP_FOR.toNanos());
    // compilers busy at half a core until 40 s, then idle: over once their last window is under the bar
    long settled = overAt(step, t -> 0L, t -> Math.min(t, 40_000_000_000L) / 2);
    assertThat(settled).isBetween(40_000_000_000L, 40_000_000_000L + (LatencyHarness.JIT_WINDOW_SECONDS + 1) * 1_000_000_000L);
    // never keeping up, or compilers never settling: over at MAX_WARM_UP
    assertThat(overAt(step, t -> Long.MAX_VALUE, t -> 0L)).isEqualTo(LatencyHarness.MAX_WARM_UP.toNanos());
    assertThat(overAt(step, t -> 0L, t -> t)).isEqualTo(LatencyHarness.MAX_WARM_UP.toNanos());
  }

  /** The first time (ns from the start) the warm-up says it is over, given the lag and compilers' CPU at each time. */
  private static long overAt(long step, java.util.function.LongUnaryOperator lag, java.util.function.LongUnaryOperator compilerCpu) {
    LatencyHarness.WarmUp w = new LatencyHarness.WarmUp(0);
    for (long t = 0; ; t += step) {
      long now = t;
      if (w.isOver(now, lag.applyAsLong(now), () -> compilerCpu.applyAsLong(now))) {
        assertThat(w.isOver(now + step, Long.MAX_VALUE, () -> Long.MAX_VALUE)).as("stays over").isTrue();
        return now;
      }
    }
  }
}
