package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.probes.sandbox.SrtBridge;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UpProbesTest {

  @TempDir Path dir;

  @Test
  void withoutSrtTheEmitterWritesTheDemoAndUpSaysWhyOnce() throws Exception {
    StringWriter said = new StringWriter();
    try (UpProbes probes = new UpProbes(dir.resolve("logs"), dir.resolve("work"), new PrintWriter(said), say -> {
      throw new IllegalStateException("the real sandbox needs bubblewrap; install it");
    })) {
      probes.start();
      // begin() writes the whole demo (1 s apart) before the next task runs
      assertThat(probes.awaitStarted(Duration.ofSeconds(30))).isTrue();
    }
    List<String> lines = said.toString().lines().toList();
    assertThat(lines).singleElement().asString()
        .startsWith("knockwatch: srt cannot run here (the real sandbox needs bubblewrap; install it): no guard probes;"
            + " the emitter wrote the demo's 6 refusals for command ");
    assertTheEmitterWroteTheDemoOf(lines.get(0));
  }

  @Test
  void whenTheBridgeFailsTheEmitterWritesTheDemoAndUpSaysWhy() throws Exception {
    StringWriter said = new StringWriter();
    // a bridge directory without the bridge: every run of it fails, as a broken install does
    try (UpProbes probes = new UpProbes(dir.resolve("logs"), dir.resolve("work"), new PrintWriter(said),
        say -> new SrtBridge(dir.resolve("no-bridge-here")))) {
      probes.start();
      assertThat(probes.awaitStarted(Duration.ofSeconds(120))).isTrue();
    }
    List<String> lines = said.toString().lines().toList();
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0)).startsWith("knockwatch: guard probes did not run: ");
    assertThat(lines.get(1)).startsWith("knockwatch: the demo could not run in the real sandbox (")
        .contains("; the emitter wrote the demo's 6 refusals for command ");
    assertTheEmitterWroteTheDemoOf(lines.get(1));
  }

  /** The line names the demo's command, whose file holds the demo's refusals. */
  private void assertTheEmitterWroteTheDemoOf(String line) throws Exception {
    Path agent = dir.resolve("logs").resolve("knockwatch-limit");
    try (Stream<Path> files = Files.list(agent)) {
      Path file = files.filter(f -> f.toString().endsWith(".violations.jsonl")).findFirst().orElseThrow();
      assertThat(line).endsWith(file.getFileName().toString().replace(".violations.jsonl", ""));
      assertThat(Files.readAllLines(file)).hasSize(UpProbes.DEMO_ATTEMPTS);
    }
  }
}
