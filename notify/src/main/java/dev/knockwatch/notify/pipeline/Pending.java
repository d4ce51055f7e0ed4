package dev.knockwatch.notify.pipeline;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One alert record in flight: done once every receiver it was routed to has delivered, given up,
 * or skipped it. Its offset is committed only then (and after every record before it).
 */
public final class Pending {

  private final long offset;
  /** One for the dispatcher's own handling, plus one per receiver task. */
  private final AtomicInteger remaining = new AtomicInteger(1);

  public Pending(long offset) {
    this.offset = offset;
  }

  public long offset() {
    return offset;
  }

  public void add() {
    remaining.incrementAndGet();
  }

  public void done() {
    remaining.decrementAndGet();
  }

  public boolean isDone() {
    return remaining.get() <= 0;
  }
}
