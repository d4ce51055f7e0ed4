package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.state.WriteBackStore;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.metrics.StreamsMetrics;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import java.nio.ByteBuffer;
import com.google.common.hash.Hasher;
import com.google.common.hash.Hashing;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * One refusal counts once, in two ways, and goes no further (counted in
 * {@code knockwatch_streams_exact_duplicates_total}):
 * <ul>
 *   <li><b>The same event id</b> within {@link #idRetention} of stream time: a line ingest read
 *   again after a crash or a broker outage and sent with the id it had. Ingest makes the id from
 *   where the line stands (the agent cannot choose it), and a line without a time of its own gets
 *   the ingest clock each time it is read, so only the id tells such a copy. Every id is held,
 *   in a RocksDB window store (with its changelog) keyed by the stream time it was seen at, whose
 *   old segments are dropped whole: its size is the events of that span, on disk, whatever one
 *   command does. Bloom filters in front of it tell a new id without reading it ({@link SeenIds}).
 *   <li><b>The same refusal</b>: an event whose every field but where it was read (event id,
 *   origin, ingest time) equals one of its command's last {@value #KEPT} events — a line a
 *   shipper wrote again, a copied file. A real retry differs at least in its time (srt stamps
 *   milliseconds), so fast retries count apart.
 * </ul>
 *
 * <p>Events are compared by a keyed digest of those fields: SipHash-2-4 (a keyed pseudorandom
 * function made for hash tables fed by an adversary) under a random 128-bit key of the command's,
 * 64 bits. The agent writes the fields, and a hash it could
 * compute would let it make a real refusal collide with an earlier one and vanish; it never sees
 * the key (it lives in this store and its changelog, out of the agent's reach: docs/TRUST.md), so
 * a collision is luck, 32 in 2^64 per refusal. Per command the store (in memory, with its
 * changelog) holds the key, the last {@value #KEPT} digests and the stream time it last saw the
 * command; a command idle for {@link #RETENTION} of stream time is dropped (a new key with it). A copy under another id further back than {@value #KEPT} of its command's refusals
 * (a file copied whole) counts again: by then the command has long crossed any threshold.
 */
public final class ExactDuplicateProcessor implements Processor<String, ViolationEvent, String, ViolationEvent> {

  static final int KEPT = 32;
  static final Duration RETENTION = Duration.ofMinutes(10);
  /** How far an agent may push stream time ahead by writing future times (ingest replaces times further ahead). */
  static final Duration AHEAD = Duration.ofMinutes(5);
  /** The first byte of a value of this version: seen at, the command's key, then 8-byte SipHash digests. */
  private static final byte VERSION = 3;
  private static final int HEAD_BYTES = 1 + 8 + 16;

  private final String storeName;
  private final String idStoreName;
  private final long idRetention;
  private final boolean counted;
  private ProcessorContext<String, ViolationEvent> context;
  private WriteBackStore<Recent> store;
  private SeenIds ids;
  private final java.security.SecureRandom random = new java.security.SecureRandom();

  /**
   * A command's digest key, its last digests (a ring: {@code size} of them from {@code start}), and
   * the stream time of its last event.
   */
  static final class Recent {
    final byte[] key;
    final long[] digests = new long[KEPT];
    int start;
    int size;
    long seenAt;

    Recent(byte[] key) {
      this.key = key;
    }

    boolean contains(long digest) {
      for (int i = 0; i < size; i++) {
        if (digests[(start + i) % KEPT] == digest) {
          return true;
        }
      }
      return false;
    }

    /** Adds a digest; the oldest goes when {@value #KEPT} are held. */
    void add(long digest) {
      int at = (start + size) % KEPT;
      if (size == KEPT) {
        start = (start + 1) % KEPT;
      } else {
        size++;
      }
      digests[at] = digest;
    }
  }

  /**
   * @param storeName the name given to {@link #stores}: its key-value store (each command's last
   *     digests) and, beside it, {@link #idStore} (the event ids seen), held {@code idRetention}
   * @param counted whether a duplicate counts in the metric (detection's does; the timeline's, beside it, not)
   */
  public ExactDuplicateProcessor(String storeName, Duration idRetention, boolean counted) {
    this.storeName = storeName;
    this.idStoreName = idStore(storeName);
    this.idRetention = idRetention.toMillis();
    this.counted = counted;
  }

  /**
   * How long an event id is remembered: every count rule's window and grace (the longest), and
   * the {@link #AHEAD} an agent's future times may have pushed stream time on. A copy later than
   * that counts again — as a late refusal its windows have closed, unless it has no time of its own.
   */
  public static Duration idRetention(Policy policy) {
    Duration longest = CountDetector.DEFAULT_WINDOW.plus(CountDetector.DEFAULT_GRACE);
    for (Rule r : policy.rules()) {
      Duration d = r.detector().lookback(r.settings());
      longest = d.compareTo(longest) > 0 ? d : longest;
    }
    return longest.plus(AHEAD);
  }

  /** The two stores a processor named {@code name} reads: {@code name} (digests) and {@code name + "-ids"}. */
  public static List<StoreBuilder<?>> stores(String name, Duration idRetention) {
    return List.of(
        // held as objects, written at each commit (the same bytes as the cached store of earlier versions)
        WriteBackStore.builder(name, RECENT_SERDE),
        // no cache: every id is new, so a cache would fold nothing and only add a merge to each fetch.
        // Its changelog keeps an hour past the store (Streams' default: a day), in segments of an hour.
        Stores.windowStoreBuilder(Stores.persistentWindowStore(idStore(name), idRetention, Duration.ofMillis(1), false),
            Serdes.String(), Serdes.ByteArray()).withLoggingEnabled(Map.of(
                TopicConfig.RETENTION_MS_CONFIG, String.valueOf(idRetention.plusHours(1).toMillis()),
                TopicConfig.SEGMENT_MS_CONFIG, String.valueOf(Duration.ofHours(1).toMillis()))));
  }

  public static String idStore(String name) {
    return name + "-ids";
  }

  @Override
  public void init(ProcessorContext<String, ViolationEvent> context) {
    this.context = context;
    this.store = context.getStateStore(storeName);
    this.ids = new SeenIds(context.getStateStore(idStoreName), idRetention);
    context.schedule(Duration.ofMinutes(1), PunctuationType.STREAM_TIME, this::sweep);
  }

  @Override
  public void process(Record<String, ViolationEvent> record) {
    ViolationEvent e = record.value();
    if (record.key() == null || e == null) {
      return;
    }
    if (e.eventId() != null) {
      // keyed by the stream time it was seen at, which only grows: found for idRetention after
      long now = context.currentStreamTimeMs();
      if (ids.seen(e.eventId(), now)) {
        duplicate(e);
        return;
      }
      ids.add(e.eventId(), now);
    }
    Recent r = store.get(record.key());
    if (r == null) {
      byte[] key = new byte[16];
      random.nextBytes(key);
      r = new Recent(key);
    }
    long digest = digest(r.key, e);
    r.seenAt = Math.max(r.seenAt, context.currentStreamTimeMs());
    if (r.contains(digest)) {
      duplicate(e);
      store.put(record.key(), r);
      return;
    }
    r.add(digest);
    store.put(record.key(), r);
    context.forward(record);
  }

  private void duplicate(ViolationEvent e) {
    if (counted) {
      StreamsMetrics.EXACT_DUPLICATES.labels(e.source() == null ? "unknown" : dev.knockwatch.events.EventSources.label(e.source())).inc();
    }
  }

  /**
   * What makes two events the same refusal, under a command's {@code key}: every field but the event
   * id, the origin and the ingest time.
   */
  long digest(byte[] key, ViolationEvent e) {
    ByteBuffer k = ByteBuffer.wrap(key);
    Hasher h = Hashing.sipHash24(k.getLong(), k.getLong()).newHasher();
    // each field in a fixed place, its length before it (-1: absent), so no two different field lists
    // read as one input; strings as their UTF-16 units, so a lone surrogate stays itself
    put(h, e.commandId());
    put(h, e.agentId());
    put(h, e.role());
    put(h, e.source());
    put(h, e.kind() == null ? null : e.kind().name());
    put(h, e.action());
    put(h, e.host());
    put(h, e.port() == null ? null : e.port().toString());
    put(h, e.method());
    put(h, e.url());
    put(h, e.path());
    put(h, e.addressClass() == null ? null : e.addressClass().name());
    put(h, e.reason());
    put(h, e.proxyError());
    put(h, e.errno());
    put(h, e.syscall());
    put(h, e.pid() == null ? null : e.pid().toString());
    if (e.observedAt() == null) {
      h.putInt(-1);
    } else {
      h.putInt(12).putLong(e.observedAt().getEpochSecond()).putInt(e.observedAt().getNano());
    }
    put(h, e.timeSource());
    put(h, e.commandText());
    put(h, e.probe() == null ? null : e.probe().toString());
    return h.hash().asLong();
  }

  private static void put(Hasher h, String s) {
    if (s == null) {
      h.putInt(-1);
    } else {
      h.putInt(s.length()).putUnencodedChars(s);
    }
  }

  private void sweep(long streamTime) {
    long cutoff = streamTime - RETENTION.toMillis();
    store.entries().removeIf(en -> en.getValue().seenAt < cutoff);
  }

  /** The bytes of a value of its digests store (for tests of the bounds). */
  public static byte[] bytes(Object recent) {
    return encode((Recent) recent);
  }

  /** A command's digests as its store's changelog holds them ({@link #encode}). */
  static final org.apache.kafka.common.serialization.Serde<Recent> RECENT_SERDE = Serdes.serdeFrom(
      (topic, r) -> r == null ? null : encode(r), (topic, bytes) -> bytes == null ? null : decode(bytes));

  /** The version, {@code seenAt} (8 bytes), the command's key (16), then the digests, oldest first (8 bytes each). */
  static byte[] encode(Recent r) {
    ByteBuffer out = ByteBuffer.allocate(HEAD_BYTES + r.size * Long.BYTES);
    out.put(VERSION).putLong(r.seenAt).put(r.key);
    for (int i = 0; i < r.size; i++) {
      out.putLong(r.digests[(r.start + i) % KEPT]);
    }
    return out.array();
  }

  /**
   * A command's digests as {@link #encode} wrote them; null for bytes of another shape. Values of
   * earlier versions (the first's: seen at, then unkeyed 16-byte digests, always 8 + 16n bytes; the
   * second's: version byte 2, SHA-256 digests) can be compared with nothing this version's digest
   * gives: they read as null, and the command starts anew (a copy of a line read before the upgrade
   * counts once more).
   */
  static Recent decode(byte[] bytes) {
    if (bytes == null || bytes.length < HEAD_BYTES || bytes[0] != VERSION
        || (bytes.length - HEAD_BYTES) % Long.BYTES != 0 || (bytes.length - HEAD_BYTES) / Long.BYTES > KEPT) {
      return null;
    }
    ByteBuffer in = ByteBuffer.wrap(bytes, 1, bytes.length - 1);
    long seenAt = in.getLong();
    byte[] key = new byte[16];
    in.get(key);
    Recent r = new Recent(key);
    r.seenAt = seenAt;
    while (in.remaining() >= Long.BYTES) {
      r.add(in.getLong());
    }
    return r;
  }
}
