package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.cli.ClusterFaultsTest.Deployment;
import dev.knockwatch.cli.bench.CpuAccounting;
import dev.knockwatch.events.Topics;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scale-out on the three-node cluster (issue 66): one deployment ({@link Deployment}) with one
 * {@code streams} instance, then two, then three, each under the same load (60 commands, 1,500
 * lines/s: 20 s to warm up, then 30 s measured). After each instance joins, both apps' groups hold every instance, each with
 * its share of the violations topic's partitions (none more than one over another); every refusal
 * of every phase reaches the timeline. Printed per phase: the instances' CPU for the phase's events
 * (events per CPU-second, each instance's share, the JIT compilers' part). Last, the newest instance is killed under load:
 * printed, how long until its partitions are the survivors' (from their standbys) and until they
 * have caught up. The figures are docs/OPERATIONS.md's sizing.
 */
@Tag("integration")
@Tag("cluster")
class ClusterScaleOutTest {

  static final int LINES_PER_SECOND = 1_500;
  static final int WARM_UP_SECONDS = 20;
  static final int PHASE_SECONDS = 30;
  static final List<String> GROUPS = List.of("knockwatch-streams", "knockwatch-timeline");

  @TempDir Path dir;

  @Test
  void oneTwoAndThreeStreamsInstancesShareThePartitionsAndAnInstanceLostIsTakenOverFromItsStandbys() throws Exception {
    try (Deployment d = Deployment.start(dir, false, null, LINES_PER_SECOND, 1)) {
      int rounds = 0;
      for (int n = 1; n <= 3; n++) {
        if (n > 1) {
          d.addStreams().awaitLine("knockwatch streams:", Duration.ofMinutes(3));
        }
        Map<String, Map<String, Integer>> shares = awaitBalanced(d, n);
        d.run(d.rounds(WARM_UP_SECONDS), n + " instance(s), warming up", round -> false);
        rounds += d.rounds(WARM_UP_SECONDS);
        Launched.awaitCaughtUp(d.admin, d.streams.get(0));
        List<long[]> before = cpuNanos(d.streams);
        Instant start = Instant.now();
        d.run(d.rounds(PHASE_SECONDS), n + " instance(s)", round -> false);
        Launched.awaitCaughtUp(d.admin, d.streams.get(0));
        Duration took = Duration.between(start, Instant.now());
        List<long[]> after = cpuNanos(d.streams);
        rounds += d.rounds(PHASE_SECONDS);
        long lines = (long) ClusterFaultsTest.COMMANDS * d.rounds(PHASE_SECONDS);
        double cpu = 0;
        double jit = 0;
        List<String> each = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          double s = (after.get(i)[0] - before.get(i)[0]) / 1e9;
          double j = (after.get(i)[1] - before.get(i)[1]) / 1e9;
          cpu += s;
          jit += j;
          each.add(String.format("%.1f (JIT %.1f)", s, j));
        }
        System.out.printf("ClusterScaleOutTest: %d instance(s): %d lines at %.0f/s, caught up %.1f s after the load"
            + " began; streams CPU %.1f s, JIT %.1f of it (by instance %s): %.0f events per CPU-s, %.0f without the"
            + " JIT; violations partitions by instance %s%n", n, lines, lines * 1e3 / d.loaded.toMillis(),
            took.toMillis() / 1e3, cpu, jit, each, lines / cpu, lines / (cpu - jit), shares);
      }

      // the newest instance lost under load: the survivors take its tasks from their standbys
      Launched lost = d.streams.get(2);
      AtomicReference<Instant> killed = new AtomicReference<>();
      AtomicReference<Instant> reassigned = new AtomicReference<>();
      Thread watch = new Thread(() -> {
        try {
          while (reassigned.get() == null) {
            if (killed.get() != null && balancedOver(d, 2) != null) {
              reassigned.set(Instant.now());
            }
            Thread.sleep(100);
          }
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, "reassigned");
      watch.setDaemon(true);
      watch.start();
      d.run(d.rounds(20), "an instance killed", round -> {
        if (round == d.faultRound()) {
          lost.close(); // SIGKILL
          killed.set(Instant.now());
          return true;
        }
        return false;
      });
      Instant loadEnded = Instant.now();
      rounds += d.rounds(20);
      watch.join(Duration.ofMinutes(2).toMillis());
      assertThat(reassigned.get()).as("the lost instance's partitions taken by the other two").isNotNull();
      Launched.awaitCaughtUp(d.admin, d.streams.get(0));
      Instant caughtUp = Instant.now();
      for (String cmd : d.commands) {
        assertThat(Launched.command(d.api, ClusterFaultsTest.TOKEN, cmd, rounds).path("events").asInt()).as(cmd)
            .isEqualTo(rounds);
      }
      System.out.printf("ClusterScaleOutTest: one of three instances killed under load: its partitions the other"
          + " two's %.1f s later; caught up %.1f s after the kill, the load ending %.1f s after it%n",
          Duration.between(killed.get(), reassigned.get()).toMillis() / 1e3,
          Duration.between(killed.get(), caughtUp).toMillis() / 1e3,
          Duration.between(killed.get(), loadEnded).toMillis() / 1e3);
    }
  }

  /** Waits until both groups have {@code n} members sharing the violations partitions evenly; returns each group's shares. */
  static Map<String, Map<String, Integer>> awaitBalanced(Deployment d, int n) throws Exception {
    Instant deadline = Instant.now().plus(Duration.ofMinutes(3));
    Map<String, Map<String, Integer>> shares = null;
    while (Instant.now().isBefore(deadline)) {
      shares = balancedOver(d, n);
      if (shares != null) {
        return shares;
      }
      Thread.sleep(500);
    }
    throw new AssertionError("the groups did not share the violations partitions among " + n + " instances within"
        + " 3 min: " + describe(d));
  }

  /** Each group's violations partitions by member, when both have {@code n} members each holding its share (±1); else null. */
  static Map<String, Map<String, Integer>> balancedOver(Deployment d, int n) throws Exception {
    Map<String, Map<String, Integer>> out = describe(d);
    int partitions = Topics.VIOLATIONS.partitions();
    for (Map<String, Integer> byMember : out.values()) {
      int sum = byMember.values().stream().mapToInt(Integer::intValue).sum();
      if (byMember.size() != n || sum != partitions
          || byMember.values().stream().anyMatch(c -> c < partitions / n || c > (partitions + n - 1) / n)) {
        return null;
      }
    }
    return out;
  }

  private static Map<String, Map<String, Integer>> describe(Deployment d) throws Exception {
    Map<String, Map<String, Integer>> out = new TreeMap<>();
    Map<String, ConsumerGroupDescription> groups = d.admin.describeConsumerGroups(GROUPS).all().get(30, TimeUnit.SECONDS);
    for (ConsumerGroupDescription g : groups.values()) {
      Map<String, Integer> byMember = new TreeMap<>();
      for (MemberDescription m : g.members()) {
        byMember.put(m.host() + "/" + m.consumerId().substring(0, Math.min(8, m.consumerId().length())),
            (int) m.assignment().topicPartitions().stream().filter(tp -> tp.topic().equals(Topics.VIOLATIONS.name()))
                .count());
      }
      out.put(g.groupId(), byMember);
    }
    return out;
  }

  /** Each process's CPU so far and its JIT compilers' part, in ns. */
  static List<long[]> cpuNanos(List<Launched> processes) throws Exception {
    List<long[]> out = new ArrayList<>();
    for (Launched p : processes) {
      String pid = String.valueOf(p.pid());
      out.add(new long[] {CpuAccounting.processCpuNanos(pid), CpuAccounting.compilerCpuNanos(pid)});
    }
    return out;
  }
}
