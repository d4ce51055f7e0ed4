package dev.knockwatch.streams;

import io.prometheus.client.Counter;

/** The streams app's Prometheus metrics; labels from fixed sets (rule ids come from the rules files). */
public final class StreamsMetrics {

  public static final Counter ALERTS = Counter.build()
      .name("knockwatch_streams_alerts_total").help("Alerts written (firing, updated, resolved), by rule, severity, status and mode (enforce or shadow).")
      .labelNames("rule", "severity", "status", "mode").register();
  public static final Counter LATE_EVENTS = Counter.build()
      .name("knockwatch_streams_late_events_total").help("Events that arrived after their window's grace period.")
      .labelNames("rule").register();
  public static final Counter REFUSALS = Counter.build()
      .name("knockwatch_streams_refusals_total").help("Refusals counted, by source and kind.")
      .labelNames("source", "kind").register();

  public static final Counter DUPLICATES = Counter.build()
      .name("knockwatch_streams_cross_source_duplicates_total")
      .help("Refusals already seen from another log (same command, host and port within 2 s): counted once.")
      .labelNames("source").register();
  public static final Counter IN_ROLE = Counter.build()
      .name("knockwatch_streams_in_role_refusals_total")
      .help("Refusals of a host the agent's role allows: config drift, not an off-role page.")
      .labelNames("role").register();

  public static final Counter PROBE_RESULTS = Counter.build()
      .name("knockwatch_streams_probe_results_total")
      .help("Guard probe results read: refused=true the wall held, refused=false it did not (wall-breach).")
      .labelNames("refused").register();

  private StreamsMetrics() {}
}
