package dev.knockwatch.streams.api;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Glob;
import dev.knockwatch.events.ProbeAgents;
import dev.knockwatch.streams.timeline.TimelineIndex.AlertRow;
import dev.knockwatch.streams.timeline.TimelineIndex.CommandRow;
import java.time.Instant;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The query parameters of the list endpoints ({@code /api/v1/commands}, {@code /api/v1/alerts}):
 * {@code agent} and {@code rule} are globs, {@code role} is exact, {@code severity} a comma list,
 * {@code status} firing or resolved, {@code since} and {@code until} bound the last-seen time, and
 * {@code probes=false} leaves out knockwatch's own probe commands ({@link ProbeAgents}). A command
 * is in time when it was last active then, an alert when it was last seen then.
 */
record ListFilter(String status, Set<Alert.Severity> severities, Glob rule, Glob agent, String role, Instant since,
    Instant until, boolean probes) {

  /** Critical first, then page, warning, info, none; within a severity the most recently seen first. */
  static final Comparator<AlertRow> ALERT_ORDER = Comparator
      .comparing(AlertRow::severity, Comparator.nullsLast(Comparator.<Alert.Severity>reverseOrder()))
      .thenComparing(AlertRow::lastSeen, Comparator.nullsLast(Comparator.<Instant>reverseOrder()));

  /** The most recently active first. */
  static final Comparator<CommandRow> COMMAND_ORDER =
      Comparator.comparing(CommandRow::lastActive, Comparator.nullsLast(Comparator.<Instant>reverseOrder()));

  static ListFilter of(Map<String, String> q) {
    String status = q.get("status");
    if (status != null && !status.equals("firing") && !status.equals("resolved")) {
      throw new Answers.BadRequest("status is firing or resolved");
    }
    Set<Alert.Severity> severities = EnumSet.noneOf(Alert.Severity.class);
    if (q.get("severity") != null && !q.get("severity").isEmpty()) {
      for (String s : q.get("severity").split(",")) {
        try {
          severities.add(Alert.Severity.valueOf(s.trim().toUpperCase(Locale.ROOT)));
        } catch (IllegalArgumentException e) {
          throw new Answers.BadRequest("severity is a comma list of info, warning, page, critical");
        }
      }
    }
    String probes = q.getOrDefault("probes", "true");
    if (!probes.equals("true") && !probes.equals("false")) {
      throw new Answers.BadRequest("probes is true or false");
    }
    return new ListFilter(status, severities, glob(q.get("rule")), glob(q.get("agent")), blankToNull(q.get("role")),
        instant(q, "since"), instant(q, "until"), probes.equals("true"));
  }

  /** The agent asked for when it is one name, not a pattern: its own index range answers. */
  String exactAgent() {
    return agent == null || agent.text().contains("*") || agent.text().contains("?") ? null : agent.text();
  }

  /** {@code since} after {@code until}: nothing can pass (and no store is asked for a reversed range). */
  boolean emptyRange() {
    return since != null && until != null && since.isAfter(until);
  }

  /** The statuses asked for: firing first. */
  boolean[] firing() {
    return status == null ? new boolean[] {true, false} : new boolean[] {status.equals("firing")};
  }

  /** Whether the command's agent, role and last activity pass. */
  boolean command(CommandRow c) {
    return agentRolePass(c.agentId(), c.role()) && within(c.lastActive());
  }

  /** Whether an alert passes: its command's agent and role, and its own status, severity, rule and last seen. */
  boolean alert(AlertRow a) {
    return agentRolePass(a.agentId(), a.role())
        && (status == null || a.status() != null && a.status().name().equalsIgnoreCase(status))
        && (severities.isEmpty() || severities.contains(a.severity()))
        && (rule == null || a.rule() != null && rule.matches(a.rule()))
        && within(a.lastSeen());
  }

  private boolean agentRolePass(String agentId, String agentRole) {
    return (agent == null || agentId != null && agent.matches(agentId))
        && (role == null || role.equals(agentRole))
        && (probes || !ProbeAgents.is(agentId));
  }

  private boolean within(Instant t) {
    return (since == null || t != null && !t.isBefore(since)) && (until == null || t != null && !t.isAfter(until));
  }

  private static Glob glob(String v) {
    return v == null || v.isEmpty() ? null : Glob.of(v);
  }

  private static String blankToNull(String v) {
    return v == null || v.isEmpty() ? null : v;
  }

  private static Instant instant(Map<String, String> q, String name) {
    String v = q.get(name);
    if (v == null || v.isEmpty()) {
      return null;
    }
    try {
      return Instant.parse(v);
    } catch (RuntimeException e) {
      throw new Answers.BadRequest(name + " is an ISO-8601 instant, e.g. 2026-11-30T01:00:00Z");
    }
  }
}
