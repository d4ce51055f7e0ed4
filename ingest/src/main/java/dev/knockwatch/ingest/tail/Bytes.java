package dev.knockwatch.ingest.tail;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Byte scans of the tailer, eight bytes at a time: a line of a busy log is looked at once, for its
 * end and for control bytes together costing less than a look at each byte.
 */
public final class Bytes {

  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long ONES = 0x0101010101010101L;
  private static final long HIGHS = 0x8080808080808080L;
  private static final long NEWLINES = ONES * '\n';
  private static final long SPACES = ONES * 0x20;

  private Bytes() {}

  /** The index of the first '\n' in {@code b[from, to)}, or {@code to}. */
  static int nextNewline(byte[] b, int from, int to) {
    int i = from;
    for (; i + 8 <= to; i += 8) {
      long x = (long) LONGS.get(b, i) ^ NEWLINES;
      // a zero byte of x is a '\n'; the lowest flagged byte is exact (borrows only run upwards)
      long found = (x - ONES) & ~x & HIGHS;
      if (found != 0) {
        return i + (Long.numberOfTrailingZeros(found) >>> 3);
      }
    }
    for (; i < to; i++) {
      if (b[i] == '\n') {
        return i;
      }
    }
    return to;
  }

  /**
   * Whether {@code b[from, from + len)}, which the JDK's decoder (the fast path) turned into
   * {@code decoded}, held bytes that are not UTF-8: only text that came out with U+FFFD is checked
   * strictly, to tell invalid bytes from a U+FFFD the writer really wrote.
   */
  public static boolean invalidUtf8(byte[] b, int from, int len, String decoded) {
    if (decoded.indexOf('\uFFFD') < 0) {
      return false;
    }
    try {
      StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b, from, len));
      return false;
    } catch (CharacterCodingException e) {
      return true;
    }
  }

  /**
   * Not a log line: a NUL byte, or more than a tenth of its {@code chars} characters are control
   * characters other than tab (a control character is one byte in UTF-8).
   */
  public static boolean binary(byte[] b, int from, int to, int chars) {
    int control = 0;
    int i = from;
    for (; i + 8 <= to; i += 8) {
      long x = (long) LONGS.get(b, i);
      // flags every byte below 0x20 (and, after one, maybe others): look at such a word byte by byte
      if (((x - SPACES) & ~x & HIGHS) != 0) {
        for (int k = i; k < i + 8; k++) {
          if (b[k] == 0) {
            return true;
          }
          control += isControl(b[k]) ? 1 : 0;
        }
      }
    }
    for (; i < to; i++) {
      if (b[i] == 0) {
        return true;
      }
      control += isControl(b[i]) ? 1 : 0;
    }
    return control * 10L > chars;
  }

  private static boolean isControl(byte c) {
    return c >= 0 && c < 0x20 && c != '\t';
  }
}
