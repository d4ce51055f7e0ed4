package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SilenceTest {

  static final Instant T0 = Instant.parse("2026-11-30T01:00:00Z");

  static Alert alert(String rule, String command, String agent, String host) {
    return Alert.firing(rule, command).fingerprint("f").severity(Alert.Severity.PAGE).agentId(agent).role("ci")
        .host(host).port(443).firstSeen(T0).lastSeen(T0).summary("s").sampleEventIds(List.of()).build();
  }

  static Silence silence(Map<String, String> matchers) {
    return new Silence("s1", matchers, T0, T0.plusSeconds(3600), "ana", "maintenance");
  }

  @Test
  void everyMatcherMustHoldExactlyOrAsAGlob() {
    Silence s = silence(Map.of("rule", "off-role-*", "agentId", "ci-runner-1"));
    assertThat(s.matches(alert("off-role-host", "C1", "ci-runner-1", "evil.example"))).isTrue();
    assertThat(s.matches(alert("off-role-host", "C1", "ci-runner-2", "evil.example"))).isFalse();
    assertThat(s.matches(alert("persistent-retry", "C1", "ci-runner-1", "evil.example"))).isFalse();
    assertThat(silence(Map.of("host", "*.example")).matches(alert("r", "C1", "a", "evil.example"))).isTrue();
    assertThat(silence(Map.of("host", "*.example")).matches(alert("r", "C1", "a", null))).isFalse();
  }

  @Test
  void aSilenceWithoutMatchersMutesNothing() {
    assertThat(silence(Map.of()).matches(alert("r", "C1", "a", "h"))).isFalse();
  }

  @Test
  void itMutesFromItsStartUntilItsEndAndExpiringEndsItNow() {
    Silence s = silence(Map.of("rule", "r"));
    assertThat(s.activeAt(T0.minusMillis(1))).isFalse();
    assertThat(s.activeAt(T0)).isTrue();
    assertThat(s.activeAt(T0.plusSeconds(3599))).isTrue();
    assertThat(s.activeAt(T0.plusSeconds(3600))).isFalse();
    Silence ended = s.expiredAt(T0.plusSeconds(60));
    assertThat(ended.activeAt(T0.plusSeconds(61))).isFalse();
    assertThat(ended.endsAt()).isEqualTo(T0.plusSeconds(60));
    assertThat(s.expiredAt(T0.plusSeconds(7200)).endsAt()).isEqualTo(s.endsAt());
  }
}
