package dev.knockwatch.streams.detect;

import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.streams.rules.Rule;

/**
 * {@code sandbox-unavailable}: the harness ran a call in a sandbox that could not start (Codex's
 * {@code bwrap: execvp codex-linux-sandbox}: every call fails, none was refused by a wall). Once
 * per key of the rule's grain (a session): its calls' failures are no refusals, so the agent is
 * not walled in, only stopped, until its sandbox is fixed.
 */
public final class SandboxUnavailableDetector implements Detector<SandboxUnavailableDetector.Settings> {

  public record Settings() implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("sandbox-unavailable", "a call the harness ran in a sandbox that could not start (ingest's"
        + " `sandbox-unavailable`): one alert per key of its grain; such calls' failures are no refusals", Grain.PER)
        .reading(Reads.REFUSALS_AND_SANDBOX_REQUESTS);
  }

  @Override
  public Settings settings(KeyValues v) {
    return new Settings();
  }

  @Override
  public Finding judge(Rule rule, Settings s, Seen seen) {
    ViolationEvent e = seen.event();
    if (!ViolationEvent.SANDBOX_UNAVAILABLE.equals(e.action()) || !e.sandboxOff()) {
      return null;
    }
    return new Finding("the " + rule.nounOf(seen.key(), e) + "'s sandbox could not start"
        + (e.reason() == null ? "" : ": " + e.reason()) + "; its calls fail, and none of their failures is a refusal",
        null);
  }
}
