package dev.knockwatch.streams.detect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The detectors' in-memory copy of a key-value store: what it holds is what the store holds. */
class WriteThroughCopyTest {

  KeyValueStore<String, Long> store;

  @BeforeEach
  void setUp() {
    MockProcessorContext<String, String> context = new MockProcessorContext<>();
    store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("copied"), Serdes.String(), Serdes.Long())
        .withLoggingDisabled().build();
    store.init(context.getStateStoreContext(), store);
  }

  private WriteThroughCopy<Long> copy() {
    return new WriteThroughCopy<>(store, Long::longValue); // the value is the entry's time
  }

  private List<String> storeKeys() {
    List<String> keys = new ArrayList<>();
    store.all().forEachRemaining(kv -> keys.add(kv.key));
    return keys;
  }

  @Test
  void writesReachTheStoreAndExpiryDropsOnlyWhatIsOlderFromBoth() {
    WriteThroughCopy<Long> c = copy();
    c.put("a", 10L);
    c.put("b", 20L);
    c.put("c", 30L);
    assertThat(store.get("b")).isEqualTo(20L);

    c.expireBefore(30);
    assertThat(c.get("a")).isNull();
    assertThat(c.get("b")).isNull();
    assertThat(c.get("c")).isEqualTo(30L);
    assertThat(storeKeys()).containsExactly("c");
  }

  @Test
  void anEntryWrittenAgainLivesOnFromItsNewTime() {
    WriteThroughCopy<Long> c = copy();
    c.put("a", 10L);
    c.put("b", 20L);
    c.put("a", 40L);
    c.expireBefore(30);
    assertThat(c.get("a")).isEqualTo(40L);
    assertThat(storeKeys()).containsExactly("a");
  }

  @Test
  void anOutOfOrderEntryStaysUntilTheNewerOnesBeforeItExpireNeverLess() {
    WriteThroughCopy<Long> c = copy();
    c.put("new", 50L);
    c.put("late", 10L);
    c.expireBefore(30);
    assertThat(c.get("late")).isEqualTo(10L);
    c.expireBefore(60);
    assertThat(c.size()).isZero();
    assertThat(storeKeys()).isEmpty();
  }

  @Test
  void aNewCopyStartsFromWhatTheStoreHoldsOldestFirst() {
    store.put("b", 20L);
    store.put("a", 30L);
    store.put("c", 10L);
    WriteThroughCopy<Long> c = copy(); // as after a restart: the store was restored from its changelog
    assertThat(c.get("a")).isEqualTo(30L);
    c.expireBefore(25);
    assertThat(c.size()).isEqualTo(1);
    assertThat(storeKeys()).containsExactly("a");
  }
}
