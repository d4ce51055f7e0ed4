package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;
import static org.assertj.core.api.Assertions.withinPercentage;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./knockwatch bench ingest} and {@code bench streams} as docs/PERFORMANCE.md runs them, on
 * small inputs: they finish, publish everything, and report figures that agree with each other.
 * The figures themselves are printed by the benchmark, never asserted.
 */
@Tag("integration")
class BenchLauncherTest {

  @TempDir static Path dir;
  static Path checkout;

  @BeforeAll
  static void copy() throws Exception {
    checkout = Launched.copyOfRepository(dir.resolve("checkout"));
  }

  private static JsonNode run(String name, String... args) throws Exception {
    try (Launched bench = Launched.start(checkout, dir.resolve(name), Map.of(), args)) {
      assertThat(bench.awaitExit(Duration.ofMinutes(5))).as(bench.err()).isZero();
      String json = bench.out().lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow();
      return Json.MAPPER.readTree(json);
    }
  }

  @Test
  void benchIngestTailsParsesAndPublishesEveryLine() throws Exception {
    JsonNode r = run("ingest", "bench", "ingest", "--lines", "5000", "--warmup", "0", "--json");
    assertThat(r.path("lines").asLong()).isEqualTo(5000);
    assertThat(r.path("published").asBoolean()).isTrue();
    assertThat(r.path("seconds").asDouble()).isPositive();
    assertThat(r.path("linesPerSecond").asLong()).isEqualTo(Math.round(5000 / r.path("seconds").asDouble()));
    // the launcher installs kafkacat (as root): the ceiling is measured, and the ratio is its time over ours
    assertThat(r.has("kcatSeconds")).as("kafkacat's run: %s", r).isTrue();
    assertThat(r.path("ratio").asDouble())
        .isCloseTo(r.path("kcatSeconds").asDouble() / r.path("seconds").asDouble(), offset(0.001));
  }

  /** The Claude Code hook's cost, as docs/PERFORMANCE.md measures it: every call's record written, both hooks timed. */
  @Test
  void benchClaudeHookTimesTheHookBesideTrue() throws Exception {
    JsonNode r = run("claude-hook", "bench", "claude-hook", "--calls", "20", "--json");
    assertThat(r.path("calls").asInt()).isEqualTo(20);
    assertThat(r.path("hookMedianMs").asDouble()).isPositive();
    assertThat(r.path("trueMedianMs").asDouble()).isPositive();
    assertThat(r.path("addedMedianMs").asDouble())
        .isCloseTo(r.path("hookMedianMs").asDouble() - r.path("trueMedianMs").asDouble(), offset(0.02));
  }

  /** The agent as deployed: started by the checkout's own launcher, every phase's records counted, the figures printed. */
  @Test
  void benchIngestAsDeployedRunsTheAgentThroughTheLauncher() throws Exception {
    JsonNode r = run("deployed", "bench", "ingest", "--as-deployed", "--lines", "3000", "--steady-rate", "200",
        "--steady-seconds", "2", "--idle-seconds", "2", "--json");
    assertThat(r.path("agentJavaOpts").asText()).isEqualTo("the launcher's");
    long steady = Math.round(r.path("steadyLinesPerSecond").asDouble() * r.path("steadySeconds").asDouble());
    assertThat(steady).as("the steady phase's lines: %s", r).isBetween(380L, 420L);
    assertThat(r.path("recordsVerified").asLong()).as("%s", r).isBetween(2 * 3000L + 1000 + 380, 2 * 3000L + 1000 + 420);
    for (String f : new String[] {"coldLinesPerSecond", "coldLinesPerCpuSecond", "warmLinesPerSecond", "idleRssMb",
        "kcatLinesPerSecond", "coldVsKcat", "warmVsKcat"}) {
      assertThat(r.path(f).asDouble()).as(f + " in %s", r).isPositive();
    }
    assertThat(r.path("idleWatchedFiles").asLong()).isGreaterThan(1000);
    // as root the launcher unpacks rsyslog and syslog-ng: each parsed and keyed every line, checked
    assertThat(r.path("rsyslogRecordsVerified").asLong()).as("%s", r).isEqualTo(3000);
    assertThat(r.path("syslogNgRecordsVerified").asLong()).as("%s", r).isEqualTo(3000);
    for (String f : new String[] {"rsyslogLinesPerCpuSecond", "syslogNgLinesPerCpuSecond", "coldCpuVsRsyslog",
        "warmCpuVsSyslogNg"}) {
      assertThat(r.path(f).asDouble()).as(f + " in %s", r).isPositive();
    }
  }

  /** The agent or your shipper: each as deployed through the same phases, every record counted, and the stage after. */
  @Test
  void benchShippersRunsTheAgentRsyslogSyslogNgAndTheStage() throws Exception {
    JsonNode r = run("shippers", "bench", "shippers", "--lines", "2000", "--steady-rate", "200", "--steady-seconds", "2",
        "--idle-seconds", "2", "--json");
    for (String who : new String[] {"agent", "rsyslog", "syslogNg"}) {
      // two backlogs, the steady phase's lines (about 400) and the 1,000 idle files' lines, each counted exactly
      assertThat(r.path(who + "RecordsVerified").asLong()).as("%s", r).isBetween(2 * 2000L + 1000 + 380, 2 * 2000L + 1000 + 420);
      assertThat(r.path(who + "IdleWatchedFiles").asLong()).as("%s", r).isEqualTo(1203);
      for (String f : new String[] {"ColdLinesPerCpuSecond", "WarmLinesPerCpuSecond", "SteadyRssMb", "IdleRssMb"}) {
        assertThat(r.path(who + f).asDouble()).as(who + f + " in %s", r).isPositive();
      }
      // a native shipper's 400 steady lines can cost less than one 10 ms clock tick: 0.0 is a true reading
      assertThat(r.path(who + "SteadyCpuPercentOfCore").isNumber()).as("%s", r).isTrue();
      assertThat(r.path(who + "SteadyCpuPercentOfCore").asDouble()).as("%s", r).isBetween(0.0, 200.0);
    }
    assertThat(r.path("agentSteadyCpuPercentOfCore").asDouble()).as("the JVM agent's steady CPU in %s", r).isPositive();
    assertThat(r.path("stageRecordsVerified").asLong()).isEqualTo(4000);
    assertThat(r.path("stageColdLinesPerCpuSecond").asDouble())
        .isCloseTo(2000 / r.path("stageColdCpuSeconds").asDouble(), withinPercentage(2));
    assertThat(r.path("stageColdCpuVsAgent").asDouble()).isCloseTo(
        r.path("agentColdCpuSeconds").asDouble() / r.path("stageColdCpuSeconds").asDouble(), offset(0.01));
  }

  @Test
  void benchStreamsRunsBothTopologiesOverEveryEvent() throws Exception {
    JsonNode r = run("streams", "bench", "streams", "--events", "3000", "--rounds", "1", "--latency-seconds", "0", "--json");
    assertThat(r.path("events").asLong()).isEqualTo(3000);
    assertThat(r.path("eventsPerSecond").asLong()).isPositive();
    assertThat(r.path("ratio").asDouble())
        .isCloseTo(r.path("passThroughSeconds").asDouble() / r.path("seconds").asDouble(), offset(0.001));
    assertThat(r.path("stateChangelogRecords").asLong()).isPositive();
    assertThat(r.path("changelogRecords").asLong()).isGreaterThan(r.path("stateChangelogRecords").asLong());
    assertThat(r.path("changelogBytesPerEvent").asDouble()).isPositive();
    // the same topology over a tenth of the events, for the growth of its CPU with the events
    assertThat(r.path("tenthEvents").asLong()).isEqualTo(300);
    assertThat(r.path("eventsGrowth").asDouble()).isEqualTo(10.0);
    assertThat(r.path("tenthCpuSeconds").asDouble()).isPositive();
    double detectionCpu = 3000 / r.path("eventsPerCpuSecond").asDouble();
    assertThat(r.path("cpuGrowth").asDouble()).as("%s", r)
        .isCloseTo(detectionCpu / r.path("tenthCpuSeconds").asDouble(), withinPercentage(3));
  }

  @Test
  void aBenchWithoutWorkIsAUsageError() throws Exception {
    try (Launched bench = Launched.start(checkout, dir.resolve("usage"), Map.of(), "bench", "ingest", "--lines", "0")) {
      assertThat(bench.awaitExit(Duration.ofMinutes(1))).isEqualTo(Knockwatch.USAGE);
      assertThat(bench.err()).contains("--lines must be at least 1");
    }
  }
}
