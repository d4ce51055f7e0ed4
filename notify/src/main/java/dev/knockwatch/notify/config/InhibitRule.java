package dev.knockwatch.notify.config;

import dev.knockwatch.events.Alert;
import java.util.List;
import java.util.Objects;

/**
 * One of receivers.yaml's {@code inhibitRules}, as Alertmanager's {@code inhibit_rules}: while an
 * alert matching {@code source} fires, the notifications of alerts matching {@code target} with
 * the same values of every {@code equal} field (rule, severity, role, agent, command) are muted.
 * The target alert itself is untouched: detection still raises it and its command's timeline
 * still lists it; only its notifications are muted (recorded as inhibited).
 */
public record InhibitRule(List<Matcher> source, List<Matcher> target, List<String> equal) {

  public InhibitRule {
    source = List.copyOf(source);
    target = List.copyOf(target);
    equal = List.copyOf(equal);
  }

  /** Whether {@code a} matches every source matcher. */
  public boolean isSource(Alert a) {
    return source.stream().allMatch(m -> m.matches(a));
  }

  /** Whether {@code a} matches every target matcher. */
  public boolean isTarget(Alert a) {
    return target.stream().allMatch(m -> m.matches(a));
  }

  /** Whether a firing {@code source} mutes {@code target} under this rule (never an alert itself). */
  public boolean inhibits(Alert source, Alert target) {
    if (source.fingerprint() != null && source.fingerprint().equals(target.fingerprint())) {
      return false;
    }
    if (!isSource(source) || !isTarget(target)) {
      return false;
    }
    for (String field : equal) {
      String a = Route.label(source, field);
      if (a == null || !Objects.equals(a, Route.label(target, field))) {
        return false;
      }
    }
    return true;
  }

  /** {@code rule="off-role-host" mutes rule="persistent-retry" of the same command}. */
  public String describe() {
    return describe(source) + " mutes " + describe(target) + (equal.isEmpty() ? "" : " of the same " + String.join(", ", equal));
  }

  private static String describe(List<Matcher> matchers) {
    return matchers.isEmpty() ? "any alert" : String.join(", ", matchers.stream().map(Matcher::toString).toList());
  }
}
