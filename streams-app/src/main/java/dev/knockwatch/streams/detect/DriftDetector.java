package dev.knockwatch.streams.detect;

import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.streams.rules.Rule;

/**
 * {@code drift}: a wall in its audit or report mode let something through that its policy would
 * have refused (Hubble's {@code AUDIT} verdict, smokescreen's {@code report} role, Docker
 * Sandboxes' audit enforcement: {@code enforced: false}). Nothing was refused, so no other rule
 * counts it; the policy and what the agents do have drifted apart, which is what a policy in audit
 * mode is there to show before it is enforced.
 */
public final class DriftDetector implements Detector<DriftDetector.Settings> {

  public record Settings() implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("drift", "what a wall in its audit or report mode let through that its policy would have refused"
        + " (`enforced: false`: Hubble's `AUDIT` verdict, smokescreen's `report` role, Docker Sandboxes' audit"
        + " enforcement); no refusal, so no other rule counts it", Grain.PER).reading(Reads.UNENFORCED);
  }

  @Override
  public Settings settings(KeyValues v) {
    return new Settings();
  }

  @Override
  public Finding judge(Rule rule, Settings s, Seen seen) {
    ViolationEvent e = seen.event();
    if (!e.unenforced()) {
      return null;
    }
    String target = e.host() != null ? Finding.target(e) : e.path() != null ? e.path() : "an unnamed target";
    return Finding.of(e.source() + " let " + target + " through in audit mode: its policy would refuse it"
        + (e.reason() == null ? "" : " (" + e.reason() + ")"), e);
  }
}
