package dev.knockwatch.ingest;

/** Turns one line of one log format into events; never throws on bad input, rejects it instead. */
@FunctionalInterface
public interface LineParser {
  Parsed parse(SourceLine line);

  /**
   * Whether this parser keeps nothing from line to line, so that several threads may parse one
   * file's lines with it at once (the agent then splits a long run of one file's lines). Not for
   * a parser that pairs lines (strace's unfinished calls, curl's transcripts) or keeps a cache.
   */
  default boolean linesStandAlone() {
    return false;
  }
}
