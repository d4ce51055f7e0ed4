package dev.knockwatch.ingest;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * {@code knockwatch_ingest_lag_bytes} by source: the bytes not yet read. Working it out costs a
 * stat per known file, so it is set at most once a second (a gauge scraped every 15 s), and only
 * when a tailer says the lag may have changed; a source once seen keeps its series, at 0 when it
 * is caught up.
 */
final class LagGauge {

  private static final long EVERY_NANOS = 1_000_000_000L;
  private long at = System.nanoTime() - EVERY_NANOS;
  private final Set<String> sources = new HashSet<>();

  /** Whether the lag is to be worked out in this read. */
  boolean due(boolean mayHaveChanged) {
    return System.nanoTime() - at >= EVERY_NANOS && mayHaveChanged;
  }

  /** The lag worked out now, by source. */
  void set(Map<String, Long> lag) {
    at = System.nanoTime();
    sources.addAll(lag.keySet());
    for (String source : sources) {
      IngestMetrics.LAG_BYTES.labels(source).set(lag.getOrDefault(source, 0L));
    }
  }
}
