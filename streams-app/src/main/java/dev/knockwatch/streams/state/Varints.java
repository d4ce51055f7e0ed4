package dev.knockwatch.streams.state;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.time.Instant;

/**
 * The numbers of the binary state values, as small as they are: a zig-zag varint (protobuf's
 * {@code sint64}, Kafka's record format), 7 bits a byte, so a count of 7 is one byte and -1 is
 * one byte too. Kafka's own helper is internal API (it moved in 4.x); this is its form.
 */
public final class Varints {

  private Varints() {}

  public static void write(DataOutput out, long v) throws IOException {
    long z = (v << 1) ^ (v >> 63);
    while ((z & ~0x7fL) != 0) {
      out.writeByte((int) ((z & 0x7f) | 0x80));
      z >>>= 7;
    }
    out.writeByte((int) z);
  }

  public static long read(DataInput in) throws IOException {
    long z = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      int b = in.readUnsignedByte();
      z |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return (z >>> 1) ^ -(z & 1);
      }
    }
    throw new IOException("a varint longer than 10 bytes");
  }

  /** A count or size that must fit an int ({@code min} or more): a larger one is damaged bytes. */
  public static int readInt(DataInput in, int min) throws IOException {
    long v = read(in);
    if (v < min || v > Integer.MAX_VALUE) {
      throw new IOException("a count of " + v);
    }
    return (int) v;
  }

  /** An instant or null: a presence byte, then its seconds and nanoseconds as varints. */
  public static void write(DataOutput out, Instant t) throws IOException {
    out.writeBoolean(t != null);
    if (t != null) {
      write(out, t.getEpochSecond());
      write(out, t.getNano());
    }
  }

  public static Instant readInstant(DataInput in) throws IOException {
    if (!in.readBoolean()) {
      return null;
    }
    long seconds = read(in);
    long nanos = read(in);
    if (nanos < 0 || nanos > 999_999_999) {
      throw new IOException("an instant's nanoseconds of " + nanos);
    }
    try {
      return Instant.ofEpochSecond(seconds, nanos);
    } catch (java.time.DateTimeException e) {
      throw new IOException("an instant of " + seconds + " s", e);
    }
  }
}
