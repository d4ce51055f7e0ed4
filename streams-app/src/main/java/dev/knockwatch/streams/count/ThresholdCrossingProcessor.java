package dev.knockwatch.streams.count;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Hashes;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.StreamsMetrics;
import dev.knockwatch.streams.rules.CountRule;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.WindowStore;

/**
 * Counts refusals per command in tumbling windows and emits an alert the moment a window's count
 * first reaches the threshold.
 *
 * <p>Why a processor and not {@code count().filter(c == threshold)}: the record cache coalesces
 * updates, so an equality test downstream of a cached count misses crossings; and
 * {@code suppress} waits for the window to close, which never happens when the agent goes quiet.
 * Here the store remembers whether the window has alerted, so a crossing is emitted exactly
 * once, however the updates are batched.
 */
public final class ThresholdCrossingProcessor implements Processor<String, ViolationEvent, String, Alert> {

  static final int MAX_SAMPLES = 5;

  private final CountRule rule;
  private final String storeName;
  private ProcessorContext<String, Alert> context;
  private WindowStore<String, WindowCount> store;

  public ThresholdCrossingProcessor(CountRule rule, String storeName) {
    this.rule = rule;
    this.storeName = storeName;
  }

  @Override
  public void init(ProcessorContext<String, Alert> context) {
    this.context = context;
    this.store = context.getStateStore(storeName);
  }

  @Override
  public void process(Record<String, ViolationEvent> record) {
    String commandId = record.key();
    ViolationEvent event = record.value();
    if (commandId == null || event == null) {
      return;
    }
    long ts = record.timestamp();
    long size = rule.window().toMillis();
    long windowStart = ts - Math.floorMod(ts, size);
    long windowEnd = windowStart + size;
    if (windowEnd + rule.grace().toMillis() <= context.currentStreamTimeMs()) {
      StreamsMetrics.LATE_EVENTS.labels(rule.id()).inc();
      return;
    }
    WindowCount before = store.fetch(commandId, windowStart);
    WindowCount after = add(before, event, Instant.ofEpochMilli(ts));
    boolean crossing = !after.alerted() && after.count() >= rule.threshold();
    if (crossing) {
      after = new WindowCount(after.count(), after.firstSeen(), after.lastSeen(), after.agentId(),
          after.lastTarget(), after.sampleEventIds(), true);
    }
    store.put(commandId, after, windowStart);
    if (crossing) {
      Alert alert = alert(commandId, after, windowStart, windowEnd);
      StreamsMetrics.ALERTS.labels(rule.id(), alert.severity().name().toLowerCase(), "firing").inc();
      context.forward(new Record<>(alert.fingerprint(), alert, ts));
    }
  }

  private static WindowCount add(WindowCount before, ViolationEvent e, Instant at) {
    String target = target(e);
    if (before == null) {
      List<String> samples = e.eventId() == null ? List.of() : List.of(e.eventId());
      return new WindowCount(1, at, at, e.agentId(), target, samples, false);
    }
    List<String> samples = before.sampleEventIds();
    if (samples.size() < MAX_SAMPLES && e.eventId() != null) {
      samples = new ArrayList<>(samples);
      samples.add(e.eventId());
    }
    Instant first = at.isBefore(before.firstSeen()) ? at : before.firstSeen();
    Instant last = at.isAfter(before.lastSeen()) ? at : before.lastSeen();
    String agent = before.agentId() != null ? before.agentId() : e.agentId();
    return new WindowCount(before.count() + 1, first, last, agent, target, samples, before.alerted());
  }

  private static String target(ViolationEvent e) {
    if (e.host() != null) {
      return e.port() == null ? e.host() : e.host() + ":" + e.port();
    }
    return e.path();
  }

  private Alert alert(String commandId, WindowCount c, long windowStart, long windowEnd) {
    String summary = "command refused " + c.count() + " times within " + human(rule.window())
        + " (threshold " + rule.threshold() + ")" + (c.lastTarget() == null ? "" : "; last: " + c.lastTarget());
    return new Alert(fingerprint(rule.id(), commandId), rule.id(), rule.severity(), Alert.Status.FIRING,
        commandId, c.agentId(), null, null, null, c.count(), Instant.ofEpochMilli(windowStart),
        Instant.ofEpochMilli(windowEnd), c.firstSeen(), c.lastSeen(), summary, c.sampleEventIds());
  }

  /** Stable for rule + command: the PagerDuty dedup_key and the Slack thread key. */
  public static String fingerprint(String ruleId, String commandId) {
    return Hashes.sha256Hex(ruleId + "\u0000" + commandId, 8);
  }


  private static String human(java.time.Duration d) {
    if (d.toSeconds() % 3600 == 0) {
      return d.toHours() + "h";
    }
    if (d.toSeconds() % 60 == 0) {
      return d.toMinutes() + "m";
    }
    return d.toSeconds() + "s";
  }
}
