package dev.knockwatch.ingest;

import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.ViolationEvent;

/**
 * What ingest sends for one line: its event, or the line itself, rejected with why. A sink may
 * write an event ahead, on the thread that parsed its line ({@link EventSink#prepare}); the Kafka
 * sink's written form is its record ({@link KafkaEventSink.Prepared}).
 */
public sealed interface Outgoing permits Outgoing.Event, Outgoing.Rejected, KafkaEventSink.Prepared {

  /** An event as it was parsed. */
  record Event(ViolationEvent event) implements Outgoing {}

  /** A line that yields no event, and why (docs/TRUST.md: nothing read is dropped unsaid). */
  record Rejected(RejectedLine line) implements Outgoing {}
}
