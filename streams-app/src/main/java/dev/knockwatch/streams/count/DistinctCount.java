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
  /** How many bytes {@link #bytes} gives: its seed, then its registers. */
  public static final int BYTES = Long.BYTES + (1 << P);
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
    if (bytes == null || bytes.length != BYTES) {
      throw new IllegalArgumentException("a distinct count is " + BYTES + " bytes, not "
          + (bytes == null ? "null" : bytes.length));
    }
    ByteBuffer b = ByteBuffer.wrap(bytes);
    return new DistinctCount(b.getLong(), UltraLogLog.wrap(Arrays.copyOfRange(bytes, Long.BYTES, BYTES)));
  }

  @JsonValue
  public byte[] bytes() {
    return ByteBuffer.allocate(BYTES).putLong(seed).put(sketch.getState()).array();
  }

  public DistinctCount add(String target) {
    sketch.add(hasher.hashCharsToLong(target));
    return this;
  }

  public DistinctCount copy() {
    return new DistinctCount(seed, sketch.copy());
  }

  /**
   * The count to keep beside a tally that names the first targets and counts the rest under
   * {@code othersKey}, once {@code target} was tallied: none while every target is named (the
   * tally's size is the exact count), then one made from the named ones and kept up from there.
   */
  public static DistinctCount of(DistinctCount before, Map<String, Long> tally, String othersKey, String target) {
    if (before != null) {
      return before.add(target);
    }
    if (!tally.containsKey(othersKey)) {
      return null;
    }
    DistinctCount c = create();
    tally.keySet().stream().filter(k -> !k.equals(othersKey)).forEach(c::add);
    return c.add(target);
  }

  /** How many distinct targets: the tally's size while {@code count} is null, else its estimate (never below what the tally names). */
  public static long count(DistinctCount count, Map<String, Long> tally, String othersKey) {
    if (count == null) {
      return tally.size();
    }
    return Math.max(tally.size() - (tally.containsKey(othersKey) ? 1 : 0) + 1, count.estimate());
  }

  public long estimate() {
    return Math.round(sketch.getDistinctCountEstimate());
  }
}
