package dev.knockwatch.ingest.tail;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One line's bytes as they are read: all of them up to the bound; past it, its first half and its
 * last bytes with a marker between. Padding cannot push what a line ends with out of reach (a
 * record's timestamp and ids after a padded command, strace's {@code = -1 EPERM}), and a line of
 * any length costs at most the bound.
 */
final class LineBuffer {

  /** Stands where a long line's middle was left out. */
  static final byte[] MARKER = " … ".getBytes(StandardCharsets.UTF_8);

  private final int max;
  private final int headMax;
  /** Grown as a line needs it, up to the bound: a bound of megabytes (an OTLP export's lines) costs what lines use. */
  private byte[] head;
  private int headLength;
  private byte[] tail;
  private final int tailSize;
  private int tailStart;
  private int tailLength;
  private long total;

  LineBuffer(int max) {
    this.max = max;
    this.headMax = max / 2;
    this.head = new byte[Math.min(max, 64 * 1024)];
    this.tailSize = Math.max(1, max - headMax - MARKER.length);
  }

  /** Room in the head for {@code more} bytes after what it holds (never past the bound). */
  private void room(int more) {
    int need = headLength + more;
    if (need > head.length) {
      head = Arrays.copyOf(head, (int) Math.min(max, Math.max(need, 2L * head.length)));
    }
  }

  void add(byte[] b, int from, int len) {
    total += len;
    int room = max - headLength;
    if (tailLength == 0 && len <= room && total <= max) {
      room(len);
      System.arraycopy(b, from, head, headLength, len);
      headLength += len;
      return;
    }
    if (headLength > headMax) {
      // the line outgrew the bound: what the head held past its half is the start of the tail
      int spill = headLength - headMax;
      headLength = headMax;
      addToTail(head, headMax, spill);
    }
    int fill = Math.min(len, headMax - headLength);
    if (fill > 0) {
      room(fill);
      System.arraycopy(b, from, head, headLength, fill);
      headLength += fill;
    }
    addToTail(b, from + fill, len - fill);
  }

  private void addToTail(byte[] b, int from, int len) {
    if (tail == null) {
      tail = new byte[tailSize];
    }
    if (len >= tail.length) {
      System.arraycopy(b, from + len - tail.length, tail, 0, tail.length);
      tailStart = 0;
      tailLength = tail.length;
      return;
    }
    for (int i = 0; i < len; i++) {
      tail[(tailStart + tailLength) % tail.length] = b[from + i];
      if (tailLength < tail.length) {
        tailLength++;
      } else {
        tailStart = (tailStart + 1) % tail.length;
      }
    }
  }

  /** True once the line is longer than the bound: its middle is left out. */
  boolean cut() {
    return total > max;
  }

  boolean isEmpty() {
    return total == 0;
  }

  int size() {
    return headLength + tailLength;
  }

  /** The line as kept: whole, or its head, the marker and its tail, neither cut inside a UTF-8 character. */
  byte[] bytes() {
    if (!cut()) {
      return Arrays.copyOf(head, headLength);
    }
    int h = headLength;
    // a head that ends inside a UTF-8 sequence loses that sequence's first bytes
    int lead = h;
    while (lead > 0 && (head[lead - 1] & 0xC0) == 0x80 && h - lead < 3) {
      lead--;
    }
    if (lead > 0 && (head[lead - 1] & 0xC0) == 0xC0 && h - lead + 1 < sequenceLength(head[lead - 1])) {
      h = lead - 1;
    }
    byte[] ordered = new byte[tailLength];
    for (int i = 0; i < tailLength; i++) {
      ordered[i] = tail[(tailStart + i) % tail.length];
    }
    int t = 0;
    while (t < ordered.length && (ordered[t] & 0xC0) == 0x80) {
      t++; // the tail starts inside a UTF-8 sequence: from the next character on
    }
    byte[] out = new byte[h + MARKER.length + ordered.length - t];
    System.arraycopy(head, 0, out, 0, h);
    System.arraycopy(MARKER, 0, out, h, MARKER.length);
    System.arraycopy(ordered, t, out, h + MARKER.length, ordered.length - t);
    return out;
  }

  private static int sequenceLength(byte first) {
    return (first & 0xE0) == 0xC0 ? 2 : (first & 0xF0) == 0xE0 ? 3 : 4;
  }

  void reset() {
    if (head.length > 64 * 1024) {
      head = new byte[64 * 1024]; // a long line's room is not kept for the next
      tail = null;
    }
    headLength = 0;
    tailStart = 0;
    tailLength = 0;
    total = 0;
  }
}
