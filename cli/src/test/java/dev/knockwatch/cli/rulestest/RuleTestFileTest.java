package dev.knockwatch.cli.rulestest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.config.ConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RuleTestFileTest {

  @TempDir Path dir;

  @Test
  void theShippedTestsRead() {
    RuleTestFile f = RuleTestFile.read(Path.of("../alert-rules/tests/shipped.test.yaml"));
    assertThat(f.rules()).isEqualTo(Path.of("../alert-rules").toAbsolutePath().normalize());
    assertThat(f.cases()).hasSize(15);
    RuleTestFile.Case storm = f.cases().get(0);
    assertThat(storm.inputs()).singleElement().satisfies(i -> {
      assertThat(i.file()).isEqualTo("ci-runner-1/RetryStorm000000000000001.violations.jsonl");
      assertThat(i.at()).isEqualTo(Instant.parse("2026-11-29T18:45:00Z"));
      assertThat(i.lines()).hasSize(5);
    });
    assertThat(storm.expect().get(0)).isEqualTo(new RuleTestFile.AlertPattern(30, "persistent-retry",
        "RetryStorm000000000000001", "ci-runner-1", Alert.Severity.WARNING, Alert.Status.FIRING));
    assertThat(storm.absent()).singleElement().satisfies(p -> assertThat(p.rule()).isEqualTo("off-role-host"));
  }

  @Test
  void everyProblemIsListedAtItsLine() throws IOException {
    Path f = Files.writeString(dir.resolve("t.test.yaml"), """
        start: yesterday
        tests:
          - name: a
            input:
              - {file: ../escape.violations.jsonl, lines: [x]}
              - {file: ci/x.log, lines: [x]}
              - {file: ci/Cmd0000000000000000000001.strace}
            expect:
              - {rule: r, status: open, colour: red}
          - name: a
            input:
              - {file: ci/Cmd0000000000000000000001.strace, lines: x}
          - input: []
            absent: [{}]
        """);
    assertThatThrownBy(() -> RuleTestFile.read(f)).isInstanceOfSatisfying(ConfigException.class, e ->
        assertThat(e.problems()).containsExactly(
            f + ":1: start \"yesterday\" is not a time like 2026-11-29T18:45:00Z",
            f + ":5: test \"a\": file ../escape.violations.jsonl is not AGENT/FILE, the layout ingest reads",
            f + ":6: test \"a\": file ci/x.log has no suffix ingest reads (" + String.join(", ",
                dev.knockwatch.ingest.Formats.all().stream().flatMap(t -> t.choice().suffixes().stream()).toList()) + ")",
            f + ":7: test \"a\": file ci/Cmd0000000000000000000001.strace has no lines",
            f + ":9: test \"a\": expect: unknown key \"colour\" (known: agent, command, rule, severity, status)",
            f + ":9: test \"a\": expect: status \"open\" is not one of firing, resolved",
            f + ":10: test \"a\": expects nothing (give expect, absent or both)",
            f + ":10: test \"a\": the name is used twice",
            f + ":13: test 3: no name",
            f + ":13: test \"test 3\": no input",
            f + ":14: test \"test 3\": absent: give at least one of agent, command, rule, severity, status",
            f + ":13: test \"test 3\": expects nothing (give expect, absent or both)"));
  }
}
