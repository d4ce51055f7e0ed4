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
 * {@code ./knockwatch bench streams} and {@code bench claude-hook} as docs/PERFORMANCE.md runs them,
 * on small inputs: they finish, and report figures that agree with each other. The figures
 * themselves are printed by the benchmark, never asserted. {@code bench ingest}:
 * {@link BenchIngestLauncherTest} (two classes, so that two forks can share them).
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
    return run(checkout, dir.resolve(name), args);
  }

  /** Runs {@code ./knockwatch args...} in {@code checkout}; it must succeed; its last JSON line. */
  static JsonNode run(Path checkout, Path out, String... args) throws Exception {
    try (Launched bench = Launched.start(checkout, out, Map.of(), args)) {
      assertThat(bench.awaitExit(Duration.ofMinutes(5))).as(bench.err()).isZero();
      String json = bench.out().lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow();
      return Json.MAPPER.readTree(json);
    }
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

  @Test
  void benchStreamsRunsBothTopologiesOverEveryEvent() throws Exception {
    JsonNode r = run("streams", "bench", "streams", "--events", "3000", "--rounds", "1", "--latency-seconds", "0", "--json");
    assertThat(r.path("events").asLong()).isEqualTo(3000);
    assertThat(r.path("eventsPerSecond").asLong()).isPositive();
    assertThat(r.path("ratio").asDouble())
        .isCloseTo(r.path("passThroughSeconds").asDouble() / r.path("seconds").asDouble(), offset(0.001));
    assertThat(r.path("countChangelogRecords").asLong()).isPositive();
    // the same topology over a tenth of the events, for the growth of its CPU with the events
    assertThat(r.path("tenthEvents").asLong()).isEqualTo(300);
    assertThat(r.path("eventsGrowth").asDouble()).isEqualTo(10.0);
    assertThat(r.path("tenthCpuSeconds").asDouble()).isPositive();
    double detectionCpu = 3000 / r.path("eventsPerCpuSecond").asDouble();
    assertThat(r.path("cpuGrowth").asDouble()).as("%s", r)
        .isCloseTo(detectionCpu / r.path("tenthCpuSeconds").asDouble(), withinPercentage(3));
  }

}
