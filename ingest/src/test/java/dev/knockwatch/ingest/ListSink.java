package dev.knockwatch.ingest;

import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.ViolationEvent;
import java.util.ArrayList;
import java.util.List;

/** Keeps what it is given; fails its next flush when told to. */
public final class ListSink implements EventSink {
  public final List<ViolationEvent> events = new ArrayList<>();
  public final List<RejectedLine> rejected = new ArrayList<>();
  private final List<ViolationEvent> pending = new ArrayList<>();
  public boolean failNextFlush;

  @Override
  public void publish(ViolationEvent event) {
    pending.add(event);
  }

  @Override
  public void reject(RejectedLine line) {
    rejected.add(line);
  }

  @Override
  public void flush() throws PublishException {
    if (failNextFlush) {
      failNextFlush = false;
      pending.clear();
      throw new PublishException("broker down", null);
    }
    events.addAll(pending);
    pending.clear();
  }

  @Override
  public void close() {}
}
