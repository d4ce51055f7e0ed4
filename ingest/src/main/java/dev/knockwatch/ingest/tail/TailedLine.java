package dev.knockwatch.ingest.tail;

/**
 * One complete line of a tailed file.
 *
 * @param file path relative to the tailer's root, with '/' separators
 * @param offset byte offset of the line's first byte
 * @param end byte offset just past the line's terminator: where reading resumes
 * @param text the line, UTF-8 decoded, without "\n" or "\r\n"
 * @param truncated true when the line was longer than the tailer's bound: its start and its end are kept, the
 *     middle is left out (see {@link LineBuffer})
 * @param invalidUtf8 true when bytes that are not UTF-8 were replaced with U+FFFD
 * @param binary true when the line holds a NUL byte or is mostly control characters: not a log line
 * @param fileModifiedAt the file's modification time when the line was read (what replay gives a line without a time)
 * @param idName what the line's id is made from: {@code file}, or, for a file that was rotated to another name or came
 *     after a rotation, the name of its stream with its identity (the same line keeps its id under any name)
 */
public record TailedLine(String file, long offset, long end, String text, boolean truncated, boolean invalidUtf8,
                         boolean binary, java.time.Instant fileModifiedAt, String idName) {}
