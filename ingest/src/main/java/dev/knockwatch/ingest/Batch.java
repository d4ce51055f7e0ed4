package dev.knockwatch.ingest;

import dev.knockwatch.ingest.tail.FileTailer;
import io.prometheus.client.Counter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What one poll read, parsed: the records to publish, in the order of their lines, and where each
 * tailer stood after it. {@code failure} and then {@code done} are set when Kafka has answered for
 * all of it.
 */
final class Batch {
  /** Let go once handed to the sink: the events then live only as the producer's bytes. */
  List<Outgoing> records;
  final List<FileTailer.Mark> marks;
  final int lines;
  /** The reader found the end of every file: nothing more to batch with these records. */
  final boolean atEnd;
  /** Each meter's events in this batch (a count in an array: no boxing per line). */
  final Map<Counter.Child, int[]> published;
  final AtomicBoolean answered = new AtomicBoolean();
  volatile String failure;
  volatile boolean done;

  /** Kafka took the batch: its events count as published (at the ack, not when the positions are committed). */
  void countPublished() {
    published.forEach((meter, n) -> meter.inc(n[0]));
  }

  Batch(List<Outgoing> records, List<FileTailer.Mark> marks, int lines, boolean atEnd, Map<Counter.Child, int[]> published) {
    this.records = records;
    this.marks = marks;
    this.lines = lines;
    this.atEnd = atEnd;
    this.published = published;
  }
}
