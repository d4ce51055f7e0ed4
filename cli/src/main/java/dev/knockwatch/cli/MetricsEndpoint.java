package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.HTTPServer;
import io.prometheus.client.hotspot.DefaultExports;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import picocli.CommandLine.Option;

/** {@code /metrics} of a knockwatch process: every module's metrics and the JVM's (hotspot). */
final class MetricsEndpoint {

  /** {@code --metrics-bind}, shared by the commands that run one stage (the port's default is each one's own). */
  static final class Bind {
    @Option(names = "--metrics-bind", paramLabel = "ADDRESS", defaultValue = "${env:KNOCKWATCH_METRICS_BIND:-127.0.0.1}",
        description = "Address /metrics listens on (default: ${DEFAULT-VALUE}; env KNOCKWATCH_METRICS_BIND).")
    String address;
  }

  private MetricsEndpoint() {}

  /** Where {@code server}, listening on {@code bind}, serves the metrics: what a banner prints. */
  /** The sum of a metric's samples in this process (every label), 0 when it has none. */
  static long sum(String name) {
    double total = 0;
    for (java.util.Enumeration<io.prometheus.client.Collector.MetricFamilySamples> e =
        CollectorRegistry.defaultRegistry.metricFamilySamples(); e.hasMoreElements(); ) {
      for (io.prometheus.client.Collector.MetricFamilySamples.Sample s : e.nextElement().samples) {
        if (s.name.equals(name)) {
          total += s.value;
        }
      }
    }
    return (long) total;
  }

  static String url(String bind, HTTPServer server) {
    return "http://" + (bind.contains(":") ? "[" + bind + "]" : bind) + ":" + server.getPort() + "/metrics";
  }

  /**
   * Serves the default registry on {@code bind:port}; a taken port falls back to a free one when
   * {@code fallBack}, else fails.
   */
  static HTTPServer start(String bind, int port, boolean fallBack) throws IOException {
    if (port < 0 || port > 65535) {
      throw new UsageException("--metrics-port " + port + " is not a port (0-65535)");
    }
    DefaultExports.initialize();
    try {
      return new HTTPServer(new InetSocketAddress(bind, port), CollectorRegistry.defaultRegistry, true);
    } catch (BindException e) {
      if (!fallBack) {
        throw new UsageException("--metrics-port " + port + " on " + bind + " is taken");
      }
      return new HTTPServer(new InetSocketAddress(bind, 0), CollectorRegistry.defaultRegistry, true);
    }
  }
}
