package dev.knockwatch.events;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/**
 * An alert as written to {@code knockwatch.alerts} (keyed by {@code fingerprint}) and printed by
 * {@code replay}. The fingerprint is stable for rule + command [+ host], so it serves as the
 * PagerDuty dedup_key and the Slack thread key.
 *
 * <p>{@code sources} are the kinds of log the refusals were read from (the same refusal seen by
 * two counts once); {@code policyVersion} is the version of the rules it was raised under;
 * {@code shadow} is true for a rule in shadow mode (written, never paged), absent otherwise;
 * {@code targets} are the most refused hosts (or paths) of the alert's window or episode, most
 * first (at most five); {@code distinctTargets} says how many distinct ones there were in all
 * (exact up to twenty, estimated beyond) and {@code lastTarget} the newest, for the rules that
 * judge each refusal on its own: one alert per rule and command, whatever the number of hosts.
 * {@code meta} is what the rule says of itself (tags, runbook, labels, annotations), absent when
 * it says nothing.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Alert(
    String fingerprint,
    String rule,
    Severity severity,
    Status status,
    String commandId,
    String agentId,
    String role,
    String host,
    Integer port,
    long count,
    Instant windowStart,
    Instant windowEnd,
    Instant firstSeen,
    Instant lastSeen,
    String summary,
    List<String> sampleEventIds,
    List<Source> sources,
    String policyVersion,
    Boolean shadow,
    List<Target> targets,
    Long distinctTargets,
    String lastTarget,
    Meta meta) {

  /**
   * What a rule says of itself, carried into its alerts: {@code tags} (free text, and ATT&CK
   * technique ids like {@code attack.t1046}), a {@code runbook} URL, {@code labels} (routing and
   * grouping keys for Alertmanager and SIEMs) and {@code annotations} (free text). Operator-written.
   */
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public record Meta(List<String> tags, String runbook, java.util.Map<String, String> labels,
      java.util.Map<String, String> annotations) {
    /** An ATT&CK technique id as a tag: {@code attack.t1046} (Sigma's form), {@code T1046} or {@code T1046.001}. */
    public static final java.util.regex.Pattern ATTACK_TECHNIQUE =
        java.util.regex.Pattern.compile("(?i)(?:attack\\.)?(t\\d{4}(?:\\.\\d{3})?)");

    /** The technique id of an ATT&CK tag, e.g. {@code T1046} for {@code attack.t1046}; null for any other tag. */
    public static String attackTechnique(String tag) {
      java.util.regex.Matcher m = ATTACK_TECHNIQUE.matcher(tag);
      return m.matches() ? m.group(1).toUpperCase(java.util.Locale.ROOT) : null;
    }

    public Meta {
      tags = tags == null ? List.of() : List.copyOf(tags);
      labels = labels == null ? java.util.Map.of() : java.util.Map.copyOf(labels);
      annotations = annotations == null ? java.util.Map.of() : java.util.Map.copyOf(annotations);
    }
  }

  /** An alert of a rule that says nothing of itself. */
  public Alert(String fingerprint, String rule, Severity severity, Status status, String commandId, String agentId,
      String role, String host, Integer port, long count, Instant windowStart, Instant windowEnd, Instant firstSeen,
      Instant lastSeen, String summary, List<String> sampleEventIds, List<Source> sources, String policyVersion,
      Boolean shadow, List<Target> targets, Long distinctTargets, String lastTarget) {
    this(fingerprint, rule, severity, status, commandId, agentId, role, host, port, count, windowStart, windowEnd,
        firstSeen, lastSeen, summary, sampleEventIds, sources, policyVersion, shadow, targets, distinctTargets, lastTarget,
        null);
  }


  /** A refused host:port (or path) and how often this alert's command was refused it. */
  public record Target(String target, long count) {}

  /** hash(rule, commandId): one alert per rule and command (an episode of it at a time). */
  public static String fingerprintOf(String ruleId, String commandId) {
    return Hashes.sha256Hex(ruleId + "\u0000" + commandId, 8);
  }

  /** This alert, resolved. */
  public Alert resolved() {
    return new Alert(fingerprint, rule, severity, Status.RESOLVED, commandId, agentId, role, host, port, count,
        windowStart, windowEnd, firstSeen, lastSeen, summary, sampleEventIds, sources, policyVersion, shadow, targets,
        distinctTargets, lastTarget, meta);
  }

  /** This alert with what later hits changed. */
  public Alert updated(long newCount, Instant newLastSeen, String newSummary, List<String> samples,
      List<Source> newSources, List<Target> newTargets) {
    return new Alert(fingerprint, rule, severity, status, commandId, agentId, role, host, port, newCount,
        windowStart, windowEnd, firstSeen, newLastSeen, newSummary, samples, newSources, policyVersion, shadow, newTargets,
        distinctTargets, lastTarget, meta);
  }

  /** This alert naming what its episode was refused: the most refused, how many in all, the last. */
  public Alert withTargets(String newSummary, List<Target> newTargets, Long distinct, String last) {
    return new Alert(fingerprint, rule, severity, status, commandId, agentId, role, host, port, count,
        windowStart, windowEnd, firstSeen, lastSeen, newSummary, sampleEventIds, sources, policyVersion, shadow,
        newTargets, distinct, last, meta);
  }

  public enum Severity {
    @JsonProperty("info") INFO,
    @JsonProperty("warning") WARNING,
    @JsonProperty("page") PAGE,
    @JsonProperty("critical") CRITICAL
  }

  public enum Status {
    @JsonProperty("firing") FIRING,
    @JsonProperty("resolved") RESOLVED
  }
}
