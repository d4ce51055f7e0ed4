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
 * {@code targets} are a count alert's most refused hosts (or paths) in its window, most first.
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
    List<Target> targets) {

  /** A refused host:port (or path) and how often this alert's command was refused it. */
  public record Target(String target, long count) {}

  /**
   * hash(rule, commandId[, subject]): one alert per rule and command, or per rule, command and
   * host (or path) for the detectors that judge each refusal on its own.
   */
  public static String fingerprint(String ruleId, String commandId, String subject) {
    return Hashes.sha256Hex(ruleId + "\u0000" + commandId + (subject == null ? "" : "\u0000" + subject), 8);
  }

  /** This alert, resolved. */
  public Alert resolved() {
    return new Alert(fingerprint, rule, severity, Status.RESOLVED, commandId, agentId, role, host, port, count,
        windowStart, windowEnd, firstSeen, lastSeen, summary, sampleEventIds, sources, policyVersion, shadow, targets);
  }

  /** This alert with what later hits changed. */
  public Alert updated(long newCount, Instant newLastSeen, String newSummary, List<String> samples,
      List<Source> newSources, List<Target> newTargets) {
    return new Alert(fingerprint, rule, severity, status, commandId, agentId, role, host, port, newCount,
        windowStart, windowEnd, firstSeen, newLastSeen, newSummary, samples, newSources, policyVersion, shadow, newTargets);
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
