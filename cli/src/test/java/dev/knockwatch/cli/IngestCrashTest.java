package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.SrtRecords;
import dev.knockwatch.testkit.TopicReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** `knockwatch ingest` in its own JVM, killed with SIGKILL mid-stream and started again: every line arrives, by eventId once. */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class IngestCrashTest {

  static final String ID = "IngestCrashTestCommand";
  static final int LINES = 30_000;

  @TempDir Path dir;

  private Process ingest(EmbeddedKafkaBroker broker) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), Knockwatch.class.getName(),
        "ingest", "--logs", dir.resolve("logs").toString(), "--var", dir.resolve("var").toString(),
        "--bootstrap-servers", broker.bootstrapServers())
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("ingest.out").toFile())
        .start();
  }

  private static List<ConsumerRecord<String, ViolationEvent>> records(EmbeddedKafkaBroker broker) {
    return TopicReader.readToEnd(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
        r -> ID.equals(r.key()));
  }

  @Test
  void aKilledAgentResumesWithoutLosingALine(EmbeddedKafkaBroker broker) throws Exception {
    Path file = Files.createDirectories(dir.resolve("logs/agent-1")).resolve(ID + ".violations.jsonl");
    SrtRecords.append(file, ID, 0, LINES);
    long before = TopicReader.recordCount(broker, Topics.VIOLATIONS.name());
    Process first = ingest(broker);
    Instant deadline = Instant.now().plusSeconds(120);
    // end offsets are cheap to ask: kill as soon as the first thousand lines are on the topic
    while (TopicReader.recordCount(broker, Topics.VIOLATIONS.name()) - before < 1_000 && Instant.now().isBefore(deadline)) {
      Thread.sleep(5);
    }
    first.destroyForcibly();                       // SIGKILL: no shutdown hook, no last commit
    assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
    int beforeRestart = records(broker).size();
    SrtRecords.append(file, ID, LINES, LINES + 1_000);

    Process second = ingest(broker);
    try {
      Set<String> ids = Set.of();
      deadline = Instant.now().plusSeconds(120);
      while (ids.size() < LINES + 1_000 && Instant.now().isBefore(deadline)) {
        Thread.sleep(200);
        if (TopicReader.recordCount(broker, Topics.VIOLATIONS.name()) - before >= LINES + 1_000) {
          ids = records(broker).stream().map(r -> r.value().eventId()).collect(Collectors.toSet());
        }
      }
      assertThat(beforeRestart).as("the kill came mid-stream").isBetween(1_000, LINES - 1);
      assertThat(ids).as("distinct event ids after the restart; output: " + Files.readString(dir.resolve("ingest.out")))
          .hasSize(LINES + 1_000);
    } finally {
      second.destroy();
      second.waitFor(30, TimeUnit.SECONDS);
    }
  }

  /**
   * The same kill, then logrotate's mv while the agent is down and a new file under the name: the
   * rest of the old file is read under its rotated name, the new file from its start, and every
   * line arrives once (its event id the same however often it is read).
   */
  @Test
  void aKilledAgentResumesAcrossALogrotateWithoutLosingOrRepeatingALine(EmbeddedKafkaBroker broker) throws Exception {
    String id = "IngestCrashRotatedCmd0";
    Path file = Files.createDirectories(dir.resolve("logs/agent-2")).resolve(id + ".violations.jsonl");
    SrtRecords.append(file, id, 0, LINES);
    java.util.function.Supplier<List<ConsumerRecord<String, ViolationEvent>>> mine = () -> TopicReader.readToEnd(broker,
        Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(), r -> id.equals(r.key()));
    long before = TopicReader.recordCount(broker, Topics.VIOLATIONS.name());
    Process first = ingest(broker);
    Instant deadline = Instant.now().plusSeconds(120);
    while (TopicReader.recordCount(broker, Topics.VIOLATIONS.name()) - before < 1_000 && Instant.now().isBefore(deadline)) {
      Thread.sleep(5);
    }
    first.destroyForcibly();
    assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
    int beforeRestart = mine.get().size();
    Files.move(file, file.resolveSibling(file.getFileName() + ".1"));
    SrtRecords.append(file, id, LINES, LINES + 1_000);

    Process second = ingest(broker);
    try {
      List<ConsumerRecord<String, ViolationEvent>> got = List.of();
      deadline = Instant.now().plusSeconds(120);
      while (Instant.now().isBefore(deadline)) {
        Thread.sleep(500);
        got = mine.get();
        if (got.stream().map(r -> r.value().eventId()).distinct().count() >= LINES + 1_000) {
          Thread.sleep(2_000); // anything sent twice would be on the topic by now
          got = mine.get();
          break;
        }
      }
      assertThat(beforeRestart).as("the kill came mid-stream").isBetween(1_000, LINES - 1);
      assertThat(got.stream().map(r -> r.value().eventId()).distinct()).as("distinct event ids; output: "
          + Files.readString(dir.resolve("ingest.out"))).hasSize(LINES + 1_000);
      // by content: each line's host says which line it was, and each line has one id, however often it was sent
      java.util.Map<String, Set<String>> idsByLine = got.stream().collect(Collectors.groupingBy(r -> r.value().host(),
          Collectors.mapping(r -> r.value().eventId(), Collectors.toSet())));
      assertThat(idsByLine).hasSize(LINES + 1_000).allSatisfy((line, ids) -> assertThat(ids).as(line).hasSize(1));
      assertThat(got.stream().filter(r -> r.value().origin().file().endsWith(".violations.jsonl.1")).count())
          .as("the old file's rest was read under its rotated name").isPositive();
    } finally {
      second.destroy();
      second.waitFor(30, TimeUnit.SECONDS);
    }
  }
}
