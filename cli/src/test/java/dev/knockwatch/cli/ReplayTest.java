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
 * src/test/resources/replay/README.md): a retry storm, a filesystem storm and a storm that
 * straddles an aligned five-minute boundary alert; four refusals and records without a command id
 * do not.
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

  /**
   * A command as the srt bridge leaves it: three timed records, and its stderr, whose curl
   * transcript has no Date and whose {@code <sandbox_violations>} block restates the records.
   * Replayed, the transcript takes its command's time (so a replay on another day, or of files
   * with other modification times, says the same), the restatement is not counted again, and
   * three refusals stay three: no persistent-retry warning (counted twice they made six).
   */
  @Test
  void aLineWithoutATimeTakesItsCommandsAndARestatementIsNotCountedAgain(@org.junit.jupiter.api.io.TempDir Path dir)
      throws IOException {
    String id = "RestatedByTheBridge0001";
    Path agent = Files.createDirectories(dir.resolve("in/ci-runner-1"));
    String deny = "deny network-outbound example.com:443 (host is not on the allow list)";
    StringBuilder records = new StringBuilder();
    for (int i = 0; i < 3; i++) {
      records.append("{\"line\":\"").append(deny).append("\",\"commandId\":\"").append(id)
          .append("\",\"timestamp\":\"2026-11-29T18:45:3").append(i).append(".000Z\"}\n");
    }
    Files.writeString(agent.resolve(id + ".violations.jsonl"), records);
    Path stderr = agent.resolve(id + ".stderr.log");
    Files.writeString(stderr, "> CONNECT example.com:443 HTTP/1.1\r\n< HTTP/1.1 403 host is not on the allow list\r\n"
        + "< X-Proxy-Error: blocked-by-allowlist\r\n<\r\n* CONNECT tunnel failed, response 403\n"
        + "\n<sandbox_violations>\n" + (deny + "\n").repeat(3) + "</sandbox_violations>\n");
    List<String> runs = new java.util.ArrayList<>();
    for (String mtime : List.of("2020-01-01T00:00:00Z", "2031-06-01T12:00:00Z")) {
      Files.setLastModifiedTime(stderr, java.nio.file.attribute.FileTime.from(java.time.Instant.parse(mtime)));
      KnockwatchTest.Run r = KnockwatchTest.run("replay", "--rules", "../alert-rules", "--input", dir.resolve("in").toString());
      assertThat(r.code()).as(r.err()).isZero();
      runs.add(r.out());
    }
    assertThat(runs.get(1)).as("the same alerts whatever the file's time").isEqualTo(runs.get(0));
    List<String> alerts = runs.get(0).lines().toList();
    assertThat(alerts).anyMatch(l -> l.contains("\"rule\":\"off-role-host\"") && l.contains("\"firstSeen\":\"2026-11-29T18:45:30Z\""));
    assertThat(alerts).noneMatch(l -> l.contains("\"rule\":\"persistent-retry\""));
  }

  /**
   * A {@code --noproxy} retry seen only in the command's stderr ({@code curl: (6)}'s
   * {@code Could not resolve host}, no time of its own) after the proxy's refusal in its records:
   * it takes the refusal's time and sorts after it, so bypass fires (it sorted first, by file
   * name, and bypass never saw a refusal before it).
   */
  @Test
  void anUntimedRetryInStderrFollowsTheRefusalItCameWith(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
    String id = "NoproxyAfterRefusal0001";
    Path agent = Files.createDirectories(dir.resolve("in/ci-runner-1"));
    Files.writeString(agent.resolve(id + ".violations.jsonl"), "{\"line\":\"deny network-outbound pastebin.com:443"
        + " (host is not on the allow list)\",\"commandId\":\"" + id + "\",\"timestamp\":\"2026-11-29T18:45:30.000Z\"}\n");
    Files.writeString(agent.resolve(id + ".stderr.log"), "* Could not resolve host: pastebin.com\n"
        + "curl: (6) Could not resolve host: pastebin.com\n");
    KnockwatchTest.Run r = KnockwatchTest.run("replay", "--rules", "../alert-rules", "--input", dir.resolve("in").toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out().lines().toList()).anyMatch(l -> l.contains("\"rule\":\"bypass\"") && l.contains("\"status\":\"firing\"")
        && l.contains("a direct name lookup of pastebin.com (--noproxy)"));
  }
}
