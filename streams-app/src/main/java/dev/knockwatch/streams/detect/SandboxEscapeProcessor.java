package dev.knockwatch.streams.detect;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.lifecycle.Hit;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * {@code sandbox-escape}: a call that asked to run outside the sandbox (Claude Code's
 * {@code dangerouslyDisableSandbox}, ingest's {@code sandbox-off-request}) pages; it is critical
 * when a refusal of the same task (the rule's grain) came before it within {@code within}: a model
 * that was told no and reached for the way around the wall. A call that asked, and whose output
 * then showed no mark of the sandbox ({@code sandbox-off-unanswered}: it may have run outside),
 * is critical, as an alert of its own. The store (in memory, with its changelog) keeps each key's
 * last refusal time, dropped after {@code within} of stream time.
 */
public final class SandboxEscapeProcessor extends RuleProcessor {

  private static final Duration SWEEP = Duration.ofSeconds(30);

  private final Duration within;
  private final String storeName;
  private KeyValueStore<String, Long> refusals;

  public SandboxEscapeProcessor(Rule rule, Duration within, Policy policy, String storeName) {
    super(rule, policy);
    this.within = within;
    this.storeName = storeName;
  }

  /** Its store: each key's last refusal time, in memory with its changelog. */
  public static StoreBuilder<KeyValueStore<String, Long>> store(String name) {
    return Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.String(), Serdes.Long());
  }

  @Override
  protected void start() {
    this.refusals = context.getStateStore(storeName);
    context.schedule(SWEEP, PunctuationType.STREAM_TIME, this::sweep);
  }

  @Override
  protected boolean reads(ViolationEvent e) {
    return e.probe() == null && e.unattributed() == null;
  }

  @Override
  protected void judge(Record<String, ViolationEvent> record, String key, ViolationEvent e, String role) {
    long ts = record.timestamp();
    if (!e.sandboxOff()) {
      Long before = refusals.get(key);
      if (before == null || ts > before) {
        refusals.put(key, ts); // a refusal: what a later request to leave the sandbox follows
      }
      return;
    }
    Instant at = Instant.ofEpochMilli(ts);
    String fingerprint;
    Rule judged;
    String summary;
    String noun = rule.nounOf(key, e);
    if (ViolationEvent.SANDBOX_OFF_UNANSWERED.equals(e.action())) {
      fingerprint = Alert.fingerprintOf(rule.id() + ":unanswered", key);
      judged = rule.withSeverity(Alert.Severity.CRITICAL);
      summary = "a call of the " + noun + " asked to run outside the sandbox, and nothing in its output shows the"
          + " sandbox answered: it may have run outside";
    } else {
      Long refused = refusals.get(key);
      boolean after = refused != null && ts >= refused && ts - refused <= within.toMillis();
      fingerprint = Alert.fingerprintOf(rule.id(), key);
      judged = after ? rule.withSeverity(Alert.Severity.CRITICAL) : rule;
      summary = "a call of the " + noun + " asked to run outside the sandbox (dangerouslyDisableSandbox)"
          + (after ? ", " + (ts - refused) / 1000 + " s after the sandbox refused the " + noun : "");
    }
    context.forward(new Record<>(key, new Hit(judged, fingerprint, rule.commandOf(key, e), e.agentId(), role, null,
        null, e.source(), at, at, e.eventId() == null ? List.of() : List.of(e.eventId()), 1, null, null, summary,
        null), ts));
  }

  private void sweep(long streamTime) {
    List<KeyValue<String, Long>> deletes = new ArrayList<>();
    try (KeyValueIterator<String, Long> all = refusals.all()) {
      all.forEachRemaining(kv -> {
        if (kv.value + within.toMillis() < streamTime) {
          deletes.add(KeyValue.pair(kv.key, null));
        }
      });
    }
    if (!deletes.isEmpty()) {
      refusals.putAll(deletes);
    }
  }
}
