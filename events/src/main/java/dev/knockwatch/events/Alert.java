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
    List<String> sources,
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
      Instant lastSeen, String summary, List<String> sampleEventIds, List<String> sources, String policyVersion,
      Boolean shadow, List<Target> targets, Long distinctTargets, String lastTarget) {
    this(fingerprint, rule, severity, status, commandId, agentId, role, host, port, count, windowStart, windowEnd,
        firstSeen, lastSeen, summary, sampleEventIds, sources, policyVersion, shadow, targets, distinctTargets, lastTarget,
        null);
  }


  /**
   * A firing alert of {@code rule} for {@code commandId}, to fill in ({@code Alert.firing("off-role-host",
   * CMD).count(5).build()}): its fingerprint is the rule's and the command's, its severity a warning,
   * its count 1; the rest is unset.
   */
  public static Builder firing(String rule, String commandId) {
    return new Builder().rule(rule).commandId(commandId).fingerprint(fingerprintOf(rule, commandId))
        .severity(Severity.WARNING).status(Status.FIRING).count(1);
  }

  /** This alert, to change some of its fields. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.fingerprint = fingerprint;
    b.rule = rule;
    b.severity = severity;
    b.status = status;
    b.commandId = commandId;
    b.agentId = agentId;
    b.role = role;
    b.host = host;
    b.port = port;
    b.count = count;
    b.windowStart = windowStart;
    b.windowEnd = windowEnd;
    b.firstSeen = firstSeen;
    b.lastSeen = lastSeen;
    b.summary = summary;
    b.sampleEventIds = sampleEventIds;
    b.sources = sources;
    b.policyVersion = policyVersion;
    b.shadow = shadow;
    b.targets = targets;
    b.distinctTargets = distinctTargets;
    b.lastTarget = lastTarget;
    b.meta = meta;
    return b;
  }

  /** An alert field by field (tests build theirs so, not with 23 positional arguments). */
  public static final class Builder {
    private String fingerprint;
    private String rule;
    private Severity severity;
    private Status status;
    private String commandId;
    private String agentId;
    private String role;
    private String host;
    private Integer port;
    private long count;
    private Instant windowStart;
    private Instant windowEnd;
    private Instant firstSeen;
    private Instant lastSeen;
    private String summary;
    private List<String> sampleEventIds;
    private List<String> sources;
    private String policyVersion;
    private Boolean shadow;
    private List<Target> targets;
    private Long distinctTargets;
    private String lastTarget;
    private Meta meta;

    private Builder() {}

    public Builder fingerprint(String fingerprint) {
      this.fingerprint = fingerprint;
      return this;
    }

    public Builder rule(String rule) {
      this.rule = rule;
      return this;
    }

    public Builder severity(Severity severity) {
      this.severity = severity;
      return this;
    }

    public Builder status(Status status) {
      this.status = status;
      return this;
    }

    public Builder commandId(String commandId) {
      this.commandId = commandId;
      return this;
    }

    public Builder agentId(String agentId) {
      this.agentId = agentId;
      return this;
    }

    public Builder role(String role) {
      this.role = role;
      return this;
    }

    public Builder host(String host) {
      this.host = host;
      return this;
    }

    public Builder port(Integer port) {
      this.port = port;
      return this;
    }

    public Builder count(long count) {
      this.count = count;
      return this;
    }

    public Builder windowStart(Instant windowStart) {
      this.windowStart = windowStart;
      return this;
    }

    public Builder windowEnd(Instant windowEnd) {
      this.windowEnd = windowEnd;
      return this;
    }

    public Builder firstSeen(Instant firstSeen) {
      this.firstSeen = firstSeen;
      return this;
    }

    public Builder lastSeen(Instant lastSeen) {
      this.lastSeen = lastSeen;
      return this;
    }

    public Builder summary(String summary) {
      this.summary = summary;
      return this;
    }

    public Builder sampleEventIds(List<String> sampleEventIds) {
      this.sampleEventIds = sampleEventIds;
      return this;
    }

    public Builder sources(List<String> sources) {
      this.sources = sources;
      return this;
    }

    public Builder policyVersion(String policyVersion) {
      this.policyVersion = policyVersion;
      return this;
    }

    public Builder shadow(Boolean shadow) {
      this.shadow = shadow;
      return this;
    }

    public Builder targets(List<Target> targets) {
      this.targets = targets;
      return this;
    }

    public Builder distinctTargets(Long distinctTargets) {
      this.distinctTargets = distinctTargets;
      return this;
    }

    public Builder lastTarget(String lastTarget) {
      this.lastTarget = lastTarget;
      return this;
    }

    public Builder meta(Meta meta) {
      this.meta = meta;
      return this;
    }

    public Alert build() {
      return new Alert(fingerprint, rule, severity, status, commandId, agentId, role, host, port, count, windowStart,
          windowEnd, firstSeen, lastSeen, summary, sampleEventIds, sources, policyVersion, shadow, targets,
          distinctTargets, lastTarget, meta);
    }
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
      List<String> newSources, List<Target> newTargets) {
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
