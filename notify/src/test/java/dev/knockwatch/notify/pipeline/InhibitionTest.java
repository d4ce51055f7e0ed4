package dev.knockwatch.notify.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Glob;
import dev.knockwatch.notify.config.Matcher;
import dev.knockwatch.notify.config.InhibitRule;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The shipped inhibition: an off-role page mutes the persistent-retry warning of the same command,
 * only while it fires, never another command's, never itself.
 */
class InhibitionTest {

  static final InhibitRule OFF_ROLE_MUTES_RETRY = new InhibitRule(
      List.of(Matcher.parse("rule=off-role-host")), List.of(Matcher.parse("rule=\"persistent-retry\"")), List.of("command"));

  private static Alert alert(String rule, String command, Alert.Status status, Boolean shadow) {
    Alert.Severity severity = rule.equals("off-role-host") ? Alert.Severity.PAGE : Alert.Severity.WARNING;
    return Alert.firing(rule, command).fingerprint(Alert.fingerprintOf(rule, command)).severity(severity)
        .status(status).agentId("ci-runner-1").role("ci").firstSeen(Instant.EPOCH).lastSeen(Instant.EPOCH)
        .summary("s").sampleEventIds(List.of()).sources(List.of()).policyVersion("v").shadow(shadow).build();
  }

  @Test
  void anOffRolePageMutesTheRetryWarningOfItsCommandWhileItFires() {
    Inhibition inhibition = new Inhibition(List.of(OFF_ROLE_MUTES_RETRY));
    Alert retry = alert("persistent-retry", "CommandA00000000000000", Alert.Status.FIRING, null);
    assertThat(inhibition.of(retry)).as("no source yet").isEmpty();
    Alert page = alert("off-role-host", "CommandA00000000000000", Alert.Status.FIRING, null);
    inhibition.observe(page);
    assertThat(inhibition.of(retry)).map(Inhibition.By::source).contains(page);
    assertThat(inhibition.of(alert("persistent-retry", "CommandB00000000000000", Alert.Status.FIRING, null)))
        .as("another command").isEmpty();
    assertThat(inhibition.of(page)).as("the source is not its own target").isEmpty();
    inhibition.observe(alert("off-role-host", "CommandA00000000000000", Alert.Status.RESOLVED, null));
    assertThat(inhibition.of(retry)).as("resolved: it inhibits no longer").isEmpty();
    assertThat(inhibition.sources()).isZero();
  }

  @Test
  void aShadowSourceInhibitsNothingAndOnlySourcesAreHeld() {
    Inhibition inhibition = new Inhibition(List.of(OFF_ROLE_MUTES_RETRY));
    inhibition.observe(alert("off-role-host", "CommandA00000000000000", Alert.Status.FIRING, true));
    inhibition.observe(alert("persistent-retry", "CommandA00000000000000", Alert.Status.FIRING, null));
    assertThat(inhibition.sources()).isZero();
    assertThat(inhibition.of(alert("persistent-retry", "CommandA00000000000000", Alert.Status.FIRING, null))).isEmpty();
  }

  @Test
  void muteSaysWhichAlertInhibits() {
    Inhibition inhibition = new Inhibition(List.of(OFF_ROLE_MUTES_RETRY));
    Alert page = alert("off-role-host", "CommandA00000000000000", Alert.Status.FIRING, null);
    inhibition.observe(page);
    Mute mute = new Mute((a, now) -> Optional.empty(), inhibition);
    assertThat(mute.check(alert("persistent-retry", "CommandA00000000000000", Alert.Status.FIRING, null), Instant.now()))
        .contains(new Mute.Muted(Mute.INHIBITED, "inhibited by off-role-host " + page.fingerprint()));
  }
}
