package dev.knockwatch.streams.detect;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.lifecycle.Hit;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.streams.processor.api.Record;

/**
 * A rule whose detector judges one event on its own ({@link Detector#judge}): off-role,
 * address-class, fs-guard, wall-breach, identity-conflict, ingest-rejects, write-attempt. Each hit
 * carries a fingerprint of rule and key, and what was refused as its one target: the lifecycle
 * raises one alert per rule and key, and a new host of the same command updates it
 * (docs/RELIABILITY.md: a scan of a million hosts is one page).
 */
public final class EventDetectorProcessor extends RuleProcessor {

  private final Detector<Detector.Settings> detector;

  public EventDetectorProcessor(Rule rule, Policy policy) {
    super(rule, policy);
    this.detector = rule.detector();
  }

  @Override
  protected void judge(Record<String, ViolationEvent> record, String key, ViolationEvent e, String role) {
    Detector.Finding f = detector.judge(rule, rule.settings(), new Detector.Seen(key, e, role, view.current(),
        record.timestamp(), context.currentStreamTimeMs()));
    if (f == null) {
      return;
    }
    Instant at = Instant.ofEpochMilli(record.timestamp());
    context.forward(new Record<>(key, new Hit(rule, Alert.fingerprintOf(rule.id(), key), rule.commandOf(key, e),
        e.agentId(), role, e.host(), e.port(), e.source(), at, at, e.eventId() == null ? List.of() : List.of(e.eventId()),
        1, null, null, f.summary(), f.subject() == null ? null : List.of(new Alert.Target(f.subject(), 1))),
        record.timestamp()));
  }
}
