package dev.knockwatch.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code knockwatch export}: the refusals and alerts in OCSF or ECS on a topic a SIEM reads, until Ctrl-C. */
@Command(name = "export", mixinStandardHelpOptions = true,
    description = {"Write every refusal and alert, in OCSF or ECS, to a topic a SIEM's connector reads (keyed by "
        + "commandId, at least once), until Ctrl-C. The topic is made when missing."})
final class ExportCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ClusterOptions cluster;

  @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "${env:KNOCKWATCH_EXPORT_FORMAT:-ocsf}",
      description = "ocsf (Network Activity, File System Activity, Detection Finding) or ecs (default: ${DEFAULT-VALUE}; "
          + "env KNOCKWATCH_EXPORT_FORMAT).")
  String format;

  @Option(names = "--topic", paramLabel = "NAME",
      description = "The topic written (default: knockwatch.export.FORMAT).")
  String topic;

  @Option(names = "--group", paramLabel = "NAME",
      description = "Consumer group; exporters of one deployment share it (default: knockwatch-export-FORMAT).")
  String group;

  @Override
  public Integer call() throws Exception {
    Exporter.Format f = Exporter.Format.of("--format", format);
    String to = topic != null ? topic : f.defaultTopic();
    String as = group != null ? group : f.defaultGroup();
    cluster.awaitReady();
    Exporter.ensureTopic(cluster.bootstrapServers, cluster.clientProps(), to);
    Exporter exporter = new Exporter(cluster.bootstrapServers, cluster.clientProps(), f, to, as);
    Thread worker = new Thread(exporter, "knockwatch-export");
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      exporter.close();
      try {
        worker.join(15_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      stopped.countDown();
    }, "knockwatch-export-shutdown"));
    worker.start();
    PrintWriter out = spec.commandLine().getOut();
    out.println("knockwatch export: knockwatch.violations and knockwatch.alerts as " + format + " to " + to + ", group "
        + as + " on " + cluster.bootstrapServers);
    out.flush();
    stopped.await();
    return Knockwatch.OK;
  }
}
