package dev.knockwatch.streams.timeline;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ViolationEvent;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the timeline knows of one command besides its events: who ran it, when, what it was
 * refused (counts per target, reason and source, each bounded), and the alerts it raised with
 * their last status. {@code events} counts every event; the store keeps the first and the last
 * {@link TimelineProcessor#KEEP} of them.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CommandSummary(
    String commandId,
    String agentId,
    String role,
    Instant firstSeen,
    Instant lastSeen,
    long events,
    Map<String, Long> targets,
    Map<String, Long> reasons,
    Map<String, Long> sources,
    Map<String, AlertBrief> alerts) {

  /** How many distinct targets and reasons are kept by name; the rest count under {@value #OTHERS}. */
  public static final int MAX_KEYS = 100;
  public static final String OTHERS = "(others)";

  /** An alert of the command, as last written. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record AlertBrief(String rule, Alert.Severity severity, Alert.Status status, long count, Instant firstSeen,
                           Instant lastSeen, String summary) {}

  static CommandSummary empty(String commandId) {
    return new CommandSummary(commandId, null, null, null, null, 0, new LinkedHashMap<>(), new LinkedHashMap<>(),
        new LinkedHashMap<>(), new LinkedHashMap<>());
  }

  CommandSummary with(ViolationEvent e, String role, Instant at) {
    Map<String, Long> t = new LinkedHashMap<>(targets);
    Map<String, Long> r = new LinkedHashMap<>(reasons);
    Map<String, Long> s = new LinkedHashMap<>(sources);
    String target = e.host() != null ? (e.port() == null ? e.host() : e.host() + ":" + e.port()) : e.path();
    if (target != null) {
      count(t, target);
    }
    if (e.reason() != null) {
      count(r, e.reason());
    }
    if (e.source() != null) {
      s.merge(e.source().wireName(), 1L, Long::sum);
    }
    return new CommandSummary(commandId, agentId != null ? agentId : e.agentId(), role != null ? role : this.role,
        firstSeen == null || at.isBefore(firstSeen) ? at : firstSeen, lastSeen == null || at.isAfter(lastSeen) ? at : lastSeen,
        events + 1, t, r, s, alerts);
  }

  CommandSummary with(Alert a) {
    Map<String, AlertBrief> al = new LinkedHashMap<>(alerts);
    al.put(a.fingerprint(), new AlertBrief(a.rule(), a.severity(), a.status(), a.count(), a.firstSeen(), a.lastSeen(),
        a.summary()));
    return new CommandSummary(commandId, agentId != null ? agentId : a.agentId(), a.role() != null ? a.role() : role,
        firstSeen, lastSeen, events, targets, reasons, sources, al);
  }

  private static void count(Map<String, Long> m, String key) {
    m.merge(m.containsKey(key) || m.size() < MAX_KEYS ? key : OTHERS, 1L, Long::sum);
  }
}
