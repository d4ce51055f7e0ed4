package dev.knockwatch.ingest;

import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.ViolationEvent;
import java.util.List;
import java.util.function.Consumer;

/** Where the ingest agent puts what it read: events, and the lines it could not use. */
public interface EventSink extends AutoCloseable {

  void publish(ViolationEvent event);

  /**
   * What the running agent gives {@link #send} for an event: made on the thread that parsed the
   * line (one of a thread per core), so a sink's work on each event is spread over those threads
   * and the single publisher thread only hands batches over. The event itself by default.
   */
  default Outgoing prepare(ViolationEvent event) {
    return new Outgoing.Event(event);
  }

  void reject(RejectedLine rejected);

  /** Returns once everything handed over so far is safely stored; throws if any of it was not. */
  void flush() throws PublishException;

  /**
   * Hands over a batch of events (as {@link #prepare} made them) and rejected lines without
   * waiting: {@code done} is called once, with null when every record of it is safely stored,
   * else with why one was not (on any thread). This default publishes each record and flushes.
   */
  default void send(List<? extends Outgoing> records, Consumer<Exception> done) {
    try {
      for (Outgoing r : records) {
        if (r instanceof Outgoing.Event e) {
          publish(e.event());
        } else if (r instanceof Outgoing.Rejected rejected) {
          reject(rejected.line());
        } else {
          throw new IllegalArgumentException("a record another sink prepared: " + r.getClass().getSimpleName());
        }
      }
      flush();
    } catch (PublishException | RuntimeException e) {
      done.accept(e);
      return;
    }
    done.accept(null);
  }

  @Override
  void close();

  /** A batch did not reach its destination; its lines must be read again. */
  final class PublishException extends Exception {
    public PublishException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
