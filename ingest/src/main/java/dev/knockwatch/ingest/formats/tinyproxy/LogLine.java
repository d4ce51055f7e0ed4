package dev.knockwatch.ingest.formats.tinyproxy;

import dev.knockwatch.ingest.spi.SourceLine;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One line of tinyproxy's {@code LogFile} (1.11.1, {@code src/log.c}, {@code log_message}):
 * {@code LEVEL Mmm dd hh:mm:ss.mmm [PID]: MESSAGE}, the level padded to nine characters, the time
 * the host's local time with no year and no zone, the PID the process's (every connection's thread
 * writes the same one). tinyproxy cuts a line at 798 bytes and always ends it with a newline.
 *
 * @param at when, in the year that puts it no later than a day after ingest read it; the
 *     unreadable-time mark when the date is none
 */
record LogLine(String level, Instant at, long pid, String message) {

  private static final Pattern HEAD = Pattern.compile(
      "^(CRITICAL|ERROR|WARNING|NOTICE|INFO|DEBUG|CONNECT) +([A-Z][a-z]{2} [0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2})\\.([0-9]{3})"
          + " \\[([0-9]{1,10})\\]: ");
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("MMM dd HH:mm:ss yyyy", Locale.ROOT);

  /** The line, or null when it is no line of tinyproxy's log file. */
  static LogLine of(String text, ZoneId zone, Instant now) {
    Matcher m = HEAD.matcher(text);
    if (!m.find()) {
      return null;
    }
    return new LogLine(m.group(1), time(m.group(2), m.group(3), zone, now), Long.parseLong(m.group(4)),
        text.substring(m.end()));
  }

  private static Instant time(String day, String millis, ZoneId zone, Instant now) {
    int year = ZonedDateTime.ofInstant(now, zone).getYear();
    try {
      Instant at = LocalDateTime.parse(day + " " + year, TIME).atZone(zone).toInstant();
      if (at.isAfter(now.plusSeconds(86_400))) {
        at = LocalDateTime.parse(day + " " + (year - 1), TIME).atZone(zone).toInstant();
      }
      return at.plusMillis(Integer.parseInt(millis));
    } catch (DateTimeException e) {
      return SourceLine.UNREADABLE_TIME;
    }
  }
}
