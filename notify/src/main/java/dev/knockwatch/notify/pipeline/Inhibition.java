package dev.knockwatch.notify.pipeline;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.config.InhibitRule;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The inhibit rules' state: the firing alerts that may be a source, by fingerprint, as this
 * notifier reads them on the alerts topic (a source that resolves stops inhibiting). An alert is
 * inhibited while one of them fires under a rule whose target it matches, with equal values of the
 * rule's {@code equal} fields. Held in memory: after a restart a source counts again from its next
 * update; the alerts topic is keyed by command, so a source and a target of one command are always
 * read by the same notifier.
 */
public final class Inhibition {

  /** An inhibited alert: the rule and the firing source that mute it. */
  public record By(InhibitRule rule, Alert source) {}

  private final List<InhibitRule> rules;
  private final Map<String, Alert> firingSources = new LinkedHashMap<>();

  public Inhibition(List<InhibitRule> rules) {
    this.rules = List.copyOf(rules);
  }

  /** Notes an alert read on the topic: a source firing, or one no longer. */
  public void observe(Alert a) {
    if (rules.isEmpty() || a.fingerprint() == null) {
      return;
    }
    boolean source = rules.stream().anyMatch(r -> r.isSource(a));
    if (source && a.status() == Alert.Status.FIRING && !Boolean.TRUE.equals(a.shadow())) {
      firingSources.put(a.fingerprint(), a);
    } else {
      firingSources.remove(a.fingerprint());
    }
  }

  /** The rule and source that inhibit {@code target} now, if any. */
  public Optional<By> of(Alert target) {
    for (InhibitRule r : rules) {
      if (!r.isTarget(target)) {
        continue;
      }
      for (Alert source : firingSources.values()) {
        if (r.inhibits(source, target)) {
          return Optional.of(new By(r, source));
        }
      }
    }
    return Optional.empty();
  }

  /** How many firing sources are held (for tests). */
  int sources() {
    return firingSources.size();
  }
}
