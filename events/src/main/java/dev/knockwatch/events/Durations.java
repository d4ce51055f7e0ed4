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
}
