package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./knockwatch bench query} as docs/PERFORMANCE.md runs it, on a small input: it loads the
 * commands and a week's hours through the timeline app, then times the timeline, the lists, the
 * overview and discovery. The figures are printed, never asserted. Apart from
 * {@code BenchLauncherTest}, which runs in the other tier: this one runs beside cli's other
 * integration tests.
 */
@Tag("integration")
class QueryBenchLauncherTest {

  @TempDir Path dir;

  @Test
  void benchQueryTimesTheTimelineTheListsTheOverviewAndDiscovery() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    JsonNode r;
    try (Launched bench = Launched.start(checkout, dir.resolve("run"), Map.of(), "bench", "query", "--commands", "500",
        "--week-hours", "2", "--queries", "5", "--list-queries", "1", "--json")) {
      assertThat(bench.awaitExit(Duration.ofMinutes(5))).as(bench.err()).isZero();
      r = Json.MAPPER.readTree(bench.out().lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow());
    }
    assertThat(r.path("weekRefusals").asInt()).isEqualTo(2 * 400);
    assertThat(r.path("p99Ms").asDouble()).isPositive();
    assertThat(r.path("overviewRows").asInt()).isBetween(24 * 60, 24 * 60 + 1); // a count a minute over 24 h
    assertThat(r.path("allowlistRoleRows").asInt()).isEqualTo(50); // the role's 50 most needed of 2,000 hosts
    assertThat(r.path("allowlistRoleP99Ms").asDouble()).isPositive();
  }
}
