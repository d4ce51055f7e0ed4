package dev.knockwatch.streams.lifecycle;

import io.prometheus.client.Collector;
import io.prometheus.client.GaugeMetricFamily;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code knockwatch_streams_alerts_firing{rule,severity,mode}}: the alerts firing now, summed
 * over the stream tasks of this process. Each task reports its own counts after every sweep and
 * withdraws them when it closes (its partitions moved elsewhere), so a rebalance neither
 * doubles nor strands a count.
 */
public final class FiringAlerts extends Collector {

  static final FiringAlerts INSTANCE = new FiringAlerts().register();

  /** task id -> (rule, severity, mode) -> firing */
  private final Map<String, Map<List<String>, Long>> byTask = new ConcurrentHashMap<>();

  private FiringAlerts() {}

  static void report(String task, Map<List<String>, Long> counts) {
    INSTANCE.byTask.put(task, counts);
  }

  static void withdraw(String task) {
    INSTANCE.byTask.remove(task);
  }

  @Override
  public List<MetricFamilySamples> collect() {
    Map<List<String>, Long> sum = new TreeMap<>((a, b) -> String.join("\u0000", a).compareTo(String.join("\u0000", b)));
    byTask.values().forEach(m -> m.forEach((k, v) -> sum.merge(k, v, Long::sum)));
    GaugeMetricFamily g = new GaugeMetricFamily("knockwatch_streams_alerts_firing",
        "Alerts firing now (not yet resolved), by rule, severity and mode.", List.of("rule", "severity", "mode"));
    sum.forEach((k, v) -> g.addMetric(k, v));
    return List.of(g);
  }
}
