package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.state.WriteBackStore;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Hit;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyView;
import dev.knockwatch.streams.rules.Rule;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.StoreBuilder;

/**
 * Every rule of one path, on one state per key: an event is read once, judged by each rule in
 * the policy's order (the rule's grain, its {@code match}, then its detector), and the key's state
 * — every stateful rule's slice ({@link Slices}) — is read once and written once when a slice
 * changed, as an object ({@link WriteBackStore}: serialized, to the changelog, at the commit). A detector that judges one event on its
 * own ({@link Detector#judge}) keeps nothing.
 *
 * <p>A stream-time punctuation drops the slices that can no longer change an answer, and a key with
 * none left.
 *
 * <p>Which events a rule reads ({@link Detector.Reads}) comes with the record: the refusals come
 * without a header; what count-refusals sends straight here (a probe's result, a line's identity
 * claim, ingest's notice, a call that asked for no sandbox) carries {@link #ROUTE}. On the
 * by-grain path the record's grain ({@code GRAIN}) picks the rules of that grain.
 */
public final class DetectProcessor implements Processor<String, ViolationEvent, String, Hit> {

  /** The header naming what a record sent straight from count-refusals is. */
  public static final String ROUTE = "knockwatch-route";

  /** What a record is, to the rules: which of them read it. */
  public enum Route {
    REFUSAL, SANDBOX_REQUEST, PROBE_RESULT, IDENTITY_CLAIM, INGEST_NOTICE, UNENFORCED;

    /** {@code r} with this route's header (a refusal needs none). */
    public <V> Record<String, V> mark(Record<String, V> r) {
      Headers h = new RecordHeaders();
      h.add(ROUTE, new byte[] {(byte) ordinal()});
      return r.withHeaders(h);
    }

    static Route of(Headers headers, ViolationEvent e) {
      Header h = headers.lastHeader(ROUTE);
      if (h != null && h.value() != null && h.value().length == 1 && h.value()[0] >= 0 && h.value()[0] < values().length) {
        return values()[h.value()[0]];
      }
      // the by-grain topic carries these three, without the header
      return e.sandboxOff() ? SANDBOX_REQUEST : e.unenforced() ? UNENFORCED : REFUSAL;
    }

    boolean readBy(Detector.Reads reads) {
      return switch (this) {
        case REFUSAL -> reads == Detector.Reads.REFUSALS || reads == Detector.Reads.REFUSALS_AND_SANDBOX_REQUESTS;
        case SANDBOX_REQUEST -> reads == Detector.Reads.REFUSALS_AND_SANDBOX_REQUESTS;
        case PROBE_RESULT -> reads == Detector.Reads.PROBE_RESULTS;
        case IDENTITY_CLAIM -> reads == Detector.Reads.IDENTITY_CLAIMS;
        case INGEST_NOTICE -> reads == Detector.Reads.INGEST_NOTICES;
        case UNENFORCED -> reads == Detector.Reads.UNENFORCED;
      };
    }
  }

  private final List<Rule> rules;
  private final Policy policy;
  private final String storeName;
  private final String grainHeader;
  /** For each rule, its slot in {@link Slices}, or -1 for a rule that keeps nothing. */
  private final int[] slot;
  /** For each rule, its detector and what it reads: looked up once, not per event. */
  private final Detector<?>[] detectors;
  private final Detector.Reads[] reads;
  private final List<Rule> stateful = new ArrayList<>();
  private final Duration sweepEvery;
  private ProcessorContext<String, Hit> context;
  private PolicyView view;
  private WriteBackStore<Slices> store;

  /**
   * @param rules the rules judged here, in the policy's order
   * @param grainHeader on the by-grain path, the header naming each record's grain; null on the command's
   */
  public DetectProcessor(List<Rule> rules, Policy policy, String storeName, String grainHeader) {
    this.rules = List.copyOf(rules);
    this.policy = policy;
    this.storeName = storeName;
    this.grainHeader = grainHeader;
    this.slot = new int[rules.size()];
    this.detectors = new Detector<?>[rules.size()];
    this.reads = new Detector.Reads[rules.size()];
    Duration sweep = Duration.ofMinutes(1);
    for (int i = 0; i < rules.size(); i++) {
      detectors[i] = rules.get(i).detector();
      reads[i] = detectors[i].spec().reads();
      if (detectors[i] instanceof Detector.Stateful<?, ?> d) {
        slot[i] = stateful.size();
        stateful.add(rules.get(i));
        sweep = d.sweepEvery().compareTo(sweep) < 0 ? d.sweepEvery() : sweep;
      } else {
        slot[i] = -1;
      }
    }
    this.sweepEvery = sweep;
  }

  /** Whether {@code rule} is judged by this processor (all are but a count in aligned windows, with its own). */
  @SuppressWarnings("unchecked")
  public static boolean judgesHere(Rule rule) {
    return !(rule.detector() instanceof Detector.Stateful<?, ?> d)
        || ((Detector.Stateful<Detector.Settings, ?>) d).keepsSlices(rule.settings());
  }

  /**
   * The store of the rules' slices: held as objects, written at each commit to an in-memory store
   * with its changelog ({@link WriteBackStore}), so a key changed many times between two commits is
   * serialized once.
   */
  public static StoreBuilder<WriteBackStore<Slices>> store(String name, List<Rule> rules) {
    return WriteBackStore.builder(name, serde(rules));
  }

  /** The bytes of the slices of {@code rules} (the rules judged here, in order) in the store and its changelog. */
  public static org.apache.kafka.common.serialization.Serde<Slices> serde(List<Rule> rules) {
    return new Slices.Serde(rules.stream().filter(r -> r.detector() instanceof Detector.Stateful<?, ?>).toList());
  }

  @Override
  public void init(ProcessorContext<String, Hit> context) {
    this.context = context;
    this.view = PolicyView.of(policy, context);
    this.store = context.getStateStore(storeName);
    if (!stateful.isEmpty()) {
      context.schedule(sweepEvery, PunctuationType.STREAM_TIME, this::sweep);
    }
  }

  /** How many keys hold a slice (for tests). */
  public int keys() {
    return store.size();
  }

  @Override
  public void process(Record<String, ViolationEvent> record) {
    String key = record.key();
    ViolationEvent e = record.value();
    if (key == null || e == null) {
      return;
    }
    Route route = Route.of(record.headers(), e);
    Grain grain = grainHeader == null ? null : grainOf(record.headers());
    Slices before = store.get(key);
    Object[] next = null;
    String role = null;
    Detector.Seen seen = null;
    for (int i = 0; i < rules.size(); i++) {
      Rule rule = rules.get(i);
      if (!route.readBy(reads[i]) || (grainHeader != null && rule.per() != grain)
          || !rule.judgesAt(key, e)) {
        continue;
      }
      if (role == null) {
        role = view.roleOf(e.agentId());
        seen = new Detector.Seen(key, e, role, view.current(), record.timestamp(), context.currentStreamTimeMs());
      }
      if (!rule.match().matches(e, role)) {
        continue;
      }
      if (slot[i] < 0) {
        judge(rule, detectors[i], seen, record.timestamp());
        continue;
      }
      Object was = next != null ? next[slot[i]] : before == null ? null : before.slice(slot[i]);
      Object now = step(rule, detectors[i], seen, was, record.timestamp());
      if (now != was) {
        if (next == null) {
          next = before == null ? new Object[stateful.size()] : before.copy();
        }
        next[slot[i]] = now;
      }
    }
    if (next != null) {
      write(key, new Slices(next));
    }
  }

  @SuppressWarnings("unchecked")
  private <S extends Detector.Settings, T> Object step(Rule rule, Detector<?> detector, Detector.Seen seen,
      Object before, long ts) {
    Detector.Stateful<S, T> d = (Detector.Stateful<S, T>) detector;
    return d.step(rule, (S) rule.settings(), seen, (T) before,
        hit -> context.forward(new Record<>(seen.key(), hit, ts)));
  }

  @SuppressWarnings("unchecked")
  private void judge(Rule rule, Detector<?> detector, Detector.Seen seen, long ts) {
    Detector<Detector.Settings> d = (Detector<Detector.Settings>) detector;
    Detector.Finding f = d.judge(rule, rule.settings(), seen);
    if (f == null) {
      return;
    }
    ViolationEvent e = seen.event();
    String key = seen.key();
    Instant at = Instant.ofEpochMilli(ts);
    context.forward(new Record<>(key, new Hit(rule, Alert.fingerprintOf(rule.id(), key), rule.commandOf(key, e),
        e.agentId(), seen.role(), e.host(), e.port(), e.source(), at, at,
        e.eventId() == null ? List.of() : List.of(e.eventId()), 1, null, null, f.summary(),
        f.subject() == null ? null : List.of(new Alert.Target(f.subject(), 1))), ts));
  }

  private void write(String key, Slices slices) {
    store.put(key, slices.isEmpty() ? null : slices);
  }

  private Grain grainOf(Headers headers) {
    Header h = headers.lastHeader(grainHeader);
    return h == null ? null : Grain.ofWireName(new String(h.value(), StandardCharsets.UTF_8));
  }

  @SuppressWarnings("unchecked")
  private void sweep(long streamTime) {
    store.entries().removeIf(en -> {
      Object[] next = null;
      Slices s = en.getValue();
      for (int i = 0; i < stateful.size(); i++) {
        Object slice = s.slice(i);
        Rule rule = stateful.get(i);
        if (slice != null && ((Detector.Stateful<Detector.Settings, Object>) (Detector<?>) rule.detector())
            .expiresAt(rule, rule.settings(), slice) <= streamTime) {
          next = next == null ? s.copy() : next;
          next[i] = null;
        }
      }
      if (next == null) {
        return false;
      }
      Slices after = new Slices(next);
      if (after.isEmpty()) {
        return true;
      }
      en.setValue(after);
      return false;
    });
  }

  /** One key's slices, one per stateful rule of the path (null: none kept); immutable. */
  public static final class Slices {

    private final Object[] slices;

    public Slices(Object[] slices) {
      this.slices = slices;
    }

    public Object slice(int i) {
      return slices[i];
    }

    Object[] copy() {
      return slices.clone();
    }

    boolean isEmpty() {
      return Arrays.stream(slices).allMatch(java.util.Objects::isNull);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Slices s && Arrays.equals(slices, s.slices);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(slices);
    }

    /** One slice as its bytes are kept: its rule's id, its detector's name, and the detector's own bytes for it. */
    public record Raw(String ruleId, String detector, byte[] bytes) {}

    /** The value of a key's slices, each as {@link Raw} (the upgrade writes the old stores' bytes so). */
    public static byte[] encode(List<Raw> slices) {
      byte[][] heads = new byte[slices.size()][];
      byte[][] bodies = new byte[slices.size()][];
      for (int i = 0; i < slices.size(); i++) {
        heads[i] = head(slices.get(i).ruleId(), slices.get(i).detector());
        bodies[i] = slices.get(i).bytes();
      }
      return encode(heads, bodies, slices.size());
    }

    /** A slice's opening: its rule's id and its detector's name, each in modified UTF-8 after its length. */
    static byte[] head(String ruleId, String detector) {
      java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(64);
      try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
        out.writeUTF(ruleId);
        out.writeUTF(detector);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e); // a byte array does not fail
      }
      return bytes.toByteArray();
    }

    /** The first {@code n} slices, each its opening ({@link #head}) and its detector's bytes. */
    private static byte[] encode(byte[][] heads, byte[][] bodies, int n) {
      int size = 3;
      for (int i = 0; i < n; i++) {
        size += heads[i].length + 4 + bodies[i].length;
      }
      java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(size);
      out.put(Serde.VERSION).putShort((short) n);
      for (int i = 0; i < n; i++) {
        out.put(heads[i]).putInt(bodies[i].length).put(bodies[i]);
      }
      return out.array();
    }

    /**
     * Binary: a format version, then each slice kept as its rule's id, its detector's name and the
     * detector's own bytes for it. A slice of a rule no longer in the policy (or of another detector
     * under the same id) is not read back: after a rules change a rule keeps its state only as the
     * same detector under the same id.
     */
    static final class Serde implements org.apache.kafka.common.serialization.Serde<Slices> {

      static final byte VERSION = 1;
      private final List<Rule> rules;
      /** For each rule, in order: its slice's opening, its detector's name and its detector's serde (looked up once). */
      private final byte[][] heads;
      private final String[] names;
      private final org.apache.kafka.common.serialization.Serializer<Object>[] serializers;
      private final org.apache.kafka.common.serialization.Deserializer<Object>[] deserializers;

      @SuppressWarnings("unchecked")
      Serde(List<Rule> rules) {
        this.rules = List.copyOf(rules);
        this.heads = new byte[rules.size()][];
        this.names = new String[rules.size()];
        this.serializers = new org.apache.kafka.common.serialization.Serializer[rules.size()];
        this.deserializers = new org.apache.kafka.common.serialization.Deserializer[rules.size()];
        for (int i = 0; i < rules.size(); i++) {
          Detector.Stateful<?, Object> d = (Detector.Stateful<?, Object>) (Detector<?>) rules.get(i).detector();
          names[i] = d.spec().name();
          heads[i] = head(rules.get(i).id(), names[i]);
          serializers[i] = d.serde().serializer();
          deserializers[i] = d.serde().deserializer();
        }
      }

      @Override
      public org.apache.kafka.common.serialization.Serializer<Slices> serializer() {
        return (topic, s) -> s == null ? null : encode(topic, s);
      }

      @Override
      public org.apache.kafka.common.serialization.Deserializer<Slices> deserializer() {
        return (topic, bytes) -> {
          if (bytes == null) {
            return null;
          }
          try {
            return decode(topic, bytes);
          } catch (RuntimeException e) {
            throw new org.apache.kafka.common.errors.SerializationException(
                "not a detection state value (" + bytes.length + " bytes)", e);
          }
        };
      }

      private byte[] encode(String topic, Slices s) {
        byte[][] heads = new byte[s.slices.length][];
        byte[][] bodies = new byte[s.slices.length][];
        int n = 0;
        for (int i = 0; i < s.slices.length; i++) {
          if (s.slices[i] != null) {
            heads[n] = this.heads[i];
            bodies[n++] = serializers[i].serialize(topic, s.slices[i]);
          }
        }
        return Slices.encode(heads, bodies, n);
      }

      private Slices decode(String topic, byte[] bytes) {
        java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(bytes);
        byte version = in.get();
        if (version != VERSION) {
          throw new IllegalArgumentException("unknown format version " + version);
        }
        Object[] slices = new Object[rules.size()];
        int n = in.getShort();
        for (int k = 0; k < n; k++) {
          String id = utf(in);
          String detector = utf(in);
          int length = in.getInt();
          if (length < 0 || length > in.remaining()) {
            throw new IllegalArgumentException("a slice of " + length + " bytes in " + in.remaining());
          }
          byte[] b = new byte[length];
          in.get(b);
          for (int i = 0; i < rules.size(); i++) {
            if (rules.get(i).id().equals(id) && names[i].equals(detector)) {
              slices[i] = deserializers[i].deserialize(topic, b);
            }
          }
        }
        if (in.hasRemaining()) {
          throw new IllegalArgumentException(in.remaining() + " bytes after the value");
        }
        return new Slices(slices);
      }

      private static String utf(java.nio.ByteBuffer in) {
        byte[] b = new byte[in.getShort() & 0xffff];
        in.get(b);
        return new String(b, StandardCharsets.UTF_8); // DataOutputStream's modified UTF-8 is UTF-8 for ids and names
      }
    }
  }
}
