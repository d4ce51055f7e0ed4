package dev.knockwatch.streams.detect;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A key-value store's entries also held as objects, in the order of their times, and written
 * through to the store (whose changelog keeps them over restarts). Reads skip the store and its
 * serde; {@link #expireBefore} reads only the entries that expire, not the whole store.
 *
 * <p>The copy is loaded from the store when a processor starts (at init, after the store was
 * restored from its changelog). An entry written again moves to the end, so an entry written
 * with an older time than the ones before it (an out-of-order event) stays until they expire: a
 * little longer than its own time says, never shorter.
 */
final class WriteThroughCopy<V> {

  private final KeyValueStore<String, V> store;
  private final ToLongFunction<V> timeOf;
  private final LinkedHashMap<String, V> copy = new LinkedHashMap<>();

  WriteThroughCopy(KeyValueStore<String, V> store, ToLongFunction<V> timeOf) {
    this.store = store;
    this.timeOf = timeOf;
    List<KeyValue<String, V>> held = new ArrayList<>();
    try (KeyValueIterator<String, V> it = store.all()) {
      it.forEachRemaining(held::add);
    }
    held.sort(Comparator.comparingLong(kv -> timeOf.applyAsLong(kv.value)));
    held.forEach(kv -> copy.put(kv.key, kv.value));
  }

  V get(String key) {
    return copy.get(key);
  }

  void put(String key, V value) {
    copy.remove(key);
    copy.put(key, value);
    store.put(key, value);
  }

  /** Drops, from the copy and the store, the entries whose time is before {@code cutoff}. */
  void expireBefore(long cutoff) {
    expireBefore(cutoff, key -> { });
  }

  /** {@link #expireBefore(long)}, telling {@code dropped} each key it drops. */
  void expireBefore(long cutoff, java.util.function.Consumer<String> dropped) {
    Iterator<Map.Entry<String, V>> it = copy.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<String, V> e = it.next();
      if (timeOf.applyAsLong(e.getValue()) >= cutoff) {
        return;
      }
      store.delete(e.getKey());
      it.remove();
      dropped.accept(e.getKey());
    }
  }

  /** The keys held, oldest first. */
  Iterable<String> keys() {
    return copy.keySet();
  }

  int size() {
    return copy.size();
  }
}
