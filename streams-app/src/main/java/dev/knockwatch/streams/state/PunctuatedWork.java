package dev.knockwatch.streams.state;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Work a processor does a batch at a time on short wall-clock punctuations (building an index): while
 * any is under way, the stream threads keep their short turns, which the punctuations ride on.
 */
public final class PunctuatedWork {

  private static final AtomicInteger UNDER_WAY = new AtomicInteger();

  private PunctuatedWork() {}

  /** Such work begins; {@link #done} once when it ends. */
  public static void begin() {
    UNDER_WAY.incrementAndGet();
  }

  public static void done() {
    UNDER_WAY.decrementAndGet();
  }

  public static boolean underWay() {
    return UNDER_WAY.get() > 0;
  }
}
