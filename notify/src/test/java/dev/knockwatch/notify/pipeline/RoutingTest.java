package dev.knockwatch.notify.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Glob;
import dev.knockwatch.notify.config.Matcher;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.config.Route;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The route tree, walked as Alertmanager walks its own; the flat list it replaced routes as before. */
class RoutingTest {

  @TempDir Path dir;

  private static Route node(String matchers, String receivers, boolean cont, Route... children) {
    return new Route(matchers.isEmpty() ? List.of() : Arrays.stream(matchers.split(";")).map(Matcher::parse).toList(),
        receivers.isEmpty() ? List.of() : List.of(receivers.split(",")), cont, List.of(), Duration.ZERO, Duration.ZERO,
        Duration.ZERO, List.of(children));
  }

  private static Alert alert(String rule, Alert.Severity severity, String agent, String role) {
    return Alert.firing(rule, "CommandRoutingTest0000001").fingerprint("f").severity(severity).agentId(agent)
        .role(role).firstSeen(Instant.EPOCH).lastSeen(Instant.EPOCH).summary("s").sampleEventIds(List.of())
        .sources(List.of()).policyVersion("v")
        .meta(new Alert.Meta(List.of(), null, Map.of("team", "platform"), Map.of())).build();
  }

  private static List<String> reach(Route root, Alert a) {
    return new Routing(root).targets(a).stream().map(t -> t.receiver() + "@" + t.path()).toList();
  }

  @Test
  void theFirstMatchingChildTakesTheAlertContinueGoesOnAndNoMatchingChildFallsBackToItsParent() {
    Route root = node("", "console", false,
        node("severity=~\"page|critical\"", "oncall,slack", true),
        node("rule=~\"off-.*\"", "webhook", false,
            node("agent!~\"ci-.*\"", "security", false),
            node("team=\"platform\"", "platform", false)),
        node("severity!=\"info\"", "slack", false));
    Alert page = alert("off-role-host", Alert.Severity.PAGE, "ci-runner-1", "ci");
    assertThat(reach(root, page)).as("page continues; under off-*, a ci agent skips the first child, the rule's label takes the second")
        .containsExactly("oncall@1", "slack@1", "platform@2.2");
    Alert warning = alert("persistent-retry", Alert.Severity.WARNING, "assistant-7", "coding-assistant");
    assertThat(reach(root, warning)).containsExactly("slack@3");
    Alert info = alert("drift", Alert.Severity.INFO, "assistant-7", "coding-assistant");
    assertThat(reach(root, info)).as("no child matches: the root's own receiver").containsExactly("console@root");
    Route noRootReceiver = node("", "", false, node("severity=\"warning\"", "slack", false));
    assertThat(reach(noRootReceiver, info)).as("a flat list's root has no receiver").isEmpty();
    Alert offNoLabel = Alert.firing("off-role-host", "c").fingerprint("f").agentId("ci-runner-1").role("ci")
        .summary("s").sampleEventIds(List.of()).sources(List.of()).policyVersion("v").build();
    assertThat(reach(root, offNoLabel)).as("a missing label is empty: team=\"platform\" fails, off-* itself sends")
        .containsExactly("webhook@2");
  }

  @Test
  void matchersCompareWholeValuesAndAMissingLabelIsEmpty() {
    Alert a = alert("off-role-host", Alert.Severity.PAGE, "ci-runner-1", "ci");
    assertThat(Matcher.parse("rule=off-role").matches(a)).isFalse();
    assertThat(Matcher.parse("alertname=\"off-role-host\"").matches(a)).isTrue();
    assertThat(Matcher.parse("rule=~\"off\"").matches(a)).as("anchored, as Alertmanager's").isFalse();
    assertThat(Matcher.parse("severity=page").matches(a)).isTrue();
    assertThat(Matcher.parse("nolabel=\"\"").matches(a)).isTrue();
    assertThat(Matcher.parse("nolabel!~\".+\"").matches(a)).isTrue();
    assertThat(Matcher.parse(" team = \"plat\\\"form\" ").value()).isEqualTo("plat\"form");
    assertThat(Matcher.parse("team=\"plat\\\"form\"")).hasToString("team=\"plat\\\"form\"");
  }

  /**
   * The flat routes of earlier versions, migrated on read into a tree, reach exactly the receivers
   * the flat first-match walk reached, over random routes (globs with regex metacharacters in
   * them) and random, hostile alerts.
   */
  @Test
  void aFlatListRoutesAsItAlwaysDid() throws IOException {
    Random random = new Random(28);
    String[] words = {"off-role-host", "off.role", "a|b", "(x", "ci-*", "*", "ci-runner-?", "[", "\\", "$^", "persistent-retry", "\u202e", "x\ny"};
    String[] severities = {"info", "warning", "page", "critical"};
    String[] roles = {"ci", "coding-assistant", "default", "c.i"};
    for (int round = 0; round < 200; round++) {
      int n = 1 + random.nextInt(5);
      List<FlatRoute> flat = new ArrayList<>();
      StringBuilder yaml = new StringBuilder("receivers:\n");
      for (int i = 0; i < n; i++) {
        yaml.append("  - {name: r").append(i).append(", type: console}\n");
      }
      yaml.append("routes:\n");
      for (int i = 0; i < n; i++) {
        FlatRoute r = new FlatRoute(pick(random, severities), pick(random, words), pick(random, roles), pick(random, words),
            "r" + i, random.nextBoolean());
        flat.add(r);
        yaml.append("  - match: {");
        List<String> parts = new ArrayList<>();
        if (!r.severities.isEmpty()) parts.add("severity: " + json(r.severities));
        if (!r.rules.isEmpty()) parts.add("rule: " + json(r.rules));
        if (!r.roles.isEmpty()) parts.add("role: " + json(r.roles));
        if (!r.agents.isEmpty()) parts.add("agent: " + json(r.agents));
        yaml.append(String.join(", ", parts)).append("}\n    receivers: [").append(r.receiver).append("]\n    continue: ")
            .append(r.cont).append('\n');
      }
      Files.writeString(dir.resolve("receivers.yaml"), yaml);
      Routing routing = new Routing(ReceiversConfig.load(dir, Map.of()).route());
      for (int k = 0; k < 50; k++) {
        Alert a = alert(words[random.nextInt(words.length)].replace("*", "x").replace("?", "q"),
            Alert.Severity.values()[random.nextInt(4)], words[random.nextInt(words.length)].replace("*", "zz"),
            roles[random.nextInt(roles.length)]);
        List<String> expected = new ArrayList<>();
        for (FlatRoute r : flat) {
          if (r.matches(a)) {
            expected.add(r.receiver);
            if (!r.cont) {
              break;
            }
          }
        }
        assertThat(routing.targets(a)).extracting(Routing.Target::receiver).as("round %d: %s\n%s", round, a, yaml)
            .isEqualTo(expected);
      }
    }
  }

  /** The flat routes' own semantics, as they were: globs, sets, every given part. */
  private record FlatRoute(List<String> severities, List<String> rules, List<String> roles, List<String> agents,
      String receiver, boolean cont) {
    boolean matches(Alert a) {
      return (severities.isEmpty() || severities.contains(a.severity().name().toLowerCase(Locale.ROOT)))
          && (rules.isEmpty() || rules.stream().anyMatch(g -> Glob.of(g).matches(a.rule())))
          && (roles.isEmpty() || roles.contains(a.role()))
          && (agents.isEmpty() || agents.stream().anyMatch(g -> Glob.of(g).matches(a.agentId())));
    }
  }

  private static List<String> pick(Random random, String[] from) {
    List<String> out = new ArrayList<>();
    for (int i = random.nextInt(3); i > 0; i--) {
      out.add(from[random.nextInt(from.length)]);
    }
    return out;
  }

  private static String json(List<String> values) {
    return values.stream().map(v -> "\"" + v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"")
        .toList().toString();
  }
}
