package dev.knockwatch.streams.detect;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * The event ids seen in the last {@code retention} of stream time. The record is a window store
 * (RocksDB, with its changelog), keyed by the stream time each id was seen at, whose old segments
 * are dropped whole. In front of it, in memory, one Bloom filter (Guava's) per {@link #SLICE_MS} of
 * stream time holds the ids put then: an id no live filter may hold is new — nearly every id is —
 * and is told without reading the store, whose range read was a quarter of detection's CPU. An id
 * a filter may hold (a copy, or one of the filters' 1 % false positives) is looked up in the store,
 * so the answer is always the store's.
 *
 * <p>The filters are rebuilt from the store when a processor starts (after the store was restored
 * from its changelog). They take about 1.2 bytes an id (10 bits): a slice's first filter is sized
 * for {@value #FIRST_FILTER} ids (10 KB), and a slice that fills it gets another four times larger,
 * up to {@value #LARGEST_FILTER} ids, so a quiet task holds little. One task's filters are sized for
 * {@value #MAX_IDS} ids in all (30 MB; eleven minutes of what one detection thread can read are
 * fewer); past that the last filter of a slice takes the rest, and only its false positives grow,
 * so more ids are read from the store.
 */
final class SeenIds {

  /** Stream time a filter covers. */
  static final long SLICE_MS = 60_000;
  static final int FIRST_FILTER = 8_192;
  static final int LARGEST_FILTER = 2_097_152;
  static final long MAX_IDS = 25_000_000;
  private static final double FALSE_POSITIVES = 0.01;
  private static final byte[] SEEN = {1};
  /**
   * An id is hashed once, from its UTF-8 bytes (the bytes the store keys it by, so two ids the
   * store takes for one are one here too), and each filter hashes that number: a check of many
   * filters reads the id once.
   */
  private static final Hasher64 ID_HASH = Hashing.komihash5_0();

  private final WindowStore<String, byte[]> store;
  private final long retention;
  private final long maxIds;
  /** Each slice's start (its stream time divided by {@link #SLICE_MS}) and its filters, the newest last. */
  private final TreeMap<Long, Slice> slices = new TreeMap<>();
  /** The ids this instance's filters are sized for, in all. */
  private long sized;
  private long storeReads;

  private static final class Slice {
    final List<BloomFilter<Long>> filters = new ArrayList<>(1);
    int inLast;
    int lastSize;
    long sized;
  }

  /** Loads the filters from {@code store}, which holds what was seen before (restored from its changelog). */
  SeenIds(WindowStore<String, byte[]> store, long retention) {
    this(store, retention, MAX_IDS);
  }

  /** @param maxIds the ids its filters are sized for, in all (tests lower it) */
  SeenIds(WindowStore<String, byte[]> store, long retention, long maxIds) {
    this.store = store;
    this.retention = retention;
    this.maxIds = maxIds;
    try (KeyValueIterator<Windowed<String>, byte[]> all = store.all()) {
      while (all.hasNext()) {
        KeyValue<Windowed<String>, byte[]> kv = all.next();
        remember(hash(kv.key.key()), kv.key.window().start());
      }
    }
  }

  /** Whether {@code id} was seen within the retention before {@code now} (stream time, which only grows). */
  boolean seen(String id, long now) {
    if (!mayHold(hash(id), now)) {
      return false;
    }
    storeReads++;
    try (WindowStoreIterator<byte[]> it = store.fetch(id, now - retention, now)) {
      return it.hasNext();
    }
  }

  /** Records {@code id} as seen at {@code now}. */
  void add(String id, long now) {
    store.put(id, SEEN, now);
    remember(hash(id), now);
  }

  /** The ids its filters are sized for, in all (their memory: 1.2 bytes each), for tests. */
  long sized() {
    return sized;
  }

  /** How many checks read the store (an id a filter may hold), for tests. */
  long storeReads() {
    return storeReads;
  }

  private static long hash(String id) {
    return ID_HASH.hashBytesToLong(id.getBytes(StandardCharsets.UTF_8));
  }

  private boolean mayHold(long id, long now) {
    // a slice ending before now - retention holds only ids the store no longer finds
    for (Slice s : slices.tailMap(Math.floorDiv(now - retention, SLICE_MS), true).values()) {
      for (BloomFilter<Long> f : s.filters) {
        if (f.mightContain(id)) {
          return true;
        }
      }
    }
    return false;
  }

  private void remember(long id, long at) {
    long start = Math.floorDiv(at, SLICE_MS);
    Slice s = slices.computeIfAbsent(start, k -> new Slice());
    if (s.filters.isEmpty()) {
      grow(s, FIRST_FILTER);
    } else if (s.inLast >= s.lastSize) {
      int next = Math.min(LARGEST_FILTER, s.lastSize * 4);
      if (sized + next <= maxIds) {
        grow(s, next);
      }
    }
    s.filters.get(s.filters.size() - 1).put(id);
    s.inLast++;
    expire(at);
  }

  private void grow(Slice s, int ids) {
    s.filters.add(BloomFilter.create(Funnels.longFunnel(), ids, FALSE_POSITIVES));
    s.inLast = 0;
    s.lastSize = ids;
    s.sized += ids;
    sized += ids;
  }

  /** Drops the filters of slices that ended before {@code now - retention}. */
  private void expire(long now) {
    Iterator<Map.Entry<Long, Slice>> it = slices.headMap(Math.floorDiv(now - retention, SLICE_MS), false)
        .entrySet().iterator();
    while (it.hasNext()) {
      sized -= it.next().getValue().sized;
      it.remove();
    }
  }
}
