package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.metrics.StreamsMetrics;
import dev.knockwatch.streams.rules.Role;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.events.config.KeyValues;

/**
 * {@code off-role}: a refused host outside the agent's role (roles.yaml); agents no glob matches get {@code
 * defaultRole}.
 */
public final class OffRoleDetector implements Detector<OffRoleDetector.Settings> {

  public record Settings() implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("off-role", "a refused host outside the agent's role in roles.yaml (agents no glob "
        + "matches get `defaultRole`)", Grain.PER).needingRoles();
  }

  @Override
  public Settings settings(KeyValues v) {
    return new Settings();
  }

  @Override
  public Finding judge(Rule rule, Settings s, Seen seen) {
    ViolationEvent e = seen.event();
    if (e.kind() != Kind.NETWORK || e.host() == null) {
      return null;
    }
    Role r = seen.policy().role(seen.role());
    if (r.allows(e.host(), e.port())) {
      StreamsMetrics.IN_ROLE.labels(seen.role()).inc();
      return null;
    }
    return Finding.of((e.agentId() == null ? "a command in no agent's directory" : "agent " + e.agentId())
        + " (role " + seen.role() + ") tried " + Finding.target(e) + ", which its role does not allow", e);
  }
}
