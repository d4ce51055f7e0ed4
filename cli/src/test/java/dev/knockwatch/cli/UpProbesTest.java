package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

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
    Path agent = dir.resolve("logs").resolve("knockwatch-limit");
    try (Stream<Path> files = Files.list(agent)) {
      Path file = files.findFirst().orElseThrow();
      assertThat(lines.get(0)).endsWith(file.getFileName().toString().replace(".violations.jsonl", ""));
      assertThat(Files.readAllLines(file)).hasSize(UpProbes.DEMO_ATTEMPTS);
    }
  }
}
