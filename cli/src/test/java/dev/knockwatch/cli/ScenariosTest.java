package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The detection scenarios of {@code streams-app/src/test/resources/scenarios/<name>/}: input logs
 * in the {@code <agentId>/<commandId>.<suffix>} layout under {@code input/}, the alerts
 * {@code replay} must print (with the shipped rules) in {@code expected.jsonl}. Benign scenarios
 * expect an empty file.
 */
@Tag("integration")
class ScenariosTest {

  static final Path SCENARIOS = Path.of("../streams-app/src/test/resources/scenarios");

  static Stream<String> scenarios() throws IOException {
    try (Stream<Path> dirs = Files.list(SCENARIOS)) {
      return dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString()).sorted().toList().stream();
    }
  }

  @ParameterizedTest
  @MethodSource("scenarios")
  void replayPrintsTheExpectedAlerts(String name) throws IOException {
    Path dir = SCENARIOS.resolve(name);
    KnockwatchTest.Run r = KnockwatchTest.run("replay", "--rules", "../alert-rules", "--input", dir.resolve("input").toString());
    assertThat(r.code()).as(r.err()).isZero();
    List<String> expected = Files.readAllLines(dir.resolve("expected.jsonl"));
    assertThat(r.out().lines().toList()).as(name).containsExactlyElementsOf(expected);
  }
}
