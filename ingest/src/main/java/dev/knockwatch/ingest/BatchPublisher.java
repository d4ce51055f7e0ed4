package dev.knockwatch.ingest;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * Hands the reader's batches to the sink on a thread of its own, without waiting for Kafka's
 * answer, at most {@code maxInFlight} unanswered at once (so reading stays bounded when Kafka is
 * slow); commits the answered ones oldest first, each only once it and every batch before it were
 * taken. After a failure it drops what it is given until the reader, having gone back to the last
 * commit, resets it.
 *
 * <p>The reader's methods ({@link #submit}, {@link #commitAcknowledged}, {@link #drainAndReset})
 * are called from one thread; the answers come on the sink's.
 */
final class BatchPublisher implements Runnable {

  private final EventSink sink;
  private final int maxInFlight;
  private final Consumer<Batch> commit;
  private final BlockingQueue<Batch> queue = new LinkedBlockingQueue<>();
  /** Handed over and not yet committed, oldest first; the reader's alone. */
  private final Deque<Batch> pending = new ArrayDeque<>();
  /** A permit per batch that may be handed over and not yet answered. */
  private final Semaphore inFlight;
  /** The first failure since the last reset: what the log says. */
  private final AtomicReference<String> failure = new AtomicReference<>();

  /** {@code commit} makes a taken batch's positions durable and counts its events (on the reader's thread). */
  BatchPublisher(EventSink sink, int maxInFlight, Consumer<Batch> commit) {
    this.sink = sink;
    this.maxInFlight = maxInFlight;
    this.commit = commit;
    this.inFlight = new Semaphore(maxInFlight);
  }

  /** Hands a batch over, first waiting while {@code maxInFlight} are unanswered. */
  void submit(Batch batch) throws InterruptedException {
    inFlight.acquire();
    pending.add(batch);
    queue.put(batch);
  }

  /** Why a batch failed since the last reset, or null. */
  String failure() {
    return failure.get();
  }

  /** Nothing handed over is unanswered or uncommitted. */
  boolean idle() {
    return inFlight.availablePermits() == maxInFlight && pending.isEmpty();
  }

  /** Waits until every batch handed over is answered (published, failed or dropped). */
  void drain() throws InterruptedException {
    inFlight.acquire(maxInFlight);
    inFlight.release(maxInFlight);
  }

  /** After a failure: waits for the batches in flight to be answered, forgets them, and takes batches again. */
  void drainAndReset() throws InterruptedException {
    drain();
    pending.clear();
    failure.set(null);
  }

  /** Commits the batches Kafka took, oldest first, up to the first one not (yet) taken; returns how many. */
  int commitAcknowledged() {
    int n = 0;
    while (!pending.isEmpty() && pending.peek().done && pending.peek().failure == null) {
      commit.accept(pending.poll());
      n++;
    }
    return n;
  }

  @Override
  public void run() {
    try {
      while (true) {
        Batch batch = queue.take();
        if (failure.get() != null) {
          answered(batch, "dropped after an earlier batch failed", 0);
          continue;
        }
        long started = System.nanoTime();
        List<Outgoing> records = batch.records;
        batch.records = null;
        try {
          sink.send(records, e -> answered(batch, e == null ? null : message(e), started));
          if (batch.atEnd && queue.isEmpty()) {
            // Caught up: the producer would hold these last records for its linger, waiting for
            // more that are not coming, so send them now. Under a backlog batches fill instead.
            sink.flush();
          }
        } catch (EventSink.PublishException e) {
          // the flush's complaint: the batch answers for itself through its callback
        } catch (RuntimeException e) {
          answered(batch, message(e), started);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Kafka answered for the whole batch (on the sink's thread): null when it took all of it. */
  private void answered(Batch batch, String why, long started) {
    if (batch.answered.getAndSet(true)) {
      return;
    }
    if (why == null) {
      IngestMetrics.PUBLISH_SECONDS.observe((System.nanoTime() - started) / 1e9);
      batch.countPublished();
    } else {
      failure.compareAndSet(null, why);
      batch.failure = why;
    }
    batch.done = true;
    inFlight.release();
  }

  static String message(Exception e) {
    return e.getMessage() == null ? e.toString() : e.getMessage();
  }
}
