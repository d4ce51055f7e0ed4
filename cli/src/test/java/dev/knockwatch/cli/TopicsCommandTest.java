package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Topics;
import dev.knockwatch.notify.pipeline.NotificationLog;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: {@code ./knockwatch topics --partitions N --replication-factor N}, as an operator runs
 * the one-shot step: a replication factor above the brokers' count is one line and creates
 * nothing; ingest, streams and notify create no topic (they need no Create right) and name the
 * ones they miss; the partitions (here from the environment) go to the keyed topics, and the notifier
 * co-partitions its log with the alerts topic as the cluster has it, not as the default says.
 */
@Tag("integration")
class TopicsCommandTest {

  @TempDir Path dir;

  @Test
  void partitionsAndReplicationFactorAreTheOperatorsAndCheckedAgainstTheCluster() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0);
        Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      try (Launched tooMany = Launched.start(checkout, dir.resolve("rf3"), Map.of(), "topics", "--bootstrap-servers",
          broker.bootstrapServers(), "--replication-factor", "3")) {
        assertThat(tooMany.awaitExit(Duration.ofSeconds(120))).isEqualTo(Knockwatch.USAGE);
        List<String> lines = tooMany.err().lines().filter(l -> l.startsWith("knockwatch:")).toList();
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0)).contains("replication factor of 3", broker.bootstrapServers(), "has 1");
      }
      assertThat(admin.listTopics().names().get()).doesNotContain(Topics.ALERTS.name());

      // only `topics` creates topics: each stage names what it misses and makes nothing
      Map<String, String> needs = Map.of("ingest", "knockwatch.violations, knockwatch.violations.rejected",
          "streams", "knockwatch.violations, knockwatch.violations.by-grain, knockwatch.alerts, knockwatch.policy, knockwatch.silences",
          "notify", "knockwatch.alerts, knockwatch.notifications, knockwatch.silences");
      for (Map.Entry<String, String> stage : needs.entrySet()) {
        try (Launched l = Launched.start(checkout, dir.resolve("no-topics-" + stage.getKey()), Map.of(), stage.getKey(),
            "--bootstrap-servers", broker.bootstrapServers(), "--metrics-port", String.valueOf(Launched.freePort()))) {
          assertThat(l.awaitExit(Duration.ofSeconds(120))).as(stage.getKey()).isEqualTo(1);
          List<String> lines = l.err().lines().filter(x -> x.startsWith("knockwatch:")).toList();
          assertThat(lines).as(stage.getKey()).hasSize(1);
          assertThat(lines.get(0)).contains("has no topic " + stage.getValue(), "knockwatch topics");
        }
      }
      assertThat(admin.listTopics().names().get()).as("made by no stage").isEmpty();

      try (Launched topics = Launched.start(checkout, dir.resolve("p12"), Map.of("KNOCKWATCH_TOPIC_PARTITIONS", "12"),
          "topics", "--bootstrap-servers", broker.bootstrapServers())) {
        assertThat(topics.awaitExit(Duration.ofSeconds(120))).as(topics.err()).isZero();
        assertThat(topics.out()).contains("knockwatch.alerts (12 partitions, replication factor 1)",
            "knockwatch.silences (1 partitions, replication factor 1)");
      }
      Map<String, Integer> partitions = admin.describeTopics(Topics.ALL.stream().map(Topics.Topic::name).toList())
          .allTopicNames().get().values().stream()
          .collect(Collectors.toMap(TopicDescription::name, d -> d.partitions().size()));
      assertThat(partitions).containsEntry(Topics.VIOLATIONS.name(), 12).containsEntry(Topics.BY_GRAIN.name(), 12)
          .containsEntry(Topics.ALERTS.name(), 12)
          .containsEntry(Topics.NOTIFICATIONS.name(), 12).containsEntry(Topics.SILENCES.name(), 1)
          .containsEntry(Topics.POLICY.name(), 1).containsEntry(Topics.REJECTED.name(), 1);

      try (NotificationLog log = NotificationLog.open(broker.bootstrapServers(), Map.of())) {
        for (int i = 0; i < 50; i++) {
          String fp = Alert.fingerprintOf("off-role-host", "TopicsCommandTestCmd" + i);
          int onAlerts = Utils.toPositive(Utils.murmur2(fp.getBytes(StandardCharsets.UTF_8))) % 12;
          assertThat(log.partitionOf(fp)).as(fp).isEqualTo(onAlerts);
        }
      }
    }
  }
}
