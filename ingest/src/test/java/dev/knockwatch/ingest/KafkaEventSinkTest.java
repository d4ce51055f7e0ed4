package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import java.time.Instant;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/** The sink's contract on a MockProducer (a pure unit test; the broker tests cover the real thing). */
class KafkaEventSinkTest {

  static final ViolationEvent EVENT = ViolationEvent.builder().commandId("xhfHytmXL-L6RsYw2CrSjA").eventId("e1")
      .observedAt(Instant.parse("2026-11-29T18:45:32.887Z")).ingestedAt(Instant.parse("2026-11-29T18:45:33.100Z"))
      .origin(new ViolationEvent.Origin("ci-runner-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", 1234, "host-1")).build();

  @SuppressWarnings("unchecked")
  private static MockProducer<String, Object> producer() {
    Serializer<Object> json = (Serializer<Object>) (Serializer<?>) Json.serde(ViolationEvent.class).serializer();
    return new MockProducer<>(false, null, new StringSerializer(), json);
  }

  @Test
  void eventsAreKeyedByCommandIdAndStampedWithTheTimeIngestReadThem() throws Exception {
    MockProducer<String, Object> p = producer();
    KafkaEventSink sink = new KafkaEventSink(p);
    // the agent's claim of a time (year 2100) is the event's; the record's is ingest's, which Kafka takes
    sink.publish(EVENT.toBuilder().observedAt(Instant.parse("2100-01-01T00:00:00Z")).build());
    sink.flush();
    assertThat(p.history()).singleElement().satisfies(r -> {
      assertThat(r.topic()).isEqualTo(Topics.VIOLATIONS.name());
      assertThat(r.key()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
      assertThat(r.timestamp()).isEqualTo(EVENT.ingestedAt().toEpochMilli());
    });
  }

  /**
   * A wall that names no command: its event has no command id and travels under the finest grain it
   * names, the agent's or the session's, never under an invented command.
   */
  @Test
  void anEventWhoseWallNamesNoCommandIsKeyedByItsAgentOrSession() throws Exception {
    MockProducer<String, Object> p = producer();
    KafkaEventSink sink = new KafkaEventSink(p);
    ViolationEvent wall = EVENT.toBuilder().commandId(null).commandUnknown(true).agentId("ci-runner-1").build();
    sink.publish(wall);
    sink.publish(wall.toBuilder().sessionId("sandbox-7").build());
    sink.flush();
    assertThat(p.history()).extracting(r -> r.key()).containsExactly("agent:ci-runner-1", "session:ci-runner-1/sandbox-7");
    assertThat(((ViolationEvent) p.history().get(0).value()).commandId()).isNull();
  }

  @Test
  void aPreparedEventIsItsRecordWithTheMappersBytesAndIsSentAsItIs() throws Exception {
    MockProducer<String, Object> p = producer();
    KafkaEventSink sink = new KafkaEventSink(p);
    ViolationEvent event = EVENT.toBuilder().host("evil.test").port(443).commandText("curl \"x\"\u00e9").build();
    Outgoing prepared = sink.prepare(event);
    assertThat(prepared).isInstanceOfSatisfying(org.apache.kafka.clients.producer.ProducerRecord.class, r -> {
      assertThat(r.topic()).isEqualTo(Topics.VIOLATIONS.name());
      assertThat(r.key()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
      assertThat(r.timestamp()).isEqualTo(event.ingestedAt().toEpochMilli());
      try {
        assertThat((byte[]) r.value()).isEqualTo(Json.MAPPER.writeValueAsBytes(event));
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw new AssertionError(e);
      }
    });
    java.util.List<Exception> answers = new java.util.ArrayList<>();
    sink.send(java.util.List.of(prepared), answers::add);
    p.completeNext();
    assertThat(answers).containsExactly((Exception) null);
    assertThat(p.history()).singleElement().isSameAs(prepared);
  }

  @Test
  void aSendKafkaRefusedFailsTheNextFlushOnceSoTheBatchIsReadAgain() throws Exception {
    MockProducer<String, Object> p = producer();
    KafkaEventSink sink = new KafkaEventSink(p);
    sink.publish(EVENT);
    p.errorNext(new TimeoutException("broker down"));
    assertThatThrownBy(sink::flush).isInstanceOf(EventSink.PublishException.class)
        .hasMessage("Kafka did not take a record: broker down");
    sink.publish(EVENT);
    sink.flush();
  }

  @Test
  void aBatchIsAnsweredOnceWhenItsLastRecordIsAndWithItsFirstFailure() {
    MockProducer<String, Object> p = producer();
    KafkaEventSink sink = new KafkaEventSink(p);
    java.util.List<Exception> answers = new java.util.ArrayList<>();
    sink.send(java.util.List.of(new Outgoing.Event(EVENT), new Outgoing.Event(EVENT), new Outgoing.Event(EVENT), new Outgoing.Event(EVENT)), answers::add);
    assertThat(answers).isEmpty();
    p.completeNext();
    p.errorNext(new TimeoutException("broker down"));
    p.completeNext();
    assertThat(answers).as("one record still unanswered").isEmpty();
    p.errorNext(new TimeoutException("later"));
    assertThat(answers).singleElement().satisfies(e -> assertThat(e).hasMessage("broker down"));

    java.util.List<Exception> ok = new java.util.ArrayList<>();
    sink.send(java.util.List.of(new Outgoing.Event(EVENT), new Outgoing.Event(EVENT)), ok::add);
    p.completeNext();
    p.completeNext();
    assertThat(ok).containsExactly((Exception) null);

    java.util.List<Exception> empty = new java.util.ArrayList<>();
    sink.send(java.util.List.of(), empty::add);
    assertThat(empty).containsExactly((Exception) null);
  }

  @Test
  void aRecordKafkaRefusesForItselfBecomesARejectedLineAndTheBatchIsDone() throws Exception {
    MockProducer<String, Object> p = producer();
    KafkaEventSink sink = new KafkaEventSink(p);
    java.util.concurrent.CompletableFuture<Exception> answer = new java.util.concurrent.CompletableFuture<>();
    sink.send(java.util.List.of(sink.prepare(EVENT), sink.prepare(EVENT), sink.prepare(EVENT)), answer::complete);
    p.completeNext();
    p.errorNext(new org.apache.kafka.common.errors.RecordTooLargeException("the request is too large"));
    p.completeNext();
    // the stand-in is sent from the sink's own thread; the batch is done once it is taken
    org.assertj.core.api.Assertions.assertThat(awaitHistory(p, 4)).isTrue();
    assertThat(answer).isNotDone();
    p.completeNext();
    assertThat(answer.get(10, java.util.concurrent.TimeUnit.SECONDS)).isNull();
    assertThat(p.history().get(3)).satisfies(r -> {
      assertThat(r.topic()).isEqualTo(Topics.REJECTED.name());
      assertThat(r.key()).isEqualTo("ci-runner-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl:1234");
      assertThat(r.value()).isInstanceOfSatisfying(dev.knockwatch.events.RejectedLine.class, rl -> {
        assertThat(rl.code()).isEqualTo("unpublishable");
        assertThat(rl.reason()).startsWith("Kafka refused its record: RecordTooLargeException: the request is too large");
        assertThat(rl.line()).as("the line is in its file, at the offset the key names").isNull();
      });
    });
  }

  @Test
  void aBatchThatFailedBesideARefusedRecordIsReadAgainAndTheRefusedLineThenYieldsItsStandIn() throws Exception {
    MockProducer<String, Object> p = producer();
    KafkaEventSink sink = new KafkaEventSink(p);
    java.util.List<Exception> answers = new java.util.concurrent.CopyOnWriteArrayList<>();
    ViolationEvent e2 = EVENT.toBuilder().eventId("e2")
        .origin(new ViolationEvent.Origin(EVENT.origin().file(), 4321, "host-a")).build();
    sink.send(java.util.List.of(sink.prepare(EVENT), sink.prepare(e2)), answers::add);
    p.errorNext(new org.apache.kafka.common.errors.RecordTooLargeException("too large"));
    // what a broker answers the other records of a producer batch that held an invalid one
    p.errorNext(new org.apache.kafka.common.KafkaException("Failed to append record because it was part of a batch"
        + " which had one more more invalid records"));
    assertThat(answers).singleElement().satisfies(e -> assertThat(e).hasMessageContaining("part of a batch"));
    assertThat(p.history()).hasSize(2);
    // read again: the refused line's stand-in goes in its place, the other record as it is
    Outgoing again = sink.prepare(EVENT);
    assertThat(again).isInstanceOfSatisfying(Outgoing.Rejected.class, r -> {
      dev.knockwatch.events.RejectedLine rl = r.line();
      assertThat(rl.key()).isEqualTo("ci-runner-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl:1234");
      assertThat(rl.reason()).startsWith("Kafka refused its record: RecordTooLargeException: too large");
    });
    assertThat(sink.prepare(e2)).isInstanceOf(org.apache.kafka.clients.producer.ProducerRecord.class);
    assertThat(sink.prepare(EVENT)).as("a stand-in is given once").isInstanceOf(org.apache.kafka.clients.producer.ProducerRecord.class);
    java.util.concurrent.CompletableFuture<Exception> answer = new java.util.concurrent.CompletableFuture<>();
    sink.send(java.util.List.of(again, sink.prepare(e2)), answer::complete);
    p.completeNext();
    p.completeNext();
    assertThat(answer.get(10, java.util.concurrent.TimeUnit.SECONDS)).isNull();
    assertThat(p.history().get(2).topic()).isEqualTo(Topics.REJECTED.name());
    assertThat(p.history().get(3).topic()).isEqualTo(Topics.VIOLATIONS.name());
  }

  @Test
  void anOutageAloneFailsTheBatchSoItIsReadAgainAndNothingStandsInForIt() throws Exception {
    MockProducer<String, Object> p = producer();
    KafkaEventSink sink = new KafkaEventSink(p);
    java.util.List<Exception> answers = new java.util.ArrayList<>();
    sink.send(java.util.List.of(new Outgoing.Event(EVENT), new Outgoing.Event(EVENT)), answers::add);
    p.errorNext(new TimeoutException("broker down"));
    p.errorNext(new TimeoutException("broker down too"));
    assertThat(answers).singleElement().satisfies(e -> assertThat(e).hasMessage("broker down"));
    Thread.sleep(200);
    assertThat(p.history()).hasSize(2);
  }

  private static boolean awaitHistory(MockProducer<String, Object> p, int size) throws InterruptedException {
    for (int i = 0; i < 200 && p.history().size() < size; i++) {
      Thread.sleep(25);
    }
    return p.history().size() >= size;
  }

  @Test
  void aRecordTheProducerRefusesOutrightFailsItsBatchAtOnce() {
    MockProducer<String, Object> p = producer();
    KafkaEventSink sink = new KafkaEventSink(p);
    p.close();
    java.util.List<Exception> answers = new java.util.ArrayList<>();
    sink.send(java.util.List.of(new Outgoing.Event(EVENT), new Outgoing.Event(EVENT)), answers::add);
    assertThat(answers).singleElement().isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aNodeThatStopsAnsweringIsGivenUpOnAfterTenSecondsUnlessTheKafkaConfigSaysOtherwise() {
    assertThat(KafkaEventSink.producerProps("127.0.0.1:9092", java.util.Map.of()))
        .containsEntry(org.apache.kafka.clients.producer.ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Topics.REQUEST_TIMEOUT_MS);
    assertThat(KafkaEventSink.producerProps("127.0.0.1:9092", java.util.Map.of("request.timeout.ms", "20000")))
        .containsEntry(org.apache.kafka.clients.producer.ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
  }
}
