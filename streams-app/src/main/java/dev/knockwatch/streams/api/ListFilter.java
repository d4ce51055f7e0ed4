package dev.knockwatch.streams.api;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Glob;
import dev.knockwatch.events.ProbeAgents;
import dev.knockwatch.streams.timeline.CommandSummary;
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
 * {@code probes=false} leaves out knockwatch's own probe commands ({@link ProbeAgents}).
 */
record ListFilter(String status, Set<Alert.Severity> severities, Glob rule, Glob agent, String role, Instant since,
    Instant until, boolean probes) {

  /** Critical first, then page, warning, info; within a severity the most recently seen first. */
  static final Comparator<JsonNode> ALERT_ORDER = Comparator
      .comparingInt((JsonNode a) -> -rank(a.path("severity").asText()))
      .thenComparing((JsonNode a) -> a.path("lastSeen").asText(""), Comparator.reverseOrder());

  static ListFilter of(Map<String, String> q) {
    String status = q.get("status");
    if (status != null && !status.equals("firing") && !status.equals("resolved")) {
      throw new QueryApi.BadRequest("status is firing or resolved");
    }
    Set<Alert.Severity> severities = EnumSet.noneOf(Alert.Severity.class);
    if (q.get("severity") != null && !q.get("severity").isEmpty()) {
      for (String s : q.get("severity").split(",")) {
        try {
          severities.add(Alert.Severity.valueOf(s.trim().toUpperCase(Locale.ROOT)));
        } catch (IllegalArgumentException e) {
          throw new QueryApi.BadRequest("severity is a comma list of info, warning, page, critical");
        }
      }
    }
    String probes = q.getOrDefault("probes", "true");
    if (!probes.equals("true") && !probes.equals("false")) {
      throw new QueryApi.BadRequest("probes is true or false");
    }
    return new ListFilter(status, severities, glob(q.get("rule")), glob(q.get("agent")), blankToNull(q.get("role")),
        instant(q, "since"), instant(q, "until"), probes.equals("true"));
  }

  /** Whether the command's agent, role and last-seen time pass. */
  boolean command(CommandSummary s) {
    return (agent == null || s.agentId() != null && agent.matches(s.agentId()))
        && (role == null || role.equals(s.role()))
        && (probes || !ProbeAgents.is(s.agentId()))
        && within(s.lastSeen());
  }

  /** Whether an alert of the command passes: the command's agent and role, and its own status, severity, rule and last seen. */
  boolean alert(CommandSummary s, CommandSummary.AlertBrief a) {
    return (agent == null || s.agentId() != null && agent.matches(s.agentId()))
        && (role == null || role.equals(s.role()))
        && (probes || !ProbeAgents.is(s.agentId()))
        && (status == null || a.status() != null && a.status().name().equalsIgnoreCase(status))
        && (severities.isEmpty() || severities.contains(a.severity()))
        && (rule == null || a.rule() != null && rule.matches(a.rule()))
        && within(a.lastSeen());
  }

  private boolean within(Instant t) {
    return (since == null || t != null && !t.isBefore(since)) && (until == null || t != null && !t.isAfter(until));
  }

  private static int rank(String severity) {
    return switch (severity) {
      case "critical" -> 4;
      case "page" -> 3;
      case "warning" -> 2;
      case "info" -> 1;
      default -> 0;
    };
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
      throw new QueryApi.BadRequest(name + " is an ISO-8601 instant, e.g. 2026-11-30T01:00:00Z");
    }
  }
}
