package dev.knockwatch.ingest.spi;

/** Turns one line of one log format into events; never throws on bad input, rejects it instead. */
@FunctionalInterface
public interface LineParser {
  Parsed parse(SourceLine line);

  /**
   * A line of nothing but white space: a counted skip, unless the format gives such a line a
   * meaning (the end of a raw HTTP response's headers).
   */
  default Parsed blank(SourceLine line) {
    return Parsed.skipped("blank");
  }

  /** Whether a refusal is half read, waiting for a line that may never come (a raw answer's body). */
  default boolean pending() {
    return false;
  }

  /**
   * The file has gone quiet (or ended, in {@code parse} and {@code replay}) while {@link #pending()}:
   * the half-read refusal, with what is known of it. An agent that cuts its own log after a
   * refusal's headers must not make the refusal vanish.
   */
  default Parsed end() {
    return Parsed.skipped("context");
  }

  /**
   * Whether this parser keeps nothing from line to line, so that several threads may parse one
   * file's lines with it at once (the agent then splits a long run of one file's lines). Not for
   * a parser that pairs lines (strace's unfinished calls, curl's transcripts) or keeps a cache.
   */
  default boolean linesStandAlone() {
    return false;
  }
}
