package dev.knockwatch.ingest.tail;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

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
                         boolean binary, Instant fileModifiedAt, String idName) {

  /**
   * The line of {@code length} bytes at {@code from}, read at {@code [start, end)} of {@code file}:
   * a "\r" before its newline dropped, decoded as UTF-8, and told whether it held bytes that are
   * not UTF-8 and whether it is text at all.
   */
  static TailedLine decode(String file, long start, long end, byte[] bytes, int from, int length, boolean cut,
      Instant modified, String idName) {
    int len = length > 0 && bytes[from + length - 1] == '\r' ? length - 1 : length;
    String text = new String(bytes, from, len, StandardCharsets.UTF_8);
    boolean invalid = Bytes.invalidUtf8(bytes, from, len, text);
    return new TailedLine(file, start, end, text, cut, invalid, Bytes.binary(bytes, from, from + len, text.length()),
        modified, idName);
  }
}
