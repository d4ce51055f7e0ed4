package dev.knockwatch.notify.config;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Durations;
import dev.knockwatch.events.Glob;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * Which alerts go to which receivers. Routes are tried in order; the first that matches wins
 * unless it says {@code continue: true}.
 *
 * @param severities empty: any
 * @param rules rule id globs; empty: any
 * @param roles empty: any
 * @param agents agent id globs; empty: any
 * @param groupBy alert fields (rule, role, agent, severity, command) whose equal values share one message
 *     when several alerts fire within {@code groupWait}; empty: no grouping
 * @param repeatInterval how long after a notification of an alert its count updates are held back
 */
public record Route(
    Set<Alert.Severity> severities,
    List<Glob> rules,
    Set<String> roles,
    List<Glob> agents,
    List<String> receivers,
    boolean continueMatching,
    List<String> groupBy,
    Duration groupWait,
    Duration repeatInterval) {

  public static final Set<String> GROUP_FIELDS = Set.of("rule", "role", "agent", "severity", "command");
  public static final Duration DEFAULT_REPEAT_INTERVAL = Duration.ofMinutes(5);
  public static final Duration DEFAULT_GROUP_WAIT = Duration.ofSeconds(30);

  public boolean matches(Alert a) {
    return new AlertMatch(severities, rules, roles, agents).matches(a);
  }

  /** The route that folds one receiver's alerts past its {@code FloodBudget} into a digest a minute, by {@code field}. */
  public static Route overflow(String receiver, String field, Duration repeatInterval) {
    return new Route(Set.of(), List.of(), Set.of(), List.of(), List.of(receiver), false, List.of(field),
        Duration.ofMinutes(1), repeatInterval);
  }

  /** The value of {@code groupBy} for this alert: alerts with equal keys share a message. */
  public String groupKey(Alert a) {
    StringBuilder key = new StringBuilder();
    for (String field : groupBy) {
      key.append(label(a, field)).append('\u0000');
    }
    return key.toString();
  }

  /** One of {@link #GROUP_FIELDS} of an alert: {@code rule}, {@code role}, {@code agent}, {@code command}, {@code severity}. */
  public static String label(Alert a, String field) {
    return switch (field) {
      case "rule" -> a.rule();
      case "role" -> a.role();
      case "agent" -> a.agentId();
      case "command" -> a.commandId();
      default -> a.severity() == null ? null : a.severity().name();
    };
  }

  /** What the route matches, where it sends, and how: {@code severity page -> oncall; updates every 5m at most}. */
  public String describe() {
    return new AlertMatch(severities, rules, roles, agents).describe() + " -> " + String.join(", ", receivers)
        + (continueMatching ? ", and on to the next routes" : "")
        + (groupBy.isEmpty() ? "" : "; grouped by " + String.join(", ", groupBy) + ", waiting "
            + Durations.format(groupWait))
        + "; updates every " + Durations.format(repeatInterval) + " at most";
  }
}
