package dev.knockwatch.streams.lifecycle;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.knockwatch.streams.count.DistinctCount;
import dev.knockwatch.streams.count.WindowCount;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one alert of a rule that judges each refusal on its own (off-role, address-class,
 * fs-guard, wall-breach) was refused in its episode, bounded however many hosts the agent tries:
 * a tally of the first {@value WindowCount#MAX_TARGETS} targets, how many distinct ones in all
 * (exact while all are named; past that estimated by a {@link DistinctCount}, made only then, so
 * an alert of a few hosts writes no sketch), and the last. Changed in place by its alert's hits;
 * written with the alert's state.
 */
@com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
public final class EpisodeTargets {

  @JsonProperty private final LinkedHashMap<String, Long> tally;
  @JsonProperty private DistinctCount distinct;
  @JsonProperty private String last;

  @JsonCreator
  EpisodeTargets(@JsonProperty("tally") Map<String, Long> tally, @JsonProperty("distinct") DistinctCount distinct,
      @JsonProperty("last") String last) {
    this.tally = tally == null ? new LinkedHashMap<>() : new LinkedHashMap<>(tally);
    this.distinct = distinct;
    this.last = last;
  }

  static EpisodeTargets first(String target) {
    return new EpisodeTargets(null, null, null).add(target);
  }

  EpisodeTargets add(String target) {
    String name = WindowCount.tally(tally, target);
    distinct = DistinctCount.of(distinct, tally, WindowCount.OTHER, name);
    last = name;
    return this;
  }

  long distinct() {
    return DistinctCount.count(distinct, tally, WindowCount.OTHER);
  }

  boolean estimated() {
    return tally.containsKey(WindowCount.OTHER);
  }

  Map<String, Long> tally() {
    return tally;
  }

  /** The estimate of how many distinct targets, once the tally is full; null before. */
  DistinctCount distinctSketch() {
    return distinct;
  }

  String last() {
    return last;
  }
}
