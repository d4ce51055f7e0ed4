package dev.knockwatch.cli.bench;

import java.util.List;

/** The figures a benchmark reports, computed one way. */
final class Stats {

  private Stats() {}

  /** The {@code p}-th percentile of sorted values (nearest rank), or null when there are none. */
  static Long percentile(List<Long> sorted, int p) {
    if (p < 0 || p > 100) {
      throw new IllegalArgumentException("a percentile is 0 to 100: " + p);
    }
    if (sorted.isEmpty()) {
      return null;
    }
    int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
  }

  /**
   * The speed of a run that took {@code seconds} as a share of a baseline's that did the same work
   * in {@code baselineSeconds} (1: as fast; 0.5: half as fast), to three places.
   */
  static double speedRatio(double seconds, double baselineSeconds) {
    return round(baselineSeconds / seconds, 3);
  }

  static double round(double v, int places) {
    double scale = Math.pow(10, places);
    return Math.round(v * scale) / scale;
  }
}
