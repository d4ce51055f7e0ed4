package dev.knockwatch.ingest;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.knockwatch.events.EventWriter;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes events to {@code knockwatch.violations} keyed by commandId (so one command's events
 * stay in order on one partition), and rejected lines to {@code knockwatch.violations.rejected}.
 * The record timestamp is the event's own time, so windows follow the sandbox's clock.
 */
public final class KafkaEventSink implements EventSink {

  static final int MAX_REQUEST_BYTES = 480 * 1024;

  private final Producer<String, Object> producer;
  /** The first send that failed since the last flush; the callback runs on the producer's I/O thread. */
  private final AtomicReference<Exception> failed = new AtomicReference<>();
  private final Callback onAck = (metadata, e) -> {
    if (e != null) {
      failed.compareAndSet(null, e);
    }
  };

  public KafkaEventSink(Producer<String, Object> producer) {
    this.producer = producer;
  }

  /** A publisher with an idempotent producer that waits for every replica (acks=all). */
  public static KafkaEventSink create(String bootstrapServers, Map<String, Object> clientProps) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    // Under a backlog batches fill for up to 50 ms: at 10 ms they closed at a tenth of batch.size,
    // each with its own lz4 buffers (128 KB), request and log append (bench ingest: ~15 % less
    // CPU per line). A caught-up agent flushes instead of waiting (IngestAgent's publisher).
    p.put(ProducerConfig.LINGER_MS_CONFIG, 50);
    // Events are ~0.5 KB: larger batches mean fewer requests and lz4 frames per event.
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    // Requests under 512 KiB: a broker reads each request into one array, and on a heap under
    // 4 GB (G1's 1 MB regions: the embedded broker of `up`, sharing this JVM) one of 512 KiB or
    // more is a humongous object, each of which can start a marking cycle. With 1 MB requests the
    // bench's collector took 0.55–2.23 s per 1,000,000 lines, below 512 KiB 0.55–0.58 s. An event
    // or a rejected line is at most some tens of KB (their fields are bounded): none comes near.
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, MAX_REQUEST_BYTES);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "knockwatch-ingest");
    // A batch Kafka does not take within this time fails and is read again (the agent backs off).
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000);
    Serializer<Object> json = (topic, value) -> {
      if (value instanceof byte[] bytes) { // prepared
        return bytes;
      }
      if (value instanceof ViolationEvent event) {
        return EventWriter.toBytes(event); // the mapper's bytes, without its per-value lookups
      }
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
    producer.send(record(event), onAck);
  }

  /**
   * The event's record, its value already written to bytes: the agent calls this on the thread
   * that parsed the line, one of a thread per core, so the single publisher thread is left only
   * the producer's own work (bench ingest, docs/PERFORMANCE.md: the publisher's CPU down by about
   * two fifths, the process's the same within the noise), and a batch in flight holds one array
   * per event instead of the event's objects.
   */
  @Override
  public Object prepare(ViolationEvent event) {
    return new ProducerRecord<String, Object>(Topics.VIOLATIONS.name(), null, event.observedAt().toEpochMilli(),
        event.commandId(), EventWriter.toBytes(event));
  }

  @Override
  public void reject(RejectedLine rejected) {
    producer.send(record(rejected), onAck);
  }

  @SuppressWarnings("unchecked") // only prepare() makes them
  private static ProducerRecord<String, Object> prepared(ProducerRecord<?, ?> r) {
    return (ProducerRecord<String, Object>) r;
  }

  private static ProducerRecord<String, Object> record(ViolationEvent event) {
    return new ProducerRecord<>(Topics.VIOLATIONS.name(), null, event.observedAt().toEpochMilli(), event.commandId(), event);
  }

  private static ProducerRecord<String, Object> record(RejectedLine rejected) {
    return new ProducerRecord<>(Topics.REJECTED.name(), null, rejected.rejectedAt().toEpochMilli(), rejected.key(), rejected);
  }

  /**
   * Sends every record with a callback and returns: {@code done} runs on the producer's I/O
   * thread once the last record is acknowledged, with the first failure if any. Batches follow
   * each other without waiting for the one before (no flush), so the producer, the broker and
   * the reader all work at once.
   */
  @Override
  public void send(List<?> records, Consumer<Exception> done) {
    // one count per record, plus one held until every record was handed to the producer
    AtomicInteger pending = new AtomicInteger(records.size() + 1);
    AtomicReference<Exception> first = new AtomicReference<>();
    Callback each = (metadata, e) -> {
      if (e != null) {
        first.compareAndSet(null, e);
      }
      if (pending.decrementAndGet() == 0) {
        done.accept(first.get());
      }
    };
    int handed = 0;
    try {
      for (Object r : records) {
        producer.send(r instanceof ProducerRecord<?, ?> prepared ? prepared(prepared)
            : r instanceof ViolationEvent event ? record(event) : record((RejectedLine) r), each);
        handed++;
      }
    } catch (RuntimeException e) { // the producer refused a record outright (closed, too large, interrupted)
      first.compareAndSet(null, e);
      pending.addAndGet(-(records.size() - handed));
    }
    if (pending.decrementAndGet() == 0) {
      done.accept(first.get());
    }
  }

  /** Waits until everything sent so far is acknowledged; throws if any send failed. */
  @Override
  public void flush() throws PublishException {
    try {
      producer.flush();
    } catch (InterruptException e) {
      throw new PublishException("interrupted while waiting for Kafka", e);
    }
    Exception e = failed.getAndSet(null);
    if (e != null) {
      throw new PublishException("Kafka did not take a record: " + e.getMessage(), e);
    }
  }


  @Override
  public void close() {
    producer.close();
  }
}
