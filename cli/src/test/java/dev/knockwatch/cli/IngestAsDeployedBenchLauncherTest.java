package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./knockwatch bench ingest --as-deployed} as docs/PERFORMANCE.md runs it, on a small load:
 * the agent started by the launcher, beside rsyslog and syslog-ng, every phase's records counted.
 * The figures are printed by the benchmark, never asserted.
 */
@Tag("integration")
class IngestAsDeployedBenchLauncherTest {

  @TempDir Path dir;

  /** The agent as deployed: started by the checkout's own launcher, every phase's records counted, the figures printed. */
  @Test
  void benchIngestAsDeployedRunsTheAgentThroughTheLauncher() throws Exception {
    JsonNode r = Launched.benchJsonInACopy(dir,
        "bench", "ingest", "--as-deployed", "--lines", "3000", "--steady-rate", "200",
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
}
