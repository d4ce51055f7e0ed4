package dev.knockwatch.streams.state;

import java.io.OutputStream;
import java.util.Arrays;

/**
 * The bytes of one state value as they are written: a {@link java.io.ByteArrayOutputStream}
 * without its lock (each of its writes is synchronized, and a value is written a byte at a time:
 * tags, varints), for the one thread that writes the value.
 */
public final class ValueBytes extends OutputStream {

  private byte[] buf;
  private int count;

  public ValueBytes(int size) {
    buf = new byte[size];
  }

  @Override
  public void write(int b) {
    if (count == buf.length) {
      buf = Arrays.copyOf(buf, 2 * buf.length);
    }
    buf[count++] = (byte) b;
  }

  @Override
  public void write(byte[] b, int off, int len) {
    if (len > buf.length - count) {
      buf = Arrays.copyOf(buf, Math.max(2 * buf.length, count + len));
    }
    System.arraycopy(b, off, buf, count, len);
    count += len;
  }

  public byte[] toByteArray() {
    return Arrays.copyOf(buf, count);
  }
}
