package dev.knockwatch.cli;

import dev.knockwatch.events.Durations;
import java.time.Duration;

/** A duration given to an option, read as every duration is ({@link Durations}), longer than zero. */
final class DurationOption {

  private DurationOption() {}

  /** {@code 30m}, {@code 2h}, {@code 1d} or ISO-8601 ({@code PT2H}); a usage error naming {@code option} else. */
  static Duration parse(String text, String option) {
    Duration d = Durations.parse(text).orElseThrow(() ->
        new UsageException(option + " " + text + " is not a duration (e.g. 30m, 2h, 1d, PT2H)"));
    if (d.isZero()) {
      throw new UsageException(option + " " + text + " must be longer than zero");
    }
    return d;
  }
}
