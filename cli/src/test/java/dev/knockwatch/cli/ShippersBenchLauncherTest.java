package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;
import static org.assertj.core.api.Assertions.withinPercentage;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./knockwatch bench shippers} as docs/PERFORMANCE.md runs it, on a small load: the agent,
 * rsyslog and syslog-ng, each as deployed, every record counted, and the stage after them. The
 * figures are printed by the benchmark, never asserted.
 */
@Tag("integration")
class ShippersBenchLauncherTest {

  @TempDir Path dir;

  /** The agent or your shipper: each as deployed through the same phases, every record counted, and the stage after. */
  @Test
  void benchShippersRunsTheAgentRsyslogSyslogNgAndTheStage() throws Exception {
    JsonNode r = Launched.benchJsonInACopy(dir,
        "bench", "shippers", "--lines", "2000", "--steady-rate", "200", "--steady-seconds", "2",
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
}
