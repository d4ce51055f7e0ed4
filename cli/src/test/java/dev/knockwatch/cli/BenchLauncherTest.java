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
 * {@code ./knockwatch bench ingest} and {@code bench claude-hook} as docs/PERFORMANCE.md runs them, on
 * small inputs: they finish, publish everything, and report figures that agree with each other.
 * The figures themselves are printed by the benchmark, never asserted. The slower benches each have
 * a class of their own ({@code *BenchLauncherTest}): cli's integration tests run in reverse
 * alphabetical order, so the slow ones run before this short class, shared out by cli's two forks.
 */
@Tag("integration")
class BenchLauncherTest {

  @TempDir static Path dir;
  static Path checkout;

  @BeforeAll
  static void copy() throws Exception {
    checkout = Launched.copyOfRepository(dir.resolve("checkout"));
  }

  @Test
  void benchIngestTailsParsesAndPublishesEveryLine() throws Exception {
    JsonNode r = Launched.benchJson(checkout, dir.resolve("ingest"),
        "bench", "ingest", "--lines", "5000", "--warmup", "0", "--json");
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
    JsonNode r = Launched.benchJson(checkout, dir.resolve("claude-hook"),
        "bench", "claude-hook", "--calls", "20", "--json");
    assertThat(r.path("calls").asInt()).isEqualTo(20);
    assertThat(r.path("hookMedianMs").asDouble()).isPositive();
    assertThat(r.path("trueMedianMs").asDouble()).isPositive();
    assertThat(r.path("addedMedianMs").asDouble())
        .isCloseTo(r.path("hookMedianMs").asDouble() - r.path("trueMedianMs").asDouble(), offset(0.02));
  }

  @Test
  void aBenchWithoutWorkIsAUsageError() throws Exception {
    try (Launched bench = Launched.start(checkout, dir.resolve("usage"), Map.of(), "bench", "ingest", "--lines", "0")) {
      assertThat(bench.awaitExit(Duration.ofMinutes(1))).isEqualTo(Knockwatch.USAGE);
      assertThat(bench.err()).contains("--lines must be at least 1");
    }
  }
}
