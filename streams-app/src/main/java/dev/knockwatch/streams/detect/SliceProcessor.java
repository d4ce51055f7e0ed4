package dev.knockwatch.streams.detect;

import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * The processor of a rule whose detector keeps state ({@link Detector.Stateful}): each key's slice
 * in a store (in memory, with its changelog), and also as objects here, written through when
 * a step changes it (a refusal does not go through the store and the serde to read it). The copy
 * is filled from the store at init (after a restart or a move of the task, the store is restored
 * from its changelog first); a stream-time punctuation drops the slices that can no longer change
 * an answer.
 */
public final class SliceProcessor<S extends Detector.Settings, T> extends RuleProcessor {

  private final Detector.Stateful<S, T> detector;
  private final S settings;
  private final String storeName;
  private KeyValueStore<String, T> store;
  private final Map<String, T> slices = new HashMap<>();

  @SuppressWarnings("unchecked")
  public SliceProcessor(Rule rule, Policy policy, String storeName) {
    super(rule, policy);
    this.detector = (Detector.Stateful<S, T>) (Detector<?>) rule.detector();
    this.settings = (S) rule.settings();
    this.storeName = storeName;
  }

  /** A slice store: in memory, so no RocksDB call per refusal, with its changelog. */
  public static <T> StoreBuilder<KeyValueStore<String, T>> store(String name, Serde<T> serde, boolean cached) {
    StoreBuilder<KeyValueStore<String, T>> b = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name),
        Serdes.String(), serde);
    return cached ? b.withCachingEnabled() : b;
  }

  @Override
  protected void start() {
    store = context.getStateStore(storeName);
    slices.clear();
    try (KeyValueIterator<String, T> all = store.all()) {
      all.forEachRemaining(kv -> slices.put(kv.key, kv.value));
    }
    context.schedule(detector.sweepEvery(), PunctuationType.STREAM_TIME, this::sweep);
  }

  /** How many keys hold a slice (for tests). */
  public int keys() {
    return slices.size();
  }

  @Override
  protected void judge(Record<String, ViolationEvent> record, String key, ViolationEvent e, String role) {
    T before = slices.get(key);
    T after = detector.step(rule, settings, new Detector.Seen(key, e, role, view.current(), record.timestamp(),
        context.currentStreamTimeMs()), before, hit -> context.forward(new Record<>(key, hit, record.timestamp())));
    if (after != before) {
      if (after == null) {
        slices.remove(key);
        store.delete(key);
      } else {
        slices.put(key, after);
        store.put(key, after);
      }
    }
  }

  private void sweep(long streamTime) {
    List<KeyValue<String, T>> deletes = new ArrayList<>();
    slices.entrySet().removeIf(en -> {
      if (detector.expiresAt(rule, settings, en.getValue()) <= streamTime) {
        deletes.add(KeyValue.pair(en.getKey(), null));
        return true;
      }
      return false;
    });
    if (!deletes.isEmpty()) {
      store.putAll(deletes);
    }
  }
}
