package dev.knockwatch.notify.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.config.ReceiversConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The route tree against Alertmanager's own: random trees (matchers of all four operators,
 * continue, inherited receivers, three levels deep) written once, read by knockwatch as
 * receivers.yaml and by Debian's {@code amtool config routes test} as alertmanager.yml; for random
 * alerts both must name the same receivers in the same order.
 */
@Tag("integration")
class AmtoolRoutingTest {

  private static final String[] MATCHERS = {"severity=\"page\"", "severity!=\"info\"", "severity=~\"page|critical\"",
      "severity!~\"warn.*\"", "alertname=\"off-role-host\"", "alertname!=\"scanning\"", "agent=~\"ci-.*\"",
      "agent!~\"ci-runner-.*\"", "role=\"ci\"", "role!=ci", "team=\"platform\"", "team=\"\"", "team!~\".+\""};
  private static final String[] RULES = {"off-role-host", "persistent-retry", "scanning"};
  private static final String[] AGENTS = {"ci-runner-1", "ci-nightly", "assistant-7"};
  private static final String[] ROLES = {"ci", "coding-assistant"};
  private static final int RECEIVERS = 4;

  @TempDir Path dir;

  @Test
  void randomTreesRouteAsAlertmanagerRoutesThem() throws Exception {
    Random random = new Random(2028);
    StringBuilder receivers = new StringBuilder("receivers:\n");
    for (int i = 0; i < RECEIVERS; i++) {
      receivers.append("  - {name: r").append(i).append(", type: console}\n");
    }
    int compared = 0;
    int multi = 0;
    for (int round = 0; round < 25; round++) {
      StringBuilder tree = new StringBuilder("route:\n  receiver: r0\n");
      children(random, tree, "  ", 1);
      Files.writeString(dir.resolve("receivers.yaml"), receivers + tree.toString());
      Files.writeString(dir.resolve("alertmanager.yml"), tree + receivers.toString().replace(", type: console", ""));
      Routing routing = new Routing(ReceiversConfig.load(dir, Map.of()).route());
      for (int k = 0; k < 8; k++) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("alertname", RULES[random.nextInt(RULES.length)]);
        labels.put("severity", Alert.Severity.values()[random.nextInt(4)].name().toLowerCase(Locale.ROOT));
        labels.put("agent", AGENTS[random.nextInt(AGENTS.length)]);
        labels.put("role", ROLES[random.nextInt(ROLES.length)]);
        Map<String, String> ruleLabels = random.nextBoolean() ? Map.of("team", "platform") : Map.of();
        labels.putAll(ruleLabels);
        Alert a = Alert.firing(labels.get("alertname"), null).fingerprint("f")
            .severity(Alert.Severity.valueOf(labels.get("severity").toUpperCase(Locale.ROOT)))
            .agentId(labels.get("agent")).role(labels.get("role")).firstSeen(Instant.EPOCH).lastSeen(Instant.EPOCH)
            .summary("s").sampleEventIds(List.of()).sources(List.of()).policyVersion("v")
            .meta(new Alert.Meta(List.of(), null, ruleLabels, Map.of())).build();
        List<String> ours = routing.targets(a).stream().map(Routing.Target::receiver).toList();
        String theirs = amtool(labels);
        assertThat(String.join(",", ours)).as("round %d, %s\n%s", round, labels, tree).isEqualTo(theirs);
        compared++;
        multi += ours.size() > 1 ? 1 : 0;
      }
    }
    assertThat(compared).isEqualTo(200);
    assertThat(multi).as("continue took some alerts to several receivers").isPositive();
  }

  /** Up to three child routes under the node at {@code indent}, each with random matchers, receiver and continue. */
  private static void children(Random random, StringBuilder yaml, String indent, int depth) {
    int n = depth > 3 ? 0 : random.nextInt(4);
    if (n == 0) {
      return;
    }
    yaml.append(indent).append("routes:\n");
    for (int i = 0; i < n; i++) {
      String in = indent + "  ";
      yaml.append(in).append("- continue: ").append(random.nextInt(3) == 0).append('\n');
      in += "  ";
      List<String> matchers = new ArrayList<>();
      for (int m = random.nextInt(3); m > 0; m--) {
        matchers.add("'" + MATCHERS[random.nextInt(MATCHERS.length)] + "'");
      }
      if (!matchers.isEmpty()) {
        yaml.append(in).append("matchers: ").append(matchers).append('\n');
      }
      if (random.nextBoolean()) {
        yaml.append(in).append("receiver: r").append(random.nextInt(RECEIVERS)).append('\n');
      }
      children(random, yaml, in, depth + 1);
    }
  }

  private String amtool(Map<String, String> labels) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("amtool", "config", "routes", "test", "--config.file=alertmanager.yml"));
    labels.forEach((k, v) -> cmd.add(k + "=" + v));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(String.join(" ", cmd) + "\n" + out).isZero();
    return out;
  }
}
