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

  /**
   * Stopped while a probe runs (Ctrl-C reaches the bridge too, which exits 130): the run says it
   * was interrupted, never a count of refusals that reads as a sandbox failure.
   */
  @Test
  void aRunCutShortByTheStopSaysInterrupted() throws Exception {
    Path bridge = Files.createDirectories(dir.resolve("slow-bridge"));
    // a bridge that takes its time, as srt does under load: the stop falls inside the first probe
    Files.writeString(bridge.resolve("bridge.mjs"), "setTimeout(() => process.exit(0), 120000);\n");
    StringWriter said = new StringWriter();
    UpProbes probes = new UpProbes(dir.resolve("logs"), dir.resolve("work"), new PrintWriter(said),
        say -> new SrtBridge(bridge));
    probes.start();
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (ProcessHandle.current().descendants().noneMatch(p -> p.info().commandLine().orElse("").contains("slow-bridge"))
        && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(ProcessHandle.current().descendants()).as("the first probe's bridge runs")
        .anyMatch(p -> p.info().commandLine().orElse("").contains("slow-bridge"));
    probes.close();
    List<String> lines = said.toString().lines().toList();
    assertThat(lines).containsExactly("knockwatch: guard probes: interrupted, knockwatch is stopping");
    assertThat(ProcessHandle.current().descendants()).as("no bridge left running")
        .noneMatch(p -> p.info().commandLine().orElse("").contains("slow-bridge"));
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
