package dev.knockwatch.streams.count;

import dev.knockwatch.streams.detect.CountDetector;
import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Hit;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The count detector's in-memory copy of its open windows: a new processor on a store that
 * already holds counts (a restart, a revived task) counts on from them, and windows that closed
 * leave memory.
 */
class ThresholdCrossingMemoryTest {

  static final Instant T0 = ThresholdCrossingTest.T0;
  static final String CMD_A = ThresholdCrossingTest.CMD_A;
  static final String CMD_B = ThresholdCrossingTest.CMD_B;
  static final Rule RULE = ThresholdCrossingTest.RULE; // 5 in 5m, 1m grace
  static final String STORE = "count-persistent-retry";

  MockProcessorContext<String, Hit> context;
  WindowStore<String, WindowCount> store;
  int seq;
  long streamTime = -1;

  @BeforeEach
  void setUp() {
    context = new MockProcessorContext<>();
    store = Stores.windowStoreBuilder(Stores.inMemoryWindowStore(STORE, Duration.ofMinutes(6), Duration.ofMinutes(5), false),
        Serdes.String(), new WindowCountSerde()).withLoggingDisabled().withCachingDisabled().build();
    store.init(context.getStateStoreContext(), store);
    context.addStateStore(store);
  }

  private ThresholdCrossingProcessor started() {
    CountDetector.Settings s = (CountDetector.Settings) RULE.settings();
    ThresholdCrossingProcessor p = new ThresholdCrossingProcessor(RULE, Policy.ofRules(List.of(RULE)), STORE, s.window(),
        s.advance(), s.threshold(), s.grace());
    p.init(context);
    return p;
  }

  private void refuse(ThresholdCrossingProcessor p, String commandId, Instant at) {
    seq++;
    streamTime = Math.max(streamTime, at.toEpochMilli());
    context.setCurrentStreamTimeMs(streamTime);
    ViolationEvent e = ViolationEvent.builder().eventId("e" + seq).commandId(commandId).agentId("ci-runner-1")
        .source("srt-violation").kind(Kind.NETWORK).action("network-outbound")
        .host("example.com").port(443).observedAt(at).build();
    p.process(new Record<>(commandId, e, at.toEpochMilli()));
  }

  private List<Long> hitCounts() {
    return context.forwarded().stream().map(f -> f.record().value().count()).toList();
  }

  @Test
  void aProcessorStartedAgainCountsOnFromWhatTheStoreHolds() {
    ThresholdCrossingProcessor first = started();
    for (int i = 0; i < 4; i++) {
      refuse(first, CMD_A, T0.plusSeconds(i));
    }
    assertThat(context.forwarded()).isEmpty();

    ThresholdCrossingProcessor again = started(); // its memory is empty: the store answers
    assertThat(again.openWindows()).isZero();
    refuse(again, CMD_A, T0.plusSeconds(10));
    assertThat(hitCounts()).containsExactly(5L);
    Hit hit = context.forwarded().get(0).record().value();
    assertThat(hit.eventIds()).containsExactly("e1", "e2", "e3", "e4", "e5");
    assertThat(hit.targets()).containsExactly(new Alert.Target("example.com:443", 5));
  }

  @Test
  void aProcessorStartedAgainReadsTheStoreUpToItsNewestWindowAndCountsNewOnesFromOne() {
    ThresholdCrossingProcessor first = started();
    for (int i = 0; i < 4; i++) {
      refuse(first, CMD_A, T0.plusSeconds(i)); // window [T0, T0+5m)
      refuse(first, CMD_B, T0.plusSeconds(300 + i)); // window [T0+5m, T0+10m), the store's newest
    }

    ThresholdCrossingProcessor again = started();
    refuse(again, CMD_B, T0.plusSeconds(310));
    refuse(again, CMD_A, T0.plusSeconds(200)); // late for the first window, within its grace
    refuse(again, CMD_A, T0.plusSeconds(610)); // a window that starts after the store's newest
    assertThat(context.forwarded()).extracting(f -> f.record().key() + "=" + f.record().value().count())
        .containsExactly(CMD_B + "=5", CMD_A + "=5");
    assertThat(store.fetch(CMD_A, T0.plusSeconds(600).toEpochMilli()).count()).isEqualTo(1);
  }

  @Test
  void whatTheProcessorCountsIsWhatTheStoreHolds() {
    ThresholdCrossingProcessor p = started();
    for (int i = 0; i < 7; i++) {
      refuse(p, CMD_A, T0.plusSeconds(i));
    }
    WindowCount stored = store.fetch(CMD_A, T0.toEpochMilli());
    assertThat(stored.count()).isEqualTo(7);
    assertThat(stored.sampleEventIds()).containsExactly("e1", "e2", "e3", "e4", "e5");
    assertThat(hitCounts()).containsExactly(5L, 6L, 7L);
  }

  @Test
  void windowsThatClosedWithTheirGraceLeaveMemory() {
    ThresholdCrossingProcessor p = started();
    refuse(p, CMD_A, T0);
    refuse(p, CMD_B, T0.plusSeconds(1));
    assertThat(p.openWindows()).isEqualTo(2);
    refuse(p, CMD_A, T0.plusSeconds(330)); // the next window; the first is still within its grace
    assertThat(p.openWindows()).isEqualTo(3);
    refuse(p, CMD_A, T0.plusSeconds(360)); // the first window's grace is over
    assertThat(p.openWindows()).isEqualTo(1);
  }
}
