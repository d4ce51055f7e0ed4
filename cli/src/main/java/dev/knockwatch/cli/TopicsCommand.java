package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.broker.TopicCreator;
import dev.knockwatch.events.Topics;
import java.io.PrintWriter;
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

  @Option(names = "--partitions", paramLabel = "N", defaultValue = "${env:KNOCKWATCH_TOPIC_PARTITIONS}",
      description = "Partitions of the keyed topics it creates (violations, alerts, notifications; default: "
          + Topics.DEFAULT_KEYED_PARTITIONS + "; env KNOCKWATCH_TOPIC_PARTITIONS). Existing topics are not changed.")
  Integer partitions;

  @Option(names = "--replication-factor", paramLabel = "N", defaultValue = "${env:KNOCKWATCH_REPLICATION_FACTOR}",
      description = "Replicas of each topic it creates (default: the cluster's default.replication.factor; at most "
          + "the brokers' count; env KNOCKWATCH_REPLICATION_FACTOR).")
  Short replicationFactor;

  @Override
  public Integer call() {
    if (partitions != null && (partitions < 1 || partitions > 10_000)) {
      throw new UsageException("--partitions " + partitions + " is not a partition count (1-10000)");
    }
    if (replicationFactor != null && replicationFactor < 1) {
      throw new UsageException("--replication-factor " + replicationFactor + " is not a replication factor (1 or more)");
    }
    cluster.awaitReady();
    try {
      TopicCreator.createMissing(cluster.bootstrapServers, cluster.clientProps(),
          new TopicCreator.Layout(partitions, replicationFactor));
    } catch (IllegalArgumentException e) {
      throw new UsageException("--replication-factor: " + e.getMessage());
    }
    PrintWriter out = spec.commandLine().getOut();
    TopicCreator.describe(cluster.bootstrapServers, cluster.clientProps()).forEach((name, shape) ->
        out.println(name + " (" + shape.partitions() + " partitions, replication factor " + shape.replicationFactor() + ")"));
    out.flush();
    return Knockwatch.OK;
  }
}
