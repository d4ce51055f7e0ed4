package dev.knockwatch.streams;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.streams.detect.SandboxEscapeDetector;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link PartitionGrowth} must know of each store to move its state: every store the two
 * apps build (the shipped rules, and counts in aligned windows at the command's and a task's grain)
 * has a kind, so a store added without one stops this test rather than the growth of a deployment;
 * a key goes where Kafka's partitioner sends it; an alert's state finds the key it was kept under.
 */
class PartitionGrowthTest {

  @TempDir Path dir;

  @Test
  void everyStoreOfDetectionAndTheTimelineHasAKind() throws Exception {
    Path rules = Files.createDirectories(dir.resolve("rules"));
    Files.copy(Path.of("../alert-rules/roles.yaml"), rules.resolve("roles.yaml"));
    Files.writeString(rules.resolve("rules.yaml"), Files.readString(Path.of("../alert-rules/rules.yaml")) + """
          - {id: aligned-retry, detector: count, window: 5m, hop: 5m, threshold: 5, per: task, severity: warning}
          - {id: aligned-command, detector: count, window: 1m, hop: 30s, threshold: 5, severity: warning}
        """);
    var policy = PolicyLoader.load(rules);
    Set<String> stores = new TreeSet<>();
    stores.addAll(storesOf(DetectionTopology.buildTopology(policy, AlertLifecycleProcessor.Clock.STREAM)));
    stores.addAll(storesOf(TimelineTopology.build(policy, Duration.ofDays(30))));
    assertThat(stores).contains("detect", "detect-by-grain", "count-aligned-retry-by-grain", "count-aligned-command",
        "alert-lifecycle-by-grain", "timeline-events", "timeline-index", "discover-overview", "exact-duplicates-ids");
    List<String> unknown = stores.stream().filter(s -> StateMoves.kindOf(s) == null).toList();
    assertThat(unknown).as("stores whose state the growth of the partitions would not know how to move").isEmpty();
    assertThat(StateMoves.kindOf("escape-sandbox-escape")).as("a store of no release").isNull();
  }

  private static Set<String> storesOf(Topology t) {
    Set<String> out = new TreeSet<>();
    for (TopologyDescription.Subtopology s : t.describe().subtopologies()) {
      for (TopologyDescription.Node n : s.nodes()) {
        if (n instanceof TopologyDescription.Processor p) {
          out.addAll(p.stores());
        }
      }
    }
    return out; // the global policy store is the policy topic's, with no changelog
  }

  @Test
  void aKeyGoesWhereKafkasPartitionerSendsIt() {
    Random random = new Random(66);
    for (int i = 0; i < 10_000; i++) {
      byte[] key = new byte[random.nextInt(80)];
      random.nextBytes(key);
      int partitions = 1 + random.nextInt(48);
      assertThat(StateMoves.partitionOf(key, partitions)).isEqualTo(BuiltInPartitioner.partitionForKey(key, partitions));
      // a multiple keeps a key among its old partition's successors: what makes its state movable
      assertThat(StateMoves.partitionOf(key, partitions * 3) % partitions)
          .isEqualTo(StateMoves.partitionOf(key, partitions));
    }
  }

  @Test
  void anAlertsStateFindsTheKeyItWasKeptUnder() {
    String command = "Cmd|with|bars0000000001";
    Alert onCommand = Alert.firing("off-role-host", command).build();
    assertThat(StateMoves.keyOf(onCommand, command + "|" + onCommand.fingerprint(), Set.of())).isEqualTo(command);

    String task = "task:claude-code/s-1/t-1";
    Alert onTask = Alert.firing("persistent-retry", command).fingerprint(Alert.fingerprintOf("persistent-retry", task))
        .build();
    List<String> grainKeys = new ArrayList<>(List.of("task:claude-code/s-1/t-2", "agent:runner-1", task));
    assertThat(StateMoves.keyOf(onTask, "toolu_01AAAAAAAAAAAAAAAAAAAAAA|" + onTask.fingerprint(),
        new TreeSet<>(grainKeys))).isEqualTo(task);

    Alert letOut = Alert.firing("sandbox-escape", command)
        .fingerprint(Alert.fingerprintOf("sandbox-escape" + SandboxEscapeDetector.APPROVED, "session:claude-code/s-1"))
        .build();
    assertThat(StateMoves.keyOf(letOut, command + "|" + letOut.fingerprint(), Set.of("session:claude-code/s-1")))
        .isEqualTo("session:claude-code/s-1");

    assertThat(StateMoves.keyOf(onTask, "toolu_01AAAAAAAAAAAAAAAAAAAAAA|" + onTask.fingerprint(),
        Set.of("task:claude-code/s-1/t-9"))).as("no key of the partition matches").isNull();
  }
}
