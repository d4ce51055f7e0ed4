package dev.knockwatch.notify.config;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Durations;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A node of the route tree, as Alertmanager's {@code route}: an alert that matches every one of
 * its {@code matchers} is tried against its child {@code routes} in order; the first child that
 * matches takes it (and the next ones too while a matching child says {@code continue}); when no
 * child matches, this node's receivers get it. The root matches every alert. Each node's
 * settings are already inherited: a child that does not set receivers, groupBy, groupWait,
 * groupInterval or repeatInterval has its parent's.
 *
 * @param groupBy alert fields (rule, role, agent, severity, command) whose equal values share one
 *     message when several alerts fire within {@code groupWait}; empty: no grouping
 * @param groupInterval how long a group that has sent waits before it sends the alerts that joined it since
 * @param repeatInterval how long after a notification of an alert its count updates are held back
 */
public record Route(
    List<Matcher> matchers,
    List<String> receivers,
    boolean continueMatching,
    List<String> groupBy,
    Duration groupWait,
    Duration groupInterval,
    Duration repeatInterval,
    List<Route> routes) {

  public static final Set<String> GROUP_FIELDS = Set.of("rule", "role", "agent", "severity", "command");
  public static final Duration DEFAULT_REPEAT_INTERVAL = Duration.ofMinutes(5);
  public static final Duration DEFAULT_GROUP_WAIT = Duration.ofSeconds(30);
  public static final Duration DEFAULT_GROUP_INTERVAL = Duration.ofMinutes(5);

  public Route {
    matchers = List.copyOf(matchers);
    receivers = List.copyOf(receivers);
    groupBy = List.copyOf(groupBy);
    routes = List.copyOf(routes);
  }

  /** A leaf sending what {@code matchers} match to {@code receivers}, with the default timing. */
  public static Route leaf(List<Matcher> matchers, List<String> receivers) {
    return new Route(matchers, receivers, false, List.of(), DEFAULT_GROUP_WAIT, DEFAULT_GROUP_INTERVAL,
        DEFAULT_REPEAT_INTERVAL, List.of());
  }

  /** A root with no receiver of its own over {@code routes}: what a flat list of routes is. */
  public static Route root(List<Route> routes) {
    return new Route(List.of(), List.of(), false, List.of(), DEFAULT_GROUP_WAIT, DEFAULT_GROUP_INTERVAL,
        DEFAULT_REPEAT_INTERVAL, routes);
  }

  public boolean matches(Alert a) {
    return matchers.stream().allMatch(m -> m.matches(a));
  }

  /**
   * The route that folds one receiver's alerts past its {@code FloodBudget} into a digest a
   * minute, by {@code field}; all of them in one when the field is {@code receiver}.
   */
  public static Route overflow(String receiver, String field, Duration repeatInterval) {
    return new Route(List.of(), List.of(receiver), false, field.equals("receiver") ? List.of() : List.of(field),
        Duration.ofMinutes(1), Duration.ofMinutes(1), repeatInterval, List.of());
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

  /** What the node matches, where it sends, and how: {@code severity="page" -> oncall; updates every 5m at most}. */
  public String describe() {
    return (matchers.isEmpty() ? "any alert" : matchers.stream().map(Matcher::toString).collect(Collectors.joining(", ")))
        + " -> " + (receivers.isEmpty() ? "no receiver" : String.join(", ", receivers))
        + (continueMatching ? ", and on to the next routes" : "")
        + (groupBy.isEmpty() ? "" : "; grouped by " + String.join(", ", groupBy) + ", waiting "
            + Durations.format(groupWait) + ", then every " + Durations.format(groupInterval))
        + "; updates every " + Durations.format(repeatInterval) + " at most";
  }
}
