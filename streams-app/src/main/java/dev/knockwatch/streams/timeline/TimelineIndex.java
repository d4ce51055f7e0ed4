package dev.knockwatch.streams.timeline;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectWriter;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.ProbeAgents;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The list endpoints' indexes, one store ({@value #STORE}) beside the commands, kept by the
 * {@link TimelineProcessor} as each command changes. Every key starts with a fixed-width time
 * written newest first, so a list reads a key range from its start and stops at its limit:
 * <pre>
 * c  TIME  commandId                          → CommandRow   (recent commands, by last activity)
 * a  agentId NUL  TIME  commandId             → CommandRow   (one agent's commands)
 * f|r  SEVERITY  TIME  commandId NUL fingerprint → AlertRow  (firing or resolved alerts, critical first)
 * </pre>
 * TIME is {@code Long.MAX_VALUE} minus the epoch milliseconds, in 19 digits; SEVERITY is 0 for
 * critical to 3 for info. A row repeats what its list shows, so a list never reads the commands
 * store. Keys hold agent-written text (the agent id): a reader checks each row it takes against
 * its filter, so a key that lands in another's range is never shown there; a key is stored as
 * UTF-8, so a lone surrogate in it is stored as {@code ?}, the same for its put and its delete.
 * {@value #BUILT} is set
 * once every command of the partition is indexed (a store from before the index is indexed in
 * batches, {@link TimelineProcessor}); until then the lists answer 503.
 */
public final class TimelineIndex {

  public static final String STORE = "timeline-index";
  public static final String BUILT = "~built";
  static final char COMMANDS = 'c';
  static final char AGENT = 'a';
  static final char FIRING = 'f';
  static final char RESOLVED = 'r';
  private static final int TIME_DIGITS = 19;

  private TimelineIndex() {}

  /** A command as the commands list shows it; {@code lastActive} is what it is ordered by. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record CommandRow(String commandId, String agentId, String role, long events, Instant lastSeen,
                           Instant lastActive, int alerts, boolean probe) {
    public static CommandRow of(CommandSummary s) {
      return new CommandRow(s.commandId(), s.agentId(), s.role(), s.events(), s.lastSeen(), TimelineIndex.lastActive(s),
          s.alerts().size(), ProbeAgents.is(s.agentId()));
    }
  }

  /** An alert as the alerts list shows it: the command's brief of it, with the command's agent and role. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record AlertRow(String fingerprint, String commandId, String agentId, String role, boolean probe, String rule,
                         Alert.Severity severity, Alert.Status status, long count, Instant firstSeen, Instant lastSeen,
                         String summary, String runbook, List<String> tags, Boolean shadow) {
    public static AlertRow of(CommandSummary s, String fingerprint, CommandSummary.AlertBrief a) {
      return new AlertRow(fingerprint, s.commandId(), s.agentId(), s.role(), ProbeAgents.is(s.agentId()), a.rule(),
          a.severity(), a.status(), a.count(), a.firstSeen(), a.lastSeen(), a.summary(), a.runbook(), a.tags(),
          a.shadow());
    }
  }

  /** When the command was last active: its last event, else its alerts' last sighting. */
  public static Instant lastActive(CommandSummary s) {
    if (s.lastSeen() != null) {
      return s.lastSeen();
    }
    return s.alerts().values().stream().map(CommandSummary.AlertBrief::lastSeen).filter(Objects::nonNull)
        .max(Instant::compareTo).orElse(null);
  }

  /** A time in 19 digits, the newest the smallest; none (or before 1970) counts as 1970. */
  static String time(Instant t) {
    long ms;
    if (t == null || t.isBefore(Instant.EPOCH)) {
      ms = 0;
    } else if (t.isAfter(Instant.ofEpochMilli(Long.MAX_VALUE))) {
      ms = Long.MAX_VALUE;
    } else {
      ms = t.toEpochMilli();
    }
    String digits = Long.toString(Long.MAX_VALUE - ms);
    return "0".repeat(TIME_DIGITS - digits.length()) + digits;
  }

  /** The prefix of an agent's commands. */
  public static String agentPrefix(String agentId) {
    return AGENT + agentId + '\u0000';
  }

  /** The prefix of the alerts of one status and severity (null severity: after info). */
  public static String alertPrefix(boolean firing, Alert.Severity severity) {
    int digit = severity == null ? 4 : Alert.Severity.values().length - 1 - severity.ordinal();
    return (firing ? FIRING : RESOLVED) + String.valueOf(digit);
  }

  public static String commandsPrefix() {
    return String.valueOf(COMMANDS);
  }

  /** The command id of a recent-commands key. */
  static String commandOf(String commandsKey) {
    return commandsKey.substring(1 + TIME_DIGITS);
  }

  /**
   * The inclusive key range of a prefix's entries last active in [since, until] (either open when
   * null): newest first from its start.
   */
  public static String[] range(String prefix, Instant since, Instant until) {
    String from = until == null ? prefix : prefix + time(until);
    String to = since == null || !since.isAfter(Instant.EPOCH) ? prefix + ':' : prefix + time(since.minusMillis(1));
    return new String[] {from, to};
  }

  /** Every index entry of a command (its alerts' only with {@code alertsToo}), key → row as JSON. */
  static Map<String, String> entries(CommandSummary s, boolean alertsToo) {
    Map<String, String> out = new LinkedHashMap<>();
    rows(s, alertsToo).forEach((key, row) -> out.put(key, write(row)));
    return out;
  }

  /** Every index entry of a command, key → row (a {@link CommandRow} or an {@link AlertRow}). */
  private static Map<String, Object> rows(CommandSummary s, boolean alertsToo) {
    Map<String, Object> out = new LinkedHashMap<>();
    CommandRow row = CommandRow.of(s);
    String time = time(row.lastActive());
    out.put(COMMANDS + time + s.commandId(), row);
    if (s.agentId() != null) {
      out.put(agentPrefix(s.agentId()) + time + s.commandId(), row);
    }
    if (alertsToo) {
      s.alerts().forEach((fp, a) -> out.put(alertPrefix(a.status() == Alert.Status.FIRING, a.severity())
          + time(a.lastSeen()) + s.commandId() + '\u0000' + fp, AlertRow.of(s, fp, a)));
    }
    return out;
  }

  /**
   * Moves a command's entries from what it was to what it is (either null: none), writing only
   * what changed (rows compared as records, only the ones put written as JSON); its alerts'
   * entries are looked at only when its alerts, agent or role changed.
   */
  public static void update(KeyValueStore<String, String> index, CommandSummary before, CommandSummary after) {
    boolean alertsToo = before == null || after == null || before.alerts() != after.alerts()
        || !Objects.equals(before.agentId(), after.agentId()) || !Objects.equals(before.role(), after.role());
    Map<String, Object> old = before == null ? Map.of() : rows(before, alertsToo);
    Map<String, Object> now = after == null ? Map.of() : rows(after, alertsToo);
    for (String key : old.keySet()) {
      if (!now.containsKey(key)) {
        index.delete(key);
      }
    }
    now.forEach((key, row) -> {
      if (!row.equals(old.get(key))) {
        index.put(key, write(row));
      }
    });
  }

  /** Rows in ASCII ({@code \\uXXXX} for the rest): a lone surrogate an agent wrote survives the store's UTF-8. */
  private static final ObjectWriter ROWS = Json.MAPPER.writer().with(JsonWriteFeature.ESCAPE_NON_ASCII);

  private static String write(Object row) {
    try {
      return ROWS.writeValueAsString(row);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }
}
