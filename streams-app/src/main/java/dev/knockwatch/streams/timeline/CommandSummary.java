package dev.knockwatch.streams.timeline;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.count.DistinctCount;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the timeline knows of one command besides its events: who ran it, when, what it was
 * refused (counts per target, reason and source, each bounded), and the alerts it raised with
 * their last status. {@code events} counts every event; the store keeps the first and the last
 * {@link TimelineProcessor#KEEP} of them.
 *
 * <p>Bounded whatever the agent writes (docs/RELIABILITY.md): at most {@value #MAX_KEYS} targets
 * and reasons by name, each cut to {@value #MAX_KEY_CHARS} characters, the rest counted under
 * {@value #OTHERS}; {@code distinctTargets} says how many targets there were in all (exact while
 * none is under {@value #OTHERS}, else estimated by {@code targetSketch}, 1 KiB, made only then); at most
 * {@value #MAX_ALERTS} alerts, the oldest resolved one giving way first, each summary cut to
 * {@value #MAX_SUMMARY_CHARS} characters.
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
    Map<String, AlertBrief> alerts,
    Long distinctTargets,
    DistinctCount targetSketch) {

  /** How many distinct targets and reasons are kept by name; the rest count under {@value #OTHERS}. */
  public static final int MAX_KEYS = 100;
  public static final int MAX_KEY_CHARS = 256;
  public static final int MAX_ALERTS = 32;
  public static final int MAX_SUMMARY_CHARS = 512;
  public static final String OTHERS = "(others)";

  /**
   * An alert of the command, as last written, with its rule's runbook and tags when it has them;
   * {@code shadow} when its rule is in shadow mode (raised and shown, never notified).
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record AlertBrief(String rule, Alert.Severity severity, Alert.Status status, long count, Instant firstSeen,
                           Instant lastSeen, String summary, String runbook, List<String> tags, Boolean shadow) {}

  static CommandSummary empty(String commandId) {
    return new CommandSummary(commandId, null, null, null, null, 0, new LinkedHashMap<>(), new LinkedHashMap<>(),
        new LinkedHashMap<>(), new LinkedHashMap<>(), null, null);
  }

  CommandSummary with(ViolationEvent e, String role, Instant at) {
    Map<String, Long> t = new LinkedHashMap<>(targets);
    Map<String, Long> r = new LinkedHashMap<>(reasons);
    Map<String, Long> s = new LinkedHashMap<>(sources);
    String target = e.host() != null ? (e.port() == null ? e.host() : e.host() + ":" + e.port()) : e.path();
    DistinctCount sketch = targetSketch;
    if (target != null) {
      String name = Sanitize.text(target, MAX_KEY_CHARS);
      count(t, name);
      sketch = DistinctCount.of(sketch == null ? null : sketch.copy(), t, OTHERS, name);
    }
    if (e.reason() != null) {
      count(r, e.reason());
    }
    if (e.source() != null) {
      s.merge(e.source(), 1L, Long::sum);
    }
    return new CommandSummary(commandId, agentId != null ? agentId : e.agentId(), role != null ? role : this.role,
        firstSeen == null || at.isBefore(firstSeen) ? at : firstSeen, lastSeen == null || at.isAfter(lastSeen) ? at : lastSeen,
        events + 1, t, r, s, alerts, t.isEmpty() ? null : DistinctCount.count(sketch, t, OTHERS), sketch);
  }

  CommandSummary with(Alert a) {
    Map<String, AlertBrief> al = new LinkedHashMap<>(alerts);
    if (!al.containsKey(a.fingerprint()) && al.size() >= MAX_ALERTS) {
      String gone = al.entrySet().stream().filter(x -> x.getValue().status() == Alert.Status.RESOLVED)
          .map(Map.Entry::getKey).findFirst().orElse(al.keySet().iterator().next());
      al.remove(gone);
    }
    al.put(a.fingerprint(), new AlertBrief(a.rule(), a.severity(), a.status(), a.count(), a.firstSeen(), a.lastSeen(),
        Sanitize.text(a.summary(), MAX_SUMMARY_CHARS), a.meta() == null ? null : a.meta().runbook(),
        a.meta() == null || a.meta().tags() == null || a.meta().tags().isEmpty() ? null : a.meta().tags(),
        Boolean.TRUE.equals(a.shadow()) ? Boolean.TRUE : null));
    return new CommandSummary(commandId, agentId != null ? agentId : a.agentId(), a.role() != null ? a.role() : role,
        firstSeen, lastSeen, events, targets, reasons, sources, al, distinctTargets, targetSketch);
  }

  private static void count(Map<String, Long> m, String raw) {
    String key = Sanitize.text(raw, MAX_KEY_CHARS);
    m.merge(m.containsKey(key) || m.size() < MAX_KEYS ? key : OTHERS, 1L, Long::sum);
  }
}
