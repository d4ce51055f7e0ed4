package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyFiles;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.streams.rules.PolicyPublisher;
import dev.knockwatch.streams.detect.CountDetector;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.TopicReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code up}'s policy watcher on a real broker: what it publishes to knockwatch.policy, and when detection restarts. */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class PolicyWatcherTest {

  @TempDir Path rules;

  /** The shipped rules and roles, copied into the watched directory: its first policy. */
  private PolicyFiles shippedRules() throws IOException {
    for (String f : List.of("rules.yaml", "roles.yaml")) {
      Files.copy(Path.of("../alert-rules").resolve(f), rules.resolve(f));
    }
    return PolicyLoader.files(rules);
  }

  private PolicyFiles lastPublished(EmbeddedKafkaBroker broker) {
    List<PolicyFiles> all = TopicReader.readToEnd(broker, Topics.POLICY.name(), Json.serde(PolicyFiles.class).deserializer(),
        r -> PolicyFiles.KEY.equals(r.key())).stream().map(r -> r.value()).toList();
    return all.isEmpty() ? null : all.get(all.size() - 1);
  }

  @Test
  void changedRolesArePublishedChangedRulesRestartDetectionAndBrokenFilesAreReportedOnce(EmbeddedKafkaBroker broker)
      throws IOException {
    PolicyFiles first = shippedRules();
    PolicyPublisher.publish(broker.bootstrapServers(), Map.of(), first);
    List<Policy> restarts = new ArrayList<>();
    ByteArrayOutputStream said = new ByteArrayOutputStream();
    PolicyWatcher watcher = new PolicyWatcher(rules, broker.bootstrapServers(), Map.of(), first, restarts::add,
        new PrintStream(said, true, StandardCharsets.UTF_8), Duration.ofSeconds(1));

    watcher.checkOnce();
    assertThat(lastPublished(broker).version()).isEqualTo(first.version());

    Files.writeString(rules.resolve("roles.yaml"),
        Files.readString(rules.resolve("roles.yaml")).replace("\"pypi.org\",", "\"pypi.org\", \"evil.example\","));
    watcher.checkOnce();
    PolicyFiles second = lastPublished(broker);
    assertThat(second.version()).isNotEqualTo(first.version());
    assertThat(second.roles()).contains("evil.example");
    assertThat(restarts).as("roles alone need no restart").isEmpty();

    Files.writeString(rules.resolve("rules.yaml"),
        Files.readString(rules.resolve("rules.yaml")).replace("threshold: 5 ", "threshold: 7 "));
    watcher.checkOnce();
    assertThat(restarts).singleElement().satisfies(p ->
        assertThat(p.rules(CountDetector.Settings.class)).extracting(r -> ((CountDetector.Settings) r.settings()).threshold()).containsExactly(7));
    String third = lastPublished(broker).version();

    Files.writeString(rules.resolve("rules.yaml"), "rules:\n  - id: x\n    detector: nope\n");
    watcher.checkOnce();
    watcher.checkOnce();
    assertThat(lastPublished(broker).version()).isEqualTo(third);
    String out = said.toString(StandardCharsets.UTF_8);
    assertThat(out).containsOnlyOnce("does not load; policy " + third + " stays")
        .contains(rules.resolve("rules.yaml") + ":3: rule x: detector \"nope\" is not one of");
  }

  @Test
  void aNewRulesFileBesideRulesYamlIsPublishedAndRestartsDetection(EmbeddedKafkaBroker broker) throws IOException {
    PolicyFiles first = shippedRules();
    List<Policy> restarts = new ArrayList<>();
    PolicyWatcher watcher = new PolicyWatcher(rules, broker.bootstrapServers(), Map.of(), first, restarts::add,
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), Duration.ofSeconds(1));
    Files.writeString(rules.resolve("team-a.rules.yaml"), "rules:\n  - {id: team-a-scan, detector: value-count, threshold: 3}\n");
    watcher.checkOnce();
    PolicyFiles published = lastPublished(broker);
    assertThat(published.moreRules()).containsOnlyKeys("team-a.rules.yaml");
    assertThat(restarts).singleElement().satisfies(p -> assertThat(p.rules()).extracting(Rule::id).contains("team-a-scan"));
  }

  /**
   * Rules that load but that detection cannot run (its topology refused, as a rule whose id named
   * another's processor was) are reported once, with why; nothing is published and detection is not
   * restarted into a failure: the running policy stays until the files are fixed.
   */
  @Test
  void rulesThatLoadButThatDetectionCannotRunAreReportedAndTheRunningPolicyStays(EmbeddedKafkaBroker broker)
      throws IOException {
    PolicyFiles first = shippedRules();
    PolicyPublisher.publish(broker.bootstrapServers(), Map.of(), first);
    List<Policy> restarts = new ArrayList<>();
    ByteArrayOutputStream said = new ByteArrayOutputStream();
    String refusal = "Invalid topology: Processor detect-unrunnable is already added.";
    PolicyWatcher watcher = new PolicyWatcher(rules, broker.bootstrapServers(), Map.of(), first, restarts::add,
        new PrintStream(said, true, StandardCharsets.UTF_8), Duration.ofSeconds(1),
        p -> p.rules().stream().anyMatch(r -> r.id().equals("unrunnable")) ? refusal
            : PolicyWatcher.whyDetectionCannotRun(p));
    Path more = rules.resolve("team.rules.yaml");
    Files.writeString(more, "rules:\n  - {id: unrunnable, detector: count, threshold: 3}\n");
    watcher.checkOnce();
    Files.writeString(more, "# the same rules, other bytes\nrules:\n  - {id: unrunnable, detector: count, threshold: 3}\n");
    watcher.checkOnce();
    assertThat(restarts).isEmpty();
    assertThat(lastPublished(broker).version()).isEqualTo(first.version());
    assertThat(said.toString(StandardCharsets.UTF_8)).containsOnlyOnce(
        rules + " changed and loads, but detection cannot run it; policy " + first.version() + " stays:\n"
            + "  " + refusal);

    Files.writeString(more, "rules:\n  - {id: runnable, detector: count, threshold: 3}\n");
    watcher.checkOnce();
    assertThat(restarts).singleElement()
        .satisfies(p -> assertThat(p.rules()).extracting(Rule::id).contains("runnable"));
    assertThat(lastPublished(broker).version()).isNotEqualTo(first.version());
  }

  /** The real check: a policy whose two rules name one processor (built by hand, as the loader refuses it) is refused. */
  @Test
  void detectionsOwnTopologyRefusesTwoRulesOfOneProcessorsName() {
    CountDetector.Settings aligned = new CountDetector.Settings(Duration.ofMinutes(5), Duration.ofMinutes(5), 3,
        Duration.ofMinutes(1));
    Policy clashing = Policy.ofRules(List.of(
        Rule.of("retry", dev.knockwatch.events.Alert.Severity.WARNING, aligned).per(dev.knockwatch.streams.rules.Grain.TASK),
        Rule.of("retry-by-grain", dev.knockwatch.events.Alert.Severity.WARNING, aligned)));
    assertThat(PolicyWatcher.whyDetectionCannotRun(clashing)).contains("detect-retry-by-grain is already added");
    assertThat(PolicyWatcher.whyDetectionCannotRun(PolicyLoader.load(Path.of("../alert-rules")))).isNull();
  }
}
