package dev.knockwatch.ingest.spi;

import dev.knockwatch.events.ViolationEvent;
import java.util.List;

/** What a parser made of one line: the events it yields, or why it yields none. */
public sealed interface Parsed {

  record Events(List<ViolationEvent> events) implements Parsed {}

  /**
   * {@code at}: when the line says it happened, where the parser read that before refusing it (else
   * null); {@code identity}: for a refusal whose wall's identity maps to no agent, that identity
   * ({@code netfilter uid=65534}), which its notice is keyed by instead of the line's directory.
   */
  record Rejected(Rejection code, String reason, java.time.Instant at, String identity) implements Parsed {
    public Rejected(Rejection code, String reason) {
      this(code, reason, null, null);
    }

    public Rejected(Rejection code, String reason, java.time.Instant at) {
      this(code, reason, at, null);
    }
  }

  /**
   * A line that is fine but is no refusal (an allowed request, a call that succeeded, glibc's
   * nscd probe): counted by {@code reason}, a fixed word, never published.
   */
  record Skipped(String reason) implements Parsed {}

  /**
   * A line that holds several records (an OTLP export: one request a line): each record's outcome,
   * with the record as text for the rejected line it may become.
   */
  record Several(List<Part> parts) implements Parsed {}

  /** One record's outcome, and the record as text ({@code Several}). */
  record Part(Parsed outcome, String record) {}

  static Parsed of(ViolationEvent event) {
    return new Events(List.of(event));
  }

  static Parsed skipped(String reason) {
    return new Skipped(reason);
  }

  static Parsed rejected(Rejection code, String reason) {
    return new Rejected(code, reason);
  }

  static Parsed rejected(Rejection code, String reason, java.time.Instant at) {
    return new Rejected(code, reason, at);
  }
}
