package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.streams.rules.Setting;
import dev.knockwatch.streams.rules.Values;
import java.time.Duration;
import org.apache.kafka.streams.Topology;

/** {@code sandbox-escape}: a call that asked to run outside the sandbox ({@link SandboxEscapeProcessor}). */
public final class SandboxEscapeDetector implements Detector<SandboxEscapeDetector.Settings> {

  static final Setting<Duration> WITHIN = Setting.duration("within", BypassDetector.DEFAULT_WITHIN, false,
      "how soon after a refusal a request to leave the sandbox is critical");

  public record Settings(Duration within) implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("sandbox-escape", "a call that asked to run outside the sandbox (`dangerouslyDisableSandbox`);"
        + " critical within `within` after a refusal, or when its output shows no mark of the sandbox", WITHIN,
        Setting.PER).reading(Reads.REFUSALS_AND_SANDBOX_REQUESTS);
  }

  @Override
  public Settings settings(Values v) {
    return new Settings(v.get(WITHIN));
  }

  @Override
  public String describe(Settings s) {
    return spec().name() + " within " + Setting.human(s.within());
  }

  @Override
  public void addTo(Topology t, Rule rule, Policy policy, String node, String suffix, String... parents) {
    String store = "escape-" + rule.id() + suffix;
    Duration within = ((Settings) rule.settings()).within();
    t.addProcessor(node, () -> new SandboxEscapeProcessor(rule, within, policy, store), parents);
    t.addStateStore(SandboxEscapeProcessor.store(store), node);
  }
}
