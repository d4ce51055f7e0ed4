package dev.knockwatch.streams.timeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Policy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * A timeline store from before the lists' index (an upgrade) is indexed in batches, each small
 * enough for one transaction, while its commands keep changing; the lists wait for the marker.
 */
class TimelineIndexBuildTest {

  static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");

  private final MockProcessorContext<Void, Void> context = new MockProcessorContext<>();

  private <V> KeyValueStore<String, V> store(String name, Serde<V> values) {
    KeyValueStore<String, V> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.String(), values)
        .withLoggingDisabled().build();
    s.init(context.getStateStoreContext(), s);
    context.addStateStore(s);
    return s;
  }

  private static String id(int i) {
    return String.format("IndexBuildCommand%06d", i);
  }

  private static ViolationEvent event(String cmd, Instant at) {
    return ViolationEvent.builder().eventId("e-" + cmd + at).commandId(cmd).agentId("ci-runner-" + cmd.hashCode() % 3)
        .source("srt-violation").kind(Kind.NETWORK).action("network-outbound").host("evil.example").port(443)
        .observedAt(at).build();
  }

  @Test
  void aStoreFromBeforeTheIndexIsIndexedInBatchesWhileItsCommandsKeepChanging() {
    KeyValueStore<String, CommandSummary> commands = store(TimelineProcessor.COMMANDS, Json.serde(CommandSummary.class));
    store(TimelineProcessor.EVENTS, Json.eventSerde());
    KeyValueStore<String, String> index = store(TimelineIndex.STORE, Serdes.String());
    int n = 2 * TimelineProcessor.BUILD_BATCH + 1;
    for (int i = 0; i < n; i++) {
      Instant at = T0.plusSeconds(i);
      CommandSummary s = CommandSummary.empty(id(i)).with(event(id(i), at), "ci", at);
      if (i % 7 == 0) {
        s = s.with(Alert.firing("off-role-host", id(i)).fingerprint("fp" + i).severity(Alert.Severity.PAGE)
            .status(i % 2 == 0 ? Alert.Status.FIRING : Alert.Status.RESOLVED).agentId(s.agentId()).role("ci")
            .firstSeen(at).lastSeen(at).summary("s").sampleEventIds(List.of()).build());
      }
      commands.put(id(i), s);
    }
    TimelineProcessor timeline = new TimelineProcessor(Policy.ofRules(List.of()), Duration.ofDays(3650));
    timeline.init(context);
    MockProcessorContext.CapturedPunctuator build = context.scheduledPunctuators().stream()
        .filter(p -> p.getInterval().equals(Duration.ofMillis(100))).findFirst().orElseThrow();
    int rounds = 0;
    while (!build.cancelled()) {
      assertThat(index.get(TimelineIndex.BUILT)).as("marked built before its last batch").isNull();
      build.getPunctuator().punctuate(T0.toEpochMilli());
      rounds++;
      // between batches: a command already indexed, one not yet, and a new one change
      Instant later = T0.plus(Duration.ofDays(1)).plusSeconds(rounds);
      for (String cmd : List.of(id(rounds), id(n - rounds), String.format("IndexBuildNewcomer%04d", rounds))) {
        timeline.process(new Record<>(cmd, new TimelineInput(event(cmd, later), null), later.toEpochMilli()));
      }
    }
    assertThat(rounds).isEqualTo(3);
    assertThat(index.get(TimelineIndex.BUILT)).isNotNull();
    Map<String, String> is = new TreeMap<>();
    try (KeyValueIterator<String, String> it = index.all()) {
      it.forEachRemaining(kv -> is.put(kv.key, kv.value));
    }
    is.remove(TimelineIndex.BUILT);
    Map<String, String> shouldBe = new TreeMap<>();
    try (KeyValueIterator<String, CommandSummary> it = commands.all()) {
      it.forEachRemaining(kv -> shouldBe.putAll(TimelineIndex.entries(kv.value, true)));
    }
    assertThat(shouldBe).hasSize(2 * (n + 3) + (n / 7 + 1));
    assertThat(is.keySet()).isEqualTo(shouldBe.keySet());
    assertThat(is).isEqualTo(shouldBe);
  }
}
