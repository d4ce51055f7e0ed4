package dev.knockwatch.streams.count;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.detect.DetectProcessor;
import dev.knockwatch.streams.state.WriteBackStore;
import dev.knockwatch.streams.rules.Hit;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The sliding count detector's state: a new processor on a store that already holds it (a
 * restart, a moved task) counts on from it, and its binary form reads back equal.
 */
class SlidingCountMemoryTest {

  static final Instant T0 = SlidingCountTest.T0;
  static final String CMD_A = SlidingCountTest.CMD_A;
  static final Rule RULE = SlidingCountTest.RULE;
  static final String STORE = SlidingCountTest.STORE;

  MockProcessorContext<String, Hit> context;
  WriteBackStore<DetectProcessor.Slices> store;
  int seq;
  long streamTime = -1;

  @BeforeEach
  void setUp() {
    context = new MockProcessorContext<>();
    store = DetectProcessor.store(STORE, List.of(RULE)).withLoggingDisabled().build();
    store.init(context.getStateStoreContext(), store);
    context.addStateStore(store);
  }

  /** A commit, then what a restart keeps: the store underneath, read back into objects. */
  private void restart() {
    store.flushCache();
    store.clearCache();
  }

  private DetectProcessor started() {
    DetectProcessor p = new DetectProcessor(List.of(RULE), Policy.ofRules(List.of(RULE)), STORE, null);
    p.init(context);
    return p;
  }

  private void refuse(DetectProcessor p, Instant at) {
    seq++;
    streamTime = Math.max(streamTime, at.toEpochMilli());
    context.setCurrentStreamTimeMs(streamTime);
    ViolationEvent e = ViolationEvent.builder().eventId("e" + seq).commandId(CMD_A).agentId("ci-runner-1")
        .source("srt-violation").kind(Kind.NETWORK).action("network-outbound")
        .host("example.com").port(443).observedAt(at).build();
    p.process(new Record<>(CMD_A, e, at.toEpochMilli()));
  }

  @Test
  void aProcessorStartedAgainCountsOnFromWhatTheStoreHolds() {
    DetectProcessor first = started();
    for (int i = 0; i < 4; i++) {
      refuse(first, T0.plusSeconds(i));
    }
    assertThat(context.forwarded()).isEmpty();
    restart();
    DetectProcessor again = started();
    assertThat(again.keys()).isEqualTo(1);
    refuse(again, T0.plusSeconds(10));
    assertThat(context.forwarded()).extracting(f -> f.record().value().count()).containsExactly(5L);
    restart();
    refuse(started(), T0.plusSeconds(20)); // the episode too is in the store
    assertThat(context.forwarded()).extracting(f -> f.record().value().count()).containsExactly(5L, 6L);
  }

  @Test
  void everyStateReadsBackEqual() {
    RecentRefusalsSerde serde = new RecentRefusalsSerde();
    List<RecentRefusals> states = List.of(
        new RecentRefusals(List.of(), null),
        new RecentRefusals(List.of(new RecentRefusals.Sighting(1L, "e1", "example.com:443", "ci-runner-1"),
            new RecentRefusals.Sighting(2L, null, null, null)), null),
        new RecentRefusals(List.of(), new WindowCount(7, T0, T0.plusSeconds(9), "ci-runner-1", "/etc/passwd",
            List.of("e1", "e2"), Map.of("/etc/passwd", 7L))));
    for (RecentRefusals s : states) {
      assertThat(serde.deserializer().deserialize("t", serde.serializer().serialize("t", s))).isEqualTo(s);
    }
    assertThatThrownBy(() -> serde.deserializer().deserialize("t", new byte[] {1, 0x7f, 0, 0, 0}))
        .isInstanceOf(SerializationException.class).hasMessageContaining("not a recent refusals value");
  }
}
