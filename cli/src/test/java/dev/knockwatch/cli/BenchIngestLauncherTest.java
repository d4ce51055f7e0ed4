package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./knockwatch bench ingest} as docs/PERFORMANCE.md runs it, on small inputs, beside
 * kafkacat and as deployed beside rsyslog and syslog-ng: it finishes, publishes everything, and
 * reports figures that agree with each other, never asserted themselves.
 */
@Tag("integration")
class BenchIngestLauncherTest {

  @TempDir static Path dir;
  static Path checkout;

  @BeforeAll
  static void copy() throws Exception {
    checkout = Launched.copyOfRepository(dir.resolve("checkout"));
  }

  private static JsonNode run(String name, String... args) throws Exception {
    return BenchLauncherTest.run(checkout, dir.resolve(name), args);
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

  @Test
  void aBenchWithoutWorkIsAUsageError() throws Exception {
    try (Launched bench = Launched.start(checkout, dir.resolve("usage"), Map.of(), "bench", "ingest", "--lines", "0")) {
      assertThat(bench.awaitExit(Duration.ofMinutes(1))).isEqualTo(Knockwatch.USAGE);
      assertThat(bench.err()).contains("--lines must be at least 1");
    }
  }
}
