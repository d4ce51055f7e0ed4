package dev.knockwatch.probes.guard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.probes.sandbox.RealSandbox;
import dev.knockwatch.probes.sandbox.SrtBridge;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A probe run that saw neither the refusal nor a trace of the forbidden action (a loaded machine
 * where the sandbox's proxy did not answer) is run once more, as a new command, on the real srt:
 * the second run's verdict is the outcome, and only its record reaches the logs. Twice
 * inconclusive is not refused; a trace of the action is never run again.
 */
@Tag("integration")
class InconclusiveProbeTest {

  static SrtBridge bridge;
  @TempDir Path dir;

  @BeforeAll
  static void prepare() {
    bridge = RealSandbox.prepare(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
  }

  /** A probe that prints {@code said}'s content; refused when it says REFUSED, breached (and counted) on BREACH. */
  private static GuardProbe probe(Path said, AtomicInteger judged, Runnable afterJudging) {
    return new GuardProbe("inconclusive-test", "network", "localhost:1", "cat " + said, "REFUSED printed",
        Pattern.compile("REFUSED"), (run, ws) -> {
          judged.incrementAndGet();
          afterJudging.run();
          return run.output().contains("BREACH") ? Optional.of("the action left its trace") : Optional.empty();
        }, false);
  }

  private List<ProbeOutcome> run(GuardProbe probe, Path logs) {
    return new GuardRunner(bridge, logs, dir.resolve("work"), Clock.systemUTC()).run(List.of(probe), p -> null);
  }

  private static long records(Path logs) throws Exception {
    try (Stream<Path> files = Files.walk(logs)) {
      return files.filter(f -> f.toString().endsWith(".probe.jsonl")).count();
    }
  }

  @Test
  void anInconclusiveRunIsRunOnceMoreAndTheSecondRunIsTheOutcome() throws Exception {
    Path said = Files.writeString(dir.resolve("said"), "the proxy did not answer\n");
    AtomicInteger judged = new AtomicInteger();
    Path logs = dir.resolve("logs");
    List<ProbeOutcome> outcomes = run(probe(said, judged, () -> write(said, "REFUSED\n")), logs);
    assertThat(judged).hasValue(2);
    assertThat(outcomes).singleElement().satisfies(o -> {
      assertThat(o.refused()).isTrue();
      assertThat(o.observed()).isEqualTo("REFUSED");
    });
    assertThat(records(logs)).isEqualTo(1);
  }

  @Test
  void twiceInconclusiveIsNotRefusedAndATraceIsNeverRunAgain() throws Exception {
    Path said = Files.writeString(dir.resolve("said"), "the proxy did not answer\n");
    AtomicInteger judged = new AtomicInteger();
    List<ProbeOutcome> twice = run(probe(said, judged, () -> { }), dir.resolve("logs-1"));
    assertThat(judged).hasValue(2);
    assertThat(twice).singleElement().satisfies(o -> {
      assertThat(o.refused()).isFalse();
      assertThat(o.observed()).startsWith("no refusal seen: exit 0");
    });

    write(said, "BREACH\n");
    judged.set(0);
    List<ProbeOutcome> breached = run(probe(said, judged, () -> write(said, "REFUSED\n")), dir.resolve("logs-2"));
    assertThat(judged).hasValue(1);
    assertThat(breached).singleElement().satisfies(o -> {
      assertThat(o.refused()).isFalse();
      assertThat(o.observed()).isEqualTo("the action left its trace");
    });
  }

  private static void write(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
