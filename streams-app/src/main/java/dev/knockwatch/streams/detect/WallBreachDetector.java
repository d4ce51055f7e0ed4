package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.events.config.KeyValues;

/** {@code wall-breach}: a guard probe the sandbox did not refuse (a hole in the wall). */
public final class WallBreachDetector implements Detector<WallBreachDetector.Settings> {

  public record Settings() implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("wall-breach", "a guard probe's result (type `probe-result`) the sandbox did not "
        + "refuse; probe results are no refusals: no other rule counts them").reading(Reads.PROBE_RESULTS);
  }

  @Override
  public Settings settings(KeyValues v) {
    return new Settings();
  }

  @Override
  public Finding judge(Rule rule, Settings s, Seen seen) {
    ViolationEvent e = seen.event();
    if (e.probe() == null || e.probe().refused()) {
      return null;
    }
    ViolationEvent.ProbeResult p = e.probe();
    return Finding.of("guard probe " + p.name() + " was not refused"
        + (p.expected() == null ? "" : ": expected " + p.expected())
        + (p.observed() == null ? "" : (p.expected() == null ? ": " : ", ") + "observed " + p.observed())
        + " — the sandbox let it through", e);
  }
}
