package dev.knockwatch.ingest;

import dev.knockwatch.events.Hashes;


/**
 * Stable event ids: where the line stands, so a line read twice after a restart yields the same
 * id and downstream can tell the duplicate. 32 hex digits: the first 16 are SHA-256 of the file
 * (relative to the watched root), hashed once per file; the last 16 are the line's byte offset
 * and the event's index within the line. Two lines of one file never share an id; two files
 * share a prefix with odds of 2^-64.
 */
public final class EventIds {

  private static final long MAX_OFFSET = (1L << 48) - 1;
  private static final int MAX_INDEX = 0xffff;

  /** Lines of one file arrive together: one file's prefix per thread spares a hash per line. */
  private static final ThreadLocal<String[]> LAST_FILE = ThreadLocal.withInitial(() -> new String[2]);

  private EventIds() {}

  public static String of(String file, long offset, int index) {
    if (offset < 0 || offset > MAX_OFFSET || index < 0 || index > MAX_INDEX) {
      return Hashes.sha256Hex(file + "\u0000" + offset + "\u0000" + index, 16);
    }
    return filePrefix(file) + hex(offset << 16 | index);
  }

  private static String filePrefix(String file) {
    String[] last = LAST_FILE.get();
    if (!file.equals(last[0])) {
      last[0] = file;
      last[1] = Hashes.sha256Hex(file, 8);
    }
    return last[1];
  }

  private static String hex(long v) {
    char[] c = new char[16];
    for (int i = 15; i >= 0; i--) {
      c[i] = Character.forDigit((int) (v & 0xf), 16);
      v >>>= 4;
    }
    return new String(c);
  }
}
