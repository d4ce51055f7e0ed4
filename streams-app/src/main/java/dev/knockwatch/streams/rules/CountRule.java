package dev.knockwatch.streams.rules;

import dev.knockwatch.events.Alert.Severity;
import java.time.Duration;

/**
 * A {@code count} rule: alert when one command is refused {@code threshold} times within one
 * {@code window} (tumbling, aligned to the epoch); records later than {@code grace} after their
 * window closed are not counted.
 */
public record CountRule(String id, Duration window, int threshold, Severity severity, Duration grace) {

  public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(5);
  public static final int DEFAULT_THRESHOLD = 5;
  public static final Duration DEFAULT_GRACE = Duration.ofMinutes(1);

  /** The rule {@code up} and {@code replay} use when the rules directory has no count rule. */
  public static CountRule defaultRule() {
    return new CountRule("persistent-retry", DEFAULT_WINDOW, DEFAULT_THRESHOLD, Severity.WARNING, DEFAULT_GRACE);
  }
}
