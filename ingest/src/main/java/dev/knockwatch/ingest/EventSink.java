package dev.knockwatch.ingest;

import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.ViolationEvent;

/** Where the ingest agent puts what it read: events, and the lines it could not use. */
public interface EventSink extends AutoCloseable {

  void publish(ViolationEvent event);

  void reject(RejectedLine rejected);

  /** Returns once everything handed over so far is safely stored; throws if any of it was not. */
  void flush() throws PublishException;

  @Override
  void close();

  /** A batch did not reach its destination; its lines must be read again. */
  final class PublishException extends Exception {
    public PublishException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
