package dev.knockwatch.streams.count;

import com.dynatrace.hash4j.distinctcount.UltraLogLog;
import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Map;

/**
 * How many distinct targets (hosts, paths) a command or an alert was refused, in a fixed 1 KiB
 * however many there are: an UltraLogLog (hash4j) of 2^10 registers, about 2.4 % standard error.
 * Each count hashes with its own random seed, kept with it: the agent chooses its hosts, not their
 * hashes, so no list of hosts can be picked to look small. Stored as its seed then its registers.
 */
public final class DistinctCount {

  private static final int P = 10;
  private static final int SIZE = Long.BYTES + (1 << P);
  private static final SecureRandom SEEDS = new SecureRandom();

  private final long seed;
  private final Hasher64 hasher;
  private final UltraLogLog sketch;

  private DistinctCount(long seed, UltraLogLog sketch) {
    this.seed = seed;
    this.hasher = Hashing.komihash5_0(seed);
    this.sketch = sketch;
  }

  public static DistinctCount create() {
    long seed;
    synchronized (SEEDS) {
      seed = SEEDS.nextLong();
    }
    return new DistinctCount(seed, UltraLogLog.create(P));
  }

  /** The count as {@link #bytes} wrote it. */
  @JsonCreator
  public static DistinctCount of(byte[] bytes) {
    if (bytes == null || bytes.length != SIZE) {
      throw new IllegalArgumentException("a distinct count is " + SIZE + " bytes, not "
          + (bytes == null ? "null" : bytes.length));
    }
    ByteBuffer b = ByteBuffer.wrap(bytes);
    return new DistinctCount(b.getLong(), UltraLogLog.wrap(Arrays.copyOfRange(bytes, Long.BYTES, SIZE)));
  }

  @JsonValue
  public byte[] bytes() {
    return ByteBuffer.allocate(SIZE).putLong(seed).put(sketch.getState()).array();
  }

  public DistinctCount add(String target) {
    sketch.add(hasher.hashCharsToLong(target));
    return this;
  }

  public DistinctCount copy() {
    return new DistinctCount(seed, sketch.copy());
  }

  /**
   * How many distinct targets there were, given a tally that names the first of them and counts
   * the rest under {@code othersKey}: exactly its size while nothing fell into the others, else
   * the estimate (never below what the tally names).
   */
  public long of(Map<String, Long> tally, String othersKey) {
    if (!tally.containsKey(othersKey)) {
      return tally.size();
    }
    return Math.max(tally.size(), Math.round(sketch.getDistinctCountEstimate()));
  }

  public long estimate() {
    return Math.round(sketch.getDistinctCountEstimate());
  }
}
