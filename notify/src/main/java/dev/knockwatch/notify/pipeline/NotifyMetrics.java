package dev.knockwatch.notify.pipeline;

import io.prometheus.client.Counter;
import io.prometheus.client.Gauge;
import io.prometheus.client.Histogram;

/** The notifier's Prometheus metrics; labels from fixed sets (receiver names come from receivers.yaml). */
public final class NotifyMetrics {

  public static final Counter NOTIFICATIONS = Counter.build()
      .name("knockwatch_notify_notifications_total")
      .help("Notifications by receiver and outcome: sent, retried, gave-up, silenced, grouped, folded (past a command's or rule's share of the minute), throttled, duplicate, shadow.")
      .labelNames("receiver", "outcome").register();
  public static final Histogram LATENCY = Histogram.build()
      .name("knockwatch_notify_delivery_seconds").help("From the first try to delivery, retries included.")
      .buckets(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300).labelNames("receiver").register();
  public static final Gauge QUEUE = Gauge.build()
      .name("knockwatch_notify_queue_depth").help("Notifications waiting in each receiver's queue.")
      .labelNames("receiver").register();
  public static final Counter SKIPPED = Counter.build()
      .name("knockwatch_notify_unreadable_alerts_total").help("Values on the alerts topic that are not alerts (skipped).")
      .register();

  private NotifyMetrics() {}
}
