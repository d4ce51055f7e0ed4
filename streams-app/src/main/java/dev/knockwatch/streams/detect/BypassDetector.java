package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.streams.rules.Setting;
import dev.knockwatch.streams.rules.Values;
import java.time.Duration;
import org.apache.kafka.streams.Topology;

/** {@code bypass}: after the proxy said no, another door within {@code within} ({@link BypassProcessor}). */
public final class BypassDetector implements Detector<BypassDetector.Settings> {

  public static final Duration DEFAULT_WITHIN = Duration.ofMinutes(2);

  static final Setting<Duration> WITHIN = Setting.duration("within", DEFAULT_WITHIN, false,
      "how soon after a proxy refusal another door counts");

  public record Settings(Duration within) implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("bypass", "after the proxy refused a name, another door within `within`: a direct dial, an IP"
        + " literal, another port, a SOCKS tunnel, a name resolved outside the proxy, a URL shortener", WITHIN,
        Setting.PER);
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
    String store = "bypass-" + rule.id() + suffix;
    Duration within = ((Settings) rule.settings()).within();
    t.addProcessor(node, () -> new BypassProcessor(rule, within, policy, store), parents);
    t.addStateStore(BypassProcessor.store(store), node);
  }
}
