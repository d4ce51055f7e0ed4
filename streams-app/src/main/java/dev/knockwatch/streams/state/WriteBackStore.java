package dev.knockwatch.streams.state;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.internals.CacheFlushListener;
import org.apache.kafka.streams.state.internals.CachedStateStore;

/**
 * A key-value store held as objects and written to the store underneath (in memory, with its
 * changelog) when Kafka Streams commits: an event reads its key's value and replaces it here, with
 * no serde and no store layer in the way, and a key changed many times between two commits is
 * serialized and sent to the changelog once. Kafka Streams flushes a store's cache before it commits
 * the task (the records processed, their output and the changelog records in one transaction under
 * exactly-once): this store is such a cache ({@link CachedStateStore}, an interface internal to Kafka
 * Streams, pinned with its version in the parent pom), so what was committed always has its state
 * in the changelog. A task closed without a commit drops the objects with the store; its next owner
 * restores the underneath store from the changelog and reads it back.
 *
 * <p>Only the processor that owns it reads its objects. A {@link Queryable} one is also read by
 * other threads (the query API, through interactive queries): their ranges read the store
 * underneath, what the last commit wrote.
 */
public class WriteBackStore<V> implements StateStore, CachedStateStore<String, V> {

  private final KeyValueStore<String, V> underneath;
  private final Map<String, V> objects = new HashMap<>();
  private final Set<String> dirty = new LinkedHashSet<>();
  private boolean loaded;

  WriteBackStore(KeyValueStore<String, V> underneath) {
    this.underneath = underneath;
  }

  /** A builder of it over an in-memory store named {@code name}, with its changelog. */
  public static <V> StoreBuilder<WriteBackStore<V>> builder(String name, Serde<V> values) {
    return new Builder<>(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.String(), values)
        .withCachingDisabled(), false);
  }

  /** The same, {@link Queryable}: interactive queries read its ranges as committed. */
  public static <V> StoreBuilder<WriteBackStore<V>> queryableBuilder(String name, Serde<V> values) {
    return new Builder<>(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.String(), values)
        .withCachingDisabled(), true);
  }

  /**
   * A store whose key ranges another thread may read (the query API): from the in-memory store
   * underneath, whose reads are thread-safe, so a reader sees each value as the last commit wrote
   * it. Its {@link #get} stays the owning processor's (the objects): readers use {@link #range}.
   */
  public static final class Queryable<V> extends WriteBackStore<V> implements ReadOnlyKeyValueStore<String, V> {

    Queryable(KeyValueStore<String, V> underneath) {
      super(underneath);
    }

    @Override
    public KeyValueIterator<String, V> range(String from, String to) {
      return underneath().range(from, to);
    }

    @Override
    public KeyValueIterator<String, V> all() {
      return underneath().all();
    }

    @Override
    public long approximateNumEntries() {
      return underneath().approximateNumEntries();
    }
  }

  KeyValueStore<String, V> underneath() {
    return underneath;
  }

  /** The value of {@code key}; null when none. */
  public V get(String key) {
    load();
    return objects.get(key);
  }

  /** Replaces the value of {@code key} (null deletes it); written at the next commit. */
  public void put(String key, V value) {
    load();
    if (value == null) {
      objects.remove(key);
    } else {
      objects.put(key, value);
    }
    dirty.add(key);
  }

  /** Every key and value, for a sweep: an entry's value may be replaced, or the entry removed, through it. */
  public Set<Map.Entry<String, V>> entries() {
    load();
    return new EntriesView();
  }

  /** How many keys hold a value. */
  public int size() {
    load();
    return objects.size();
  }

  private void load() {
    if (!loaded) {
      loaded = true;
      try (KeyValueIterator<String, V> all = underneath.all()) {
        all.forEachRemaining(kv -> {
          if (kv.value != null) {
            objects.put(kv.key, kv.value);
          } else {
            dirty.add(kv.key); // bytes its serde reads as nothing (an earlier version's): deleted at the next commit
          }
        });
      }
    }
  }

  /** What changed since the last commit, to the store underneath (and so to its changelog). */
  @Override
  public void flushCache() {
    if (dirty.isEmpty()) {
      return;
    }
    java.util.List<KeyValue<String, V>> writes = new java.util.ArrayList<>(dirty.size());
    for (String key : dirty) {
      writes.add(KeyValue.pair(key, objects.get(key)));
    }
    dirty.clear();
    underneath.putAll(writes);
  }

  @Override
  public void clearCache() {
    // a task closed without committing: what it changed is not committed, and its next owner restores
    dirty.clear();
    objects.clear();
    loaded = false;
  }

  @Override
  public boolean setFlushListener(CacheFlushListener<String, V> listener, boolean sendOldValues) {
    return false;
  }

  @Override
  public String name() {
    return underneath.name();
  }

  @Override
  public void init(StateStoreContext context, StateStore root) {
    underneath.init(context, root);
  }

  /**
   * Only {@link #flushCache} writes the objects: Kafka Streams calls it before each commit, and
   * {@code DetectStateCommitTest} fails if it stops doing so (writing here, after the commit, would
   * hide that).
   */
  @Override
  @SuppressWarnings("deprecation")
  public void flush() {
    underneath.flush();
  }

  @Override
  public void close() {
    underneath.close();
  }

  @Override
  public boolean persistent() {
    return underneath.persistent();
  }

  @Override
  public boolean isOpen() {
    return underneath.isOpen();
  }

  @Override
  public <R> QueryResult<R> query(Query<R> query, PositionBound positionBound, QueryConfig config) {
    return underneath.query(query, positionBound, config);
  }

  @Override
  public Position getPosition() {
    return underneath.getPosition();
  }

  /** The objects' entries; a value set or an entry removed through it is written at the next commit. */
  private final class EntriesView extends java.util.AbstractSet<Map.Entry<String, V>> {

    @Override
    public java.util.Iterator<Map.Entry<String, V>> iterator() {
      java.util.Iterator<Map.Entry<String, V>> it = objects.entrySet().iterator();
      return new java.util.Iterator<>() {
        private Map.Entry<String, V> last;

        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public Map.Entry<String, V> next() {
          Map.Entry<String, V> e = it.next();
          last = e;
          return new Map.Entry<>() {
            @Override
            public String getKey() {
              return e.getKey();
            }

            @Override
            public V getValue() {
              return e.getValue();
            }

            @Override
            public V setValue(V value) {
              dirty.add(e.getKey());
              return e.setValue(value);
            }
          };
        }

        @Override
        public void remove() {
          it.remove();
          dirty.add(last.getKey());
        }
      };
    }

    @Override
    public int size() {
      return objects.size();
    }
  }

  private static final class Builder<V> implements StoreBuilder<WriteBackStore<V>> {

    private StoreBuilder<KeyValueStore<String, V>> underneath;
    private final boolean queryable;

    Builder(StoreBuilder<KeyValueStore<String, V>> underneath, boolean queryable) {
      this.underneath = underneath;
      this.queryable = queryable;
    }

    /** Its own cache is the objects: Kafka's record cache would only add a copy. */
    @Override
    public StoreBuilder<WriteBackStore<V>> withCachingEnabled() {
      return this;
    }

    @Override
    public StoreBuilder<WriteBackStore<V>> withCachingDisabled() {
      return this;
    }

    @Override
    public StoreBuilder<WriteBackStore<V>> withLoggingEnabled(Map<String, String> config) {
      underneath = underneath.withLoggingEnabled(config);
      return this;
    }

    @Override
    public StoreBuilder<WriteBackStore<V>> withLoggingDisabled() {
      underneath = underneath.withLoggingDisabled();
      return this;
    }

    @Override
    public WriteBackStore<V> build() {
      return queryable ? new Queryable<>(underneath.build()) : new WriteBackStore<>(underneath.build());
    }

    @Override
    public Map<String, String> logConfig() {
      return underneath.logConfig();
    }

    @Override
    public boolean loggingEnabled() {
      return underneath.loggingEnabled();
    }

    @Override
    public String name() {
      return underneath.name();
    }
  }
}
