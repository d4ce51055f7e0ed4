package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.cli.run.Rules;
import dev.knockwatch.cli.run.Pipeline;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.broker.TopicCreator;
import dev.knockwatch.events.Durations;
import dev.knockwatch.ingest.RawTopicIngest;
import dev.knockwatch.ingest.Formats;
import dev.knockwatch.ingest.IngestAgent;
import dev.knockwatch.ingest.config.SourcesConfig;
import dev.knockwatch.notify.Notifiers;
import dev.knockwatch.notify.console.ConsoleReceiver;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.silence.SilencesApi;
import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.StreamsApp;
import dev.knockwatch.streams.api.QueryApi;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyFiles;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.streams.rules.PolicyPublisher;
import dev.knockwatch.streams.TimelineTopology;
import io.prometheus.client.exporter.HTTPServer;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Files;
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
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The main job: broker, ingest, streams, notify and metrics in one process, until Ctrl-C. */
@Command(name = "up", mixinStandardHelpOptions = true,
    description = {"Run the whole pipeline in this process until Ctrl-C.",
        "An embedded Kafka broker (unless --bootstrap-servers), ingest watching the logs directory, "
        + "detection, console alerts and /metrics; Ctrl-C or SIGTERM stops it cleanly."})
final class UpCommand implements Callable<Integer> {

  /** The notifier's consumer group, as `knockwatch notify`'s default. */
  static final String NOTIFY_GROUP = "knockwatch-notify";

  @Spec CommandSpec spec;

  @Option(names = "--logs", paramLabel = "DIR", defaultValue = "${env:KNOCKWATCH_LOGS:-var/logs}",
      description = "Sandbox logs to watch, laid out <DIR>/<agentId>/<commandId>.<suffix> (default: ${DEFAULT-VALUE}; env KNOCKWATCH_LOGS).")
  Path logs;

  @Mixin RulesOption rulesOption;

  @Option(names = "--var", paramLabel = "DIR", defaultValue = "${env:KNOCKWATCH_VAR:-var}",
      description = "Where the broker's data, the ingest checkpoints and the streams state live (default: ${DEFAULT-VALUE}; env KNOCKWATCH_VAR).")
  Path var;

  @Option(names = "--metrics-port", paramLabel = "N", defaultValue = "${env:KNOCKWATCH_METRICS_PORT:-9464}",
      description = "Port of the Prometheus /metrics endpoint on 127.0.0.1; a taken port falls back to a free one (default: ${DEFAULT-VALUE}; env KNOCKWATCH_METRICS_PORT).")
  int metricsPort;

  @Option(names = "--kafka-port", paramLabel = "N", defaultValue = "${env:KNOCKWATCH_KAFKA_PORT:-9092}",
      description = "Port of the embedded broker on 127.0.0.1; a taken port falls back to a free one (default: ${DEFAULT-VALUE}; env KNOCKWATCH_KAFKA_PORT).")
  int kafkaPort;

  @Option(names = "--no-probes", description = "Do not run the guard probes (at start and every 10 min) and the demo limit probe.")
  boolean noProbes;

  @Option(names = "--export", paramLabel = "FORMAT", defaultValue = "${env:KNOCKWATCH_EXPORT}",
      description = {"Also run the export stage: every refusal and alert, in ocsf or ecs, to knockwatch.export.FORMAT for "
          + "a SIEM's connector, as `knockwatch export` (env KNOCKWATCH_EXPORT; default: off)."})
  String export;

  @Option(names = "--raw-topic", paramLabel = "TOPIC",
      description = "Ingest the raw lines your log shipper puts on TOPIC (e.g. knockwatch.raw) instead of watching --logs; "
          + "their paths are read against --logs, made absolute (as `ingest --raw-topic`; config/shippers/).")
  String rawTopic;

  @Option(names = "--sources", paramLabel = "FILE", defaultValue = "${env:KNOCKWATCH_SOURCES}",
      description = {"Also read the sources of FILE (sources.yaml: a firewall's log, a proxy's; as `ingest --config`)"
          + " beside --logs; repeatable, a wall's sources in a file of its own (env KNOCKWATCH_SOURCES: one file)."})
  List<Path> sources;

  @Option(names = "--codex-home", paramLabel = "[AGENT=]DIR",
      description = {"Also read the session rollouts of this Codex CLI home (DIR/sessions/**/rollout-*.jsonl) as AGENT's"
          + " (default agent: codex); repeatable."})
  List<String> codexHomes;

  @Option(names = "--claude-projects", paramLabel = "[AGENT=]DIR",
      description = {"Also read Claude Code's session transcripts under DIR (its ~/.claude/projects: DIR/**/*.jsonl) as"
          + " AGENT's (default agent: claude-code): no hook needed; repeatable."})
  List<String> claudeProjects;

  @Mixin OtlpOptions otlp;

  @Option(names = "--fresh", description = "Wipe the broker's data, the ingest checkpoints and the streams state first (not the logs).")
  boolean fresh;

  @Option(names = "--bootstrap-servers", paramLabel = "HOSTS",
      description = "Use this Kafka cluster instead of the embedded broker.")
  String bootstrapServers;

  @Mixin KafkaClientOptions kafka;

  @Mixin ApiOptions api;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    Policy policy = Rules.load(rulesOption.dir);
    ReceiversConfig receivers = ReceiversConfig.load(rulesOption.dir);
    ApiToken token = api.token();
    List<String> allowedHosts = api.allowedHosts(); // a wrong entry is a usage error before anything starts
    Duration retention = api.retention();
    checkPort("--metrics-port", metricsPort);
    checkPort("--api-port", api.port);
    checkPort("--kafka-port", kafkaPort);
    if (bootstrapServers == null && kafka.file != null) {
      throw new UsageException("--kafka-config " + kafka.file + " needs --bootstrap-servers: the embedded broker "
          + "speaks plaintext on 127.0.0.1 and takes no client settings");
    }
    Map<String, Object> clientProps = kafka.props();
    Exporter.Format exportFormat = export == null || export.isBlank() ? null : Exporter.Format.of("--export", export);
    if (fresh) {
      for (String part : List.of("kafka", "ingest", "streams")) {
        EmbeddedKafkaBroker.wipe(var.resolve(part));
      }
    }
    if (sources != null) {
      sources.forEach(f -> dev.knockwatch.cli.run.FileOption.check("--sources", f));
    }
    if ((codexHomes != null || claudeProjects != null) && rawTopic != null) {
      throw new UsageException("--codex-home and --claude-projects read files beside --logs; with --raw-topic your"
          + " shipper carries the lines");
    }
    if (sources != null && rawTopic != null) {
      throw new UsageException("--sources reads files beside --logs; with --raw-topic your shipper carries the lines");
    }
    Files.createDirectories(logs);

    // checked before anything starts: every problem of the file at once, each at its line
    List<IngestAgent.Feed> sourceFeeds = new java.util.ArrayList<>(sources == null ? List.of()
        : SourcesConfig.load(sources, var.resolve("ingest")));
    sourceFeeds.addAll(HarnessDirs.feeds(codexHomes, claudeProjects, var.resolve("ingest")));
    java.util.Optional<dev.knockwatch.ingest.config.OtlpConfig> otlpConfig = sources == null ? java.util.Optional.empty()
        : dev.knockwatch.ingest.config.OtlpConfig.load(sources);
    String instanceId = InstanceId.of(var);
    Path logFile = dev.knockwatch.cli.run.LogFile.divert(var);

    List<AutoCloseable> running = new CopyOnWriteArrayList<>();
    CountDownLatch stopped = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicBoolean wasUp = new java.util.concurrent.atomic.AtomicBoolean();
    Thread hook = new Thread(() -> {
      int failed = closeAll(running);
      if (!wasUp.get()) {
        stopped.countDown();
        return; // it never said it was up: what stopped it was said already
      }
      out.println("knockwatch stopped" + (failed == 0 ? ": every stage closed cleanly" : ": " + failed
          + (failed == 1 ? " stage" : " stages") + " failed to close (above)") + "; its log is " + logFile);
      out.flush();
      stopped.countDown();
    }, "knockwatch-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);

    String bootstrap = bootstrapServers;
    String kafkaLine;
    if (bootstrap == null) {
      EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(var.resolve("kafka"), kafkaPort);
      running.add(0, broker);
      bootstrap = broker.bootstrapServers();
      kafkaLine = bootstrap + " (embedded KRaft broker, data in " + broker.dataDir()
          + (broker.portWasTaken() ? "; port " + kafkaPort + " was taken, picked " + broker.port() : "") + ")";
    } else {
      TopicCreator.awaitReady(bootstrap, clientProps, Duration.ofSeconds(25));
      (rawTopic == null ? StageAccess.all(NOTIFY_GROUP)
          : StageAccess.all(NOTIFY_GROUP).plus(StageAccess.rawIngest(rawTopic, RawTopicIngest.DEFAULT_GROUP)))
          .require(bootstrap, clientProps);
      kafkaLine = bootstrap + " (external)";
    }
    if (bootstrapServers == null) {
      TopicCreator.createMissing(bootstrap, clientProps); // its own broker
    }

    HTTPServer metrics = startMetrics();
    running.add(0, metrics::close);
    dev.knockwatch.ingest.OtlpIngest otlpEndpoint = otlp.start(true, var, otlpConfig, bootstrap, clientProps);
    if (otlpEndpoint != null) {
      running.add(0, otlpEndpoint);
    }

    PolicyFiles policyFiles = PolicyLoader.files(rulesOption.dir);
    PolicyPublisher.publish(bootstrap, clientProps, policyFiles);
    int port = freeOr(api.port);
    StreamsApp timeline = new StreamsApp(TimelineTopology.DEFAULT_APPLICATION_ID, bootstrap, var.resolve("timeline"),
        TimelineTopology.build(policy, retention),
        Pipeline.member(with(clientProps, StreamsConfig.APPLICATION_SERVER_CONFIG, api.advertised(null) + ":" + port), instanceId));
    QueryApi queryApi = new QueryApi(timeline.streams(), token.value(), api.bind, port,
        new HostInfo(api.advertised(null), port), api.tls.tls(), allowedHosts);
    queryApi.readyAlso(() -> "detection is starting");
    AtomicReference<Policy> inForce = new AtomicReference<>(policy);
    queryApi.policy(inForce::get);
    SilencesApi silencesApi = new SilencesApi(bootstrap, clientProps);
    queryApi.mount("/api/silences", silencesApi);
    running.add(0, silencesApi);
    running.add(0, timeline);
    running.add(0, queryApi);
    // the timeline starts beside detection, which Pipeline.start waits for
    timeline.launch();
    Pipeline pipeline = Pipeline.start(new Pipeline.Settings(bootstrap, clientProps, logs, var, policy,
        DetectionTopology.DEFAULT_APPLICATION_ID, NOTIFY_GROUP, Pipeline.POLL_INTERVAL, instanceId, rawTopic, sourceFeeds),
        receivers, Notifiers.create(receivers, new PrintStream(System.out, true, "UTF-8")));
    running.add(0, pipeline);
    queryApi.readyAlso(pipeline::detectionNotRunning);
    PolicyWatcher watcher = new PolicyWatcher(rulesOption.dir, bootstrap, clientProps, policyFiles, next -> {
          pipeline.restartDetection(next);
          inForce.set(next);
        },
        new PrintStream(System.out, true, "UTF-8"), Duration.ofSeconds(2));
    Thread watcherThread = new Thread(watcher, "knockwatch-policy-watcher");
    watcherThread.setDaemon(true);
    watcherThread.start();
    running.add(0, () -> {
      watcher.close();
      watcherThread.interrupt();
    });
    if (exportFormat != null) {
      Exporter.ensureTopic(bootstrap, clientProps, exportFormat.defaultTopic());
      Exporter exporter = new Exporter(bootstrap, clientProps, exportFormat, exportFormat.defaultTopic(),
          exportFormat.defaultGroup());
      Thread exportThread = new Thread(exporter, "knockwatch-export");
      exportThread.start();
      running.add(0, () -> {
        exporter.close();
        exportThread.join(15_000);
      });
    }
    timeline.awaitRunning(Duration.ofSeconds(120));

    out.println("knockwatch is up");
    out.println("  kafka    " + kafkaLine);
    out.println(rawTopic != null
        ? "  ingest   reading the raw lines your shipper puts on " + rawTopic + " (paths under "
            + logs.toAbsolutePath().normalize() + "/<agentId>/<commandId>.<suffix>; config/shippers/)"
        : "  ingest   watching " + logs + "/<agentId>/<commandId>.<suffix> (" + Formats.namesBySuffix() + ")"
            + (sources == null ? "" : ", and the sources of " + String.join(", ", sources.stream().map(Path::toString).toList()))
            + HarnessDirs.CODEX.describe(codexHomes) + HarnessDirs.CLAUDE.describe(claudeProjects));
    out.println("  otlp     " + (otlpEndpoint == null ? "off (--no-otlp)" : otlpEndpoint.url()
        + (otlpEndpoint.port() != dev.knockwatch.ingest.OtlpIngest.DEFAULT_PORT && otlp.port == null
            ? " (port " + dev.knockwatch.ingest.OtlpIngest.DEFAULT_PORT + " was taken)" : "") + " (OTLP/HTTP logs of "
        + dev.knockwatch.ingest.OtlpIngest.readers() + "; a client's token in " + OtlpOptions.tokensDir(var)
        + "/<agentId>.token, made by `knockwatch codex settings`)"));
    out.println("  rules    " + rulesOption.dir + " (" + Rules.describe(policy) + "); published to knockwatch.policy,"
        + " watched for changes");
    out.println("  streams  " + DetectionTopology.DEFAULT_APPLICATION_ID + " (state in " + var.resolve("streams") + ")");
    out.println("  notify   " + Rules.describe(receivers) + " from " + rulesOption.dir.resolve(ReceiversConfig.FILE)
        + (Files.exists(rulesOption.dir.resolve(ReceiversConfig.FILE)) ? "" : " (absent: every alert to the console)")
        + (receivers.receivers().stream().anyMatch(r -> r instanceof ConsoleReceiver) ? "; alerts print below" : ""));
    out.println("  metrics  " + MetricsEndpoint.url("127.0.0.1", metrics)
        + (metrics.getPort() != metricsPort ? " (port " + metricsPort + " was taken)" : ""));
    out.println("  timeline " + TimelineTopology.DEFAULT_APPLICATION_ID + " (state in " + var.resolve("timeline")
        + ", idle commands kept " + Durations.format(api.retention()) + ")");
    out.println("  api      " + queryApi.scheme() + "://" + api.bind + ":" + port + "/api/v1/commands/{commandId}"
        + (port != api.port ? " (port " + api.port + " was taken)" : "") + "; bearer token " + token.describe());
    ApiClient.remember(var, queryApi.scheme() + "://" + (api.bind.equals("0.0.0.0") ? "127.0.0.1" : api.bind) + ":" + port,
        token.source().equals("generated") ? token.value() : null);
    out.println("  log      " + logFile + " (Kafka's and Kafka Streams' own lines and knockwatch's; its warnings and"
        + " errors also print here)");
    out.println("  export   " + (exportFormat == null ? "off (--export ocsf|ecs: refusals and alerts for a SIEM)"
        : "refusals and alerts as " + exportFormat.id() + " to " + exportFormat.defaultTopic()));
    if (noProbes) {
      out.println("  probes   off (--no-probes)");
    } else {
      out.println("  probes   guard probes on the real srt now and every " + UpProbes.GUARD_EVERY.toMinutes()
          + " min, and a demo command that crosses persistent-retry (--no-probes: off)");
    }
    out.println("Ctrl-C to stop.");
    out.flush();
    wasUp.set(true);
    if (!noProbes) {
      // after the banner: what the probes say comes below it, never inside it
      UpProbes probes = new UpProbes(logs, var.resolve("probes"), out);
      running.add(0, probes);
      probes.start();
    }
    Pipeline.awaitStop(stopped, List.of(pipeline::detectionRefused, timeline::refused));
    return Knockwatch.OK;
  }

  private HTTPServer startMetrics() throws IOException {
    return MetricsEndpoint.start("127.0.0.1", metricsPort, true);
  }


  /** {@code port}, or a free one when it is taken. */
  private static int freeOr(int port) throws IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(port, 50, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
        return s.getLocalPort();
      }
    }
  }

  private static void checkPort(String option, int port) {
    if (port < 0 || port > 65535) {
      throw new UsageException(option + " " + port + " is not a port (0-65535)");
    }
  }

  /** Closes each, newest first; how many failed (each said on stderr). */
  private static int closeAll(List<AutoCloseable> running) {
    int failed = 0;
    for (AutoCloseable c : running) {
      try {
        c.close();
      } catch (Exception e) {
        failed++;
        System.err.println("knockwatch: while stopping: " + e.getMessage());
      }
    }
    return failed;
  }

  private static Map<String, Object> with(Map<String, Object> props, String key, Object value) {
    Map<String, Object> p = new java.util.HashMap<>(props);
    p.put(key, value);
    return p;
  }
}
