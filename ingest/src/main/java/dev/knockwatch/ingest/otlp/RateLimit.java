package dev.knockwatch.ingest.otlp;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Each client's records a second, as token buckets: {@code perSecond} refilled, up to
 * {@code burst} at once. A request takes all its records or none; one refused is told when the
 * bucket will hold them (OTLP's 429 with Retry-After, which exporters honour).
 */
public final class RateLimit {

  private static final int MAX_CLIENTS = 10_000;

  private final double perSecond;
  private final double burst;
  private final Clock clock;
  private final Map<String, double[]> buckets = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, double[]> eldest) {
      return size() > MAX_CLIENTS;
    }
  };

  public RateLimit(double perSecond, double burst, Clock clock) {
    if (perSecond <= 0 || burst < 1) {
      throw new IllegalArgumentException("a rate needs records a second > 0 and a burst of at least 1");
    }
    this.perSecond = perSecond;
    this.burst = burst;
    this.clock = clock;
  }

  /**
   * Takes {@code records} of {@code client}'s bucket: 0 when taken, else the seconds until the
   * bucket would hold them (a request larger than the burst waits for a full bucket and takes it).
   */
  public synchronized long take(String client, int records) {
    long now = clock.millis();
    double[] b = buckets.computeIfAbsent(client, k -> new double[] {burst, now});
    double tokens = Math.min(burst, b[0] + (now - b[1]) / 1000.0 * perSecond);
    b[1] = now;
    double need = Math.min(records, burst);
    if (tokens >= need) {
      b[0] = tokens - need;
      return 0;
    }
    b[0] = tokens;
    return Math.max(1, (long) Math.ceil((need - tokens) / perSecond));
  }
}
