package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.testkit.SrtRecords;
import dev.knockwatch.testkit.TopicReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Kafka goes away while the sandbox keeps writing: nothing is lost, nothing is counted twice (by eventId). */
@Tag("integration")
class BrokerDownTest {

  static final String ID = "BrokerDownTestCommand1";

  @TempDir Path dir;

  /** Waits for {@code expected} records of the command, then returns the distinct ids of all of them. */
  private static Set<String> eventIds(EmbeddedKafkaBroker broker, int expected) {
    TopicReader.readUntil(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
        r -> ID.equals(r.key()), expected);
    return TopicReader.readToEnd(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
        r -> ID.equals(r.key())).stream().map(r -> r.value().eventId()).collect(Collectors.toSet());
  }

  @Test
  void linesWrittenWhileTheBrokerIsDownArePublishedWhenItIsBack() throws Exception {
    Path data = dir.resolve("kafka");
    Path file = Files.createDirectories(dir.resolve("logs/agent-1")).resolve(ID + ".violations.jsonl");
    EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(data, 0);
    int port = broker.port();
    broker.createTopics();
    KafkaEventSink sink = KafkaEventSink.create(broker.bootstrapServers(), Map.of());
    IngestAgent agent = LogLayout.forLogDirectory(dir.resolve("logs"), p -> true, dir.resolve("checkpoints.json"),
        sink, "h", Duration.ofMillis(20));
    Thread t = new Thread(agent);
    t.start();
    try {
      SrtRecords.append(file, ID, 0, 100);
      assertThat(eventIds(broker, 100)).hasSize(100);

      broker.close();
      SrtRecords.append(file, ID, 100, 300);
      Thread.sleep(3_000);

      broker = EmbeddedKafkaBroker.start(data, port);
      assertThat(broker.port()).isEqualTo(port);
      Set<String> ids = eventIds(broker, 300);
      assertThat(ids).as("distinct event ids: every line once").hasSize(300);
    } finally {
      agent.close();
      sink.close();
      broker.close();
    }
  }
}
