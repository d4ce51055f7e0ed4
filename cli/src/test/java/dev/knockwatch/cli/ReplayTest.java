package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code knockwatch replay} over a folder built from real srt 0.0.83 records (see
 * src/test/resources/replay/README.md): a retry storm and a filesystem storm alert; four
 * refusals, a storm split over two windows, and records without a command id do not.
 */
@Tag("integration")
class ReplayTest {

  static final Path BASIC = Path.of("src/test/resources/replay/basic");

  @Test
  void replayPrintsTheExpectedAlertsAsJsonLines() throws IOException {
    KnockwatchTest.Run r = KnockwatchTest.run("replay", "--rules", "../alert-rules", "--input", BASIC.toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out().lines().toList())
        .containsExactlyElementsOf(Files.readAllLines(Path.of("src/test/resources/replay/basic-expected.jsonl")));
  }

  @Test
  void aSingleFileIsReplayedWithItsAgentDirectory() {
    KnockwatchTest.Run r = KnockwatchTest.run("replay", "--rules", "../alert-rules", "--input",
        BASIC.resolve("ci-runner-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl").toString());
    assertThat(r.code()).as(r.err()).isZero();
    List<String> lines = r.out().lines().toList();
    assertThat(lines).isNotEmpty().allMatch(l -> l.contains("\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\",\"agentId\":\"ci-runner-1\""));
    assertThat(lines).anyMatch(l -> l.contains("\"rule\":\"persistent-retry\"") && l.contains("\"status\":\"firing\"")
        && l.contains("\"count\":5,"));
  }
}
