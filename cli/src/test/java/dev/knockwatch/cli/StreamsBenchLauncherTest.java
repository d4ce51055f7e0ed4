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
 * {@code ./knockwatch bench streams} as docs/PERFORMANCE.md runs it, on a small input: detection and
 * the pass-through over every event, with figures that agree with each other. The figures are
 * printed by the benchmark, never asserted.
 */
@Tag("integration")
class StreamsBenchLauncherTest {

  @TempDir Path dir;

  @Test
  void benchStreamsRunsBothTopologiesOverEveryEvent() throws Exception {
    JsonNode r = Launched.benchJsonInACopy(dir,
        "bench", "streams", "--events", "3000", "--rounds", "1", "--latency-seconds", "0", "--json");
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
}
