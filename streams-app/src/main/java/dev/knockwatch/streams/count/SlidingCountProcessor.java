package dev.knockwatch.streams.count;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.StreamsMetrics;
import dev.knockwatch.streams.lifecycle.Hit;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.detect.RuleProcessor;
import dev.knockwatch.streams.detect.ValueCountDetector;
import dev.knockwatch.streams.rules.Setting;
import dev.knockwatch.streams.rules.Rule;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * "{@code threshold} refusals in any {@code window}" ({@code count}), or "{@code threshold}
 * distinct values of a field in any {@code window}" ({@code value-count}, Sigma's value_count: a
 * command trying many hosts, as a scan does): a command crosses the moment its newest
 * {@code threshold} refusals lie within one span shorter than the window, wherever the span falls
 * (no aligned boundary to straddle). The crossing starts an episode: every refusal after it
 * until the rule's quiet time ({@code resolveAfter}) passes without one is a hit of the same
 * episode (the lifecycle turns those into throttled updates of one alert); a refusal after that
 * starts counting afresh.
 *
 * <p>For value-count a sighting stands for its value: a value seen again moves to its newest
 * time, so the newest {@code threshold} sightings are always {@code threshold} distinct values.
 *
 * <p>Per command the store holds at most {@code threshold} timestamps (with their event ids and
 * targets, for the alert) before a crossing, and the episode's running count after it: the cost
 * does not grow with the window or with the refusal rate, where hopping windows a second apart
 * would hold window/hop counts per command. A refusal arriving out of order counts with the
 * newest {@code threshold} it is read beside; one older than its span's close plus the grace is
 * late and not counted, as with aligned windows.
 *
 * <p>As in {@link ThresholdCrossingProcessor}, the states are also kept here as objects, written
 * through to the store (so a refusal does not go through the record cache and the serde to read
 * them); the copy is filled from the store at {@link #init}, after a restart or a move of the
 * task, and a stream-time punctuation drops the states that can no longer change an answer.
 */
public final class SlidingCountProcessor extends RuleProcessor {

  private static final Duration SWEEP = Duration.ofMinutes(1);

  private static final Serde<RecentRefusals> SERDE = new RecentRefusalsSerde();

  private final Duration window;
  private final int threshold;
  private final Duration grace;
  private final ValueCountDetector.Field field;
  private final String storeName;
  private KeyValueStore<String, RecentRefusals> store;
  private final Map<String, RecentRefusals> states = new HashMap<>();

  /** @param field value-count's counted field; null for count */
  public SlidingCountProcessor(Rule rule, Duration window, int threshold, Duration grace, ValueCountDetector.Field field,
      Policy policy, String storeName) {
    super(rule, policy);
    this.window = window;
    this.threshold = threshold;
    this.grace = grace;
    this.field = field;
    this.storeName = storeName;
  }

  /**
   * Its store: in memory (with its changelog), so no RocksDB call per refusal. Cached: a key's state
   * changes many times between two commits, and only its last value goes to the changelog (more
   * events per CPU-second in bench streams; caching the other stores did not help).
   */
  public static StoreBuilder<KeyValueStore<String, RecentRefusals>> store(String name) {
    return Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.String(), SERDE).withCachingEnabled();
  }

  @Override
  protected void start() {
    this.store = context.getStateStore(storeName);
    states.clear();
    try (KeyValueIterator<String, RecentRefusals> all = store.all()) {
      all.forEachRemaining(kv -> states.put(kv.key, kv.value));
    }
    context.schedule(SWEEP, PunctuationType.STREAM_TIME, this::sweep);
  }

  /** How many commands the processor holds (for tests). */
  int commands() {
    return states.size();
  }

  @Override
  protected void judge(Record<String, ViolationEvent> record, String commandId, ViolationEvent event, String role) {
    String distinct = field == null ? null : field.of(event);
    if (field != null && distinct == null) {
      return; // value-count: a refusal without the counted value does not count
    }
    long ts = record.timestamp();
    long window = this.window.toMillis();
    long grace = this.grace.toMillis();
    if (ts + window + grace <= context.currentStreamTimeMs()) {
      StreamsMetrics.LATE_EVENTS.labels(rule.id()).inc();
      return; // every span holding it closed, with its grace
    }
    Instant at = Instant.ofEpochMilli(ts);
    RecentRefusals before = states.get(commandId);
    WindowCount episode = before == null ? null : before.episode();
    if (episode != null && ts <= episode.lastSeen().toEpochMilli() + rule.resolveAfter().toMillis()) {
      WindowCount after = ThresholdCrossingProcessor.add(episode, event, at);
      put(commandId, new RecentRefusals(List.of(), after));
      forward(commandId, role, event, after, ts);
      return;
    }
    List<RecentRefusals.Sighting> recent = new ArrayList<>(
        before == null || episode != null ? List.of() : before.recent());
    RecentRefusals.Sighting s = new RecentRefusals.Sighting(ts, event.eventId(), distinct != null ? distinct
        : ThresholdCrossingProcessor.target(event), event.agentId());
    if (distinct != null) {
      // value-count: each value's newest sighting only, so the newest threshold are threshold distinct values
      RecentRefusals.Sighting same = recent.stream().filter(r -> distinct.equals(r.target())).findFirst().orElse(null);
      if (same != null && same.at() >= ts) {
        return; // seen since: nothing changes
      }
      recent.remove(same);
    }
    int i = recent.size();
    while (i > 0 && recent.get(i - 1).at() > ts) {
      i--;
    }
    recent.add(i, s);
    if (recent.size() > threshold) {
      recent.remove(0);
    }
    if (recent.size() == threshold && recent.get(recent.size() - 1).at() - recent.get(0).at() < window) {
      WindowCount crossing = null;
      for (RecentRefusals.Sighting r : recent) {
        crossing = ThresholdCrossingProcessor.add(crossing, r.eventId(), r.target(), r.agentId(), Instant.ofEpochMilli(r.at()));
      }
      put(commandId, new RecentRefusals(List.of(), crossing));
      StreamsMetrics.CROSSINGS.labels(rule.id()).inc();
      forward(commandId, role, event, crossing, ts);
      return;
    }
    put(commandId, new RecentRefusals(List.copyOf(recent), null));
  }

  private void put(String commandId, RecentRefusals state) {
    states.put(commandId, state);
    store.put(commandId, state);
  }

  private void forward(String commandId, String role, ViolationEvent e, WindowCount c, long ts) {
    String summary = (field == null
        ? rule.nounOf(commandId, e) + " refused " + c.count() + " times in " + span(c) + " (threshold " + threshold
        : rule.nounOf(commandId, e) + " tried " + threshold + " distinct " + field.wireName() + " values within "
            + Setting.human(window) + " (" + c.count() + " refusals in " + span(c)
            + " so far; threshold " + threshold)
        + " within " + Setting.human(window) + ")"
        + (c.lastTarget() == null ? "" : "; last: " + c.lastTarget());
    context.forward(new Record<>(commandId, new Hit(rule, Alert.fingerprintOf(rule.id(), commandId),
        rule.commandOf(commandId, e), c.agentId(), role, null, null, e.source(), c.firstSeen(), c.lastSeen(), c.sampleEventIds(), c.count(),
        c.firstSeen(), c.firstSeen().plus(window), summary, WindowCount.top(c.targets())), ts));
  }

  /** From the first refusal to the last, in whole seconds (at least 1), e.g. {@code 20s}, {@code 2m30s}, {@code 1h5m}. */
  static String span(WindowCount c) {
    long ms = c.lastSeen().toEpochMilli() - c.firstSeen().toEpochMilli();
    long s = Math.max(1, (ms + 999) / 1000);
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return s / 60 + "m" + (s % 60 == 0 ? "" : s % 60 + "s");
    }
    return s / 3600 + "h" + (s % 3600 / 60 == 0 ? "" : s % 3600 / 60 + "m");
  }

  private void sweep(long streamTime) {
    long window = this.window.toMillis();
    long grace = this.grace.toMillis();
    long quiet = rule.resolveAfter().toMillis();
    List<String> done = new ArrayList<>();
    states.forEach((command, state) -> {
      if (state.expiresAt(window, grace, quiet) <= streamTime) {
        done.add(command);
      }
    });
    List<KeyValue<String, RecentRefusals>> deletes = new ArrayList<>(done.size());
    for (String command : done) {
      states.remove(command);
      deletes.add(KeyValue.pair(command, null));
    }
    if (!deletes.isEmpty()) {
      store.putAll(deletes);
    }
  }
}
