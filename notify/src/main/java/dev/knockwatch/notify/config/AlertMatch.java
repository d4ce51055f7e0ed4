package dev.knockwatch.notify.config;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Glob;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Which alerts a route or an inhibition's source or target means: every given part must match;
 * an empty set matches anything.
 *
 * @param rules rule id globs
 * @param agents agent id globs
 */
public record AlertMatch(Set<Alert.Severity> severities, List<Glob> rules, Set<String> roles, List<Glob> agents) {

  public static final AlertMatch ANY = new AlertMatch(Set.of(), List.of(), Set.of(), List.of());

  public boolean matches(Alert a) {
    return (severities.isEmpty() || severities.contains(a.severity()))
        && (rules.isEmpty() || a.rule() != null && rules.stream().anyMatch(g -> g.matches(a.rule())))
        && (roles.isEmpty() || roles.contains(a.role()))
        && (agents.isEmpty() || a.agentId() != null && agents.stream().anyMatch(g -> g.matches(a.agentId())));
  }

  /** The parts given, e.g. {@code severity critical|page, rule off-*}; {@code any alert} when none is. */
  public String describe() {
    List<String> parts = new ArrayList<>();
    if (!severities.isEmpty()) {
      parts.add("severity " + severities.stream().map(s -> s.name().toLowerCase(Locale.ROOT)).sorted()
          .collect(Collectors.joining("|")));
    }
    if (!rules.isEmpty()) {
      parts.add("rule " + rules.stream().map(Glob::toString).collect(Collectors.joining("|")));
    }
    if (!roles.isEmpty()) {
      parts.add("role " + String.join("|", new TreeSet<>(roles)));
    }
    if (!agents.isEmpty()) {
      parts.add("agent " + agents.stream().map(Glob::toString).collect(Collectors.joining("|")));
    }
    return parts.isEmpty() ? "any alert" : String.join(", ", parts);
  }
}
