package dev.knockwatch.ingest;

import dev.knockwatch.ingest.spi.Rejection;
import com.fasterxml.jackson.core.JsonProcessingException;
import dev.knockwatch.events.EventWriter;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes events to {@code knockwatch.violations} keyed by commandId (so one command's events
 * stay in order on one partition), and rejected lines to {@code knockwatch.violations.rejected}.
 * The record timestamp is when ingest read the line: a time the broker always takes, whatever the
 * agent wrote. The event's own time ({@code observedAt}) is in the value, where detection reads it.
 * A record Kafka refuses for itself (too large, a timestamp it does not take, unwritable) is
 * published as a rejected line instead, and the rest of its batch as it is: one record cannot stop
 * the agent. A batch that fails for any other reason (Kafka down, a timeout) is read again.
 */
public final class KafkaEventSink implements EventSink {

  static final int MAX_REQUEST_BYTES = 480 * 1024;
  /** Characters kept of the record a rejected line stands in for. */
  static final int KEPT_OF_REFUSED = 1024;
  private static final Logger log = LoggerFactory.getLogger(KafkaEventSink.class);

  private final ExecutorService replacements = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "knockwatch-ingest-replacements");
    t.setDaemon(true);
    return t;
  });

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
    return new KafkaEventSink(new KafkaProducer<>(producerProps(bootstrapServers, clientProps), new StringSerializer(),
        VALUES));
  }

  /**
   * A publisher for the OTLP endpoint, which answers each request once Kafka has its records: its
   * batches close after {@code lingerMs} (the exporter waits for the answer), not after the file
   * agent's 50 ms.
   */
  public static KafkaEventSink forRequests(String bootstrapServers, Map<String, Object> clientProps, int lingerMs) {
    Map<String, Object> p = producerProps(bootstrapServers, clientProps);
    p.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "knockwatch-ingest-otlp");
    return new KafkaEventSink(new KafkaProducer<>(p, new StringSerializer(), VALUES));
  }

  /** The producer's settings: idempotent, acks=all, batched and compressed for ingest's records. */
  static Map<String, Object> producerProps(String bootstrapServers, Map<String, Object> clientProps) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    // Under a backlog batches fill for up to 50 ms: at 10 ms they closed at a tenth of batch.size,
    // each with its own lz4 buffers, request and log append, and fuller batches cost less CPU per
    // line. A caught-up agent flushes instead of waiting (BatchPublisher).
    p.put(ProducerConfig.LINGER_MS_CONFIG, 50);
    // Events are ~0.5 KB: larger batches mean fewer requests and lz4 frames per event.
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    // Requests under 512 KiB: a broker reads each request into one array, and on a heap under
    // 4 GB (G1's 1 MB regions: the embedded broker of `up`, sharing this JVM) one of 512 KiB or
    // more is a humongous object, each of which can start a marking cycle. An event or a rejected line is at most some tens of KB (their fields are
    // bounded): none comes near.
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, MAX_REQUEST_BYTES);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "knockwatch-ingest");
    // A batch Kafka does not take within this time fails and is read again (the agent backs off).
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
    p.putIfAbsent(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, dev.knockwatch.events.Topics.REQUEST_TIMEOUT_MS);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000);
    return p;
  }

  /** The values' bytes: a prepared record's own, an event's as {@link EventWriter} writes it, anything else the mapper's. */
  static final Serializer<Object> VALUES = (topic, value) -> {
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

  @Override
  public void publish(ViolationEvent event) {
    producer.send(record(event), onAck);
  }

  /**
   * The event's record, its value already written to bytes: the agent calls this on the thread
   * that parsed the line, one of a thread per core, so the single publisher thread is left only
   * the producer's own work, and a batch in flight holds one
   * array per event instead of the event's objects.
   */
  @Override
  public Outgoing prepare(ViolationEvent event) {
    ViolationEvent.Origin o = event.origin();
    if (o != null && !refused.isEmpty()) {
      RejectedLine standIn = refused.remove(o.file() + ":" + o.offset());
      if (standIn != null) {
        return new Outgoing.Rejected(standIn); // Kafka refused this line's record before (finish)
      }
    }
    return new Prepared(timestamp(event), event.key(), EventWriter.toBytes(event), o);
  }

  /** A prepared record, with where its event came from (what a callback keeps of it). */
  static final class Prepared extends ProducerRecord<String, Object> implements Outgoing {
    final ViolationEvent.Origin origin;

    Prepared(Long timestamp, String key, byte[] value, ViolationEvent.Origin origin) {
      super(Topics.VIOLATIONS.name(), null, timestamp, key, value);
      this.origin = origin;
    }
  }

  /**
   * Stand-ins for records Kafka refused in a batch that failed for more than them, by origin
   * ({@code file:offset}): sent in their records' place when the batch is read again. A concurrent
   * map, since every parse thread asks it (lock-free while it is empty, as it nearly always is);
   * bounded by {@link #MAX_REMEMBERED}.
   */
  private final Map<String, RejectedLine> refused = new ConcurrentHashMap<>();
  static final int MAX_REMEMBERED = 10_000;

  private void remember(RejectedLine standIn) {
    if (refused.size() >= MAX_REMEMBERED) {
      refused.keySet().stream().findAny().ifPresent(refused::remove);
    }
    refused.put(standIn.key(), standIn);
  }

  private static Long timestamp(ViolationEvent event) {
    return event.ingestedAt() == null ? null : event.ingestedAt().toEpochMilli();
  }

  @Override
  public void reject(RejectedLine rejected) {
    producer.send(record(rejected), onAck);
  }

  private static ProducerRecord<String, Object> record(ViolationEvent event) {
    return new ProducerRecord<>(Topics.VIOLATIONS.name(), null, timestamp(event), event.key(), event);
  }

  static ProducerRecord<String, Object> record(RejectedLine rejected) {
    return new ProducerRecord<>(Topics.REJECTED.name(), null, rejected.rejectedAt().toEpochMilli(), rejected.key(), rejected);
  }

  /**
   * Sends every record with a callback and returns: {@code done} runs once the last record is
   * acknowledged, with null, or with why the batch must be read again. Batches follow each other
   * without waiting for the one before (no flush), so the producer, the broker and the reader all
   * work at once. A record refused for itself is replaced by a rejected line (sent from a thread of
   * its own: the acknowledgements run on the producer's I/O thread, where a send could wait for the
   * buffer that very thread frees).
   *
   * <p>A callback holds only where its record came from, never the record: a record held until
   * its acknowledgement outlives a few young collections, and a million of them promoted cost the
   * collector more than the rest of ingest. So records that failed
   * beside a refused one (a broker fails a whole producer batch for one invalid record) are not
   * sent again from here: the batch is read again, and the refused record's line then yields its
   * stand-in ({@link #prepare}).
   */
  @Override
  public void send(List<? extends Outgoing> records, Consumer<Exception> done) {
    send(records, done, 0);
  }

  private void send(List<? extends Outgoing> records, Consumer<Exception> done, int replacementRound) {
    Exception[] failures = new Exception[records.size()];
    Object[] origins = new Object[records.size()];
    // one count per record, plus one held until every record was handed to the producer
    AtomicInteger pending = new AtomicInteger(records.size() + 1);
    Runnable last = () -> finish(origins, failures, done, replacementRound);
    for (int i = 0; i < records.size(); i++) {
      Outgoing r = records.get(i);
      Object origin = r instanceof Prepared prepared ? prepared.origin
          : r instanceof Outgoing.Event e ? e.event().origin() : ((Outgoing.Rejected) r).line();
      int at = i;
      try {
        producer.send(r instanceof Prepared prepared ? prepared
            : r instanceof Outgoing.Event e ? record(e.event()) : record(((Outgoing.Rejected) r).line()), (metadata, e) -> {
              if (e != null) {
                failures[at] = e;
                origins[at] = origin;
              }
              if (pending.decrementAndGet() == 0) {
                last.run();
              }
            });
      } catch (RuntimeException e) { // refused before it was sent (unwritable, closed, interrupted)
        failures[at] = e;
        origins[at] = origin;
        pending.decrementAndGet();
      }
    }
    if (pending.decrementAndGet() == 0) {
      last.run();
    }
  }

  /**
   * Runs once every record of a batch is answered (the counter's last decrement orders the
   * failures' writes before it). Records Kafka refused for themselves go again as rejected lines
   * when nothing else failed; any other failure fails the batch, which is read again, and the
   * refused records' stand-ins are then sent in their place (remembered by origin).
   */
  private void finish(Object[] origins, Exception[] failures, Consumer<Exception> done, int round) {
    List<Outgoing.Rejected> standIns = new ArrayList<>();
    Exception outage = null;
    for (int i = 0; i < failures.length; i++) {
      Exception e = failures[i];
      if (e == null) {
        continue;
      }
      if (!refusedForItself(e)) {
        outage = outage == null ? e : outage;
      } else if (round < MAX_ROUNDS) {
        standIns.add(new Outgoing.Rejected(rejectedInstead(origins[i], e)));
      } else {
        log.error("Kafka refused a rejected line standing in for a refused record too; dropped: {}", e.toString());
        IngestMetrics.UNPUBLISHABLE.inc();
      }
    }
    if (standIns.isEmpty()) {
      done.accept(outage);
      return;
    }
    IngestMetrics.UNPUBLISHABLE_REPLACED.inc(standIns.size());
    if (outage != null) {
      standIns.forEach(r -> remember(r.line()));
      done.accept(outage);
    } else {
      replacements.execute(() -> send(standIns, done, round + 1));
    }
  }

  /** Rounds of stand-ins for one batch: a stand-in refused in the last one is dropped (said and counted). */
  static final int MAX_ROUNDS = 2;

  /** Kafka (or the producer) refused this record for what it is, not for where it was going or when. */
  static boolean refusedForItself(Throwable e) {
    return e instanceof RecordTooLargeException || e instanceof RecordBatchTooLargeException
        || e instanceof InvalidTimestampException || e instanceof InvalidRecordException
        || e instanceof CorruptRecordException || e instanceof SerializationException
        || e instanceof IllegalArgumentException;
  }

  /** The rejected line that takes the place of a record Kafka refused: where it came from, and why, bounded. */
  private static RejectedLine rejectedInstead(Object origin, Exception why) {
    String reason = "Kafka refused its record: " + Sanitize.text(why.getClass().getSimpleName() + ": " + why.getMessage(), 300);
    Instant now = Instant.now();
    if (origin instanceof RejectedLine r) {
      return new RejectedLine(r.file(), r.offset(), r.ingestHost(), Rejection.UNPUBLISHABLE.code(), reason + "; it was: "
          + Sanitize.text(r.reason(), 300), Sanitize.text(r.line(), KEPT_OF_REFUSED), now);
    }
    ViolationEvent.Origin o = origin instanceof ViolationEvent.Origin known ? known : null;
    return new RejectedLine(o == null ? "unknown" : o.file(), o == null ? -1 : o.offset(), o == null ? null : o.ingestHost(),
        Rejection.UNPUBLISHABLE.code(), reason, null, now);
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
    replacements.shutdown();
  }
}
