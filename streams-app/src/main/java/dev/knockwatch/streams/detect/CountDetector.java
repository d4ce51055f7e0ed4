package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.streams.count.SlidingCount;
import dev.knockwatch.streams.count.ThresholdCrossingProcessor;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.events.Alert.Severity;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import java.time.Duration;
import org.apache.kafka.streams.Topology;

/** {@code count}: a command (task, session, agent) refused {@code threshold} times within {@code window}. */
public final class CountDetector extends SlidingCountDetector<CountDetector.Settings> {

  public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(5);
  public static final int DEFAULT_THRESHOLD = 5;
  public static final Duration DEFAULT_GRACE = Duration.ofMinutes(1);

  static final Key<Duration> WINDOW = Key.duration("window", DEFAULT_WINDOW, false,
      "the span the threshold's refusals must fall within: any span of this length, or aligned windows with hop");
  static final Key<Duration> GRACE = Key.duration("grace", DEFAULT_GRACE, true,
      "how late a refusal may arrive and still count in its window");
  static final Key<Duration> HOP = Key.duration("hop", null, false,
      "count in aligned windows that advance by this much (the window: tumbling) instead of in any span");
  static final Key<Integer> THRESHOLD = Key.wholeNumber("threshold", Integer.MAX_VALUE, null,
      "refusals within the window that page");

  /**
   * @param hop the advance of aligned (hopping) windows, tumbling when it equals the window; null for
   *     "N in any window" (the default)
   */
  public record Settings(Duration window, Duration hop, int threshold, Duration grace) implements Detector.Settings {

    /** How far aligned windows advance: the hop, else the window. */
    public Duration advance() {
      return hop != null ? hop : window;
    }
  }

  /** A count rule ("threshold in any window") with the defaults for everything else. */
  public static Rule rule(String id, Duration window, int threshold, Severity severity, Duration grace) {
    return Rule.of(id, severity, new Settings(window, null, threshold, grace));
  }

  /** The count rule {@code up} and {@code replay} use when the rules directory has no rule at all. */
  public static Rule defaultRule() {
    return rule("persistent-retry", DEFAULT_WINDOW, DEFAULT_THRESHOLD, Severity.WARNING, DEFAULT_GRACE);
  }

  @Override
  public Spec spec() {
    return Spec.of("count", "refused `threshold` times within `window` (a model that does not "
        + "accept no); fires at the first crossing", WINDOW, GRACE, HOP, THRESHOLD, Grain.PER);
  }

  @Override
  public Settings settings(KeyValues v) {
    Duration window = v.get(WINDOW);
    Duration hop = v.get(HOP);
    if (hop != null && window != null && hop.compareTo(window) > 0) {
      v.problem(HOP, "hop " + v.text(HOP) + " must not be longer than the window");
    }
    Integer threshold = v.get(THRESHOLD);
    return new Settings(window, hop, threshold == null ? 0 : threshold, v.get(GRACE));
  }

  @Override
  public String describe(Settings s) {
    return "count " + s.threshold() + " in " + (s.hop() == null ? "any " + Key.human(s.window())
        : Key.human(s.window()) + " windows every " + Key.human(s.hop()));
  }


  @Override
  SlidingCount sliding(Settings s) {
    return new SlidingCount(s.window(), s.threshold(), s.grace(), null);
  }

  /** Aligned windows keep a count per window, in a window store of their own. */
  @Override
  public boolean keepsSlices(Settings s) {
    return s.hop() == null;
  }

  /** "N in any window" keeps at most N refusals (or an episode's count) per key; aligned windows a count per window. */
  @Override
  public void addTo(Topology t, Rule rule, Policy policy, String node, String suffix, String... parents) {
    Settings s = (Settings) rule.settings();
    if (s.hop() == null) {
      super.addTo(t, rule, policy, node, suffix, parents);
    } else {
      // aligned windows (hopping; tumbling when the hop is the window): a count per window
      String store = "count-" + rule.id() + suffix;
      t.addProcessor(node, () -> new ThresholdCrossingProcessor(rule, policy, store, s.window(), s.advance(), s.threshold(),
          s.grace()), parents);
      t.addStateStore(ThresholdCrossingProcessor.store(store, s.window(), s.grace()), node);
    }
  }
}
