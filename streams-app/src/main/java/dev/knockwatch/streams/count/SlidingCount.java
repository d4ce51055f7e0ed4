package dev.knockwatch.streams.count;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.metrics.StreamsMetrics;
import dev.knockwatch.streams.state.VersionedBinarySerde;
import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.rules.Hit;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.events.config.Key;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * "{@code threshold} refusals in any {@code window}" ({@code count}), or "{@code threshold}
 * distinct values of a field in any {@code window}" ({@code value-count}, Sigma's value_count: a
 * command trying many hosts, as a scan does): a key crosses the moment its newest
 * {@code threshold} refusals lie within one span shorter than the window, wherever the span falls
 * (no aligned boundary to straddle). The crossing starts an episode: every refusal after it
 * until the rule's quiet time ({@code resolveAfter}) passes without one is a hit of the same
 * episode (the lifecycle turns those into throttled updates of one alert); a refusal after that
 * starts counting afresh.
 *
 * <p>For value-count a sighting stands for its value: a value seen again moves to its newest
 * time, so the newest {@code threshold} sightings are always {@code threshold} distinct values.
 *
 * <p>Per key the slice ({@link RecentRefusals}) holds at most {@code threshold} timestamps (with
 * their event ids and targets, for the alert) before a crossing, and the episode's running count
 * after it: the cost does not grow with the window or with the refusal rate, where hopping windows
 * a second apart would hold window/hop counts per key. A refusal arriving out of order counts with
 * the newest {@code threshold} it is read beside; one older than its span's close plus the grace is
 * late and not counted, as with aligned windows.
 *
 * @param field value-count's counted field; null for count
 */
public record SlidingCount(Duration window, int threshold, Duration grace, Field field) {

  /** The value of a refusal a value-count rule counts distinct, by its name in rules.yaml. */
  public enum Field {
    HOST("host"), HOST_PORT("host:port"), PATH("path");

    private final String wireName;

    Field(String wireName) {
      this.wireName = wireName;
    }

    public String wireName() {
      return wireName;
    }

    /** This field of {@code e}; null when the refusal has none (it is then not counted). */
    public String of(ViolationEvent e) {
      return switch (this) {
        case HOST -> e.host();
        case HOST_PORT -> e.host() == null ? null : e.port() == null ? e.host() : e.host() + ":" + e.port();
        case PATH -> e.path();
      };
    }
  }

  /** The slices' bytes: the same as the stores of earlier versions held, so their changelogs restore. */
  public static final VersionedBinarySerde<RecentRefusals> SERDE = new RecentRefusalsSerde();

  /** The key's slice after {@code seen}: {@code before} itself when nothing changes. */
  public RecentRefusals step(Rule rule, Detector.Seen seen, RecentRefusals before, Consumer<Hit> hits) {
    ViolationEvent event = seen.event();
    String distinct = field == null ? null : field.of(event);
    if (field != null && distinct == null) {
      return before; // value-count: a refusal without the counted value does not count
    }
    long ts = seen.at();
    long window = this.window.toMillis();
    if (ts + window + grace.toMillis() <= seen.streamTime()) {
      StreamsMetrics.LATE_EVENTS.labels(rule.id()).inc();
      return before; // every span holding it closed, with its grace
    }
    Instant at = Instant.ofEpochMilli(ts);
    WindowCount episode = before == null ? null : before.episode();
    if (episode != null && ts <= episode.lastSeen().toEpochMilli() + rule.resolveAfter().toMillis()) {
      WindowCount after = ThresholdCrossingProcessor.add(episode, event, at);
      hits.accept(hit(rule, seen, after));
      return new RecentRefusals(List.of(), after);
    }
    List<RecentRefusals.Sighting> recent = new ArrayList<>(
        before == null || episode != null ? List.of() : before.recent());
    RecentRefusals.Sighting s = new RecentRefusals.Sighting(ts, event.eventId(), distinct != null ? distinct
        : ThresholdCrossingProcessor.target(event), event.agentId());
    if (distinct != null) {
      // value-count: each value's newest sighting only, so the newest threshold are threshold distinct values
      RecentRefusals.Sighting same = null;
      for (RecentRefusals.Sighting r : recent) {
        if (distinct.equals(r.target())) {
          same = r;
          break;
        }
      }
      if (same != null && same.at() >= ts) {
        return before; // seen since: nothing changes
      }
      recent.remove(same);
    }
    int i = recent.size();
    while (i > 0 && recent.get(i - 1).at() > ts) {
      i--;
    }
    recent.add(i, s);
    if (recent.size() > threshold) {
      recent.remove(0);
    }
    if (recent.size() == threshold && recent.get(recent.size() - 1).at() - recent.get(0).at() < window) {
      WindowCount crossing = null;
      for (RecentRefusals.Sighting r : recent) {
        crossing = ThresholdCrossingProcessor.add(crossing, r.eventId(), r.target(), r.agentId(), Instant.ofEpochMilli(r.at()));
      }
      StreamsMetrics.CROSSINGS.labels(rule.id()).inc();
      hits.accept(hit(rule, seen, crossing));
      return new RecentRefusals(List.of(), crossing);
    }
    return new RecentRefusals(List.copyOf(recent), null);
  }

  /** The stream time from which {@code slice} can no longer change what the rule says. */
  public long expiresAt(Rule rule, RecentRefusals slice) {
    return slice.expiresAt(window.toMillis(), grace.toMillis(), rule.resolveAfter().toMillis());
  }

  private Hit hit(Rule rule, Detector.Seen seen, WindowCount c) {
    String key = seen.key();
    ViolationEvent e = seen.event();
    String summary = (field == null
        ? rule.nounOf(key, e) + " refused " + c.count() + " times in " + span(c) + " (threshold " + threshold
        : rule.nounOf(key, e) + " tried " + threshold + " distinct " + field.wireName() + " values within "
            + Key.human(window) + " (" + c.count() + " refusals in " + span(c) + " so far; threshold " + threshold)
        + " within " + Key.human(window) + ")"
        + (c.lastTarget() == null ? "" : "; last: " + c.lastTarget());
    return new Hit(rule, Alert.fingerprintOf(rule.id(), key), rule.commandOf(key, e), c.agentId(), seen.role(), null,
        null, e.source(), c.firstSeen(), c.lastSeen(), c.sampleEventIds(), c.count(), c.firstSeen(),
        c.firstSeen().plus(window), summary, WindowCount.top(c.targets()));
  }

  /** From the first refusal to the last, in whole seconds (at least 1), e.g. {@code 20s}, {@code 2m30s}, {@code 1h5m}. */
  static String span(WindowCount c) {
    long ms = c.lastSeen().toEpochMilli() - c.firstSeen().toEpochMilli();
    long s = Math.max(1, (ms + 999) / 1000);
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return s / 60 + "m" + (s % 60 == 0 ? "" : s % 60 + "s");
    }
    return s / 3600 + "h" + (s % 3600 / 60 == 0 ? "" : s % 3600 / 60 + "m");
  }
}
