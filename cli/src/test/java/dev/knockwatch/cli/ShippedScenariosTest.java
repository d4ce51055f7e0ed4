package dev.knockwatch.cli;

import dev.knockwatch.events.WritableTopics;
import dev.knockwatch.cli.replay.TimeOrderedSink;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.cli.rulestest.RuleTestRunner;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.EventSink;
import dev.knockwatch.ingest.RawTopicIngest;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.RealShipper;
import dev.knockwatch.testkit.TopicReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The detection scenarios' logs (ScenariosTest's goldens) through the real rsyslog with
 * {@code config/shippers/rsyslog.conf}, the raw topic and {@code ingest --raw-topic}'s stage: the
 * shipped rules raise the alerts each scenario's {@code expected.jsonl} holds, as through the agent,
 * but for the events' ids (made from the host, path and rsyslog's offset, not the agent's file names).
 * The events are put in time order as {@code replay} puts them, then through the detection topology.
 */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class ShippedScenariosTest {

  @TempDir Path dir;

  @Test
  void theScenariosThroughRsyslogAndTheStageRaiseTheirGoldenAlerts(EmbeddedKafkaBroker broker) throws Exception {
    Path root = Files.createDirectories(dir.resolve("logs"));
    List<Path> scenarios;
    try (Stream<Path> s = Files.list(ScenariosTest.SCENARIOS)) {
      scenarios = s.filter(Files::isDirectory).sorted().toList();
    }
    Map<Path, List<String>> filesOf = new java.util.LinkedHashMap<>();
    for (Path scenario : scenarios) {
      List<String> files = new ArrayList<>();
      Path input = scenario.resolve("input");
      try (Stream<Path> walk = Files.walk(input)) {
        for (Path f : walk.filter(Files::isRegularFile).toList()) {
          String rel = input.relativize(f).toString();
          Path to = root.resolve(rel);
          assertThat(to).as("two scenarios' " + rel).doesNotExist();
          Files.createDirectories(to.getParent());
          Files.copy(f, to);
          Files.setLastModifiedTime(to, Files.getLastModifiedTime(f));
          files.add(rel);
        }
      }
      filesOf.put(scenario, files);
    }
    String topic = "raw-shipped-scenarios";
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      WritableTopics.create(admin, List.of(new NewTopic(topic, 3, (short) 1)));
    }
    List<ViolationEvent> all;
    try (RealShipper rsyslog = RealShipper.start(RealShipper.Kind.RSYSLOG, root, dir.resolve("rsyslog"),
        broker.bootstrapServers(), topic);
        RawTopicIngest stage = new RawTopicIngest(broker.bootstrapServers(), Map.of(), topic, "shipped-scenarios",
            "shipped-scenarios-tx", root.toAbsolutePath().toString(), Clock.systemUTC())) {
      new Thread(stage, "shipped-scenarios").start();
      long lines = 0;
      for (List<String> files : filesOf.values()) {
        for (String f : files) {
          lines += Files.readAllLines(root.resolve(f)).stream().filter(l -> !l.isEmpty()).count();
        }
      }
      // every line rsyslog ships is an event or a rejected line: wait for the raw topic to be read to its end
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (TopicReader.recordCount(broker, topic) < lines && System.nanoTime() < deadline) {
        Thread.sleep(200);
      }
      assertThat(TopicReader.recordCount(broker, topic)).as(rsyslog.output()).isEqualTo(lines);
      Thread.sleep(3_000); // the stage's last transaction
      all = TopicReader.readToEnd(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
          r -> r.value().origin() != null).stream()
          .map(ConsumerRecord::value).toList();
    }
    for (Map.Entry<Path, List<String>> e : filesOf.entrySet()) {
      List<String> files = e.getValue();
      List<ViolationEvent> events = all.stream().filter(v -> v.origin() != null && files.contains(v.origin().file()))
          .toList();
      Collected ordered = new Collected();
      TimeOrderedSink sorted = new TimeOrderedSink(ordered);
      events.forEach(sorted::publish);
      sorted.drain();
      List<String> alerts = RuleTestRunner.detect(PolicyLoader.load(Path.of("../alert-rules")), ordered.events,
          dir.resolve("state-" + e.getKey().getFileName())).stream().map(a -> withoutIds(Json.MAPPER.valueToTree(a)))
          .toList();
      List<String> expected = Files.readAllLines(e.getKey().resolve("expected.jsonl")).stream()
          .filter(l -> !l.isBlank()).map(l -> {
            try {
              return withoutIds(Json.MAPPER.readTree(l));
            } catch (java.io.IOException x) {
              throw new IllegalStateException(x);
            }
          }).toList();
      // replay prints them as its topic's partitions give them; here they come in time order
      assertThat(alerts).as(e.getKey().getFileName().toString()).containsExactlyInAnyOrderElementsOf(expected);
    }
  }

  /** An alert but for its sample event ids: the agent makes them from its file names, the stage from host, path and offset. */
  private static String withoutIds(JsonNode alert) {
    ((ObjectNode) alert).remove("sampleEventIds");
    return alert.toString();
  }

  private static final class Collected implements EventSink {
    final List<ViolationEvent> events = new ArrayList<>();

    @Override
    public void publish(ViolationEvent event) {
      events.add(event);
    }

    @Override
    public void reject(RejectedLine line) {}

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
