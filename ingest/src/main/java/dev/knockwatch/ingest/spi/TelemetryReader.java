package dev.knockwatch.ingest.spi;

/**
 * Reads the OpenTelemetry log records of one exporter (an agent host's, through the OTLP
 * endpoint, or one file of them), in the order it sent them: a reader may keep what it learnt
 * from one record for the next (a call's decision for its result), bounded. Never throws on bad
 * input, rejects it instead.
 */
@FunctionalInterface
public interface TelemetryReader {

  /**
   * @param where the record's place: its id name (the same record gets the same ids however it
   *     came), its origin, and the agent its exporter is mapped to ({@link SourceLine#agentIdFromPath})
   */
  Parsed read(TelemetryRecord record, SourceLine where);
}
