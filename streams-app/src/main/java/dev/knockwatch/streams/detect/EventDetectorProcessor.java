package dev.knockwatch.streams.detect;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.StreamsMetrics;
import dev.knockwatch.streams.lifecycle.Hit;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyView;
import dev.knockwatch.streams.rules.Role;
import dev.knockwatch.streams.rules.Rule;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * The detectors that judge one refusal on its own: {@code off-role} (the host is outside the
 * agent's role), {@code address-class} (the refusal names a sensitive class of address) and
 * {@code fs-guard} (a guarded path), and {@code wall-breach} (a guard probe the sandbox did not
 * refuse), and {@code identity-conflict} (a line that claimed another agent or command than its
 * log layout: docs/TRUST.md). Each hit carries a fingerprint of rule and command, and what was
 * refused as its one target: the lifecycle raises one alert per rule and command, and a new host
 * of the same command updates it (docs/RELIABILITY.md: a scan of a million hosts is one page).
 */
public final class EventDetectorProcessor implements Processor<String, ViolationEvent, String, Hit> {

  private final Rule rule;
  private final Policy policy;
  private ProcessorContext<String, Hit> context;
  private PolicyView view;

  public EventDetectorProcessor(Rule rule, Policy policy) {
    this.rule = rule;
    this.policy = policy;
  }

  @Override
  public void init(ProcessorContext<String, Hit> context) {
    this.context = context;
    this.view = PolicyView.of(policy, context);
  }

  @Override
  public void process(Record<String, ViolationEvent> record) {
    ViolationEvent e = record.value();
    if (record.key() == null || e == null || !rule.judgesAt(record.key(), e)) {
      return;
    }
    Policy now = view.current();
    String role = view.roleOf(e.agentId());
    if (!rule.match().matches(e, role)) {
      return;
    }
    String summary = switch (rule.detector()) {
      case OFF_ROLE -> offRole(now, e, role);
      case ADDRESS_CLASS -> addressClass(e);
      case FS_GUARD -> guarded(e);
      case WALL_BREACH -> breach(e);
      case IDENTITY_CONFLICT -> conflict(e);
      case INGEST_REJECTS -> rejected(e);
      default -> throw new IllegalStateException(rule.detector() + " is not judged event by event");
    };
    if (summary == null) {
      return;
    }
    // what was refused (an identity conflict names none: its claims are in the summary)
    String subject = rule.detector() == Rule.Detector.IDENTITY_CONFLICT ? null
        : rule.detector() == Rule.Detector.INGEST_REJECTS ? e.unattributed().code()
        : e.probe() != null ? e.probe().name() : e.kind() == Kind.FILESYSTEM ? fsSubject(e) : e.host() == null ? null : target(e);
    Instant at = Instant.ofEpochMilli(record.timestamp());
    context.forward(new Record<>(record.key(), new Hit(rule,
        Alert.fingerprintOf(rule.id(), record.key()), rule.commandOf(record.key(), e), e.agentId(), role,
        e.host(), e.port(), e.source(), at, at, e.eventId() == null ? List.of() : List.of(e.eventId()), 1, null, null,
        summary, subject == null ? null : List.of(new Alert.Target(subject, 1))), record.timestamp()));
  }

  private String offRole(Policy now, ViolationEvent e, String role) {
    if (e.kind() != Kind.NETWORK || e.host() == null) {
      return null;
    }
    Role r = now.role(role);
    if (r.allows(e.host(), e.port())) {
      StreamsMetrics.IN_ROLE.labels(role).inc();
      return null;
    }
    return (e.agentId() == null ? "a command in no agent's directory" : "agent " + e.agentId())
        + " (role " + role + ") tried " + target(e) + ", which its role does not allow";
  }

  private String addressClass(ViolationEvent e) {
    AddressClass c = e.addressClass();
    if (c == null && e.host() != null) {
      c = HostClassifier.classify(e.host()).orElse(null);
    }
    if (c == null || !rule.classes().contains(c)) {
      return null;
    }
    return "refused " + target(e) + ": a " + c.name().toLowerCase(Locale.ROOT).replace('_', '-') + " address";
  }

  /** Either path a call names (rename's, link's and symlink's second is {@code newPath}) may be the guarded one. */
  private String guarded(ViolationEvent e) {
    if (e.kind() != Kind.FILESYSTEM) {
      return null;
    }
    for (String path : new String[] {e.path(), e.newPath()}) {
      String hit = path == null ? null : GuardedPaths.match(rule.paths(), path);
      if (hit != null) {
        return "refused " + (e.action() == null ? "access" : e.action()) + " on " + path + " (guarded: " + hit + ")";
      }
    }
    return null;
  }

  /** What a filesystem refusal refused: for fs-guard the path it guards, which may be a call's second. */
  private String fsSubject(ViolationEvent e) {
    boolean second = rule.detector() == Rule.Detector.FS_GUARD && e.newPath() != null
        && (e.path() == null || GuardedPaths.match(rule.paths(), e.path()) == null);
    return second ? e.newPath() : e.path();
  }

  private static String breach(ViolationEvent e) {
    if (e.probe() == null || e.probe().refused()) {
      return null;
    }
    ViolationEvent.ProbeResult p = e.probe();
    return "guard probe " + p.name() + " was not refused"
        + (p.expected() == null ? "" : ": expected " + p.expected())
        + (p.observed() == null ? "" : (p.expected() == null ? ": " : ", ") + "observed " + p.observed())
        + " — the sandbox let it through";
  }

  /** docs/TRUST.md: a line claimed another agent or command than its log layout; the layout's was kept. */
  private static String conflict(ViolationEvent e) {
    ViolationEvent.IdentityClaim c = e.identityConflict();
    if (c == null) {
      return null;
    }
    String claimed = (c.agentId() == null ? "" : "agentId \"" + c.agentId() + "\"")
        + (c.agentId() != null && c.commandId() != null ? " and " : "")
        + (c.commandId() == null ? "" : "commandId \"" + c.commandId() + "\"");
    return (e.source() == null ? "a line" : "a " + e.source().wireName() + " line")
        + (e.agentId() == null ? "" : " of agent " + e.agentId()) + " claims " + claimed
        + "; counted as its log layout says (docs/TRUST.md)";
  }

  /** Ingest's notice: a refusal it read but could not attribute (docs/TRUST.md), counted per log directory. */
  private static String rejected(ViolationEvent e) {
    ViolationEvent.Unattributed u = e.unattributed();
    if (u == null) {
      return null;
    }
    return "ingest rejected a refusal in " + (u.directory().isEmpty() ? "the logs' root" : "directory \"" + u.directory() + "\"")
        + " (" + u.code() + "): it cannot be told whose it is, and no other rule sees it"
        + (e.origin() == null ? "" : "; first " + e.origin().file() + ":" + e.origin().offset());
  }

  static String target(ViolationEvent e) {
    return e.port() == null ? e.host() : e.host() + ":" + e.port();
  }
}
