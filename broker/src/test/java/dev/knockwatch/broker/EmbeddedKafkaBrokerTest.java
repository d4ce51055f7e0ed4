package dev.knockwatch.broker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Topics;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The broker `up` runs: started, stopped, started again on the same data. */
@Tag("integration")
class EmbeddedKafkaBrokerTest {

  @TempDir Path dir;

  private static Admin admin(EmbeddedKafkaBroker b) {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers()));
  }

  @Test
  void topicsAreCreatedWithTheirPartitionsAndCompactionAndDataSurvivesARestart() throws Exception {
    Path data = dir.resolve("kafka");
    try (EmbeddedKafkaBroker b = EmbeddedKafkaBroker.start(data, 0)) {
      b.createTopics();
      try (Admin admin = admin(b)) {
        Map<String, TopicDescription> topics = admin.describeTopics(
            Topics.ALL.stream().map(Topics.Topic::name).toList()).allTopicNames().get(30, TimeUnit.SECONDS);
        for (Topics.Topic t : Topics.ALL) {
          assertThat(topics.get(t.name()).partitions()).as(t.name()).hasSize(t.partitions());
        }
        ConfigResource policy = new ConfigResource(ConfigResource.Type.TOPIC, Topics.POLICY.name());
        ConfigResource violations = new ConfigResource(ConfigResource.Type.TOPIC, Topics.VIOLATIONS.name());
        Map<ConfigResource, Config> configs = admin.describeConfigs(List.of(policy, violations)).all().get(30, TimeUnit.SECONDS);
        assertThat(configs.get(policy).get("cleanup.policy").value()).isEqualTo("compact");
        assertThat(configs.get(violations).get("cleanup.policy").value()).isEqualTo("delete");
      }
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(
          ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
        p.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), 0, "kept-between-runs", "v")).get(30, TimeUnit.SECONDS);
      }
    }
    assertThat(data.resolve("data/meta.properties")).exists();

    try (EmbeddedKafkaBroker again = EmbeddedKafkaBroker.start(data, 0); Admin admin = admin(again)) {
      assertThat(TopicCreator.createMissing(again.bootstrapServers(), Map.of())).as("nothing to create again").isEmpty();
      long end = admin.listOffsets(Map.of(new org.apache.kafka.common.TopicPartition(Topics.VIOLATIONS.name(), 0),
          org.apache.kafka.clients.admin.OffsetSpec.latest())).all().get(30, TimeUnit.SECONDS).values().iterator().next().offset();
      assertThat(end).as("the record written before the restart").isEqualTo(1);
    }
  }

  /**
   * Idle, the broker asks little of itself (docs/PERFORMANCE.md, "up idle"): its heartbeat to its own controller
   * every 1.5 s (at 750 ms, twelve in the window), and no no-op record in the metadata log (one every 5 s by
   * default here before).
   */
  @Test
  void anIdleBrokerHeartbeatsToItsControllerEveryOneAndAHalfSecondsAndWritesNoMetadata() throws Exception {
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0)) {
      broker.createTopics();
      Thread.sleep(2_000);
      double heartbeats = heartbeats();
      double metadataEnd = metadataLogEnd();
      Thread.sleep(9_000);
      assertThat(heartbeats() - heartbeats).as("the broker's heartbeats to its controller in 9 idle seconds")
          .isPositive().isLessThanOrEqualTo(8);
      assertThat(metadataLogEnd()).as("the metadata log's end after 9 idle seconds").isEqualTo(metadataEnd);
    }
  }

  private static double heartbeats() throws Exception {
    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    double sum = 0;
    for (ObjectName n : jmx.queryNames(new ObjectName(
        "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=BrokerHeartbeat,*"), null)) {
      sum += ((Number) jmx.getAttribute(n, "Count")).doubleValue();
    }
    return sum;
  }

  private static double metadataLogEnd() throws Exception {
    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    Set<ObjectName> raft = jmx.queryNames(new ObjectName("*:type=raft-metrics,*"), null);
    assertThat(raft).as("the raft metrics").hasSize(1);
    return ((Number) jmx.getAttribute(raft.iterator().next(), "log-end-offset")).doubleValue();
  }

  @Test
  void theListenerAndControllerPortsAreFreeDifferentAndNotTheOneToAvoid() throws Exception {
    for (int n = 0; n < 200; n++) {
      int avoid = EmbeddedKafkaBroker.freePorts(1, 0)[0];
      int[] ports = EmbeddedKafkaBroker.freePorts(3, avoid);
      assertThat(ports).doesNotHaveDuplicates().doesNotContain(avoid, 0);
      for (int port : ports) {
        try (ServerSocket s = new ServerSocket(port, 0, InetAddress.getLoopbackAddress())) {
          assertThat(s.getLocalPort()).as("closed again, free to bind").isEqualTo(port);
        }
      }
    }
  }

  @Test
  void aTakenPortFallsBackToAFreeOneAndSaysSo() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 0, InetAddress.getLoopbackAddress());
        EmbeddedKafkaBroker b = EmbeddedKafkaBroker.start(dir.resolve("k"), taken.getLocalPort())) {
      assertThat(b.portWasTaken()).isTrue();
      assertThat(b.port()).isNotEqualTo(taken.getLocalPort());
      try (Admin admin = admin(b)) {
        assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
      }
    }
  }

  @Test
  void wipeRemovesEverythingUnderTheDirectory() throws Exception {
    Path d = Files.createDirectories(dir.resolve("w/a/b"));
    Files.writeString(d.resolve("f"), "x");
    EmbeddedKafkaBroker.wipe(dir.resolve("w"));
    assertThat(dir.resolve("w")).doesNotExist();
    EmbeddedKafkaBroker.wipe(dir.resolve("never-existed"));
  }
}
