package dev.knockwatch.ingest;

import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.SourceLine;
import java.time.Duration;
import java.time.Instant;

/**
 * The time an event is counted at. A line's time is a claim of whoever wrote it: one that is
 * missing, unreadable, outside 1970–9999, or further than a bound (default 5 minutes) ahead of the
 * ingest clock is replaced, the refusal kept, and the event says so ({@code timeSource}) and a
 * counter counts it by why. So no line can move stream time past the ingest clock plus the bound,
 * make detection count it in a window of the year 9999, or give an overflowing time downstream.
 */
public final class EventTime {

  public static final Duration DEFAULT_MAX_AHEAD = Duration.ofMinutes(5);
  private static final Instant EARLIEST = Instant.EPOCH;
  private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999999999Z");

  private EventTime() {}

  /**
   * {@code e} with a time detection can trust: its own when it may be, else {@code instead}
   * (labelled {@code insteadSource}: the ingest clock live, the file's modification time in replay).
   */
  static ViolationEvent settle(ViolationEvent e, Instant ingestedAt, Duration maxAhead, Instant instead,
      String insteadSource, String sourceLabel) {
    Instant t = e.observedAt();
    String why = t == null ? "missing"
        : t == SourceLine.UNREADABLE_TIME ? "unreadable"
        : t.isBefore(EARLIEST) || t.isAfter(LATEST) ? "out-of-range"
        : t.isAfter(ingestedAt.plus(maxAhead)) ? "ahead"
        : null;
    if (why == null) {
      return e;
    }
    IngestMetrics.TIMES_REPLACED.labels(sourceLabel, why).inc();
    return e.toBuilder().observedAt(instead).timeSource(insteadSource).build();
  }
}
