package dev.knockwatch.cli;

import dev.knockwatch.broker.TopicCreator;
import dev.knockwatch.events.Topics;
import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code knockwatch topics}: creates knockwatch's topics that are missing (the one-shot step of a deployment). */
@Command(name = "topics", mixinStandardHelpOptions = true,
    description = "Wait for Kafka, create the topics knockwatch needs that are missing, list them, exit.")
final class TopicsCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ClusterOptions cluster;

  @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "120s",
      description = "How long to wait for Kafka (default: ${DEFAULT-VALUE}).")
  String waitFor;

  @Override
  public Integer call() {
    TopicCreator.awaitReady(cluster.bootstrapServers, cluster.clientProps(), SilenceCommand.Add.parse(waitFor, "--wait"));
    TopicCreator.createMissing(cluster.bootstrapServers, cluster.clientProps());
    PrintWriter out = spec.commandLine().getOut();
    Topics.ALL.forEach(t -> out.println(t.name() + " (" + t.partitions() + " partitions)"));
    out.flush();
    return Knockwatch.OK;
  }
}
