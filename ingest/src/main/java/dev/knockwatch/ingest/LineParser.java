package dev.knockwatch.ingest;

/** Turns one line of one log format into events; never throws on bad input, rejects it instead. */
@FunctionalInterface
public interface LineParser {
  Parsed parse(SourceLine line);
}
