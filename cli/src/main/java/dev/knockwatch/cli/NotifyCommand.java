package dev.knockwatch.cli;

import dev.knockwatch.cli.run.Rules;
import dev.knockwatch.broker.KafkaWatch;
import dev.knockwatch.notify.AlertDispatcher;
import dev.knockwatch.notify.Notifiers;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.pipeline.Backoff;
import io.prometheus.client.exporter.HTTPServer;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** The notifier alone: reads the alerts and delivers them to the receivers of receivers.yaml, until Ctrl-C. */
@Command(name = "notify", mixinStandardHelpOptions = true,
    description = {"Deliver alerts to Slack, PagerDuty, webhooks and the console (receivers.yaml), until Ctrl-C."})
final class NotifyCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ClusterOptions cluster;

  @Mixin RulesOption rulesOption;

  @Option(names = "--group", defaultValue = "knockwatch-notify",
      description = "Consumer group; every notifier of one deployment shares it (default: ${DEFAULT-VALUE}).")
  String group;

  @Option(names = "--metrics-port", paramLabel = "N", defaultValue = "${env:KNOCKWATCH_METRICS_PORT:-9466}",
      description = "Port of /metrics (default: ${DEFAULT-VALUE}; env KNOCKWATCH_METRICS_PORT).")
  int metricsPort;

  @Mixin MetricsEndpoint.Bind metricsBind;

  @Override
  public Integer call() throws Exception {
    ReceiversConfig receivers = ReceiversConfig.load(rulesOption.dir);
    cluster.awaitReady();
    StageAccess.notify(group).require(cluster.bootstrapServers, cluster.clientProps());
    HTTPServer metrics = MetricsEndpoint.start(metricsBind.address, metricsPort, false);
    AlertDispatcher dispatcher = new AlertDispatcher(cluster.bootstrapServers, group, null, cluster.clientProps(), receivers,
        Notifiers.create(receivers, new PrintStream(System.out, true, "UTF-8")), Backoff.DEFAULT);
    Thread worker = new Thread(dispatcher, "knockwatch-notify");
    KafkaWatch watch = new KafkaWatch("notify", cluster.bootstrapServers, cluster.clientProps(),
        () -> String.format("%,d notifications queued for the receivers (what they were sent is recorded once Kafka is back)",
            MetricsEndpoint.sum("knockwatch_notify_queue_depth")), up -> { });
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      watch.close();
      dispatcher.close();
      metrics.close();
      stopped.countDown();
    }, "knockwatch-notify-shutdown"));
    worker.start();
    PrintWriter out = spec.commandLine().getOut();
    out.println("knockwatch notify: " + Rules.describe(receivers) + " from " + rulesOption.dir.resolve(ReceiversConfig.FILE)
        + ", group " + group + " on " + cluster.bootstrapServers + "; metrics on "
        + MetricsEndpoint.url(metricsBind.address, metrics));
    out.flush();
    stopped.await();
    return Knockwatch.OK;
  }
}
