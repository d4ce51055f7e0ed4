package dev.knockwatch.ingest;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes events to {@code knockwatch.violations} keyed by commandId (so one command's events
 * stay in order on one partition), and rejected lines to {@code knockwatch.violations.rejected}.
 * The record timestamp is the event's own time, so windows follow the sandbox's clock.
 */
public final class KafkaEventSink implements EventSink {

  private final Producer<String, Object> producer;
  private final List<Future<RecordMetadata>> inFlight = new ArrayList<>();

  public KafkaEventSink(Producer<String, Object> producer) {
    this.producer = producer;
  }

  /** A publisher with an idempotent producer that waits for every replica (acks=all). */
  public static KafkaEventSink create(String bootstrapServers, Map<String, Object> clientProps) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "knockwatch-ingest");
    // A batch Kafka does not take within this time fails and is read again (the agent backs off).
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000);
    Serializer<Object> json = (topic, value) -> {
      try {
        return Json.MAPPER.writeValueAsBytes(value);
      } catch (JsonProcessingException e) {
        throw new SerializationException("cannot write " + value.getClass().getSimpleName() + " as JSON", e);
      }
    };
    return new KafkaEventSink(new KafkaProducer<>(p, new StringSerializer(), json));
  }

  @Override
  public void publish(ViolationEvent event) {
    inFlight.add(producer.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), null,
        event.observedAt().toEpochMilli(), event.commandId(), event)));
  }

  @Override
  public void reject(RejectedLine rejected) {
    inFlight.add(producer.send(new ProducerRecord<>(Topics.REJECTED.name(), null,
        rejected.rejectedAt().toEpochMilli(), rejected.key(), rejected)));
  }

  /** Waits until everything sent so far is acknowledged; throws if any send failed. */
  @Override
  public void flush() throws PublishException {
    producer.flush();
    try {
      for (Future<RecordMetadata> f : inFlight) {
        f.get();
      }
    } catch (ExecutionException e) {
      throw new PublishException("Kafka did not take a record: " + e.getCause().getMessage(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PublishException("interrupted while waiting for Kafka", e);
    } finally {
      inFlight.clear();
    }
  }

  @Override
  public void close() {
    producer.close();
  }
}
