package dev.knockwatch.streams.rules;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Alert.Severity;
import dev.knockwatch.events.EventKey;
import dev.knockwatch.events.ViolationEvent;
import java.time.Duration;

/**
 * One rule of {@code rules.yaml}: the keys every rule has, and its detector's own {@code settings}
 * (one record per detector: {@link Detector.Settings}).
 *
 * @param meta what the rule says of itself (tags, runbook, labels, annotations), carried into its
 *     alerts; null when it says nothing
 * @param per what the rule counts and groups by: the command (the default), the task, the session or the agent
 */
public record Rule(
    String id,
    Severity severity,
    boolean shadow,
    RuleMatch match,
    Duration resolveAfter,
    Alert.Meta meta,
    Grain per,
    Detector.Settings settings) {

  public static final Duration DEFAULT_RESOLVE_AFTER = Duration.ofMinutes(10);

  /** What detection adds to a rule's id to name its processor and store at the task, session or agent grain. */
  public static final String GRAIN_SUFFIX = "-by-grain";

  /** An enforced rule of the command's grain, matching every refusal, saying nothing of itself. */
  public static Rule of(String id, Severity severity, Detector.Settings settings) {
    return new Rule(id, severity, false, RuleMatch.ANY, DEFAULT_RESOLVE_AFTER, null, Grain.COMMAND, settings);
  }

  /** The detector this rule's settings belong to. */
  public <S extends Detector.Settings> Detector<S> detector() {
    return Detectors.of(this.<S>settingsAs());
  }

  @SuppressWarnings("unchecked")
  private <S extends Detector.Settings> S settingsAs() {
    return (S) settings;
  }

  /** Whether this is a rule of {@code detector}'s. */
  public boolean is(Class<? extends Detector.Settings> settingsType) {
    return settingsType.isInstance(settings);
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
   * the key is the command's own (a refusal with no task, or a rule of the command's grain), or the
   * agent or session whose key a wall's refusal that names no command travels under.
   */
  public String nounOf(String key, ViolationEvent e) {
    if (EventKey.namesNoCommand(key) && (e == null || e.commandId() == null)) {
      // a wall that names no command: its key is the agent's or its sandbox's whatever the rule's grain
      return key.startsWith(EventKey.SESSION) ? "sandbox" : Grain.AGENT.noun();
    }
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
    return new Rule(id, severity, shadow, match, resolveAfter, meta, per, settings);
  }

  /** This rule, counting and grouping at {@code per}. */
  public Rule per(Grain per) {
    return new Rule(id, severity, shadow, match, resolveAfter, meta, per, settings);
  }
}
