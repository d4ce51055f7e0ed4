package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.testkit.TopicReader;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./knockwatch export} on a real broker, run as a user runs it: the refusals and alerts on
 * the topics come out in OCSF (and ECS) on the export topic, keyed by command; a record that is no
 * event is skipped; SIGTERM stops it cleanly. A broker of its own: the export reads whole topics,
 * and its unreadable record must not reach the suite's shared ones.
 */
@Tag("integration")
class ExportTest {

  static final Instant T0 = Instant.parse("2026-11-29T18:45:00Z");
  static final String CMD = "ExportTestCommand00001";

  @TempDir static Path dir;
  static EmbeddedKafkaBroker broker;

  @BeforeAll
  static void publish() throws Exception {
    broker = EmbeddedKafkaBroker.start(java.nio.file.Files.createDirectories(dir.resolve("kafka")), 0);
    broker.createTopics();
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
      ViolationEvent net = ViolationEvent.builder().eventId("x-net").commandId(CMD).agentId("ci-runner-1")
          .source("srt-violation").kind(Kind.NETWORK).action("network-outbound").host("evil.example").port(443)
          .observedAt(T0).build();
      ViolationEvent file = net.toBuilder().eventId("x-file").kind(Kind.FILESYSTEM).action("openat").host(null).port(null)
          .path("/home/agent/.bashrc").build();
      p.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), CMD, Json.write(net))).get(30, TimeUnit.SECONDS);
      p.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), CMD, Json.write(file))).get(30, TimeUnit.SECONDS);
      p.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), CMD, "{not an event")).get(30, TimeUnit.SECONDS);
      Alert a = Alert.firing("off-role-host", CMD).fingerprint(Alert.fingerprintOf("off-role-host", CMD))
          .severity(Alert.Severity.PAGE).agentId("ci-runner-1").role("ci").host("evil.example").port(443)
          .firstSeen(T0).lastSeen(T0).summary("s").sampleEventIds(List.of()).build();
      p.send(new ProducerRecord<>(Topics.ALERTS.name(), a.fingerprint(), Json.write(a))).get(30, TimeUnit.SECONDS);
    }
  }

  @org.junit.jupiter.api.AfterAll
  static void stop() {
    broker.close();
  }

  private static List<JsonNode> exported(String topic, int count) {
    return TopicReader.readUntil(broker, topic, new StringDeserializer(), r -> true, count).stream()
        .map(ConsumerRecord::value).map(v -> {
          try {
            return Json.MAPPER.readTree(v);
          } catch (IOException e) {
            throw new AssertionError(v, e);
          }
        }).toList();
  }

  @Test
  void theLauncherExportsRefusalsAndAlertsAsOcsfAndStopsOnSigterm() throws Exception {
    try (Launched export = Launched.start(Launched.REPO, dir.resolve("ocsf"), Map.of(), "export",
        "--bootstrap-servers", broker.bootstrapServers())) {
      export.awaitLine("knockwatch export: knockwatch.violations and knockwatch.alerts as ocsf to knockwatch.export.ocsf",
          Duration.ofMinutes(2));
      List<JsonNode> records = exported("knockwatch.export.ocsf", 3);
      assertThat(records).extracting(r -> r.get("class_uid").asInt()).containsExactlyInAnyOrder(4001, 1001, 2004);
      assertThat(records).allSatisfy(r -> assertThat(r.at("/metadata/version").asText()).isEqualTo("1.3.0"));
      assertThat(TopicReader.readToEnd(broker, "knockwatch.export.ocsf", new StringDeserializer(), r -> true))
          .extracting(ConsumerRecord::key).as("alerts too, keyed by fingerprint on theirs").containsOnly(CMD);
      assertThat(export.stop(Duration.ofSeconds(60))).isIn(0, 143);
      assertThat(export.err()).contains("is no event or alert: skipped").doesNotContain("Exception");
    }
  }

  @Test
  void ecsToANamedTopic() throws Exception {
    Exporter.ensureTopic(broker.bootstrapServers(), Map.of(), "siem.ecs");
    try (Exporter exporter = new Exporter(broker.bootstrapServers(), Map.of(), Exporter.Format.ECS, "siem.ecs",
        "export-test-ecs")) {
      Thread t = new Thread(exporter);
      t.start();
      List<JsonNode> records = exported("siem.ecs", 3);
      Set<String> kinds = records.stream().map(r -> r.at("/event/kind").asText()).collect(Collectors.toSet());
      assertThat(kinds).containsExactlyInAnyOrder("event", "alert");
      assertThat(records).filteredOn(r -> r.at("/event/kind").asText().equals("event"))
          .allSatisfy(r -> assertThat(r.at("/event/type/0").asText()).isEqualTo("denied"));
      exporter.close();
      t.join(30_000);
      assertThat(exporter.skipped.get()).isEqualTo(1);
    }
  }
}
