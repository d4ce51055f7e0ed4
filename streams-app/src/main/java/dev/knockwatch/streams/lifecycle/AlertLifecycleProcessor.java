package dev.knockwatch.streams.lifecycle;

import dev.knockwatch.streams.rules.Hit;
import dev.knockwatch.events.Alert;
import dev.knockwatch.streams.metrics.StreamsMetrics;
import dev.knockwatch.streams.count.WindowCount;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyView;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.HashMap;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.Set;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Turns hits into alerts, once: the first hit of a fingerprint writes a {@code firing} alert
 * at once; later hits update its count, written at most once per {@code throttle}; after
 * {@code resolveAfter} without a hit it is written {@code resolved} and forgotten (a later hit
 * fires it anew). A fingerprint is a rule and a command: a rule that judges each refusal on
 * its own (off-role, address-class, fs-guard, wall-breach) keeps one alert for the command's
 * episode, and each new host updates its bounded {@link EpisodeTargets}. A count rule's crossing in a window that starts after the alerted window
 * ended writes a new firing alert with that window (overlapping hopping windows update it). A hit without a rule only adds its source to the command's firing alerts (the same
 * refusal seen by a second log).
 *
 * <p>The clock is the wall clock when live (a quiet agent still resolves) and stream time in
 * {@code replay}, whose end of input advances stream time, so its output is deterministic.
 */
public final class AlertLifecycleProcessor implements Processor<String, Hit, String, Alert> {

  /** Which clock idles and throttles are measured on. */
  public enum Clock { WALL, STREAM }

  public static final String STORE = "alert-lifecycle";
  private final String storeName;
  public static final Duration DEFAULT_THROTTLE = Duration.ofSeconds(30);
  static final int MAX_SAMPLES = 5;
  private static final String SEP = "|";

  private final Clock clock;
  private final Duration throttle;
  private final Policy policy;
  private PolicyView view;
  private ProcessorContext<String, Alert> context;
  private KeyValueStore<String, AlertState> store;
  /**
   * The store's content, in memory (the alerts still firing: resolved ones are deleted). Reads
   * and the sweep use it, so a hit costs no store read and the sweep no deserialization. What
   * changes the output (a new alert, a written update, a resolution) is written to the store at
   * once; a hit that only raises the count of a throttled alert is written by the next sweep
   * (within a second), so a storm costs one store write per alert per second, not one per hit.
   * After a crash the count of such an alert may miss the hits of that last second. Ordered by
   * store key: a command's alerts side by side (a second source adds itself to all of them), and
   * the sweep's output in a stable order.
   */
  private final NavigableMap<String, Slot> live = new TreeMap<>();
  /** The same slots by fingerprint (unique per rule and command): a hit finds its alert without comparing keys. */
  private final Map<String, Slot> byFingerprint = new HashMap<>();
  /** Slots whose state the store does not have yet (a slot written or dropped since is skipped). */
  private final List<Slot> dirty = new ArrayList<>();
  /**
   * On the wall clock, the sweep is scheduled for when it has something to do, not every second:
   * each punctuation makes Kafka Streams commit its task, under exactly-once a transaction, so an
   * idle app with a firing alert would otherwise commit one a second (docs/PERFORMANCE.md, "up
   * idle"). A hit asks for a sweep within {@link #SWEEP_GAP}; a sweep schedules the next for the
   * first resolution or throttled update due. Null: none is scheduled.
   */
  private Cancellable sweeping;
  /** When {@link #sweeping} fires (wall clock, ms). */
  private long sweepAt = Long.MAX_VALUE;
  /** The shortest wait between two sweeps, and the longest a hit waits for one. */
  static final long SWEEP_GAP = 1_000;

  /** One firing alert in memory: its store key, its state, and whether the store is behind. */
  private static final class Slot {
    final String key;
    AlertState state;
    boolean dirty;

    Slot(String key, AlertState state) {
      this.key = key;
      this.state = state;
    }
  }

  public AlertLifecycleProcessor(Clock clock, Duration throttle, Policy policy) {
    this(clock, throttle, policy, STORE);
  }

  /** @param storeName its store: {@link #STORE}, or the by-grain lifecycle's own */
  public AlertLifecycleProcessor(Clock clock, Duration throttle, Policy policy, String storeName) {
    this.clock = clock;
    this.throttle = throttle;
    this.policy = policy;
    this.storeName = storeName;
  }

  @Override
  public void init(ProcessorContext<String, Alert> context) {
    this.context = context;
    this.store = context.getStateStore(storeName);
    this.view = PolicyView.of(policy, context);
    live.clear();
    byFingerprint.clear();
    dirty.clear();
    try (KeyValueIterator<String, AlertState> it = store.all()) {
      it.forEachRemaining(kv -> add(kv.key, kv.value));
    }
    sweeping = null;
    sweepAt = Long.MAX_VALUE;
    if (clock == Clock.STREAM) {
      context.schedule(Duration.ofMillis(SWEEP_GAP), PunctuationType.STREAM_TIME, this::sweep);
    } else if (!live.isEmpty()) {
      sweepWithin(context.currentSystemTimeMs(), SWEEP_GAP);
    }
  }

  @Override
  public void process(Record<String, Hit> record) {
    Hit hit = record.value();
    if (hit == null) {
      return;
    }
    long now = now(record.timestamp());
    if (clock == Clock.WALL) {
      sweepWithin(now, SWEEP_GAP);
    }
    if (hit.rule() == null) {
      addSource(hit, now);
      return;
    }
    Slot slot = byFingerprint.get(hit.fingerprint());
    AlertState state = slot == null ? null : slot.state;
    if (state != null && now - state.lastHitMs() >= state.resolveAfterMs()) {
      // quiet for its rule's resolveAfter before this hit, though no sweep has run since (stream
      // time jumps in replay): the episode ends here as the sweep would have ended it, and this hit
      // opens the next one, for every detector alike
      resolve(slot);
      forget(slot);
      slot = null;
      state = null;
    }
    long resolveAfter = hit.rule().resolveAfter().toMillis();
    // a count rule crossing in a window that starts after the alerted one ended: a new alert
    if (state == null || (hit.windowStart() != null && !hit.windowStart().isBefore(state.alert().windowEnd()))) {
      Alert alert = fresh(hit);
      AlertState first = new AlertState(alert, now, now, false, resolveAfter, perRefusal(hit)
          ? EpisodeTargets.first(hit.targets().get(0).target()) : null);
      if (slot == null) {
        slot = add(hit.commandId() + SEP + hit.fingerprint(), first);
      } else {
        slot.state = first;
      }
      write(slot);
      emit(first.alert(), first.targets(), record.timestamp());
      return;
    }
    Alert a = updated(state.alert(), hit);
    EpisodeTargets targets = state.targets();
    if (targets != null && perRefusal(hit)) {
      targets.add(hit.targets().get(0).target()); // a new host of the same command: the same alert
    }
    boolean due = now - state.lastEmittedMs() >= throttle.toMillis();
    if (due) {
      emit(a, targets, record.timestamp());
    }
    slot.state = new AlertState(a, now, due ? now : state.lastEmittedMs(), !due, resolveAfter, targets);
    if (due) {
      write(slot);
    } else {
      markDirty(slot);
    }
  }

  private Slot add(String key, AlertState state) {
    Slot slot = new Slot(key, state);
    live.put(key, slot);
    byFingerprint.put(state.alert().fingerprint(), slot);
    return slot;
  }

  private void write(Slot slot) {
    store.put(slot.key, slot.state);
    slot.dirty = false;
  }

  private void resolve(Slot slot) {
    AlertState s = slot.state;
    emit(s.alert().resolved(), s.targets(), s.alert().lastSeen().toEpochMilli());
  }

  /** A resolved alert leaves the store and memory: the next hit of its fingerprint fires anew. */
  private void forget(Slot slot) {
    store.delete(slot.key);
    live.remove(slot.key);
    byFingerprint.remove(slot.state.alert().fingerprint());
    slot.dirty = false;
  }

  private void markDirty(Slot slot) {
    if (!slot.dirty) {
      slot.dirty = true;
      dirty.add(slot);
    }
  }

  private void addSource(Hit hit, long now) {
    String prefix = hit.commandId() + SEP;
    for (Slot slot : live.subMap(prefix, true, prefix + Character.MAX_VALUE, false).values()) {
      Alert a = slot.state.alert();
      if (a.sources() != null && a.sources().contains(hit.source())) {
        continue;
      }
      Set<String> sources = new LinkedHashSet<>(a.sources() == null ? List.of() : a.sources());
      sources.add(hit.source());
      Alert b = a.updated(a.count(), a.lastSeen(), a.summary(), a.sampleEventIds(), List.copyOf(sources), a.targets());
      AlertState s = slot.state;
      slot.state = new AlertState(b, s.lastHitMs(), s.lastEmittedMs(), true, s.resolveAfterMs(), s.targets());
      markDirty(slot);
    }
  }

  /** Resolves what went quiet and writes throttled updates whose time has come. */
  private void sweep(long timestamp) {
    long now = clock == Clock.WALL ? timestamp : context.currentStreamTimeMs();
    if (sweeping != null) {
      sweeping.cancel(); // the next is scheduled below, for when it is due
      sweeping = null;
      sweepAt = Long.MAX_VALUE;
    }
    long next = Long.MAX_VALUE;
    List<Slot> changed = new ArrayList<>();
    List<Slot> resolved = new ArrayList<>();
    for (Slot slot : live.values()) {
      AlertState s = slot.state;
      if (now - s.lastHitMs() >= s.resolveAfterMs()) {
        resolve(slot);
        resolved.add(slot);
        continue;
      }
      if (s.pending() && now - s.lastEmittedMs() >= throttle.toMillis()) {
        emit(s.alert(), s.targets(), s.alert().lastSeen().toEpochMilli());
        slot.state = new AlertState(s.alert(), s.lastHitMs(), now, false, s.resolveAfterMs(), s.targets());
        changed.add(slot);
      }
      next = Math.min(next, s.lastHitMs() + s.resolveAfterMs());
      if (slot.state.pending()) {
        next = Math.min(next, s.lastEmittedMs() + throttle.toMillis());
      }
    }
    resolved.forEach(this::forget);
    changed.forEach(this::write);
    for (Slot slot : dirty) {
      if (slot.dirty) {
        write(slot);
      }
    }
    dirty.clear();
    Map<List<String>, Long> firing = new HashMap<>();
    for (Slot slot : live.values()) {
      Alert a = slot.state.alert();
      firing.merge(List.of(a.rule(), a.severity().name().toLowerCase(Locale.ROOT), a.shadow() == null ? "enforce" : "shadow"),
          1L, Long::sum);
    }
    FiringAlerts.report(context.taskId().toString(), firing);
    if (clock == Clock.WALL && next != Long.MAX_VALUE) {
      sweepWithin(now, next - now);
    }
  }

  /** Makes sure a sweep comes within {@code delayMs} of {@code now} (no sooner than {@link #SWEEP_GAP}). */
  private void sweepWithin(long now, long delayMs) {
    long at = now + Math.max(SWEEP_GAP, delayMs);
    if (sweeping != null && sweepAt <= at) {
      return;
    }
    if (sweeping != null) {
      sweeping.cancel();
    }
    sweeping = context.schedule(Duration.ofMillis(at - now), PunctuationType.WALL_CLOCK_TIME, this::sweep);
    sweepAt = at;
  }

  @Override
  public void close() {
    if (context != null) {
      FiringAlerts.withdraw(context.taskId().toString());
    }
  }

  private long now(long recordTimestamp) {
    return clock == Clock.WALL ? context.currentSystemTimeMs()
        : Math.max(context.currentStreamTimeMs(), recordTimestamp);
  }

  private Alert fresh(Hit h) {
    return new Alert(h.fingerprint(), h.rule().id(), h.rule().severity(), Alert.Status.FIRING, h.commandId(),
        h.agentId(), h.role(), h.host(), h.port(), h.count(), h.windowStart(), h.windowEnd(),
        h.firstSeen() == null ? h.at() : h.firstSeen(), h.at(), h.summary(),
        h.eventIds() == null ? List.of() : h.eventIds().stream().limit(MAX_SAMPLES).toList(),
        h.source() == null ? List.of() : List.of(h.source()), view.current().version(),
        h.rule().shadow() ? Boolean.TRUE : null, h.targets(), null, null, h.rule().meta());
  }

  /** A hit of a rule that judges each refusal on its own, naming what was refused. */
  private static boolean perRefusal(Hit h) {
    return h.windowStart() == null && h.targets() != null && h.targets().size() == 1;
  }

  private static Alert updated(Alert a, Hit h) {
    List<String> samples = a.sampleEventIds();
    if (samples == null || (samples.size() < MAX_SAMPLES && h.eventIds() != null && !h.eventIds().isEmpty())) {
      List<String> more = samples == null ? new ArrayList<>() : new ArrayList<>(samples);
      for (String id : h.eventIds() == null ? List.<String>of() : h.eventIds()) {
        if (more.size() < MAX_SAMPLES && !more.contains(id)) {
          more.add(id);
        }
      }
      samples = List.copyOf(more);
    }
    List<String> sources = a.sources();
    // most hits come from a source the alert already names: its list is kept as it is
    if (sources == null || (h.source() != null && !sources.contains(h.source()))) {
      Set<String> more = new LinkedHashSet<>(sources == null ? List.of() : sources);
      if (h.source() != null) {
        more.add(h.source());
      }
      sources = List.copyOf(more);
    }
    long count = h.windowStart() != null ? Math.max(a.count(), h.count()) : a.count() + 1;
    Instant last = h.at().isAfter(a.lastSeen()) ? h.at() : a.lastSeen();
    // a count rule's summary names the window's count; the others' stay as first written
    String summary = h.windowStart() != null ? h.summary() : a.summary();
    return a.updated(count, last, summary, samples, sources,
        h.windowStart() != null && h.targets() != null && h.count() >= a.count() ? h.targets() : a.targets());
  }

  /**
   * The alert as written: its first refusal's summary, and, once the episode has more than one
   * target, how many and the last (the most refused five in {@code targets}).
   */
  static Alert present(Alert a, EpisodeTargets t) {
    long distinct = t.distinct();
    String summary = distinct <= 1 ? a.summary() : a.summary() + "; " + (t.estimated() ? "about " : "") + distinct
        + " targets in all, the last " + t.last();
    return a.withTargets(summary, WindowCount.top(t.tally()), distinct, t.last());
  }

  private void emit(Alert raw, EpisodeTargets targets, long timestamp) {
    Alert alert = targets == null ? raw : present(raw, targets);
    StreamsMetrics.ALERTS.labels(alert.rule(), alert.severity().name().toLowerCase(Locale.ROOT),
        alert.status().name().toLowerCase(Locale.ROOT), alert.shadow() == null ? "enforce" : "shadow").inc();
    context.forward(new Record<>(alert.fingerprint(), alert, timestamp));
  }
}
