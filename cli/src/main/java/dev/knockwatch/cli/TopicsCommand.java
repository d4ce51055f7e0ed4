package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.broker.TopicCreator;
import dev.knockwatch.events.Topics;
import dev.knockwatch.streams.PartitionGrowth;
import java.io.PrintWriter;
import java.util.List;
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

  @Option(names = "--grow-to", paramLabel = "N",
      description = "Raise the keyed topics from their partition count to N, a multiple of it, and move the state of"
          + " detection and the timeline with its keys. Stop ingest, let streams and notify read everything, stop"
          + " them, then run this (docs/OPERATIONS.md, \"Past the partition count\").")
  Integer growTo;

  @Option(names = "--notify-group", paramLabel = "GROUP", defaultValue = "knockwatch-notify",
      description = "With --grow-to: the notifiers' consumer group, which must be stopped too (default: ${DEFAULT-VALUE}).")
  List<String> notifyGroups;

  @Override
  public Integer call() {
    if (growTo != null) {
      return grow();
    }
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

  private Integer grow() {
    if (partitions != null || replicationFactor != null) {
      throw new UsageException("--grow-to changes existing topics only: give it without --partitions and --replication-factor");
    }
    if (growTo < 2 || growTo > 10_000) {
      throw new UsageException("--grow-to " + growTo + " is not a partition count to grow to (2-10000)");
    }
    cluster.awaitReady();
    PrintWriter out = spec.commandLine().getOut();
    try {
      PartitionGrowth.Result r = PartitionGrowth.grow(cluster.bootstrapServers, cluster.clientProps(), growTo,
          notifyGroups, line -> {
            out.println(line);
            out.flush();
          });
      if (r.from() != r.to()) {
        out.println("grew from " + r.from() + " to " + r.to() + " partitions: "
            + r.moved().values().stream().mapToInt(Integer::intValue).sum() + " keys' state moved"
            + (r.warnings().isEmpty() ? "" : ", with " + r.warnings().size() + " warning(s) above")
            + "; start streams, notify and ingest");
      }
    } catch (PartitionGrowth.Refused e) {
      throw new UsageException("cannot grow the partitions, nothing was changed: " + e.getMessage());
    }
    out.flush();
    return Knockwatch.OK;
  }
}
