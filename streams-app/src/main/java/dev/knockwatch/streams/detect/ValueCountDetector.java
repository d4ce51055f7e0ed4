package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.streams.count.SlidingCount;
import dev.knockwatch.streams.count.SlidingCount.Field;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import java.time.Duration;
import java.util.List;

/**
 * {@code value-count}: {@code threshold} distinct values of a field within {@code window} (Sigma's
 * value_count: a scan).
 */
public final class ValueCountDetector extends SlidingCountDetector<ValueCountDetector.Settings> {

  /** The most distinct values a rule may wait for: each key keeps that many of them. */
  public static final int MAX_DISTINCT_THRESHOLD = 1_000;

  static final Key<Field> FIELD = Key.oneOf("field", List.of(Field.values()), Field::wireName, Field.HOST,
      "which value of a refusal is counted distinct");
  static final Key<Integer> THRESHOLD = Key.wholeNumber("threshold", MAX_DISTINCT_THRESHOLD,
      "a value-count rule keeps that many values of each command", "distinct values within the window that page");

  public record Settings(Duration window, int threshold, Duration grace, Field field) implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("value-count", "`threshold` distinct values of `field` within `window` (a scan); fires "
        + "at the first crossing like count", CountDetector.WINDOW, CountDetector.GRACE, FIELD, THRESHOLD, Grain.PER);
  }

  @Override
  public Settings settings(KeyValues v) {
    Integer threshold = v.get(THRESHOLD);
    return new Settings(v.get(CountDetector.WINDOW), threshold == null ? 0 : threshold, v.get(CountDetector.GRACE),
        v.get(FIELD));
  }

  @Override
  public String describe(Settings s) {
    return "value-count " + s.threshold() + " distinct " + s.field().wireName() + " values in any "
        + Key.human(s.window());
  }


  @Override
  SlidingCount sliding(Settings s) {
    return new SlidingCount(s.window(), s.threshold(), s.grace(), s.field());
  }

}
