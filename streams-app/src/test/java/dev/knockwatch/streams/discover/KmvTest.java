package dev.knockwatch.streams.discover;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import org.junit.jupiter.api.Test;

class KmvTest {

  @Test
  void exactBelowKAndNameSeenTwiceCountsOnce() {
    Kmv k = new Kmv();
    for (int i = 0; i < Kmv.K - 1; i++) {
      k.add("command-" + i);
      k.add("command-" + i);
    }
    assertThat(k.estimate()).isEqualTo(Kmv.K - 1);
  }

  @Test
  void estimatesLargeSetsWithinItsErrorAndMergesAsAUnion() {
    for (int n : new int[] {100, 10_000, 1_000_000}) {
      Kmv a = new Kmv();
      Kmv b = new Kmv();
      for (int i = 0; i < n; i++) {
        (i % 2 == 0 ? a : b).add("CommandId" + i);
      }
      Kmv both = a.copy();
      both.merge(b);
      both.merge(a); // the same names again: nothing changes
      assertThat((double) both.estimate()).as("n=%d", n).isBetween(n * 0.4, n * 1.6);
      assertThat(both.size()).isEqualTo(Kmv.K);
    }
  }

  @Test
  void roundTripsAndRefusesDamagedBytes() throws Exception {
    Kmv k = new Kmv();
    for (int i = 0; i < 40; i++) {
      k.add("agent-" + i);
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    k.write(new DataOutputStream(bytes));
    Kmv back = Kmv.read(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
    assertThat(back.estimate()).isEqualTo(k.estimate());
    byte[] damaged = bytes.toByteArray();
    damaged[0] = (byte) (Kmv.K + 1);
    org.assertj.core.api.Assertions.assertThatThrownBy(
        () -> Kmv.read(new DataInputStream(new ByteArrayInputStream(damaged)))).isInstanceOf(java.io.IOException.class);
  }
}
