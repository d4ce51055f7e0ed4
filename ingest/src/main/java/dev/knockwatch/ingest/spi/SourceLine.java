package dev.knockwatch.ingest.spi;

import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import java.time.Instant;

/**
 * One line read from a sandbox log, with what its place in the log directory tells.
 *
 * @param file the path relative to the watched root, e.g. {@code ci-runner-1/xhfH….violations.jsonl}
 * @param offset the byte offset of the line's first byte in that file
 * @param text the line without its line terminator, decoded as UTF-8
 * @param agentIdFromPath the first directory under the root, when the file is one level down
 * @param commandIdFromPath the file name without its format suffix
 * @param idName what event ids are made from: {@code file}, or its stream's name when the file was rotated
 */
public record SourceLine(
    String file,
    long offset,
    String text,
    String agentIdFromPath,
    String commandIdFromPath,
    String ingestHost,
    Instant ingestedAt,
    String idName) {

  public SourceLine(String file, long offset, String text, String agentIdFromPath, String commandIdFromPath,
      String ingestHost, Instant ingestedAt) {
    this(file, offset, text, agentIdFromPath, commandIdFromPath, ingestHost, ingestedAt, file);
  }

  /**
   * An event of this line with what every parser sets alike: the stable event id, the origin,
   * the ingest time and the agent the path names. Parsers fill in the rest: observedAt only with
   * the line's own time ({@link SourceLine#UNREADABLE_TIME} for one they cannot read); the agent settles
   * what stands in for a missing one (ingest's {@code EventTime}). Parsers may override agentId.
   */
  public ViolationEvent.Builder newEvent() {
    return ViolationEvent.builder()
        .eventId(EventIds.of(idName, offset, 0))
        .agentId(agentIdFromPath == null ? null : Sanitize.text(agentIdFromPath, MAX_AGENT_CHARS))
        .ingestedAt(ingestedAt)
        .origin(new ViolationEvent.Origin(file, offset, ingestHost));
  }

  public static final int MAX_AGENT_CHARS = 128;

  /** What a parser sets {@code observedAt} to when the line has a time it cannot read. */
  public static final Instant UNREADABLE_TIME = Instant.MIN;
}
