package dev.knockwatch.ingest;

import dev.knockwatch.ingest.spi.Parsed;
import java.time.Instant;

/** What a parser's events become in the agent, time settled ({@link EventTime}), for the parsers' own tests. */
public final class Settled {

  private Settled() {}

  /** {@code parsed} with each event's time settled as the agent does it, read at {@code now}. */
  public static Parsed of(Parsed parsed, Instant now) {
    if (!(parsed instanceof Parsed.Events ev)) {
      return parsed;
    }
    return new Parsed.Events(ev.events().stream().map(e -> EventTime.settle(e, now, EventTime.DEFAULT_MAX_AHEAD, now,
        dev.knockwatch.events.ViolationEvent.TIME_FROM_INGEST, "test")).toList());
  }
}
