package dev.knockwatch.ingest;

import java.time.Instant;

/**
 * One line read from a sandbox log, with what its place in the log directory tells.
 *
 * @param file the path relative to the watched root, e.g. {@code ci-runner-1/xhfH….violations.jsonl}
 * @param offset the byte offset of the line's first byte in that file
 * @param text the line without its line terminator, decoded as UTF-8
 * @param agentIdFromPath the first directory under the root, when the file is one level down
 * @param commandIdFromPath the file name without its format suffix
 */
public record SourceLine(
    String file,
    long offset,
    String text,
    String agentIdFromPath,
    String commandIdFromPath,
    String ingestHost,
    Instant ingestedAt) {}
