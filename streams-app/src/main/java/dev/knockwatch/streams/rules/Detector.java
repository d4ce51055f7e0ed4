package dev.knockwatch.streams.rules;

import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.streams.Topology;

/**
 * A detector: what rules.yaml calls it, the keys its rules take ({@link Key}s, each declared
 * once), the settings record a rule of it holds, and what it does with one event. A detector is one
 * class, above this package (the detectors are in {@code detect/}); it is registered by one line in
 * {@code META-INF/services/dev.knockwatch.streams.rules.Detector} ({@link Detectors};
 * docs/ARCHITECTURE.md, "A detector"). {@link PolicyLoader} reads its rules by its keys and
 * README's rules reference is made from them.
 *
 * @param <S> the settings a rule of this detector holds
 */
public interface Detector<S extends Detector.Settings> {

  /**
   * What one detector's rule holds beside the keys every rule has: one record per detector, nested
   * in its detector's class ({@link Detectors#of} finds the detector by it).
   */
  interface Settings {}

  /** Which events a detector judges (the topology sends it those). */
  enum Reads {
    /** refusals, each once however many logs saw it */
    REFUSALS,
    /** the refusals, and the calls that asked to run outside the sandbox */
    REFUSALS_AND_SANDBOX_REQUESTS,
    /** guard probes' results, which are no refusals */
    PROBE_RESULTS,
    /** lines that claimed another identity than their log layout, before any dedup */
    IDENTITY_CLAIMS,
    /** ingest's notices of refusals it could not attribute */
    INGEST_NOTICES,
    /** what a wall in its audit or report mode let through that its policy would have refused */
    UNENFORCED
  }

  /**
   * One event a rule judges: its key at the rule's grain, the agent's role, the policy now, the
   * event's time and the stream's.
   */
  record Seen(String key, ViolationEvent event, String role, Policy policy, long at, long streamTime) {}

  /**
   * What a detector found in one event: the alert's summary, and what was refused (a host:port, a
   * path, a probe), the alert's target; null when the finding names none.
   */
  record Finding(String summary, String subject) {

    /** A finding whose subject is what {@code e} refused: its probe, its path, or its host:port. */
    public static Finding of(String summary, ViolationEvent e) {
      return new Finding(summary, e.probe() != null ? e.probe().name()
          : e.kind() == Kind.FILESYSTEM ? e.path() : e.host() == null ? null : target(e));
    }

    public static String target(ViolationEvent e) {
      return e.port() == null ? e.host() : e.host() + ":" + e.port();
    }
  }

  /**
   * A detector that keeps state per key between events (its slice, {@code T}): a window's
   * refusals, the last proxy refusal. {@link #step} reads the key's slice and returns the next one;
   * {@code detect/DetectProcessor} keeps every rule's slices of a key in one value, written when a slice
   * changes, and drops a slice once {@link #expiresAt} has passed in stream time.
   *
   * @param <T> what it keeps per key, immutable
   */
  interface Stateful<S extends Settings, T> extends Detector<S> {

    /** The slice's bytes in the store's changelog. */
    Serde<T> serde();

    /** The key's next slice after {@code seen}: {@code before} itself when nothing changes, null when nothing is kept. */
    T step(Rule rule, S settings, Seen seen, T before, Consumer<Hit> hits);

    /** The stream time from which {@code slice} can no longer change an answer. */
    long expiresAt(Rule rule, S settings, T slice);

    /** How often, in stream time, expired slices are dropped. */
    default Duration sweepEvery() {
      return Duration.ofMinutes(1);
    }

    /**
     * Whether a rule of these settings keeps its slices in the path's one state ({@code DetectProcessor});
     * else {@link #addTo} adds its own processor.
     */
    default boolean keepsSlices(S settings) {
      return true;
    }
  }

  /**
   * What a detector declares of itself, as Kafka's {@code ConfigDef} declares settings: its name in
   * rules.yaml ({@code detector: count}), what it pages on in one line (the rules reference), the
   * keys its rules take beside the ones every rule has (in the order they are read), which events
   * it judges, and whether its rules need roles.yaml.
   */
  record Spec(String name, String doc, List<Key<?>> keys, Reads reads, boolean needsRoles) {

    /** A detector of refusals that needs no roles. */
    public static Spec of(String name, String doc, Key<?>... keys) {
      return new Spec(name, doc, List.of(keys), Reads.REFUSALS, false);
    }

    public Spec reading(Reads reads) {
      return new Spec(name, doc, keys, reads, needsRoles);
    }

    public Spec needingRoles() {
      return new Spec(name, doc, keys, reads, true);
    }
  }

  Spec spec();

  /** A rule's settings from its keys' values; a check across keys reports with {@link KeyValues#problem}. */
  S settings(KeyValues values);

  /** What {@code rules check} and {@code up}'s banner say a rule of it does ({@code count 5 in any 5m}). */
  default String describe(S settings) {
    return spec().name();
  }

  /** How long after an event a rule of it may still count it (a window and its grace); zero when it judges at once. */
  default Duration lookback(S settings) {
    return Duration.ZERO;
  }

  /** A detector that judges one event on its own: what it finds, or null. */
  default Finding judge(Rule rule, S settings, Seen seen) {
    throw new UnsupportedOperationException(spec().name() + " keeps state: it adds its own processor");
  }

  /**
   * Adds the processor of a rule not judged in the path's {@code DetectProcessor} (a stateful one
   * whose {@link Stateful#keepsSlices} says no) to {@code t} as {@code node}, after {@code parents},
   * with its stores named with {@code suffix}.
   */
  default void addTo(Topology t, Rule rule, Policy policy, String node, String suffix, String... parents) {
    throw new UnsupportedOperationException(spec().name() + " is judged in its path's DetectProcessor");
  }
}
