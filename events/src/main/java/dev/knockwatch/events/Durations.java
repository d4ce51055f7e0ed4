package dev.knockwatch.events;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one way knockwatch reads a duration, in rules, receivers and on the command line: a count
 * and a unit ({@code 250ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 1d}) or ISO-8601
 * ({@code PT2H}). Each reader words its own error (a file and line, an option), so this only says
 * whether the text is one.
 */
public final class Durations {

  private static final Pattern UNIT = Pattern.compile("(\\d{1,18})(ms|s|m|h|d)");
  /** Counts of more digits than the pattern takes are spelled in ISO-8601. */
  private static final long MAX_COUNT = 1_000_000_000_000_000_000L;

  private Durations() {}

  /** The duration {@code text} spells, or empty: malformed, negative, or too large for a {@link Duration}. */
  public static Optional<Duration> parse(String text) {
    if (text == null) {
      return Optional.empty();
    }
    String t = text.strip();
    Matcher m = UNIT.matcher(t);
    try {
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        return Optional.of(switch (m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          case "h" -> Duration.ofHours(n);
          default -> Duration.ofDays(n);
        });
      }
      if (t.startsWith("P") || t.startsWith("p")) {
        Duration d = Duration.parse(t);
        return d.isNegative() ? Optional.empty() : Optional.of(d);
      }
    } catch (ArithmeticException | DateTimeParseException e) {
      // too large, or not ISO-8601 after all
    }
    return Optional.empty();
  }

  /**
   * {@code d} as {@link #parse} reads it, in the largest unit that spells it exactly
   * ({@code 30d}, {@code 2h}, {@code 90s}, {@code 250ms}), else ISO-8601.
   */
  public static String format(Duration d) {
    if (d.isNegative() || d.getNano() % 1_000_000 != 0 || d.getSeconds() > Long.MAX_VALUE / 1_000 - 1) {
      return d.toString(); // not whole milliseconds, or more of them than a long holds
    }
    long ms = d.toMillis();
    long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1_000L, 1L};
    String[] units = {"d", "h", "m", "s", "ms"};
    for (int i = 0; i < sizes.length; i++) {
      if (ms % sizes[i] == 0 && ms / sizes[i] < MAX_COUNT) {
        return ms / sizes[i] + units[i];
      }
    }
    return d.toString();
  }

  /** The wait after one more failure in a row: {@code first} after none ({@code wait} zero), then twice the last, at most {@code cap}. */
  public static Duration doubled(Duration wait, Duration first, Duration cap) {
    if (wait.isZero()) {
      return first;
    }
    Duration twice = wait.multipliedBy(2);
    return twice.compareTo(cap) <= 0 ? twice : cap;
  }
}
