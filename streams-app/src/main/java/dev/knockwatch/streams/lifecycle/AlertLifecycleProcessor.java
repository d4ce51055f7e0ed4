package dev.knockwatch.streams.lifecycle;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Source;
import dev.knockwatch.streams.StreamsMetrics;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyView;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.HashMap;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.Set;
import org.apache.kafka.streams.KeyValue;
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
 * fires it anew). A count rule's crossing in a window that starts after the alerted window
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
   * After a crash the count of such an alert may miss the hits of that last second.
   */
  private final NavigableMap<String, AlertState> live = new TreeMap<>();
  private final Set<String> dirty = new HashSet<>();

  public AlertLifecycleProcessor(Clock clock, Duration throttle, Policy policy) {
    this.clock = clock;
    this.throttle = throttle;
    this.policy = policy;
  }

  @Override
  public void init(ProcessorContext<String, Alert> context) {
    this.context = context;
    this.store = context.getStateStore(STORE);
    this.view = PolicyView.of(policy, context);
    live.clear();
    try (KeyValueIterator<String, AlertState> it = store.all()) {
      it.forEachRemaining(kv -> live.put(kv.key, kv.value));
    }
    context.schedule(Duration.ofSeconds(1),
        clock == Clock.WALL ? PunctuationType.WALL_CLOCK_TIME : PunctuationType.STREAM_TIME, this::sweep);
  }

  @Override
  public void process(Record<String, Hit> record) {
    Hit hit = record.value();
    if (hit == null) {
      return;
    }
    long now = now(record.timestamp());
    if (hit.rule() == null) {
      addSource(hit, now);
      return;
    }
    String key = hit.commandId() + SEP + hit.fingerprint();
    AlertState state = live.get(key);
    long resolveAfter = hit.rule().resolveAfter().toMillis();
    // a count rule crossing in a window that starts after the alerted one ended: a new alert
    if (state == null || (hit.windowStart() != null && !hit.windowStart().isBefore(state.alert().windowEnd()))) {
      Alert alert = fresh(hit);
      put(key, new AlertState(alert, now, now, false, resolveAfter));
      emit(alert, record.timestamp());
      return;
    }
    Alert a = updated(state.alert(), hit);
    boolean due = now - state.lastEmittedMs() >= throttle.toMillis();
    if (due) {
      emit(a, record.timestamp());
    }
    AlertState next = new AlertState(a, now, due ? now : state.lastEmittedMs(), !due, resolveAfter);
    if (due) {
      put(key, next);
    } else {
      live.put(key, next);
      dirty.add(key);
    }
  }

  private void put(String key, AlertState state) {
    store.put(key, state);
    live.put(key, state);
    dirty.remove(key);
  }

  private void addSource(Hit hit, long now) {
    String prefix = hit.commandId() + SEP;
    List<KeyValue<String, AlertState>> changed = new ArrayList<>();
    for (var kv : live.subMap(prefix, true, prefix + Character.MAX_VALUE, false).entrySet()) {
      Alert a = kv.getValue().alert();
      if (a.sources() != null && a.sources().contains(hit.source())) {
        continue;
      }
      Set<Source> sources = new LinkedHashSet<>(a.sources() == null ? List.of() : a.sources());
      sources.add(hit.source());
      Alert b = a.updated(a.count(), a.lastSeen(), a.summary(), a.sampleEventIds(), List.copyOf(sources), a.targets());
      AlertState s = kv.getValue();
      changed.add(KeyValue.pair(kv.getKey(), new AlertState(b, s.lastHitMs(), s.lastEmittedMs(), true, s.resolveAfterMs())));
    }
    changed.forEach(kv -> {
      live.put(kv.key, kv.value);
      dirty.add(kv.key);
    });
  }

  /** Resolves what went quiet and writes throttled updates whose time has come. */
  private void sweep(long timestamp) {
    long now = clock == Clock.WALL ? timestamp : context.currentStreamTimeMs();
    List<KeyValue<String, AlertState>> changed = new ArrayList<>();
    List<String> resolved = new ArrayList<>();
    for (var kv : live.entrySet()) {
      AlertState s = kv.getValue();
      if (now - s.lastHitMs() >= s.resolveAfterMs()) {
        emit(s.alert().resolved(), s.alert().lastSeen().toEpochMilli());
        resolved.add(kv.getKey());
      } else if (s.pending() && now - s.lastEmittedMs() >= throttle.toMillis()) {
        emit(s.alert(), s.alert().lastSeen().toEpochMilli());
        changed.add(KeyValue.pair(kv.getKey(), new AlertState(s.alert(), s.lastHitMs(), now, false, s.resolveAfterMs())));
      }
    }
    resolved.forEach(k -> {
      store.delete(k);
      live.remove(k);
      dirty.remove(k);
    });
    changed.forEach(kv -> put(kv.key, kv.value));
    for (String k : dirty) {
      store.put(k, live.get(k));
    }
    dirty.clear();
    Map<List<String>, Long> firing = new HashMap<>();
    for (AlertState s : live.values()) {
      Alert a = s.alert();
      firing.merge(List.of(a.rule(), a.severity().name().toLowerCase(Locale.ROOT), a.shadow() == null ? "enforce" : "shadow"),
          1L, Long::sum);
    }
    FiringAlerts.report(context.taskId().toString(), firing);
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
        h.rule().shadow() ? Boolean.TRUE : null, h.targets());
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
    List<Source> sources = a.sources();
    // most hits come from a source the alert already names: its list is kept as it is
    if (sources == null || (h.source() != null && !sources.contains(h.source()))) {
      Set<Source> more = new LinkedHashSet<>(sources == null ? List.of() : sources);
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
        h.targets() != null && h.count() >= a.count() ? h.targets() : a.targets());
  }

  private void emit(Alert alert, long timestamp) {
    StreamsMetrics.ALERTS.labels(alert.rule(), alert.severity().name().toLowerCase(Locale.ROOT),
        alert.status().name().toLowerCase(Locale.ROOT), alert.shadow() == null ? "enforce" : "shadow").inc();
    context.forward(new Record<>(alert.fingerprint(), alert, timestamp));
  }
}
