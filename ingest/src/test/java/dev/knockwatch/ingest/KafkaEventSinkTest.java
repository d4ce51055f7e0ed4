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
      .observedAt(Instant.parse("2026-11-29T18:45:32.887Z")).build();

  @SuppressWarnings("unchecked")
  private static MockProducer<String, Object> producer() {
    Serializer<Object> json = (Serializer<Object>) (Serializer<?>) Json.serde(ViolationEvent.class).serializer();
    return new MockProducer<>(false, null, new StringSerializer(), json);
  }

  @Test
  void eventsAreKeyedByCommandIdAndStampedWithTheirOwnTime() throws Exception {
    MockProducer<String, Object> p = producer();
    KafkaEventSink sink = new KafkaEventSink(p);
    sink.publish(EVENT);
    sink.flush();
    assertThat(p.history()).singleElement().satisfies(r -> {
      assertThat(r.topic()).isEqualTo(Topics.VIOLATIONS.name());
      assertThat(r.key()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
      assertThat(r.timestamp()).isEqualTo(EVENT.observedAt().toEpochMilli());
    });
  }

  @Test
  void aPreparedEventIsItsRecordWithTheMappersBytesAndIsSentAsItIs() throws Exception {
    MockProducer<String, Object> p = producer();
    KafkaEventSink sink = new KafkaEventSink(p);
    ViolationEvent event = EVENT.toBuilder().host("evil.test").port(443).commandText("curl \"x\"\u00e9").build();
    Object prepared = sink.prepare(event);
    assertThat(prepared).isInstanceOfSatisfying(org.apache.kafka.clients.producer.ProducerRecord.class, r -> {
      assertThat(r.topic()).isEqualTo(Topics.VIOLATIONS.name());
      assertThat(r.key()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
      assertThat(r.timestamp()).isEqualTo(event.observedAt().toEpochMilli());
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
    sink.send(java.util.List.of(EVENT, EVENT, EVENT, EVENT), answers::add);
    assertThat(answers).isEmpty();
    p.completeNext();
    p.errorNext(new TimeoutException("broker down"));
    p.completeNext();
    assertThat(answers).as("one record still unanswered").isEmpty();
    p.errorNext(new TimeoutException("later"));
    assertThat(answers).singleElement().satisfies(e -> assertThat(e).hasMessage("broker down"));

    java.util.List<Exception> ok = new java.util.ArrayList<>();
    sink.send(java.util.List.of(EVENT, EVENT), ok::add);
    p.completeNext();
    p.completeNext();
    assertThat(ok).containsExactly((Exception) null);

    java.util.List<Exception> empty = new java.util.ArrayList<>();
    sink.send(java.util.List.of(), empty::add);
    assertThat(empty).containsExactly((Exception) null);
  }

  @Test
  void aRecordTheProducerRefusesOutrightFailsItsBatchAtOnce() {
    MockProducer<String, Object> p = producer();
    KafkaEventSink sink = new KafkaEventSink(p);
    p.close();
    java.util.List<Exception> answers = new java.util.ArrayList<>();
    sink.send(java.util.List.of(EVENT, EVENT), answers::add);
    assertThat(answers).singleElement().isInstanceOf(IllegalStateException.class);
  }
}
