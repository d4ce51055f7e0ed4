package dev.knockwatch.events;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;

/**
 * A line the ingest agent could not turn into an event, as written to
 * {@code knockwatch.violations.rejected}: nothing is dropped silently. The line is kept
 * (sanitized, redacted and bounded) together with the reason and where it came from. {@code code}
 * is a short fixed word (a metric label); {@code reason} is the readable explanation.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RejectedLine(
    String file, long offset, String ingestHost, String code, String reason, String line, Instant rejectedAt) {

  /** The record key: source file + offset, unique per line. */
  public String key() {
    return file + ":" + offset;
  }
}
