package dev.knockwatch.streams.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.Alert;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RulesLoaderTest {

  @TempDir Path dir;

  private Path write(String yaml) throws IOException {
    Files.writeString(dir.resolve("rules.yaml"), yaml);
    return dir;
  }

  @Test
  void theShippedRulesLoad() {
    assertThat(RulesLoader.countRules(Path.of("../alert-rules"))).containsExactly(
        new CountRule("persistent-retry", Duration.ofMinutes(5), 5, Alert.Severity.WARNING, Duration.ofMinutes(1)));
  }

  @Test
  void defaultsFillWhatARuleLeavesOut() throws IOException {
    assertThat(RulesLoader.countRules(write("rules:\n  - id: r1\n    detector: count\n    threshold: 3\n")))
        .containsExactly(new CountRule("r1", Duration.ofMinutes(5), 3, Alert.Severity.WARNING, Duration.ofMinutes(1)));
  }

  @Test
  void rulesOfOtherDetectorsAreLeftToThem() throws IOException {
    assertThat(RulesLoader.countRules(write("rules:\n  - id: off-role-host\n    detector: off-role\n    severity: page\n")))
        .isEmpty();
  }

  @Test
  void aMissingFileIsNamed() {
    assertThatThrownBy(() -> RulesLoader.countRules(dir))
        .hasMessage(dir.resolve("rules.yaml") + ": not found (the rules directory must hold rules.yaml)");
  }

  @Test
  void aBadDurationIsNamedWithItsRule() throws IOException {
    write("rules:\n  - id: r1\n    detector: count\n    window: 5x\n    threshold: 5\n");
    assertThatThrownBy(() -> RulesLoader.countRules(dir)).isInstanceOf(RulesException.class)
        .hasMessage(dir.resolve("rules.yaml") + ": rule r1: window \"5x\" is not a duration (like 30s, 5m, 1h)");
  }

  @Test
  void aThresholdMustBeAWholeNumberOfAtLeastOne() throws IOException {
    write("rules:\n  - id: r1\n    detector: count\n    threshold: 0\n");
    assertThatThrownBy(() -> RulesLoader.countRules(dir))
        .hasMessage(dir.resolve("rules.yaml") + ": rule r1: threshold must be a whole number of at least 1, not \"0\"");
    write("rules:\n  - id: r1\n    detector: count\n");
    assertThatThrownBy(() -> RulesLoader.countRules(dir))
        .hasMessage(dir.resolve("rules.yaml") + ": rule r1: threshold must be a whole number of at least 1, not missing");
  }

  @Test
  void duplicateIdsAndBadSeveritiesAreRefused() throws IOException {
    write("rules:\n  - id: r1\n    detector: off-role\n  - id: r1\n    detector: count\n    threshold: 2\n");
    assertThatThrownBy(() -> RulesLoader.countRules(dir)).hasMessage(dir.resolve("rules.yaml") + ": rule r1: duplicate id");
    write("rules:\n  - id: r1\n    detector: count\n    threshold: 2\n    severity: loud\n");
    assertThatThrownBy(() -> RulesLoader.countRules(dir))
        .hasMessage(dir.resolve("rules.yaml") + ": rule r1: severity \"loud\" is not one of info, warning, page, critical");
  }

  @Test
  void brokenYamlIsReportedWithItsLine() throws IOException {
    write("rules:\n  - id: r1\n    detector: [count\n");
    assertThatThrownBy(() -> RulesLoader.countRules(dir)).isInstanceOf(RulesException.class)
        .hasMessage(dir.resolve("rules.yaml") + ":4: not valid YAML: while parsing a flow sequence: "
            + "expected ',' or ']', but got <stream end>");
  }

  @Test
  void aRuleNeedsAUsableId() throws IOException {
    write("rules:\n  - detector: count\n    threshold: 2\n");
    assertThatThrownBy(() -> RulesLoader.countRules(dir)).hasMessage(dir.resolve("rules.yaml")
        + ": rule 1: id \"\" must be 1-63 of [a-z0-9-], starting with a letter or digit");
  }
}
