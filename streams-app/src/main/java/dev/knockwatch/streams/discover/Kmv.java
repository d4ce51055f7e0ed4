package dev.knockwatch.streams.discover;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;

/**
 * How many distinct names (command ids, tasks, agents) a host was refused for, in a fixed size: the
 * {@value #K} smallest 64-bit hashes of the names seen (a k-minimum-values sketch, Bar-Yossef et
 * al. 2002). Not hash4j's UltraLogLog, which the detectors use for large sets: a risk here is "one
 * command asked for it", so small counts must be exact. Exact up to {@value #K} names; beyond, an estimate from how small the {@value #K}th
 * smallest hash is (standard error about 1/sqrt(K-2), 27 %). Two sketches merge into the sketch of
 * both sets, so an hour's and a partition's counts add up without counting a name twice.
 */
final class Kmv {

  static final int K = 16;

  /** The smallest hashes, ascending as unsigned numbers; {@code n} of them in use. */
  private long[] hashes;
  private int n;

  Kmv() {
    this.hashes = new long[4];
  }

  private Kmv(long[] hashes, int n) {
    this.hashes = hashes;
    this.n = n;
  }

  private static final Hasher64 HASHER = Hashing.komihash5_0();

  /** A 64-bit hash of {@code name} (hash4j's Komihash, as the other sketches here). */
  static long hash(String name) {
    return HASHER.hashCharsToLong(name);
  }

  /** Adds a name; true when the sketch changed (a name not seen, among the K smallest). */
  boolean add(String name) {
    return addHash(hash(name));
  }

  boolean addHash(long h) {
    int at = 0;
    while (at < n && Long.compareUnsigned(hashes[at], h) < 0) {
      at++;
    }
    if (at < n && hashes[at] == h || at == K) {
      return false;
    }
    if (n == hashes.length) {
      hashes = Arrays.copyOf(hashes, Math.min(K, n * 2));
    }
    int move = Math.min(n, K - 1) - at;
    System.arraycopy(hashes, at, hashes, at + 1, move);
    hashes[at] = h;
    n = Math.min(n + 1, K);
    return true;
  }

  /** Adds every name of {@code other}: the two sorted lists merged, the K smallest kept. */
  void merge(Kmv other) {
    if (other.n == 0) {
      return;
    }
    long[] out = new long[Math.min(K, n + other.n)];
    int i = 0;
    int j = 0;
    int m = 0;
    while (m < out.length && (i < n || j < other.n)) {
      long next;
      if (j >= other.n || i < n && Long.compareUnsigned(hashes[i], other.hashes[j]) <= 0) {
        next = hashes[i++];
        if (j < other.n && other.hashes[j] == next) {
          j++;
        }
      } else {
        next = other.hashes[j++];
      }
      out[m++] = next;
    }
    hashes = out;
    n = m;
  }

  /** Whether both hold the same names (a task sketch that is its commands', for a value's bytes). */
  boolean sameAs(Kmv other) {
    return n == other.n && java.util.Arrays.equals(hashes, 0, n, other.hashes, 0, n);
  }

  /** Distinct names: exact below K, else (K-1) over the K-th smallest hash as a fraction of 2^64. */
  long estimate() {
    if (n < K) {
      return n;
    }
    double kth = (hashes[K - 1] >>> 1) / (double) (1L << 62) / 2; // unsigned, in [0, 1)
    return Math.max(K, Math.round((K - 1) / Math.max(kth, 1e-18)));
  }

  int size() {
    return n;
  }

  Kmv copy() {
    return new Kmv(Arrays.copyOf(hashes, Math.max(n, 1)), n);
  }

  void write(DataOutputStream out) throws IOException {
    out.writeByte(n);
    for (int i = 0; i < n; i++) {
      out.writeLong(hashes[i]);
    }
  }

  static Kmv read(DataInputStream in) throws IOException {
    int n = in.readUnsignedByte();
    if (n > K) {
      throw new IOException("a sketch of " + n + " hashes (at most " + K + ")");
    }
    long[] h = new long[Math.max(n, 1)];
    for (int i = 0; i < n; i++) {
      h[i] = in.readLong();
      if (i > 0 && Long.compareUnsigned(h[i - 1], h[i]) >= 0) {
        throw new IOException("a sketch's hashes out of order");
      }
    }
    return new Kmv(h, n);
  }
}
