package dev.knockwatch.notify.pipeline;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Silence;
import java.time.Instant;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * mute: why an alert goes to none of its receivers now, asked once an alert whatever its
 * receivers: a shadow-mode rule's alert is counted and never paged; an active silence that
 * matches it mutes it, and each receiver's notification is recorded as silenced (by which
 * silence); a firing alert that inhibits it ({@link Inhibition}) mutes it too, recorded as
 * inhibited (by which alert). Muting mutes the notification only: the alert is raised and kept.
 */
public final class Mute {

  public static final String SHADOW = "shadow";
  public static final String SILENCED = "silenced";
  public static final String INHIBITED = "inhibited";

  /**
   * Why an alert is muted: {@code outcome} is {@link #SHADOW}, {@link #SILENCED} or {@link #INHIBITED}; {@code detail}
   * what the notification log says (null: nothing is recorded, as for shadow mode).
   */
  public record Muted(String outcome, String detail) {}

  private final BiFunction<Alert, Instant, Optional<Silence>> silences;
  private final Inhibition inhibition;

  /** {@code silences}: the active silence that matches an alert at a time, if any ({@code Silences::muting}). */
  public Mute(BiFunction<Alert, Instant, Optional<Silence>> silences) {
    this(silences, new Inhibition(java.util.List.of()));
  }

  public Mute(BiFunction<Alert, Instant, Optional<Silence>> silences, Inhibition inhibition) {
    this.silences = silences;
    this.inhibition = inhibition;
  }

  public Optional<Muted> check(Alert alert, Instant now) {
    if (Boolean.TRUE.equals(alert.shadow())) {
      return Optional.of(new Muted(SHADOW, null));
    }
    Optional<Muted> silenced = silences.apply(alert, now).map(s -> new Muted(SILENCED, "silence " + s.id()));
    if (silenced.isPresent()) {
      return silenced;
    }
    return inhibition.of(alert).map(by -> new Muted(INHIBITED, "inhibited by " + by.source().rule() + " "
        + by.source().fingerprint()));
  }
}
