package dev.knockwatch.events;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;
import java.util.Map;
import java.util.Set;

/**
 * A silence, the value on {@code knockwatch.silences} (keyed by {@code id}): while
 * {@code startsAt <= now < endsAt}, notifications of the alerts it matches are recorded as
 * silenced instead of sent. Each matcher names an alert field ({@code rule}, {@code commandId},
 * {@code agentId}, {@code role}, {@code host}) and a value, exact or a glob ({@code *}, {@code ?});
 * an alert must satisfy all of them. Expiring a silence writes it again with {@code endsAt} now,
 * so it stops muting by itself and stays listed.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Silence(String id, Map<String, String> matchers, Instant startsAt, Instant endsAt, String createdBy,
                      String comment) {

  public static final Set<String> FIELDS = Set.of("rule", "commandId", "agentId", "role", "host");

  public boolean activeAt(Instant now) {
    return !now.isBefore(startsAt) && now.isBefore(endsAt);
  }

  public boolean matches(Alert a) {
    for (Map.Entry<String, String> m : matchers.entrySet()) {
      String value = switch (m.getKey()) {
        case "rule" -> a.rule();
        case "commandId" -> a.commandId();
        case "agentId" -> a.agentId();
        case "role" -> a.role();
        case "host" -> a.host();
        default -> null;
      };
      if (value == null || !Glob.of(m.getValue()).matches(value)) {
        return false;
      }
    }
    return !matchers.isEmpty();
  }

  /** This silence, ended at {@code now}. */
  public Silence expiredAt(Instant now) {
    return new Silence(id, matchers, startsAt, now.isBefore(endsAt) ? now : endsAt, createdBy, comment);
  }
}
