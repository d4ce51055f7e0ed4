package dev.knockwatch.notify.pipeline;

import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.Comparator;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One receiver's queue and its own thread: the retry and send stages. A receiver that is down
 * holds up only its own notifications. Each is tried until delivered, refused for good (a 4xx
 * other than 429), or {@link Backoff#giveUpAfter()} has passed; messages are spaced at least
 * {@code minInterval} apart (Slack's rate limit). The queue is taken most severe first, then
 * oldest: a new page does not wait behind a flood of warnings (an alert's own firing, update and
 * resolution keep their order: each ranks no higher than the one before).
 */
public final class ReceiverQueue implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ReceiverQueue.class);

  /**
   * A notification to send, and who to tell how it went. {@code ref} is asked right before the
   * send: an earlier notification of the same alert, queued before this one, has its ref by then.
   * {@code intent} records the send on the notification log before its first try.
   */
  public record Task(Notification notification, Supplier<String> ref, Consumer<Notification> intent,
                     Consumer<Notifier.Result> done) {
    public Task(Notification notification, Consumer<Notifier.Result> done) {
      this(notification, notification::ref, n -> { }, done);
    }
  }

  private final Notifier notifier;
  private final Duration minInterval;
  private final Backoff backoff;
  private final BlockingQueue<Queued> queue = new PriorityBlockingQueue<>(64,
      Comparator.comparingInt(Queued::rank).reversed().thenComparingLong(Queued::seq));
  private final AtomicLong seq = new AtomicLong();
  private final Random random = new Random();
  private final Thread thread;
  private final Object lock = new Object();
  private volatile boolean running = true;
  private boolean sending;
  private long lastSendNanos;

  public ReceiverQueue(Notifier notifier, Duration minInterval, Backoff backoff) {
    this.notifier = notifier;
    this.minInterval = minInterval;
    this.backoff = backoff;
    this.thread = new Thread(this::run, "knockwatch-notify-" + notifier.name());
    this.thread.setDaemon(true);
    this.thread.start();
  }

  /** A task in the queue: its rank (severity, then firing over update over resolution) and its arrival. */
  private record Queued(Task task, int rank, long seq) {}

  static int rank(Notification n) {
    int severity = n.alerts().stream().mapToInt(a -> a.severity().ordinal()).max().orElse(0);
    return severity * 3 + (2 - n.event().ordinal());
  }

  public void submit(Task task) {
    queue.add(new Queued(task, rank(task.notification()), seq.getAndIncrement()));
    NotifyMetrics.QUEUE.labels(notifier.name()).set(queue.size());
  }

  private void run() {
    while (running) {
      Task task;
      try {
        task = queue.take().task();
      } catch (InterruptedException e) {
        return;
      }
      NotifyMetrics.QUEUE.labels(notifier.name()).set(queue.size());
      Notifier.Result result;
      try {
        Notification n = task.notification().withRef(task.ref().get());
        try {
          task.intent().accept(n);
        } catch (RuntimeException e) {
          // a page matters more than knowing, after a crash, that it went: send it anyway
          log.warn("receiver {}: the intent to send {} is not on the log ({}); sending anyway", notifier.name(), n.key(),
              e.getMessage());
        }
        result = deliver(n);
      } catch (InterruptedException e) {
        return; // closing: the task is not done, so its alert's offset is not committed
      }
      if (result == null) {
        return; // closing after a failed try: not done either, so it is tried again after a restart
      }
      task.done().accept(result);
    }
  }

  /** The result, or null when the queue closed between tries. */
  private Notifier.Result deliver(Notification n) throws InterruptedException {
    long start = System.nanoTime();
    long giveUpAt = start + backoff.giveUpAfter().toNanos();
    for (int attempt = 0; ; attempt++) {
      pace();
      Notifier.Result r = send(n);
      if (r == null) {
        return null;
      }
      if (r.delivered()) {
        NotifyMetrics.LATENCY.labels(notifier.name()).observe((System.nanoTime() - start) / 1e9);
        return r;
      }
      Duration wait = backoff.delay(attempt, r.retryAfter(), random);
      if (!r.retryable() || System.nanoTime() + wait.toNanos() > giveUpAt) {
        log.warn("receiver {} gave up on {} after {} attempt(s): {}", notifier.name(), n.key(), attempt + 1, r.detail());
        return r;
      }
      if (!running) {
        return null;
      }
      NotifyMetrics.NOTIFICATIONS.labels(notifier.name(), "retried").inc();
      Thread.sleep(wait.toMillis());
    }
  }

  /**
   * One try, never interrupted by {@link #close}: a message the receiver took while the notifier
   * was stopping is recorded as sent, not sent again after the restart. Null when closed before.
   */
  private Notifier.Result send(Notification n) {
    synchronized (lock) {
      if (!running) {
        return null;
      }
      sending = true;
    }
    try {
      return notifier.notify(n);
    } catch (RuntimeException e) {
      return Notifier.Result.failed(false, e.getClass().getSimpleName());
    } finally {
      synchronized (lock) {
        sending = false;
      }
    }
  }

  private void pace() throws InterruptedException {
    long wait = lastSendNanos + minInterval.toNanos() - System.nanoTime();
    if (lastSendNanos != 0 && wait > 0) {
      Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
    }
    lastSendNanos = System.nanoTime();
  }

  /** Stops after the try in progress, if any (waiting up to 15 s for it); queued tasks stay undone. */
  @Override
  public void close() {
    synchronized (lock) {
      running = false;
      if (!sending) {
        thread.interrupt();
      }
    }
    try {
      thread.join(15_000);
      if (thread.isAlive()) {
        thread.interrupt();
        thread.join(5_000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
