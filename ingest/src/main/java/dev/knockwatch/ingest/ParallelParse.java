package dev.knockwatch.ingest;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.ToIntFunction;

/**
 * Runs one poll's parse work on the reader's thread and helper threads: every thread takes the
 * next piece from one shared list, longest first, until none is left, so none waits while another
 * has pieces to go (a fixed share each left the reader waiting for a helper). What a helper throws
 * is thrown on the reader's thread, as if it had parsed the lines itself.
 */
final class ParallelParse implements AutoCloseable {

  private final int threads;
  private final ExecutorService helpers;
  /** Calls that more than one thread worked on so far (only the reader writes it). */
  private volatile long shared;

  /** {@code threads} counts the caller: 1 parses on the caller alone. */
  ParallelParse(int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException("parse threads must be at least 1, not " + threads);
    }
    this.threads = threads;
    AtomicInteger n = new AtomicInteger();
    this.helpers = threads == 1 ? null : Executors.newFixedThreadPool(threads - 1, r -> {
      Thread t = new Thread(r, "knockwatch-ingest-parse-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  /** True when there are helper threads to share work with. */
  boolean shares() {
    return helpers != null;
  }

  long sharedCalls() {
    return shared;
  }

  /**
   * Runs {@code work} on every piece and returns when all are done: on the caller alone when
   * there are no helpers or {@code alone} says so, else on every thread, longest piece first.
   */
  <T> void forEach(List<T> pieces, ToIntFunction<T> size, boolean alone, Consumer<T> work) {
    if (helpers == null || alone || pieces.size() < 2) {
      pieces.forEach(work);
      return;
    }
    List<T> order = new ArrayList<>(pieces);
    order.sort(Comparator.comparingInt(size).reversed());
    AtomicInteger next = new AtomicInteger();
    Runnable take = () -> {
      for (int i = next.getAndIncrement(); i < order.size(); i = next.getAndIncrement()) {
        work.accept(order.get(i));
      }
    };
    shared++;
    List<Future<?>> helped = new ArrayList<>();
    for (int t = 1; t < threads; t++) {
      helped.add(helpers.submit(take));
    }
    take.run();
    for (Future<?> f : helped) {
      joined(f);
    }
  }

  private static void joined(Future<?> f) {
    try {
      f.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while parsing", e);
    }
  }

  @Override
  public void close() {
    if (helpers != null) {
      helpers.shutdownNow();
    }
  }
}
