package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./knockwatch bench query} as docs/PERFORMANCE.md runs it, on a small input: it loads the
 * commands and a week's hours through the timeline app, then times the timeline, the lists, the
 * overview and discovery. The figures are printed, never asserted.
 */
@Tag("integration")
class QueryBenchLauncherTest {

  @TempDir Path dir;

  @Test
  void benchQueryTimesTheTimelineTheListsTheOverviewAndDiscovery() throws Exception {
    JsonNode r = Launched.benchJsonInACopy(dir,
        "bench", "query", "--commands", "500", "--week-hours", "2", "--queries", "5", "--list-queries", "1", "--json");
    assertThat(r.path("weekRefusals").asInt()).isEqualTo(2 * 400);
    assertThat(r.path("p99Ms").asDouble()).isPositive();
    assertThat(r.path("overviewRows").asInt()).isBetween(24 * 60, 24 * 60 + 1); // a count a minute over 24 h
    assertThat(r.path("allowlistRoleRows").asInt()).isEqualTo(50); // the role's 50 most needed of 2,000 hosts
    assertThat(r.path("allowlistRoleP99Ms").asDouble()).isPositive();
  }
}
