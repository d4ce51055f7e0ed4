package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.common.utils.internals.AppInfoParser;
import org.junit.jupiter.api.Test;

/** The cluster tier's nodes are compose's: its services, its image's Kafka, every one of its settings. */
class KafkaClusterTest {

  @Test
  void theHarnessRunsComposesNodesWithEveryOneOfTheirSettingsAndTheJarsKafkaIsComposes() throws Exception {
    Map<String, Map<String, String>> nodes = KafkaCluster.composeNodes();
    assertThat(nodes).containsOnlyKeys("kafka-1", "kafka-2", "kafka-3");
    assertThat(KafkaCluster.composeImage()).isEqualTo("apache/kafka:" + AppInfoParser.getVersion());

    Map<Integer, int[]> ports = Map.of(1, new int[] {1001, 1002}, 2, new int[] {2001, 2002}, 3, new int[] {3001, 3002});
    Map<String, String> env = nodes.get("kafka-2");
    Map<String, String> p = KafkaCluster.settings(env, ports, Path.of("/data/node-2"));
    env.keySet().stream().filter(k -> k.startsWith("KAFKA_")).forEach(k ->
        assertThat(p).as(k).containsKey(k.substring(6).toLowerCase(java.util.Locale.ROOT).replace('_', '.')));
    assertThat(p).containsEntry("node.id", "2").containsEntry("process.roles", "broker,controller")
        .containsEntry("default.replication.factor", "3").containsEntry("min.insync.replicas", "2")
        .containsEntry("listeners", "PLAINTEXT://127.0.0.1:2001,CONTROLLER://127.0.0.1:2002")
        .containsEntry("advertised.listeners", "PLAINTEXT://127.0.0.1:2001")
        .containsEntry("controller.quorum.voters", "1@127.0.0.1:1002,2@127.0.0.1:2002,3@127.0.0.1:3002")
        .containsEntry("log.dirs", Path.of("/data/node-2").toString());
    assertThat(env).containsKey("CLUSTER_ID");
  }
}
