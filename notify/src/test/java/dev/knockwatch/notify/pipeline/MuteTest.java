package dev.knockwatch.notify.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Silence;
import dev.knockwatch.notify.Fixtures;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class MuteTest {

  private static final Silence SILENCE = new Silence("s-1", Map.of("commandId", "Doors*"), Fixtures.T0,
      Fixtures.T0.plusSeconds(3600), "soc@example.test", "known noisy");

  @Test
  void aMatchingActiveSilenceMutesAndSaysWhich() {
    Mute mute = new Mute((alert, now) -> Optional.of(SILENCE).filter(s -> s.activeAt(now) && s.matches(alert)));
    assertThat(mute.check(Fixtures.offRole(), Fixtures.T0.plusSeconds(60)))
        .contains(new Mute.Muted(Mute.SILENCED, "silence s-1"));
    assertThat(mute.check(Fixtures.offRole(), Fixtures.T0.plusSeconds(7200))).as("expired").isEmpty();
    assertThat(mute.check(Fixtures.hostile(), Fixtures.T0.plusSeconds(60))).as("another command").isEmpty();
  }

  @Test
  void aShadowRulesAlertIsMutedWithoutAskingTheSilences() {
    AtomicInteger asked = new AtomicInteger();
    Mute mute = new Mute((alert, now) -> {
      asked.incrementAndGet();
      return Optional.of(SILENCE);
    });
    assertThat(mute.check(Alerts.offRole(Alert.Status.FIRING, 1, true), Instant.now()))
        .contains(new Mute.Muted(Mute.SHADOW, null));
    assertThat(asked).hasValue(0);
    assertThat(mute.check(Alerts.offRole(Alert.Status.FIRING, 1, false), Instant.now())).map(Mute.Muted::outcome)
        .contains(Mute.SILENCED);
  }
}
