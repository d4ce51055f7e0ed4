package dev.knockwatch.streams.rules;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Alert.Severity;
import dev.knockwatch.events.ViolationEvent;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * One rule of {@code rules.yaml}. The keys every rule has come first; the rest belong to one
 * detector each and are null (or empty) for the others — the loader refuses them elsewhere.
 *
 * @param window count and value-count: the span the threshold's refusals must fall within: any span of this
 *     length ("N in any W"), or aligned windows of it when {@code hop} is set
 * @param hop count: the advance of aligned (hopping) windows, tumbling when it equals the window;
 *     null for "N in any window" (the default)
 * @param threshold count: refusals of one command within one window; value-count: distinct values
 * @param grace count and value-count: how late a refusal may arrive and still count in its window
 * @param classes address-class: the classes that page
 * @param within bypass: how soon after a proxy refusal another door counts
 * @param paths fs-guard: the path patterns that are guarded
 * @param field value-count: which value of a refusal is counted distinct; null for the others
 * @param meta what the rule says of itself (tags, runbook, labels, annotations), carried into its
 *     alerts; null when it says nothing
 * @param per what the rule counts and groups by: the command (the default), the task, the session or the agent
 */
public record Rule(
    String id,
    Detector detector,
    Severity severity,
    boolean shadow,
    RuleMatch match,
    Duration resolveAfter,
    Duration window,
    Duration hop,
    int threshold,
    Duration grace,
    Set<AddressClass> classes,
    Duration within,
    List<String> paths,
    ValueField field,
    Alert.Meta meta,
    Grain per) {

  /** A rule that says nothing of itself. */
  public Rule(String id, Detector detector, Severity severity, boolean shadow, RuleMatch match, Duration resolveAfter,
      Duration window, Duration hop, int threshold, Duration grace, Set<AddressClass> classes, Duration within,
      List<String> paths, ValueField field) {
    this(id, detector, severity, shadow, match, resolveAfter, window, hop, threshold, grace, classes, within, paths,
        field, null, Grain.COMMAND);
  }

  /** A rule of the command's grain. */
  public Rule(String id, Detector detector, Severity severity, boolean shadow, RuleMatch match, Duration resolveAfter,
      Duration window, Duration hop, int threshold, Duration grace, Set<AddressClass> classes, Duration within,
      List<String> paths, ValueField field, Alert.Meta meta) {
    this(id, detector, severity, shadow, match, resolveAfter, window, hop, threshold, grace, classes, within, paths,
        field, meta, Grain.COMMAND);
  }

  /**
   * The command a hit of this rule names: the key itself at the command's grain, else the
   * command of the refusal that made the hit (the tool call that crossed, or that paged).
   */
  public String commandOf(String key, ViolationEvent e) {
    return per == Grain.COMMAND || e == null || e.commandId() == null ? key : e.commandId();
  }

  /**
   * What a hit of this rule counted, in its summary: the grain's noun ("task"), or "command" where
   * the key is the command's own (a refusal with no task, or a rule of the command's grain).
   */
  public String nounOf(String key, ViolationEvent e) {
    return per == Grain.COMMAND || (e != null && key.equals(e.commandId())) ? "command" : per.noun();
  }

  /**
   * Whether the state under {@code key} judges {@code e} for this rule: where {@code key} is {@code e}'s
   * key at the rule's grain. A rule of the task's grain is judged twice over: on the command's own
   * path for refusals with no task (their task key is their command id), and from the by-grain
   * topic for those with one; each path takes its own.
   */
  public boolean judgesAt(String key, ViolationEvent e) {
    return per == Grain.COMMAND || per.keyOf(key, e).equals(key);
  }

  /** This rule at another severity (sandbox-escape's escalation). */
  public Rule withSeverity(Severity severity) {
    return new Rule(id, detector, severity, shadow, match, resolveAfter, window, hop, threshold, grace, classes,
        within, paths, field, meta, per);
  }

  /** This rule, counting and grouping at {@code per}. */
  public Rule per(Grain per) {
    return new Rule(id, detector, severity, shadow, match, resolveAfter, window, hop, threshold, grace, classes,
        within, paths, field, meta, per);
  }

  public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(5);
  public static final int DEFAULT_THRESHOLD = 5;
  public static final Duration DEFAULT_GRACE = Duration.ofMinutes(1);
  public static final Duration DEFAULT_RESOLVE_AFTER = Duration.ofMinutes(10);
  public static final Duration DEFAULT_WITHIN = Duration.ofMinutes(2);

  /** The detectors, by their name in {@code rules.yaml}. */
  public enum Detector {
    COUNT, VALUE_COUNT, OFF_ROLE, ADDRESS_CLASS, BYPASS, FS_GUARD, WALL_BREACH, IDENTITY_CONFLICT, INGEST_REJECTS,
    SANDBOX_ESCAPE;

    public String wireName() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static Detector ofWireName(String name) {
      for (Detector d : values()) {
        if (d.wireName().equals(name)) {
          return d;
        }
      }
      return null;
    }
  }

  /** The value of a refusal a {@code value-count} rule counts distinct, by its name in {@code rules.yaml}. */
  public enum ValueField {
    HOST("host"), HOST_PORT("host:port"), PATH("path");

    private final String wireName;

    ValueField(String wireName) {
      this.wireName = wireName;
    }

    public String wireName() {
      return wireName;
    }

    /** This field of {@code e}; null when the refusal has none (it is then not counted). */
    public String of(ViolationEvent e) {
      return switch (this) {
        case HOST -> e.host();
        case HOST_PORT -> e.host() == null ? null : e.port() == null ? e.host() : e.host() + ":" + e.port();
        case PATH -> e.path();
      };
    }

    public static ValueField ofWireName(String name) {
      for (ValueField f : values()) {
        if (f.wireName.equals(name)) {
          return f;
        }
      }
      return null;
    }
  }

  /** A count rule with the defaults for everything else. */
  public static Rule count(String id, Duration window, int threshold, Severity severity, Duration grace) {
    return new Rule(id, Detector.COUNT, severity, false, RuleMatch.ANY, DEFAULT_RESOLVE_AFTER, window, null,
        threshold, grace, Set.of(), null, List.of(), null);
  }

  /** The count rule {@code up} and {@code replay} use when the rules directory has no rule at all. */
  public static Rule defaultCountRule() {
    return count("persistent-retry", DEFAULT_WINDOW, DEFAULT_THRESHOLD, Severity.WARNING, DEFAULT_GRACE);
  }

  /** How far aligned windows advance: the hop, else the window. */
  public Duration advance() {
    return hop != null ? hop : window;
  }

  /** This rule counting in aligned windows that advance by {@code hop} (the window: tumbling). */
  public Rule withHop(Duration hop) {
    return new Rule(id, detector, severity, shadow, match, resolveAfter, window, hop, threshold, grace, classes,
        within, paths, field, meta, per);
  }
}
