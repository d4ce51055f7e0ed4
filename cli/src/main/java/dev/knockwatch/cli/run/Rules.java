package dev.knockwatch.cli.run;

import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.streams.rules.Role;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.streams.rules.RuleMatch;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;

/** Loads the alert-rules directory for {@code up} and {@code replay}. */
public final class Rules {

  private Rules() {}

  public static Policy load(Path dir) {
    if (!Files.isDirectory(dir)) {
      throw new UsageException("rules directory " + dir + " does not exist");
    }
    return PolicyLoader.load(dir);
  }

  /** One line per receiver: {@code soc-slack (slack), oncall (pagerduty)}. */
  public static String describe(ReceiversConfig receivers) {
    return receivers.summary().entrySet().stream().map(e -> e.getKey() + " (" + e.getValue() + ")")
        .collect(Collectors.joining(", "));
  }

  /** One line: each rule and what it does, e.g. {@code persistent-retry: count 5 in any 5m -> warning}. */
  public static String describe(Policy policy) {
    return policy.rules().stream().map(Rules::describe).collect(Collectors.joining("; "))
        + "; policy " + policy.version();
  }

  private static String describe(Rule r) {
    String what = r.detector().describe(r.settings());
    return r.id() + ": " + what + (r.per() == dev.knockwatch.streams.rules.Grain.COMMAND ? "" : " per " + r.per().wireName())
        + " -> " + r.severity().name().toLowerCase() + (r.shadow() ? " (shadow)" : "");
  }

  /**
   * What {@code rules check} prints of a policy, as YAML-like text: each rule in one line (what it
   * detects, its severity, what it matches and excepts), each role's hosts, and which agents
   * take which role.
   */
  public static String summary(Policy policy) {
    StringBuilder b = new StringBuilder("rules:\n");
    for (Rule r : policy.rules()) {
      b.append("  ").append(describe(r));
      String match = describe(r.match());
      if (!match.isEmpty()) {
        b.append("; only ").append(match);
      }
      if (r.match().except() != null) {
        b.append("; except ").append(describe(r.match().except()));
      }
      if (r.meta() != null && !r.meta().tags().isEmpty()) {
        b.append("; tags ").append(String.join(", ", r.meta().tags()));
      }
      if (r.meta() != null && r.meta().runbook() != null) {
        b.append("; runbook ").append(r.meta().runbook());
      }
      b.append('\n');
    }
    b.append("roles:\n");
    policy.roles().values().stream().sorted(java.util.Comparator.comparing(Role::name)).forEach(role ->
        b.append("  ").append(role.name()).append(": ").append(role.hosts().isEmpty() ? "no host"
            : role.hosts().stream().map(Role.HostPattern::text).collect(Collectors.joining(", "))).append('\n'));
    b.append("agents (first match wins):\n");
    policy.agents().forEach(a -> b.append("  ").append(a.match()).append(" -> ").append(a.role()).append('\n'));
    b.append("  anyone else -> ").append(policy.defaultRole()).append('\n');
    return b.toString();
  }

  /** A match's given parts, e.g. {@code role guard-probe, host *.internal}; empty when it matches everything. */
  private static String describe(RuleMatch m) {
    java.util.List<String> parts = new java.util.ArrayList<>();
    if (!m.sources().isEmpty()) {
      parts.add("source " + m.sources().stream().sorted()
          .collect(Collectors.joining("|")));
    }
    if (!m.kinds().isEmpty()) {
      parts.add("kind " + m.kinds().stream().map(k -> k.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'))
          .sorted().collect(Collectors.joining("|")));
    }
    if (!m.roles().isEmpty()) {
      parts.add("role " + String.join("|", new java.util.TreeSet<>(m.roles())));
    }
    if (m.agent() != null) {
      parts.add("agent " + m.agent());
    }
    if (m.host() != null) {
      parts.add("host " + m.host());
    }
    return String.join(", ", parts);
  }
}
