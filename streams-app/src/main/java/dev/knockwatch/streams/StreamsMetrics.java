package dev.knockwatch.streams;

import io.prometheus.client.Counter;

/** The streams app's Prometheus metrics; labels from fixed sets (rule ids come from the rules files). */
public final class StreamsMetrics {

  public static final Counter ALERTS = Counter.build()
      .name("knockwatch_streams_alerts_total").help("Alerts emitted, by rule, severity and status.")
      .labelNames("rule", "severity", "status").register();
  public static final Counter LATE_EVENTS = Counter.build()
      .name("knockwatch_streams_late_events_total").help("Events that arrived after their window's grace period.")
      .labelNames("rule").register();
  public static final Counter REFUSALS = Counter.build()
      .name("knockwatch_streams_refusals_total").help("Refusals counted, by source and kind.")
      .labelNames("source", "kind").register();

  private StreamsMetrics() {}
}
