package dev.knockwatch.streams;

import io.prometheus.client.Collector;
import io.prometheus.client.GaugeMetricFamily;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.TopologyDescription;
import org.apache.kafka.streams.state.QueryableStoreTypes;

/**
 * Kafka Streams' own metrics, bridged to Prometheus for every app of this process (detection,
 * timeline), labelled by application id only — thread and client ids change with every start and
 * would make unbounded series. Rates are summed over the app's threads, latencies and lag take
 * the worst thread. State store sizes come from the stores themselves (key-value stores: the
 * entries of the partitions this instance holds).
 */
public final class KafkaStreamsMetrics extends Collector {

  static final KafkaStreamsMetrics INSTANCE = new KafkaStreamsMetrics().register();

  private record App(KafkaStreams streams, Set<String> stores) {}

  private final Map<String, App> apps = new ConcurrentHashMap<>();

  private KafkaStreamsMetrics() {}

  static void add(String applicationId, KafkaStreams streams, TopologyDescription topology) {
    Set<String> stores = new LinkedHashSet<>();
    for (TopologyDescription.Subtopology st : topology.subtopologies()) {
      for (TopologyDescription.Node n : st.nodes()) {
        if (n instanceof TopologyDescription.Processor p) {
          stores.addAll(p.stores());
        }
      }
    }
    INSTANCE.apps.put(applicationId, new App(streams, stores));
  }

  static void remove(String applicationId) {
    INSTANCE.apps.remove(applicationId);
  }

  @Override
  public List<MetricFamilySamples> collect() {
    List<String> appLabel = List.of("application");
    GaugeMetricFamily running = new GaugeMetricFamily("knockwatch_kafka_streams_running",
        "1 while the app is RUNNING, 0 while it rebalances, restores or stopped.", appLabel);
    GaugeMetricFamily process = new GaugeMetricFamily("knockwatch_kafka_streams_process_rate",
        "Records processed per second, summed over the app's stream threads.", appLabel);
    GaugeMetricFamily commit = new GaugeMetricFamily("knockwatch_kafka_streams_commit_latency_seconds",
        "Average commit latency of the slowest stream thread (seconds).", appLabel);
    GaugeMetricFamily commitMax = new GaugeMetricFamily("knockwatch_kafka_streams_commit_latency_max_seconds",
        "Longest commit of any stream thread in the metrics window (seconds).", appLabel);
    GaugeMetricFamily lag = new GaugeMetricFamily("knockwatch_kafka_streams_consumer_lag_records",
        "The largest consumer lag (records behind the log end) of any partition the app reads.", appLabel);
    GaugeMetricFamily entries = new GaugeMetricFamily("knockwatch_kafka_streams_store_entries",
        "Entries of each key-value state store, over the partitions this instance holds.", List.of("application", "store"));
    apps.forEach((id, app) -> {
      KafkaStreams.State state = app.streams().state();
      running.addMetric(List.of(id), state == KafkaStreams.State.RUNNING ? 1 : 0);
      double rate = 0;
      double latency = 0;
      double latencyMax = 0;
      double maxLag = 0;
      for (Map.Entry<MetricName, ? extends Metric> e : app.streams().metrics().entrySet()) {
        MetricName n = e.getKey();
        double v = value(e.getValue());
        if (Double.isNaN(v)) {
          continue;
        }
        switch (n.group()) {
          case "stream-thread-metrics" -> {
            switch (n.name()) {
              case "process-rate" -> rate += v;
              case "commit-latency-avg" -> latency = Math.max(latency, v);
              case "commit-latency-max" -> latencyMax = Math.max(latencyMax, v);
              default -> { }
            }
          }
          case "consumer-fetch-manager-metrics" -> {
            String client = n.tags().getOrDefault("client-id", "");
            if (n.name().equals("records-lag-max") && !client.endsWith("-restore-consumer")
                && !n.tags().containsKey("topic")) {
              maxLag = Math.max(maxLag, v);
            }
          }
          default -> { }
        }
      }
      process.addMetric(List.of(id), rate);
      commit.addMetric(List.of(id), latency / 1000);
      commitMax.addMetric(List.of(id), latencyMax / 1000);
      lag.addMetric(List.of(id), maxLag);
      if (state == KafkaStreams.State.RUNNING) {
        for (String store : app.stores()) {
          try {
            long n = app.streams().store(StoreQueryParameters.fromNameAndType(store,
                QueryableStoreTypes.<Object, Object>keyValueStore())).approximateNumEntries();
            entries.addMetric(List.of(id, store), n);
          } catch (RuntimeException notAKeyValueStoreOrMoving) {
            // a window store, or a store in the middle of a rebalance: no figure this scrape
          }
        }
      }
    });
    List<MetricFamilySamples> out = new ArrayList<>();
    out.add(running);
    out.add(process);
    out.add(commit);
    out.add(commitMax);
    out.add(lag);
    out.add(entries);
    return out;
  }

  private static double value(Metric m) {
    Object v = m.metricValue();
    return v instanceof Number num ? num.doubleValue() : Double.NaN;
  }
}
