package dev.knockwatch.ingest;

import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.events.Durations;
import dev.knockwatch.events.Hashes;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.ingest.IngestAgent.FileContext;
import dev.knockwatch.ingest.raw.RawRecord;
import dev.knockwatch.ingest.tail.Bytes;
import dev.knockwatch.ingest.tail.FileTailer;
import dev.knockwatch.ingest.tail.TailedLine;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ingest with a topic as its source instead of files: the raw lines a log shipper carried
 * ({@link RawRecord}), each parsed by the same parsers with the same attribution from its path
 * (relative to the layout's root), and what they yield — events and rejected lines — written in
 * one Kafka transaction with the offsets it consumed: exactly once from raw line to event.
 *
 * <p>A line the shipper delivered twice keeps its event id (from host, path and the shipper's
 * offset; from host, path and the line's content where the shipper gives no offset), so detection
 * counts it once. A path outside the root is rejected ({@code outside-layout}), never attributed.
 *
 * <p>Multi-line refusals (a curl transcript, strace's unfinished calls) are assembled across the
 * records of one path, which the shipper keys by path onto one partition. While a path's parser
 * holds a half-read refusal, its partition's committed offset stays at the record that began it,
 * so a restart reads the refusal whole again (what was already sent again keeps its event ids); a
 * path that goes quiet so held has its refusal ended, as the agent ends a quiet file's.
 *
 * <p>Instances in one consumer group share the partitions; each needs its own transactional id.
 * Anything Kafka refuses ends the transaction: it is aborted, the clients are made again, and
 * reading resumes from the committed offsets with the parsers' state dropped.
 */
public final class RawTopicIngest implements Runnable, AutoCloseable {

  public static final String DEFAULT_GROUP = "knockwatch-ingest-raw";
  static final int MAX_OPEN_PATHS = IngestAgent.MAX_OPEN_PARSERS;
  private static final Logger log = LoggerFactory.getLogger(RawTopicIngest.class);

  private final String bootstrapServers;
  private final Map<String, Object> clientProps;
  private final String topic;
  private final String group;
  private final String transactionalId;
  /** The layout's root as the shippers' paths give it, without a trailing slash. */
  private final String root;
  private final Clock clock;
  private volatile boolean running = true;
  private volatile KafkaConsumer<byte[], byte[]> consumer;
  private volatile Thread thread;
  private volatile long committedTransactions;

  /** Each path's parser and where its half-read refusal began, by host and path. */
  private final Map<String, OpenPath> paths = new LinkedHashMap<>(16, 0.75f, true);
  /** One sender per host: an event's origin names the host its shipper gave. */
  private final Map<String, LineSender> senders = new HashMap<>();
  /**
   * The files seen, by host and path (the most recent {@link #MAX_OPEN_PATHS}): what a format asks
   * of a file beside the one it reads ({@code FileOptions.besides}: a transcript beside the srt
   * bridge's records of its command only restates them).
   */
  private final Set<String> seenFiles = java.util.Collections.newSetFromMap(
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
          return size() > MAX_OPEN_PATHS;
        }
      });
  private final Map<String, IngestMetrics.PerSource> meters = new HashMap<>();

  /**
   * @param root the layout's root as the shippers' paths give it (absolute)
   * @param transactionalId this instance's own: a restarted instance with the same one ends its
   *     predecessor's open transaction at once
   */
  public RawTopicIngest(String bootstrapServers, Map<String, Object> clientProps, String topic, String group,
      String transactionalId, String root, Clock clock) {
    if (!root.startsWith("/")) {
      throw new IllegalArgumentException("the layout's root must be an absolute path, as shippers give paths: " + root);
    }
    this.bootstrapServers = bootstrapServers;
    this.clientProps = Map.copyOf(clientProps);
    this.topic = topic;
    this.group = group;
    this.transactionalId = transactionalId;
    this.root = root.length() > 1 && root.endsWith("/") ? root.substring(0, root.length() - 1) : root;
    this.clock = clock;
  }

  /** Transactions committed so far (for tests and the log). */
  public long committedTransactions() {
    return committedTransactions;
  }

  @Override
  public void run() {
    thread = Thread.currentThread();
    Duration backoff = Duration.ZERO;
    while (running) {
      try (KafkaProducer<String, Object> producer = producer();
           KafkaConsumer<byte[], byte[]> c = consumer()) {
        consumer = c;
        producer.initTransactions();
        KafkaEventSink sink = new KafkaEventSink(producer);
        c.subscribe(List.of(topic), new Revoked());
        while (running) {
          ConsumerRecords<byte[], byte[]> records = c.poll(Duration.ofMillis(500));
          List<Outgoing> out = new ArrayList<>();
          Instant now = clock.instant();
          for (ConsumerRecord<byte[], byte[]> r : records) {
            handle(r, now, sink, out);
          }
          endQuiet(now, out);
          if (records.isEmpty() && out.isEmpty()) {
            continue;
          }
          producer.beginTransaction();
          for (Outgoing o : out) {
            producer.send(record(o));
          }
          producer.sendOffsetsToTransaction(offsets(c), c.groupMetadata());
          producer.commitTransaction();
          committedTransactions++;
          backoff = Duration.ZERO;
        }
      } catch (WakeupException | InterruptException e) {
        if (running) {
          log.warn("raw ingest woken while running: {}", e.toString());
        }
      } catch (KafkaException | IllegalStateException e) {
        // the transaction, if one was open, ends aborted with the producer; reading resumes at the committed offsets
        paths.clear();
        backoff = Durations.doubled(backoff, IngestAgent.MIN_BACKOFF, IngestAgent.MAX_BACKOFF);
        log.warn("raw ingest: {}; its transaction is aborted and reading resumes from the committed offsets in {} ms",
            Sanitize.text(e.toString(), 500), backoff.toMillis());
        IngestMetrics.PUBLISH_FAILURES.inc();
        sleep(backoff);
      } finally {
        consumer = null;
      }
    }
  }

  private KafkaProducer<String, Object> producer() {
    Map<String, Object> p = KafkaEventSink.producerProps(bootstrapServers, clientProps);
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "knockwatch-ingest-raw");
    return new KafkaProducer<>(p, new StringSerializer(), KafkaEventSink.VALUES);
  }

  private KafkaConsumer<byte[], byte[]> consumer() {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    // a static member: a restart after kill -9 takes its own place at once, without waiting out its session
    p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, transactionalId);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
    p.putIfAbsent(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, dev.knockwatch.events.Topics.REQUEST_TIMEOUT_MS);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "knockwatch-ingest-raw");
    return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  private static ProducerRecord<String, Object> record(Outgoing o) {
    if (o instanceof KafkaEventSink.Prepared prepared) {
      return prepared;
    }
    if (o instanceof Outgoing.Rejected r) {
      return KafkaEventSink.record(r.line());
    }
    throw new IllegalStateException("an event the Kafka sink did not prepare: " + o.getClass().getSimpleName());
  }

  /** One path's parser, the partition its records come on, and the record that began a half-read refusal (-1: none). */
  private static final class OpenPath {
    final FileContext ctx;
    final LineParser parser;
    final String sourceLabel;
    final String host;
    final TopicPartition partition;
    long heldFrom = -1;
    long lastSeen;
    TailedLine last;

    OpenPath(FileContext ctx, String sourceLabel, String host, TopicPartition partition) {
      this.ctx = ctx;
      this.parser = ctx.format() == null ? null : ctx.parsers().get();
      this.sourceLabel = sourceLabel;
      this.host = host;
      this.partition = partition;
    }
  }

  /** One record, one outcome: its line's, or its own rejection when it is no raw line of the layout. */
  private void handle(ConsumerRecord<byte[], byte[]> r, Instant now, KafkaEventSink sink, List<Outgoing> out) {
    RawRecord.Read read = RawRecord.read(r.value());
    if (read instanceof RawRecord.Problem p) {
      String value = r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8);
      reject(out, "raw:" + r.topic() + "/" + r.partition(), r.offset(), null, Rejection.RAW_RECORD, p.reason(), value);
      return;
    }
    RawRecord raw = ((RawRecord.Line) read).record();
    String rel = relative(raw.path());
    if (rel == null) {
      reject(out, Sanitize.text(raw.path(), 300), raw.offset() == null ? -1 : raw.offset(), raw.host(),
          Rejection.OUTSIDE_LAYOUT, "the path is not a file under the layout's root " + root
              + " (no '.', '..' or empty part, no control character): nothing in it is taken for an agent or a command",
          raw.line());
      return;
    }
    String hostKey = raw.host() == null ? "" : raw.host();
    String key = hostKey + "\u0000" + rel;
    seenFiles.add(key);
    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
    OpenPath open = paths.get(key);
    if (open == null || !open.partition.equals(tp)) {
      FileContext ctx = LogLayout.contextOf(rel, other -> seenFiles.contains(hostKey + "\u0000" + other));
      open = new OpenPath(ctx, ctx.sourceLabel(), raw.host(), tp);
      paths.put(key, open);
      evictOldest(sink, now, out);
    }
    TailedLine line = line(rel, raw);
    LineSender sender = senders.computeIfAbsent(hostKey, h -> new LineSender(sink, raw.host(), clock));
    IngestMetrics.PerSource m = meters.computeIfAbsent(open.sourceLabel, IngestMetrics.PerSource::of);
    m.lines().inc();
    m.bytes().inc(line.end() - Math.max(0, line.offset()));
    if (line.truncated()) {
      IngestMetrics.LONG_LINES.labels(open.sourceLabel).inc();
    }
    if (line.invalidUtf8() && !line.binary()) {
      IngestMetrics.INVALID_UTF8.labels(open.sourceLabel).inc();
    }
    boolean held = open.parser != null && open.parser.pending();
    Parsed parsed = sender.outcome(open.parser, open.ctx, open.sourceLabel, line, now);
    if (parsed instanceof Parsed.Rejected rej && line.truncated()) {
      parsed = Parsed.rejected(Rejection.LINE_TOO_LONG, "line is longer than " + IngestAgent.MAX_LINE_BYTES
          + " bytes, and its start and end, kept, do not parse: " + rej.reason());
    }
    sender.send(parsed, line, now, open.sourceLabel, open.ctx.source(), out);
    boolean holds = open.parser != null && open.parser.pending();
    open.heldFrom = !holds ? -1 : held && open.heldFrom >= 0 ? open.heldFrom : r.offset();
    open.last = line;
    open.lastSeen = System.nanoTime();
  }

  /**
   * The path under the root ({@code <agentId>/<commandId>.<suffix>}), or null when {@code path} is
   * not a file under it: a '.', '..' or empty part, or a control character, leaves the layout.
   */
  String relative(String path) {
    String prefix = root.equals("/") ? "/" : root + "/";
    if (!path.startsWith(prefix) || path.length() == prefix.length()) {
      return null;
    }
    String rel = path.substring(prefix.length());
    for (String part : rel.split("/", -1)) {
      if (part.isEmpty() || part.equals(".") || part.equals("..")) {
        return null;
      }
    }
    for (int i = 0; i < rel.length(); i++) {
      char c = rel.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        return null;
      }
    }
    return rel;
  }

  /**
   * The line as the agent would have read it from the file: a CR before its end dropped, lone surrogates (which JSON can carry
   * and UTF-8 cannot) replaced as invalid bytes are, a line over {@link IngestAgent#MAX_LINE_BYTES}
   * kept by its start and end, and told whether it is text at all.
   */
  private static TailedLine line(String rel, RawRecord raw) {
    String text = raw.line();
    boolean invalid = raw.invalidUtf8();
    if (text.endsWith("\r")) {
      text = text.substring(0, text.length() - 1); // a CRLF line, as the agent reads it
    }
    StringBuilder fixed = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      boolean lone = Character.isHighSurrogate(c) ? i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1))
          : Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(text.charAt(i - 1)));
      if (lone && fixed == null) {
        fixed = new StringBuilder(text.length()).append(text, 0, i);
      }
      if (fixed != null) {
        fixed.append(lone ? '\uFFFD' : c);
      }
      invalid |= lone;
    }
    if (fixed != null) {
      text = fixed.toString();
    }
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    boolean cut = bytes.length > IngestAgent.MAX_LINE_BYTES;
    if (cut) {
      int half = IngestAgent.MAX_LINE_BYTES / 2;
      text = new String(bytes, 0, half, StandardCharsets.UTF_8) + new String(bytes, bytes.length - half, half,
          StandardCharsets.UTF_8);
    }
    long offset = raw.offset() == null ? -1 : raw.offset();
    String host = raw.host() == null ? "" : raw.host();
    // the shipper's offset makes the id; without one, the line's content does
    String idName = host + "\u0000" + rel + (raw.offset() == null ? "\u0000" + Hashes.sha256Hex(raw.line(), 16) : "");
    return new TailedLine(rel, offset, Math.max(0, offset) + bytes.length + 1, text, cut, invalid,
        Bytes.binary(bytes, 0, bytes.length, text.length()), null, idName);
  }

  /** Paths held half-read and quiet for the agent's quiet time: their refusals end with what is known. */
  private void endQuiet(Instant now, List<Outgoing> out) {
    long quiet = FileTailer.DEFAULT_PARTIAL_FLUSH.toNanos();
    long t = System.nanoTime();
    for (OpenPath open : paths.values()) {
      if (open.heldFrom >= 0 && t - open.lastSeen >= quiet) {
        end(open, now, out);
      }
    }
  }

  private void end(OpenPath open, Instant now, List<Outgoing> out) {
    LineSender sender = senders.get(open.host == null ? "" : open.host);
    sender.send(open.parser.end(), open.last, now, open.sourceLabel,
        open.ctx.source(), out);
    open.heldFrom = -1;
  }

  /** At most {@link #MAX_OPEN_PATHS} paths are open: the least recently read goes, a half-read refusal ended first. */
  private void evictOldest(KafkaEventSink sink, Instant now, List<Outgoing> out) {
    if (paths.size() <= MAX_OPEN_PATHS) {
      return;
    }
    Iterator<OpenPath> it = paths.values().iterator();
    OpenPath oldest = it.next();
    if (oldest.heldFrom >= 0) {
      end(oldest, now, out);
    }
    it.remove();
  }

  /**
   * What the transaction commits for each partition this instance holds: its next record, or the
   * record that began a half-read refusal on it, whichever comes first.
   */
  private Map<TopicPartition, OffsetAndMetadata> offsets(KafkaConsumer<byte[], byte[]> c) {
    Map<TopicPartition, Long> held = new HashMap<>();
    for (OpenPath open : paths.values()) {
      if (open.heldFrom >= 0) {
        held.merge(open.partition, open.heldFrom, Math::min);
      }
    }
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    for (TopicPartition tp : c.assignment()) {
      offsets.put(tp, new OffsetAndMetadata(Math.min(c.position(tp), held.getOrDefault(tp, Long.MAX_VALUE))));
    }
    return offsets;
  }

  private void reject(List<Outgoing> out, String file, long offset, String host, Rejection code, String reason,
      String line) {
    IngestMetrics.REJECTED.labels("raw", code.code()).inc();
    out.add(new Outgoing.Rejected(new RejectedLine(file, offset, host, code.code(), reason,
        line == null ? null : Redactor.safe(line, IngestAgent.MAX_REJECTED_LINE_CHARS), clock.instant())));
  }

  /** Partitions taken away: their paths' parsers go (the next owner reads from the committed offsets). */
  private final class Revoked implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      paths.values().removeIf(open -> partitions.contains(open.partition));
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
      onPartitionsRevoked(partitions);
    }
  }

  private void sleep(Duration d) {
    try {
      Thread.sleep(Math.max(1, d.toMillis()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
    }
  }

  /** Stops after the transaction in hand (an open one is aborted with the producer). */
  @Override
  public void close() {
    running = false;
    KafkaConsumer<byte[], byte[]> c = consumer;
    if (c != null) {
      c.wakeup();
    }
    Thread t = thread;
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
