package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.cli.run.Pipeline;
import dev.knockwatch.ingest.LogLayout;
import dev.knockwatch.broker.KafkaWatch;
import dev.knockwatch.ingest.IngestAgent;
import dev.knockwatch.ingest.KafkaEventSink;
import dev.knockwatch.ingest.RawTopicIngest;
import dev.knockwatch.ingest.Formats;
import dev.knockwatch.ingest.config.SourcesConfig;
import io.prometheus.client.exporter.HTTPServer;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The ingest agent alone, against any Kafka: what runs beside each sandbox host. */
@Command(name = "ingest", mixinStandardHelpOptions = true,
    description = {"Run the ingest agent alone: tail the logs directory and publish to Kafka until Ctrl-C.",
        "Positions are checkpointed under --var only after Kafka took the lines, so a restart, even after "
        + "kill -9, resumes where it stopped; a line sent twice keeps its eventId."})
final class IngestCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--logs", paramLabel = "DIR", defaultValue = "${env:KNOCKWATCH_LOGS:-var/logs}",
      description = "Logs to watch, laid out <DIR>/<agentId>/<commandId>.<suffix> (default: ${DEFAULT-VALUE}; env KNOCKWATCH_LOGS).")
  Path logs;

  @Option(names = "--var", paramLabel = "DIR", defaultValue = "${env:KNOCKWATCH_VAR:-var}",
      description = "Where the checkpoints live, under ingest/ (default: ${DEFAULT-VALUE}).")
  Path var;

  @Mixin ClusterOptions cluster;

  @Option(names = "--config", paramLabel = "FILE",
      description = "Sources as YAML (path globs with {agentId} and {commandId} in them, type, fields, logformat, mapping); replaces --logs;"
          + " repeatable, a wall's sources in a file of its own.")
  List<Path> config;

  @Option(names = "--raw-topic", paramLabel = "TOPIC",
      description = "Read the raw lines your log shipper (rsyslog, syslog-ng, Vector, Fluent Bit, Filebeat) puts on TOPIC "
          + "instead of files (e.g. knockwatch.raw); their paths are read against --logs, made absolute: the layout's "
          + "root as the shipper sees it. Exactly once from line to event (docs/FORMATS.md \"Raw lines from your shipper\").")
  String rawTopic;

  @Option(names = "--raw-group", paramLabel = "ID", defaultValue = RawTopicIngest.DEFAULT_GROUP,
      description = "With --raw-topic: the consumer group the instances share the partitions in (default: ${DEFAULT-VALUE}).")
  String rawGroup;

  @Option(names = "--codex-home", paramLabel = "[AGENT=]DIR",
      description = "Also read the session rollouts of this Codex CLI home (DIR/sessions/**/rollout-*.jsonl) as AGENT's"
          + " (default agent: codex); repeatable.")
  List<String> codexHomes;

  @Option(names = "--claude-projects", paramLabel = "[AGENT=]DIR",
      description = {"Also read Claude Code's session transcripts under DIR (its ~/.claude/projects: DIR/**/*.jsonl) as"
          + " AGENT's (default agent: claude-code): no hook needed; repeatable."})
  List<String> claudeProjects;

  @Mixin OtlpOptions otlp;

  @Option(names = "--metrics-port", paramLabel = "N", defaultValue = "${env:KNOCKWATCH_METRICS_PORT:-0}",
      description = "Serve /metrics on port N (default: ${DEFAULT-VALUE}, off; env KNOCKWATCH_METRICS_PORT).")
  int metricsPort;

  @Mixin MetricsEndpoint.Bind metricsBind;

  /** The OTLP endpoint, when it runs. */
  private dev.knockwatch.ingest.OtlpIngest endpoint;

  @Override
  public Integer call() throws Exception {
    if (metricsPort < 0 || metricsPort > 65535) {
      throw new UsageException("--metrics-port " + metricsPort + " is not a port (0-65535)");
    }
    if (rawTopic != null) {
      return raw();
    }
    List<IngestAgent.Feed> feeds = null;
    java.util.Optional<dev.knockwatch.ingest.config.OtlpConfig> otlpConfig = java.util.Optional.empty();
    if (config != null) {
      config.forEach(f -> dev.knockwatch.cli.run.FileOption.check("--config", f));
      feeds = new java.util.ArrayList<>(SourcesConfig.load(config, var.resolve("ingest")));
      otlpConfig = dev.knockwatch.ingest.config.OtlpConfig.load(config);
      feeds.addAll(HarnessDirs.feeds(codexHomes, claudeProjects, var.resolve("ingest")));
    } else {
      Files.createDirectories(logs);
    }
    cluster.awaitReady();
    StageAccess.INGEST.require(cluster.bootstrapServers, cluster.clientProps());
    HTTPServer metrics = metricsPort == 0 ? null : MetricsEndpoint.start(metricsBind.address, metricsPort, false);
    KafkaEventSink sink = KafkaEventSink.create(cluster.bootstrapServers, cluster.clientProps());
    IngestAgent agent;
    if (feeds != null) {
      agent = new IngestAgent(feeds, sink, Pipeline.hostName(), Clock.systemUTC(), Pipeline.POLL_INTERVAL);
    } else {
      List<IngestAgent.Feed> all = new java.util.ArrayList<>(List.of(LogLayout.logDirectoryFeed(logs, p -> true,
          var.resolve("ingest").resolve("checkpoints.json"))));
      all.addAll(HarnessDirs.feeds(codexHomes, claudeProjects, var.resolve("ingest")));
      agent = new IngestAgent(all, sink, Pipeline.hostName(), Clock.systemUTC(), Pipeline.POLL_INTERVAL);
    }
    agent.pacePerCommand(IngestAgent.PER_COMMAND_LINES_PER_SECOND);
    endpoint = otlp.start(false, var, otlpConfig, cluster.bootstrapServers, cluster.clientProps());
    return runUntilStopped(agent, sink, metrics,
        () -> String.format("%,d bytes of logs not read yet", MetricsEndpoint.sum("knockwatch_ingest_lag_bytes")),
        "watching " + (config != null ? "the sources of " + String.join(", ", config.stream().map(Path::toString).toList()) : logs + " (" + Formats.namesBySuffix() + ")")
            + HarnessDirs.CODEX.describe(codexHomes) + HarnessDirs.CLAUDE.describe(claudeProjects)
            + (endpoint == null ? "" : "; OTLP logs on " + endpoint.url()));
  }

  /** {@code --raw-topic}: the raw lines a shipper carried, instead of files. */
  private int raw() throws Exception {
    if (config != null) {
      throw new UsageException("--raw-topic reads a topic, --config files: give one of them");
    }
    if (rawTopic.isBlank()) {
      throw new UsageException("--raw-topic needs a topic name");
    }
    String root = logs.toAbsolutePath().normalize().toString();
    cluster.awaitReady();
    StageAccess.rawIngest(rawTopic, rawGroup).require(cluster.bootstrapServers, cluster.clientProps());
    HTTPServer metrics = metricsPort == 0 ? null : MetricsEndpoint.start(metricsBind.address, metricsPort, false);
    RawTopicIngest stage = new RawTopicIngest(cluster.bootstrapServers, cluster.clientProps(), rawTopic, rawGroup,
        rawGroup + "-" + InstanceId.of(var.resolve("ingest")), root, Clock.systemUTC());
    return runUntilStopped(stage, null, metrics, () -> "raw lines from " + rawTopic,
        "reading raw lines from " + rawTopic + " (paths under " + root + ")");
  }

  /**
   * Runs {@code stage} (the agent, or the raw stage) on a thread of its own, says what it reads,
   * and waits for Ctrl-C / SIGTERM, which close it (its batch published and committed), then
   * {@code sink} (null: none of its own) and the metrics endpoint.
   */
  private <S extends Runnable & AutoCloseable> int runUntilStopped(S stage, KafkaEventSink sink, HTTPServer metrics,
      Supplier<String> lag, String reads) throws InterruptedException {
    KafkaWatch watch = new KafkaWatch("ingest", cluster.bootstrapServers, cluster.clientProps(), lag,
        IngestAgent::kafkaAnswers);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      watch.close();
      if (endpoint != null) {
        endpoint.close();
      }
      try {
        stage.close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
      if (sink != null) {
        sink.close();
      }
      if (metrics != null) {
        metrics.close();
      }
      stopped.countDown();
    }, "knockwatch-ingest-shutdown"));
    new Thread(stage, "knockwatch-ingest").start();
    PrintWriter out = spec.commandLine().getOut();
    out.println("knockwatch ingest: " + reads + " -> " + cluster.bootstrapServers
        + (metrics == null ? "" : "; metrics on " + MetricsEndpoint.url(metricsBind.address, metrics)));
    out.flush();
    stopped.await();
    return Knockwatch.OK;
  }
}
