package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.count.RecentRefusals;
import dev.knockwatch.streams.count.SlidingCount;
import dev.knockwatch.streams.rules.Hit;
import dev.knockwatch.streams.rules.Rule;
import java.time.Duration;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.Serde;

/** What count and value-count share: "N in any window" ({@link SlidingCount}), each key's recent refusals in {@code count-<rule>}. */
abstract class SlidingCountDetector<S extends Detector.Settings> implements Detector.Stateful<S, RecentRefusals> {

  /** The count a rule's settings ask for. */
  abstract SlidingCount sliding(S settings);

  /** A refusal may count for a window and its grace after it. */
  @Override
  public Duration lookback(S s) {
    SlidingCount c = sliding(s);
    return c.window().plus(c.grace());
  }

  @Override
  public Serde<RecentRefusals> serde() {
    return SlidingCount.SERDE;
  }

  @Override
  public RecentRefusals step(Rule rule, S s, Seen seen, RecentRefusals before, Consumer<Hit> hits) {
    return sliding(s).step(rule, seen, before, hits);
  }

  @Override
  public long expiresAt(Rule rule, S s, RecentRefusals slice) {
    return sliding(s).expiresAt(rule, slice);
  }

}
