package dev.knockwatch.streams.rules;

import dev.knockwatch.events.config.Key;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** docs/CONFIGURATION.md's rules reference is the rules' and detectors' own declarations: a key added, renamed or redocumented fails here until README follows. */
class RulesReferenceTest {

  static final Path README = Path.of("../docs/CONFIGURATION.md");

  @Test
  void readmesReferenceIsWhatTheDetectorsDeclare() throws IOException {
    String readme = Files.readString(README);
    int begin = readme.indexOf(RulesReference.BEGIN);
    int end = readme.indexOf(RulesReference.END);
    assertThat(begin).as("docs/CONFIGURATION.md holds the line " + RulesReference.BEGIN).isNotNegative();
    assertThat(end).as("docs/CONFIGURATION.md holds the line " + RulesReference.END).isGreaterThan(begin);
    // it is listed inside a list item: each of its lines indented by two spaces
    String inReadme = readme.substring(begin + RulesReference.BEGIN.length(), end).lines()
        .map(l -> l.startsWith("  ") ? l.substring(2) : l).collect(java.util.stream.Collectors.joining("\n")).strip();
    assertThat(inReadme).as("docs/CONFIGURATION.md's rules reference differs from the detectors' declarations:"
        + " put the output of ./knockwatch rules reference between its two marker lines").isEqualTo(
        RulesReference.markdown().strip());
  }

  @Test
  void everyDetectorIsNamedOnceDocumentedAndEveryKeyOnce() {
    assertThat(Detectors.ALL).extracting(d -> d.spec().name()).doesNotHaveDuplicates()
        .allMatch(n -> n.matches("[a-z][a-z-]*"));
    for (Detector.Spec d : Detectors.ALL.stream().map(Detector::spec).toList()) {
      assertThat(d.doc()).as(d.name()).isNotBlank().doesNotContain("\n");
      assertThat(d.keys()).as(d.name()).extracting(Key::name).doesNotHaveDuplicates();
      d.keys().forEach(s -> assertThat(s.doc()).as(d.name() + "." + s.name()).isNotBlank());
      // a detector's key of a rule-wide key's name would never be read as the detector's
      assertThat(d.keys()).as(d.name()).extracting(Key::name).doesNotContainAnyElementsOf(
          RuleKeys.ALL.stream().map(Key::name).toList());
    }
  }

  @Test
  void everyRuleWideKeyIsNamedOnceAndDocumented() {
    for (List<Key<?>> keys : List.of(RuleKeys.ALL, RuleKeys.MATCH_KEYS)) {
      assertThat(keys).extracting(Key::name).doesNotHaveDuplicates();
      keys.forEach(k -> assertThat(k.doc()).as(k.name()).isNotBlank().doesNotContain("\n"));
    }
  }
}
