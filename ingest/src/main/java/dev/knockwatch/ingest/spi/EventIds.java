package dev.knockwatch.ingest.spi;

import dev.knockwatch.events.Hashes;
import java.nio.charset.StandardCharsets;


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

  private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.ISO_8859_1);

  /** Lines of one file arrive together: one file's prefix per thread spares a hash per line. */
  private static final ThreadLocal<Object[]> LAST_FILE = ThreadLocal.withInitial(() -> new Object[2]);

  private EventIds() {}

  public static String of(String file, long offset, int index) {
    if (offset < 0 || offset > MAX_OFFSET || index < 0 || index > MAX_INDEX) {
      return Hashes.sha256Hex(file + "\u0000" + offset + "\u0000" + index, 16);
    }
    byte[] id = new byte[32];
    System.arraycopy(filePrefix(file), 0, id, 0, 16);
    long v = offset << 16 | index;
    for (int i = 31; i >= 16; i--) {
      id[i] = HEX[(int) (v & 0xf)];
      v >>>= 4;
    }
    return new String(id, StandardCharsets.ISO_8859_1);
  }

  /** The file's 16 hex digits, as bytes. */
  private static byte[] filePrefix(String file) {
    Object[] last = LAST_FILE.get();
    if (!file.equals(last[0])) {
      last[0] = file;
      last[1] = Hashes.sha256Hex(file, 8).getBytes(StandardCharsets.ISO_8859_1);
    }
    return (byte[]) last[1];
  }
}
