package dev.knockwatch.streams.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.time.Instant;
import java.util.Random;
import org.junit.jupiter.api.Test;

class VarintsTest {

  private static byte[] bytes(long v) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    Varints.write(new DataOutputStream(b), v);
    return b.toByteArray();
  }

  private static DataInputStream in(byte[] b) {
    return new DataInputStream(new ByteArrayInputStream(b));
  }

  @Test
  void everyLongReadsBackAndSmallOnesTakeOneByte() throws IOException {
    Random r = new Random(41);
    long[] edges = {0, 1, -1, 63, -64, 64, Long.MAX_VALUE, Long.MIN_VALUE, Integer.MAX_VALUE, Integer.MIN_VALUE};
    for (int n = 0; n < 100_000; n++) {
      long v = n < edges.length ? edges[n] : r.nextLong() >> r.nextInt(64);
      byte[] b = bytes(v);
      assertThat(Varints.read(in(b))).isEqualTo(v);
      assertThat(b.length).isBetween(1, 10);
    }
    assertThat(bytes(7)).hasSize(1);
    assertThat(bytes(-1)).hasSize(1);
    assertThat(bytes(1_764_441_932_887L)).hasSize(6);
  }

  @Test
  void damagedNumbersAreAClearError() {
    byte[] endless = new byte[11];
    java.util.Arrays.fill(endless, (byte) 0x80);
    assertThatThrownBy(() -> Varints.read(in(endless))).isInstanceOf(IOException.class)
        .hasMessage("a varint longer than 10 bytes");
    assertThatThrownBy(() -> Varints.readInt(in(bytes(1L << 40)), -1)).hasMessage("a count of 1099511627776");
    assertThatThrownBy(() -> Varints.readInt(in(bytes(-2)), -1)).hasMessage("a count of -2");
    assertThatThrownBy(() -> Varints.read(in(new byte[] {(byte) 0x80}))).isInstanceOf(java.io.EOFException.class);
  }

  @Test
  void anInstantReadsBackToTheNanosecondAndABadOneIsAClearError() throws IOException {
    Random r = new Random(42);
    for (int n = 0; n < 10_000; n++) {
      Instant t = n % 7 == 0 ? null : Instant.ofEpochSecond(r.nextLong() % Instant.MAX.getEpochSecond(), r.nextInt(1_000_000_000));
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      Varints.write(new DataOutputStream(b), t);
      assertThat(Varints.readInstant(in(b.toByteArray()))).isEqualTo(t);
    }
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(b);
    out.writeBoolean(true);
    Varints.write(out, 0);
    Varints.write(out, 1_000_000_000);
    assertThatThrownBy(() -> Varints.readInstant(in(b.toByteArray()))).hasMessage("an instant's nanoseconds of 1000000000");
    ByteArrayOutputStream far = new ByteArrayOutputStream();
    DataOutputStream o2 = new DataOutputStream(far);
    o2.writeBoolean(true);
    Varints.write(o2, Long.MAX_VALUE);
    Varints.write(o2, 0);
    assertThatThrownBy(() -> Varints.readInstant(in(far.toByteArray()))).hasMessageStartingWith("an instant of");
  }
}
