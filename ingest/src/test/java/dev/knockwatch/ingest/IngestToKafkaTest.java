package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.TopicReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class IngestToKafkaTest {

  static final String ID = "IngestToKafkaTest00001";

  @TempDir Path logs;

  static String record(String commandId) {
    return "{\"line\":\"deny network-outbound example.com:443 (host is not on the allow list)\","
        + "\"commandId\":\"" + commandId + "\",\"command\":\"curl -s https://example.com/?token=SECRET\","
        + "\"timestamp\":\"2026-11-29T18:45:32.887Z\"}\n";
  }

  @Test
  void linesAppendedToTheLogsBecomeEventsKeyedByCommandId(EmbeddedKafkaBroker broker) throws Exception {
    Path file = logs.resolve("ci-runner-1").resolve(ID + ".violations.jsonl");
    Files.createDirectories(file.getParent());
    try (KafkaEventSink sink = KafkaEventSink.create(broker.bootstrapServers(), Map.of());
        IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, null, sink, "host-a", Duration.ofMillis(20))) {
      Thread t = new Thread(agent);
      t.start();
      for (int i = 0; i < 3; i++) {
        Files.writeString(file, record(ID), StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      }
      List<ConsumerRecord<String, ViolationEvent>> got = TopicReader.readUntil(broker, Topics.VIOLATIONS.name(),
          Json.serde(ViolationEvent.class).deserializer(), r -> ID.equals(r.key()), 3);
      assertThat(got).hasSize(3);
      assertThat(got).extracting(ConsumerRecord::key).containsOnly(ID);
      assertThat(got).extracting(r -> r.value().agentId()).containsOnly("ci-runner-1");
      long len = record(ID).getBytes(StandardCharsets.UTF_8).length;
      assertThat(got).extracting(r -> r.value().origin().offset()).containsExactly(0L, len, 2 * len);
      // the event's time is the record's own; the Kafka record's is when ingest read it, which Kafka always takes
      assertThat(got).extracting(r -> r.value().observedAt()).containsOnly(Instant.parse("2026-11-29T18:45:32.887Z"));
      assertThat(got).allSatisfy(r -> assertThat(r.timestamp()).isEqualTo(r.value().ingestedAt().toEpochMilli()));
      assertThat(got.get(0).value().commandText()).isEqualTo("curl -s https://example.com/?token=[REDACTED]");
      assertThat(got).extracting(ConsumerRecord::partition).containsOnly(got.get(0).partition());
    }
  }

  @Test
  void aLineWithATenCharacterIdLandsInTheRejectedTopicWithItsReason(EmbeddedKafkaBroker broker) throws Exception {
    Path file = logs.resolve("ci-runner-2").resolve("shortid.violations.jsonl");
    Files.createDirectories(file.getParent());
    Files.writeString(file, record("abcdefghij"));
    try (KafkaEventSink sink = KafkaEventSink.create(broker.bootstrapServers(), Map.of());
        IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, null, sink, "host-a", Duration.ofMillis(20))) {
      assertThat(agent.pollOnce()).isEqualTo(1);
    }
    List<ConsumerRecord<String, RejectedLine>> got = TopicReader.readUntil(broker, Topics.REJECTED.name(),
        Json.serde(RejectedLine.class).deserializer(), r -> r.key().equals("ci-runner-2/shortid.violations.jsonl:0"), 1);
    assertThat(got).hasSize(1);
    RejectedLine r = got.get(0).value();
    assertThat(r.reason()).isEqualTo("commandId is too short: 10 characters, at least 22 required");
    assertThat(r.code()).isEqualTo("short-command-id");
    assertThat(r.line()).contains("\"commandId\":\"abcdefghij\"").contains("token=[REDACTED]").doesNotContain("SECRET");
  }

  /**
   * One batch, three records: a good event, one the producer refuses for its size, one a real
   * broker refuses for its timestamp (year 2100, past message.timestamp.after.max.ms), which fails
   * the good record beside it in its producer batch. The batch fails and is read again, as after
   * an outage; read again, each refused line yields a rejected line saying why, and the good event
   * is published.
   */
  @Test
  void aRecordKafkaRefusesForItselfBecomesARejectedLineAndTheRestOfItsBatchIsPublished(EmbeddedKafkaBroker broker)
      throws Exception {
    String id = "RefusedForItself000001";
    ViolationEvent good = ViolationEvent.builder().eventId("good").commandId(id).observedAt(Instant.now())
        .ingestedAt(Instant.now()).origin(new ViolationEvent.Origin("refused/" + id + ".violations.jsonl", 0, "host-a"))
        .build();
    ViolationEvent tooLarge = good.toBuilder().eventId("too-large")
        .origin(new ViolationEvent.Origin("refused/" + id + ".violations.jsonl", 100, "host-a"))
        .commandText("x".repeat(600 * 1024)).build();
    ViolationEvent future = good.toBuilder().eventId("future").ingestedAt(Instant.parse("2100-01-01T00:00:00Z"))
        .origin(new ViolationEvent.Origin("refused/" + id + ".violations.jsonl", 200, "host-a")).build();
    // Batches close after 2 s, not ingest's 50 ms: on a busy machine the producer's thread could
    // otherwise send the good record alone before the future one joins its batch.
    try (KafkaEventSink sink = KafkaEventSink.forRequests(broker.bootstrapServers(), Map.of(), 2_000)) {
      java.util.concurrent.CompletableFuture<Exception> first = new java.util.concurrent.CompletableFuture<>();
      sink.send(List.of(sink.prepare(good), sink.prepare(tooLarge), sink.prepare(future)), first::complete);
      assertThat(first.get(60, java.util.concurrent.TimeUnit.SECONDS)).as("the good record failed beside the future one")
          .hasMessageContaining("part of a batch");
      java.util.concurrent.CompletableFuture<Exception> again = new java.util.concurrent.CompletableFuture<>();
      List<Outgoing> reread = List.of(sink.prepare(good), sink.prepare(tooLarge), sink.prepare(future));
      assertThat(reread.subList(1, 3)).allSatisfy(r -> assertThat(r).isInstanceOf(Outgoing.Rejected.class));
      sink.send(reread, again::complete);
      assertThat(again.get(60, java.util.concurrent.TimeUnit.SECONDS)).isNull();
    }
    assertThat(TopicReader.readUntil(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
        r -> id.equals(r.key()), 1)).extracting(r -> r.value().eventId()).containsExactly("good");
    List<ConsumerRecord<String, RejectedLine>> rejected = TopicReader.readUntil(broker, Topics.REJECTED.name(),
        Json.serde(RejectedLine.class).deserializer(), r -> r.key().startsWith("refused/"), 2);
    assertThat(rejected).extracting(ConsumerRecord::key).containsExactlyInAnyOrder(
        "refused/" + id + ".violations.jsonl:100", "refused/" + id + ".violations.jsonl:200");
    assertThat(rejected).extracting(r -> r.value().reason()).anySatisfy(why ->
        assertThat(why).startsWith("Kafka refused its record: RecordTooLargeException")).anySatisfy(why ->
        assertThat(why).startsWith("Kafka refused its record: InvalidTimestampException"));
    assertThat(rejected).allSatisfy(r -> assertThat(r.value().code()).isEqualTo("unpublishable"));
  }
}
