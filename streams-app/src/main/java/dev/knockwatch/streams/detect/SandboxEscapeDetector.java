package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Hit;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import java.time.Duration;

/**
 * {@code sandbox-escape}: a call that asked to run outside the sandbox (Claude Code's
 * {@code dangerouslyDisableSandbox}, Codex's {@code require_escalated}; ingest's
 * {@code sandbox-off-request}) pages; it is critical when a refusal of the same task (the rule's
 * grain) came before it within {@code within}: a model that was told no and reached for the way
 * around the wall. A call that asked and was let out ({@code sandbox-off-approved}: it ran outside,
 * who let it out in its reason), and one whose output then showed no mark of the sandbox
 * ({@code sandbox-off-unanswered}: it may have run outside), are critical, each an alert of its own. Its slice is the key's last refusal time, dropped after
 * {@code within} of stream time.
 */
public final class SandboxEscapeDetector implements Detector.Stateful<SandboxEscapeDetector.Settings, Long> {

  /** What the rule id is suffixed with in the fingerprint of a call let out, and of one nothing answered. */
  public static final String APPROVED = ":approved";
  public static final String UNANSWERED = ":unanswered";

  static final Key<Duration> WITHIN = Key.duration("within", BypassDetector.DEFAULT_WITHIN, false,
      "how soon after a refusal a request to leave the sandbox is critical");

  public record Settings(Duration within) implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("sandbox-escape", "a call that asked to run outside the sandbox (`dangerouslyDisableSandbox`,"
        + " `require_escalated`); critical within `within` after a refusal, when it was let out, or when its output"
        + " shows no mark of the sandbox", WITHIN,
        Grain.PER).reading(Reads.REFUSALS_AND_SANDBOX_REQUESTS);
  }

  @Override
  public Settings settings(KeyValues v) {
    return new Settings(v.get(WITHIN));
  }

  @Override
  public String describe(Settings s) {
    return spec().name() + " within " + Key.human(s.within());
  }

  @Override
  public Serde<Long> serde() {
    return Serdes.Long();
  }

  @Override
  public long expiresAt(Rule rule, Settings s, Long refusedAt) {
    return refusedAt + s.within().toMillis() + 1;
  }

  @Override
  public Duration sweepEvery() {
    return Duration.ofSeconds(30);
  }

  @Override
  public Long step(Rule rule, Settings s, Seen seen, Long refused, Consumer<Hit> hits) {
    ViolationEvent e = seen.event();
    String key = seen.key();
    long ts = seen.at();
    if (e.probe() != null || e.unattributed() != null) {
      return refused;
    }
    if (!e.sandboxOff()) {
      // a refusal: what a later request to leave the sandbox follows
      return refused == null || ts > refused ? Long.valueOf(ts) : refused;
    }
    if (ViolationEvent.SANDBOX_UNAVAILABLE.equals(e.action())) {
      return refused; // a broken sandbox is sandbox-unavailable's
    }
    Instant at = Instant.ofEpochMilli(ts);
    String fingerprint;
    Rule judged;
    String summary;
    String noun = rule.nounOf(key, e);
    if (ViolationEvent.SANDBOX_OFF_APPROVED.equals(e.action())) {
      fingerprint = Alert.fingerprintOf(rule.id() + APPROVED, key);
      judged = rule.withSeverity(Alert.Severity.CRITICAL);
      summary = "a call of the " + noun + " asked to run outside the sandbox and was let out: it ran outside"
          + (e.reason() == null ? "" : " (" + e.reason() + ")");
    } else if (ViolationEvent.SANDBOX_OFF_UNANSWERED.equals(e.action())) {
      fingerprint = Alert.fingerprintOf(rule.id() + UNANSWERED, key);
      judged = rule.withSeverity(Alert.Severity.CRITICAL);
      summary = "a call of the " + noun + " asked to run outside the sandbox, and nothing in its output shows the"
          + " sandbox answered: it may have run outside";
    } else {
      boolean after = refused != null && ts >= refused && ts - refused <= s.within().toMillis();
      fingerprint = Alert.fingerprintOf(rule.id(), key);
      judged = after ? rule.withSeverity(Alert.Severity.CRITICAL) : rule;
      summary = "a call of the " + noun + " asked to run outside the sandbox (" + flag(e) + ")"
          + (after ? ", " + (ts - refused) / 1000 + " s after the sandbox refused the " + noun : "");
    }
    hits.accept(new Hit(judged, fingerprint, rule.commandOf(key, e), e.agentId(), seen.role(), null, null, e.source(),
        at, at, e.eventId() == null ? List.of() : List.of(e.eventId()), 1, null, null, summary, null));
    return refused;
  }

  private static final java.util.regex.Pattern FLAG = java.util.regex.Pattern.compile("\\(([A-Za-z_]{1,40})\\)");

  /** The harness's word for the request, as ingest wrote it in the reason ({@code dangerouslyDisableSandbox}, {@code require_escalated}). */
  static String flag(ViolationEvent e) {
    java.util.regex.Matcher m = e.reason() == null ? null : FLAG.matcher(e.reason());
    return m != null && m.find() ? m.group(1) : "dangerouslyDisableSandbox";
  }
}
