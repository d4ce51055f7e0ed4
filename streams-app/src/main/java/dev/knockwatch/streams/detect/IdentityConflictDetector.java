package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.events.config.KeyValues;

/**
 * {@code identity-conflict}: a line that claimed another agent or command than its log layout; the layout's
 * was kept (docs/TRUST.md).
 */
public final class IdentityConflictDetector implements Detector<IdentityConflictDetector.Settings> {

  public record Settings() implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("identity-conflict", "a line claiming another agentId or commandId than its log layout: one "
        + "alert per command (docs/TRUST.md)").reading(Reads.IDENTITY_CLAIMS);
  }

  @Override
  public Settings settings(KeyValues v) {
    return new Settings();
  }

  /** Its claims are in the summary: it names no target. */
  @Override
  public Finding judge(Rule rule, Settings s, Seen seen) {
    ViolationEvent e = seen.event();
    ViolationEvent.IdentityClaim c = e.identityConflict();
    if (c == null) {
      return null;
    }
    String claimed = (c.agentId() == null ? "" : "agentId \"" + c.agentId() + "\"")
        + (c.agentId() != null && c.commandId() != null ? " and " : "")
        + (c.commandId() == null ? "" : "commandId \"" + c.commandId() + "\"");
    return new Finding((e.source() == null ? "a line" : "a " + e.source() + " line")
        + (e.agentId() == null ? "" : " of agent " + e.agentId()) + " claims " + claimed
        + "; counted as its log layout says (docs/TRUST.md)", null);
  }
}
