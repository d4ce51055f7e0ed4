package dev.knockwatch.streams.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.streams.timeline.CommandSummary;
import dev.knockwatch.streams.timeline.TimelineIndex;
import dev.knockwatch.streams.timeline.TimelineIndex.AlertRow;
import dev.knockwatch.streams.timeline.TimelineIndex.CommandRow;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The lists read from the index give what a scan of every command would, filter for filter, and
 * read only about their limit: 3 partitions of 6,000 commands, real in-memory stores ordered by
 * bytes as RocksDB's are.
 */
class IndexListsTest {

  static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");
  static final String[] AGENTS = {"ci-runner-1", "ci-runner-2", "assistant-7", "knockwatch-guard", "a\u0000b", "\u202eevil"};
  static final String[] ROLES = {"ci", "assistant", null};

  final List<CountingStore> partitions = new ArrayList<>();
  final List<CommandSummary> all = new ArrayList<>();

  @BeforeEach
  void fill() {
    MockProcessorContext<Void, Void> context = new MockProcessorContext<>();
    for (int p = 0; p < 3; p++) {
      KeyValueStore<String, String> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("index-" + p),
          Serdes.String(), Serdes.String()).withLoggingDisabled().build();
      s.init(context.getStateStoreContext(), s);
      partitions.add(new CountingStore(s));
    }
    Random r = new Random(7);
    Alert.Severity[] severities = Alert.Severity.values();
    for (int i = 0; i < 6_000; i++) {
      String id = String.format("IndexListsCommand%06d", i);
      Map<String, CommandSummary.AlertBrief> alerts = new LinkedHashMap<>();
      for (int a = 0; a < (i % 5 == 0 ? 1 + r.nextInt(3) : 0); a++) {
        Instant seen = T0.plusMillis(i * 10L + a + 1);
        alerts.put("fp" + i + "-" + a, new CommandSummary.AlertBrief("rule-" + r.nextInt(4),
            r.nextInt(20) == 0 ? null : severities[r.nextInt(severities.length)],
            r.nextInt(3) == 0 ? Alert.Status.FIRING : Alert.Status.RESOLVED, 1, seen, seen, "s", null, null, null));
      }
      boolean alertOnly = i % 50 == 0;
      CommandSummary s = new CommandSummary(id, AGENTS[r.nextInt(AGENTS.length)], ROLES[r.nextInt(ROLES.length)],
          alertOnly ? null : T0, alertOnly ? null : T0.plusMillis(i * 10L), alertOnly ? 0 : 1, Map.of(), Map.of(),
          Map.of(), alerts, null, null);
      all.add(s);
      KeyValueStore<String, String> part = partitions.get(Math.floorMod(id.hashCode(), 3)).store;
      TimelineIndex.update(part, null, s); // the processor's own update, as from an empty store
    }
  }

  @Test
  void everyFilterGivesWhatAFullScanWouldAndReadsAboutItsLimit() {
    Random r = new Random(11);
    String[] agentParams = {null, "ci-runner-1", "ci-*", "a\u0000b", "knockwatch-guard", "nobody", "?\u202eevil", "*"};
    String[] ruleParams = {null, "rule-1", "rule-*", "*-3"};
    for (int q = 0; q < 400; q++) {
      Map<String, String> params = new HashMap<>();
      int limit = 1 + r.nextInt(60);
      params.put("limit", String.valueOf(limit));
      put(params, "agent", agentParams[r.nextInt(agentParams.length)]);
      put(params, "role", r.nextInt(3) == 0 ? ROLES[r.nextInt(2)] : null);
      put(params, "rule", ruleParams[r.nextInt(ruleParams.length)]);
      put(params, "status", r.nextInt(3) == 0 ? null : r.nextBoolean() ? "firing" : "resolved");
      put(params, "severity", r.nextInt(3) == 0 ? "critical,warning" : r.nextInt(2) == 0 ? "page" : null);
      put(params, "probes", r.nextBoolean() ? "false" : null);
      if (r.nextBoolean()) {
        params.put("since", T0.plusMillis(r.nextInt(60_000)).toString());
      }
      if (r.nextBoolean()) {
        params.put("until", T0.plusMillis(r.nextInt(60_000)).toString());
      }
      ListFilter f = ListFilter.of(params);
      List<ReadOnlyKeyValueStore<String, String>> stores = new ArrayList<>(partitions);

      List<CommandRow> scanned = new ArrayList<>();
      all.forEach(s -> scanned.add(CommandRow.of(s)));
      List<CommandRow> commands = scanned.stream().filter(f::command).sorted(ListFilter.COMMAND_ORDER).limit(limit).toList();
      assertThat(IndexLists.commands(stores, f, limit)).as("commands %s", params).isEqualTo(commands);

      List<AlertRow> alerts = new ArrayList<>();
      all.forEach(s -> s.alerts().forEach((fp, a) -> alerts.add(AlertRow.of(s, fp, a))));
      List<AlertRow> expected = alerts.stream().filter(f::alert).sorted(ListFilter.ALERT_ORDER).limit(limit).toList();
      assertThat(IndexLists.alerts(stores, f, limit)).as("alerts %s", params).isEqualTo(expected);
    }
  }

  @Test
  void theConsolesListsReadTheirLimitNotTheStore() {
    int limit = 50;
    reads(() -> IndexLists.commands(new ArrayList<>(partitions), ListFilter.of(Map.of()), limit));
    long commandRows = reads(() -> IndexLists.commands(new ArrayList<>(partitions), ListFilter.of(Map.of()), limit));
    assertThat(commandRows).isLessThanOrEqualTo(3L * limit);
    long oneAgent = reads(() -> IndexLists.commands(new ArrayList<>(partitions), ListFilter.of(Map.of("agent", "assistant-7")), limit));
    assertThat(oneAgent).as("one agent's commands: its own range").isLessThanOrEqualTo(3L * limit);
    long firing = reads(() -> IndexLists.alerts(new ArrayList<>(partitions), ListFilter.of(Map.of("status", "firing")), limit));
    assertThat(firing).isLessThanOrEqualTo(3L * limit);
    long inRange = reads(() -> IndexLists.commands(new ArrayList<>(partitions), ListFilter.of(Map.of(
        "since", T0.plusMillis(10_000).toString(), "until", T0.plusMillis(10_990).toString())), 1000));
    assertThat(inRange).as("a range reads what is in it").isLessThanOrEqualTo(100);
  }

  private long reads(Runnable list) {
    partitions.forEach(p -> p.rows.set(0));
    list.run();
    return partitions.stream().mapToLong(p -> p.rows.get()).sum();
  }

  private static void put(Map<String, String> params, String key, String value) {
    if (value != null) {
      params.put(key, value);
    }
  }

  /** A partition's index that counts the rows its ranges give. */
  static final class CountingStore implements ReadOnlyKeyValueStore<String, String> {
    final KeyValueStore<String, String> store;
    final AtomicLong rows = new AtomicLong();

    CountingStore(KeyValueStore<String, String> store) {
      this.store = store;
    }

    @Override
    public String get(String key) {
      return store.get(key);
    }

    @Override
    public KeyValueIterator<String, String> range(String from, String to) {
      KeyValueIterator<String, String> it = store.range(from, to);
      return new KeyValueIterator<>() {
        @Override
        public void close() {
          it.close();
        }

        @Override
        public String peekNextKey() {
          return it.peekNextKey();
        }

        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public KeyValue<String, String> next() {
          rows.incrementAndGet();
          return it.next();
        }
      };
    }

    @Override
    public KeyValueIterator<String, String> all() {
      throw new AssertionError("a list read the whole index");
    }

    @Override
    public long approximateNumEntries() {
      return store.approximateNumEntries();
    }
  }
}
