package dev.knockwatch.ingest;

import dev.knockwatch.events.ViolationEvent;
import java.util.List;

/** What a parser made of one line: the events it yields, or why it yields none. */
public sealed interface Parsed {

  record Events(List<ViolationEvent> events) implements Parsed {}

  record Rejected(Rejection code, String reason) implements Parsed {}

  /**
   * A line that is fine but is no refusal (an allowed request, a call that succeeded, glibc's
   * nscd probe): counted by {@code reason}, a fixed word, never published.
   */
  record Skipped(String reason) implements Parsed {}

  static Parsed of(ViolationEvent event) {
    return new Events(List.of(event));
  }

  static Parsed skipped(String reason) {
    return new Skipped(reason);
  }

  static Parsed rejected(Rejection code, String reason) {
    return new Rejected(code, reason);
  }
}
