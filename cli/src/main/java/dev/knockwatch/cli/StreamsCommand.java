package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.cli.run.Rules;
import dev.knockwatch.cli.run.Pipeline;
import dev.knockwatch.broker.KafkaWatch;
import dev.knockwatch.notify.silence.SilencesApi;
import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.StreamsApp;
import dev.knockwatch.streams.api.QueryApi;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyFiles;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.streams.rules.PolicyPublisher;
import dev.knockwatch.streams.TimelineTopology;
import io.prometheus.client.exporter.HTTPServer;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.HostInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * One streams instance of a deployment: detection, the timeline and the query API, against any
 * Kafka. It publishes the rules directory's policy and follows its changes. Run N of them with the
 * same application ids and Kafka Streams spreads the partitions over them.
 */
@Command(name = "streams", mixinStandardHelpOptions = true,
    description = {"Detection, the timeline and the query API against any Kafka, until Ctrl-C (one instance of N)."})
final class StreamsCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ClusterOptions cluster;

  @Mixin RulesOption rulesOption;

  @Option(names = "--var", paramLabel = "DIR", defaultValue = "${env:KNOCKWATCH_VAR:-var}",
      description = "Where the state stores live (default: ${DEFAULT-VALUE}; env KNOCKWATCH_VAR).")
  Path var;

  @Option(names = "--metrics-port", paramLabel = "N", defaultValue = "${env:KNOCKWATCH_METRICS_PORT:-9465}",
      description = "Port of /metrics (default: ${DEFAULT-VALUE}; env KNOCKWATCH_METRICS_PORT).")
  int metricsPort;

  @Mixin MetricsEndpoint.Bind metricsBind;

  @Mixin ApiOptions api;

  @Option(names = "--api-host", paramLabel = "HOST", defaultValue = "${env:KNOCKWATCH_API_HOST:-}",
      description = "How the other instances reach this one's API (default: the bind address, or the host name for 0.0.0.0; env KNOCKWATCH_API_HOST).")
  String apiHost;

  @Option(names = "--streams-config", paramLabel = "KEY=VALUE",
      description = "A Kafka Streams setting for both apps (num.standby.replicas=1, replication.factor=3 ...), over "
          + "--kafka-config; repeatable.")
  Map<String, String> streamsConfig = new java.util.LinkedHashMap<>();

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    Policy policy = Rules.load(rulesOption.dir);
    ApiToken token = api.token();
    List<String> allowedHosts = api.allowedHosts(); // a wrong entry is a usage error before anything starts
    Duration retention = api.retention();
    if (api.port < 1 || api.port > 65535) {
      throw new UsageException("--api-port " + api.port + " is not a port (1-65535)");
    }
    List<AutoCloseable> running = new CopyOnWriteArrayList<>();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      for (AutoCloseable c : running) {
        try {
          c.close();
        } catch (Exception e) {
          System.err.println("knockwatch: while stopping: " + e.getMessage());
        }
      }
      stopped.countDown();
    }, "knockwatch-streams-shutdown"));

    cluster.awaitReady();
    StageAccess.STREAMS.require(cluster.bootstrapServers, cluster.clientProps());
    HTTPServer metrics = MetricsEndpoint.start(metricsBind.address, metricsPort, false);
    running.add(0, metrics::close);
    KafkaWatch watch = new KafkaWatch("streams", cluster.bootstrapServers, cluster.clientProps(),
        () -> "detection and the timeline resume where they stopped; the query API answers from its stores", up -> { });
    running.add(0, watch);

    String instanceId = InstanceId.of(var);
    PolicyFiles files = PolicyLoader.files(rulesOption.dir);
    PolicyPublisher.publish(cluster.bootstrapServers, cluster.clientProps(), files);
    AtomicReference<StreamsApp> detection = new AtomicReference<>(detection(policy, instanceId));
    AtomicReference<Policy> inForce = new AtomicReference<>(policy);
    running.add(0, () -> detection.get().close());
    PolicyWatcher watcher = new PolicyWatcher(rulesOption.dir, cluster.bootstrapServers, cluster.clientProps(), files, next -> {
      synchronized (detection) {
        detection.get().close();
        detection.set(detection(next, instanceId));
      }
      inForce.set(next);
    }, new PrintStream(System.out, true, "UTF-8"), Duration.ofSeconds(2));
    Thread watcherThread = new Thread(watcher, "knockwatch-policy-watcher");
    watcherThread.setDaemon(true);
    watcherThread.start();
    running.add(0, watcher::close);

    String advertised = api.advertised(apiHost);
    StreamsApp timeline = new StreamsApp(TimelineTopology.DEFAULT_APPLICATION_ID, cluster.bootstrapServers,
        var.resolve("timeline"), TimelineTopology.build(policy, retention), Pipeline.member(clientProps(
            Map.of(StreamsConfig.APPLICATION_SERVER_CONFIG, advertised + ":" + api.port)), instanceId));
    QueryApi queryApi = new QueryApi(timeline.streams(), token.value(), api.bind, api.port,
        new HostInfo(advertised, api.port), api.tls.tls(), allowedHosts);
    queryApi.readyAlso(() -> detection.get().notRunning());
    queryApi.policy(inForce::get);
    SilencesApi silences = new SilencesApi(cluster.bootstrapServers, cluster.clientProps());
    queryApi.mount("/api/silences", silences);
    running.add(0, silences);
    running.add(0, timeline);
    running.add(0, queryApi);
    timeline.start(Duration.ofSeconds(300));

    out.println("knockwatch streams: " + DetectionTopology.DEFAULT_APPLICATION_ID + " and "
        + TimelineTopology.DEFAULT_APPLICATION_ID + " on " + cluster.bootstrapServers + "; rules " + rulesOption.dir + " ("
        + Rules.describe(policy) + ")");
    out.println("  api      " + queryApi.scheme() + "://" + api.bind + ":" + api.port + "/api/v1/commands/{commandId}; bearer token "
        + token.describe());
    out.println("  metrics  " + MetricsEndpoint.url(metricsBind.address, metrics));
    out.flush();
    Pipeline.awaitStop(stopped, List.of(() -> detection.get().refused(), timeline::refused));
    return Knockwatch.OK;
  }

  private StreamsApp detection(Policy policy, String instanceId) {
    return new StreamsApp(DetectionTopology.DEFAULT_APPLICATION_ID, cluster.bootstrapServers, var.resolve("streams"), policy,
        AlertLifecycleProcessor.Clock.WALL, Pipeline.member(clientProps(Map.of()), instanceId)).start(Duration.ofSeconds(300));
  }

  private Map<String, Object> clientProps(Map<String, Object> extra) {
    Map<String, Object> p = new java.util.HashMap<>(cluster.clientProps());
    p.putAll(streamsConfig);
    p.putAll(extra);
    return p;
  }
}
