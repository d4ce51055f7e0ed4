package dev.knockwatch.streams.detect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.streams.state.StateStringsTest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ids seen: always the store's answer (no id seen is ever missed, whatever the filters hold),
 * while a new id is told without reading the store.
 */
class SeenIdsTest {

  static final long T0 = Instant.parse("2026-12-04T10:00:00Z").toEpochMilli();
  static final long RETENTION = Duration.ofMinutes(11).toMillis();

  WindowStore<String, byte[]> store;

  @BeforeEach
  void setUp() {
    store = newStore();
  }

  private static WindowStore<String, byte[]> newStore() {
    MockProcessorContext<String, byte[]> context = new MockProcessorContext<>();
    WindowStore<String, byte[]> s = Stores.windowStoreBuilder(Stores.inMemoryWindowStore("ids", Duration.ofMillis(RETENTION),
        Duration.ofMillis(1), false), Serdes.String(), Serdes.ByteArray()).withLoggingDisabled().withCachingDisabled().build();
    s.init(context.getStateStoreContext(), s);
    return s;
  }

  @AfterEach
  void tearDown() {
    store.close();
  }

  @Test
  void anIdSeenIsSeenAndNewIdsAreToldWithoutReadingTheStore() {
    SeenIds ids = new SeenIds(store, RETENTION);
    for (int i = 0; i < 20_000; i++) {
      long now = T0 + i * 10L; // 200 s: four slices
      assertThat(ids.seen(id(i), now)).isFalse();
      ids.add(id(i), now);
    }
    long reads = ids.storeReads();
    assertThat(reads).as("a new id reads the store only on a false positive (1 %% of 20,000, with room)").isLessThan(600);
    for (int i = 0; i < 20_000; i += 7) {
      assertThat(ids.seen(id(i), T0 + 200_000)).as(id(i)).isTrue();
    }
  }

  @Test
  void aNewInstanceOnTheStoreSeesWhatTheOneBeforeItSaw() {
    SeenIds before = new SeenIds(store, RETENTION);
    for (int i = 0; i < 1_000; i++) {
      before.add(id(i), T0 + i * 100L);
    }
    // a restart: the store was restored from its changelog, the filters are built from it
    SeenIds after = new SeenIds(store, RETENTION);
    for (int i = 0; i < 1_000; i++) {
      assertThat(after.seen(id(i), T0 + 100_000)).as(id(i)).isTrue();
    }
    assertThat(after.seen("never-seen", T0 + 100_000)).isFalse();
  }

  @Test
  void anIdIsSeenForItsRetentionAndNotAfter() {
    SeenIds ids = new SeenIds(store, RETENTION);
    ids.add("early", T0);
    ids.add("late", T0 + SeenIds.SLICE_MS - 1); // the same slice, its last millisecond
    assertThat(ids.seen("early", T0 + RETENTION)).isTrue();
    assertThat(ids.seen("early", T0 + RETENTION + 1)).isFalse();
    // a later id (stream time only grows): its slice's first id is past, its last one is not
    // (the window store keeps a record while it is newer than its latest time less the retention)
    long now = T0 + SeenIds.SLICE_MS - 2 + RETENTION;
    ids.add("later", now);
    assertThat(ids.seen("early", now)).isFalse();
    assertThat(ids.seen("late", now)).isTrue();
    ids.add("later still", now + 2);
    assertThat(ids.seen("late", now + 2)).isFalse();
    assertThat(ids.seen("later", now + 2)).isTrue();
  }

  @Test
  void aSliceOfMoreIdsThanOneFilterHoldsMissesNone() {
    SeenIds ids = new SeenIds(store, RETENTION);
    int n = SeenIds.FIRST_FILTER * 25;
    for (int i = 0; i < n; i++) {
      ids.add(id(i), T0); // a flood within one slice: filters for 8k, 32k, 128k and 512k ids
    }
    assertThat(ids.sized()).isEqualTo(SeenIds.FIRST_FILTER * (1 + 4 + 16 + 64));
    long before = ids.storeReads();
    int newOnes = 10_000;
    for (int i = 0; i < newOnes; i++) {
      assertThat(ids.seen("new-" + i, T0)).isFalse();
    }
    assertThat(ids.storeReads() - before).as("each full filter keeps its 1 %% (3 of them), with room").isLessThan(900);
    for (int i = 0; i < n; i += 13) {
      assertThat(ids.seen(id(i), T0)).as(id(i)).isTrue();
    }
  }

  @Test
  void aQuietTaskHoldsSmallFiltersAndAFloodStopsAtItsBound() {
    SeenIds quiet = new SeenIds(store, RETENTION);
    for (int minute = 0; minute < 11; minute++) {
      for (int i = 0; i < 10; i++) {
        quiet.add(id(minute * 10 + i), T0 + minute * SeenIds.SLICE_MS + i);
      }
    }
    assertThat(quiet.sized()).as("one small filter a minute").isEqualTo(11L * SeenIds.FIRST_FILTER);
    WindowStore<String, byte[]> other = newStore();
    SeenIds bounded = new SeenIds(other, RETENTION, SeenIds.FIRST_FILTER * 5L);
    int n = SeenIds.FIRST_FILTER * 10;
    long now = T0 + 11 * SeenIds.SLICE_MS;
    for (int i = 0; i < n; i++) {
      bounded.add("flood-" + i, now);
    }
    assertThat(bounded.sized()).as("past its bound the last filter takes the rest").isLessThanOrEqualTo(SeenIds.FIRST_FILTER * 5L);
    for (int i = 0; i < n; i += 11) {
      assertThat(bounded.seen("flood-" + i, now)).isTrue();
    }
    other.close();
  }

  @Test
  void hostileIdsAreNeverMissedAndNeverTakenForAnother() {
    Random r = new Random(46);
    SeenIds ids = new SeenIds(store, RETENTION);
    List<String> added = new ArrayList<>();
    for (int i = 0; i < 3_000; i++) {
      String id = StateStringsTest.hostile(r);
      if (i % 2 == 0) {
        ids.add(id, T0 + i);
        added.add(id);
      }
    }
    for (String id : added) {
      assertThat(ids.seen(id, T0 + 3_000)).isTrue();
    }
    // an id never added is never seen, whatever its bytes (the store decides what a filter may hold)
    SeenIds fresh = new SeenIds(store, RETENTION);
    for (String id : added) {
      assertThat(fresh.seen(id, T0 + 3_000)).isTrue();
    }
    for (int i = 0; i < 1_000; i++) {
      String other = StateStringsTest.hostile(r) + "\u0000never";
      assertThat(fresh.seen(other, T0 + 3_000)).as("never added").isFalse();
    }
  }

  private static String id(int i) {
    return String.format("%032x", (long) i * 0x9E3779B97F4A7C15L);
  }
}
