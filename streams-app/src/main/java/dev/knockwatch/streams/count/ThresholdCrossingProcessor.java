package dev.knockwatch.streams.count;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.metrics.StreamsMetrics;
import dev.knockwatch.streams.rules.Hit;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.RuleProcessor;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.streams.rules.Rule;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.kstream.Windowed;
import java.time.Duration;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStore;

/**
 * Counts refusals per command in windows (tumbling, or hopping with {@code hop}) and reports a
 * hit the moment a window's count first reaches the threshold, and for every refusal after it
 * in that window (the lifecycle turns those into throttled updates of the same alert).
 *
 * <p>Why a processor and not {@code count().filter(c == threshold)}: the record cache coalesces
 * updates, so an equality test downstream of a cached count misses crossings; and
 * {@code suppress} waits for the window to close, which never happens when the agent goes quiet.
 * Here the store remembers the count itself, so a crossing is seen exactly once, however the
 * updates are batched.
 *
 * <p>The counts of the windows still open are also kept here, as objects, and written through
 * to the store: a refusal reads its window's count from this copy, not through the record cache
 * and the serde (bench streams: those two were about a seventh of the stream thread). The copy
 * starts empty at every {@link #init}; after a restart or a revived task the store, restored from
 * its changelog, answers for the windows the copy does not hold yet, up to the newest window it
 * held at init: a window that starts later can only be in the copy, so a new command's first
 * refusal reads nothing. The copy drops a window once it has closed with its grace.
 */
public final class ThresholdCrossingProcessor extends RuleProcessor {

  static final int MAX_SAMPLES = 5;

  private static final Serde<WindowCount> SERDE = new WindowCountSerde();

  private final Duration window;
  private final Duration advance;
  private final int threshold;
  private final Duration grace;
  private final String storeName;
  private WindowStore<String, WindowCount> store;
  /** The open windows' counts, by command and window start: what the store holds for them. */
  private final Map<WindowKey, WindowCount> open = new HashMap<>();
  /** Stream time at which the next window closes: {@link #open} is then cleared of it. */
  private long nextSweepAt = Long.MIN_VALUE;
  /** The start of the newest window the store held at {@link #init}; later ones are all in {@link #open}. */
  private long newestStoredStart = Long.MIN_VALUE;

  private record WindowKey(String commandId, long start) {}

  /** {@code rule}'s count in windows of {@code window} starting every {@code advance}, kept in {@code storeName}. */
  public ThresholdCrossingProcessor(Rule rule, Policy policy, String storeName, Duration window, Duration advance,
      int threshold, Duration grace) {
    super(rule, policy);
    this.window = window;
    this.advance = advance;
    this.threshold = threshold;
    this.grace = grace;
    this.storeName = storeName;
  }

  /** Its store: a count per key and window, in memory (with its changelog), cached, kept a window and its grace. */
  public static StoreBuilder<WindowStore<String, WindowCount>> store(String name, Duration window, Duration grace) {
    return Stores.windowStoreBuilder(Stores.inMemoryWindowStore(name, window.plus(grace), window, false),
        Serdes.String(), SERDE).withCachingEnabled();
  }

  @Override
  protected void start() {
    this.store = context.getStateStore(storeName);
    open.clear();
    nextSweepAt = Long.MIN_VALUE;
    try (KeyValueIterator<Windowed<String>, WindowCount> newest = store.backwardAll()) {
      newestStoredStart = newest.hasNext() ? newest.next().key.window().start() : Long.MIN_VALUE;
    }
  }

  /** How many windows the processor holds in memory (for tests). */
  int openWindows() {
    return open.size();
  }

  @Override
  protected void judge(Record<String, ViolationEvent> record, String commandId, ViolationEvent event, String role) {
    long ts = record.timestamp();
    long size = window.toMillis();
    long advance = this.advance.toMillis();
    // every window [start, start + size) holding ts, starts aligned to the advance
    long lastStart = ts - Math.floorMod(ts, advance);
    long grace = this.grace.toMillis();
    long streamTime = context.currentStreamTimeMs();
    if (streamTime >= nextSweepAt) {
      open.keySet().removeIf(k -> k.start() + size + grace <= streamTime);
      // windows start on multiples of the advance, so they close (grace included) at
      // k * advance + size + grace: the next sweep is due at the next of those instants
      nextSweepAt = (Math.floorDiv(streamTime - size - grace, advance) + 1) * advance + size + grace;
    }
    boolean counted = false;
    for (long start = lastStart; start > ts - size; start -= advance) {
      long end = start + size;
      if (end + grace <= streamTime) {
        continue; // this window closed, with its grace
      }
      counted = true;
      WindowKey key = new WindowKey(commandId, start);
      WindowCount before = open.get(key);
      if (before == null && start <= newestStoredStart) {
        before = store.fetch(commandId, start);
      }
      WindowCount after = add(before, event, Instant.ofEpochMilli(ts));
      store.put(commandId, after, start);
      open.put(key, after);
      if (after.count() == threshold) {
        StreamsMetrics.CROSSINGS.labels(rule.id()).inc();
      }
      if (after.count() >= threshold) {
        context.forward(new Record<>(commandId, hit(commandId, role, event, after, start, end), ts));
      }
    }
    if (!counted) {
      StreamsMetrics.LATE_EVENTS.labels(rule.id()).inc();
    }
  }

  static WindowCount add(WindowCount before, ViolationEvent e, Instant at) {
    return add(before, e.eventId(), target(e), e.agentId(), at);
  }

  /**
   * {@code before} (null: nothing yet) with one more refusal. Its tally of targets is taken over,
   * counted into where it stands rather than copied (a copy on each refusal of an episode cost a
   * twentieth of detection's CPU): the caller replaces {@code before} by what this returns and reads
   * it no more.
   */
  static WindowCount add(WindowCount before, String eventId, String target, String agentId, Instant at) {
    if (before == null) {
      Map<String, Long> targets = new LinkedHashMap<>();
      if (target != null) {
        WindowCount.tally(targets, target);
      }
      return new WindowCount(1, at, at, agentId, target, eventId == null ? List.of() : List.of(eventId), targets);
    }
    List<String> samples = before.sampleEventIds();
    if (samples.size() < MAX_SAMPLES && eventId != null) {
      List<String> more = new ArrayList<>(samples.size() + 1);
      more.addAll(samples);
      more.add(eventId);
      samples = List.copyOf(more);
    }
    Instant first = at.isBefore(before.firstSeen()) ? at : before.firstSeen();
    Instant last = at.isAfter(before.lastSeen()) ? at : before.lastSeen();
    String agent = before.agentId() != null ? before.agentId() : agentId;
    Map<String, Long> targets = before.targets() instanceof LinkedHashMap<String, Long> own ? own
        : before.targets() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(before.targets());
    if (target != null) {
      WindowCount.tally(targets, target);
    }
    String lastTarget = at.isBefore(before.lastSeen()) ? before.lastTarget() : target;
    return new WindowCount(before.count() + 1, first, last, agent, lastTarget, samples, targets);
  }

  static String target(ViolationEvent e) {
    if (e.host() != null) {
      return e.port() == null ? e.host() : e.host() + ":" + e.port();
    }
    return e.path();
  }

  private Hit hit(String commandId, String role, ViolationEvent e, WindowCount c, long windowStart, long windowEnd) {
    String summary = rule.nounOf(commandId, e) + " refused " + c.count() + " times within " + Key.human(window)
        + " (threshold " + threshold + ")" + (c.lastTarget() == null ? "" : "; last: " + c.lastTarget());
    return new Hit(rule, Alert.fingerprintOf(rule.id(), commandId), rule.commandOf(commandId, e), c.agentId(), role,
        null, null, e.source(),
        c.firstSeen(), c.lastSeen(), c.sampleEventIds(), c.count(), Instant.ofEpochMilli(windowStart),
        Instant.ofEpochMilli(windowEnd), summary, WindowCount.top(c.targets()));
  }

}
