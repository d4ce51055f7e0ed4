package dev.knockwatch.notify.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.Fixtures;
import org.junit.jupiter.api.Test;

class DedupTest {

  @Test
  void theSameStateIsNotSentTwice() {
    NotificationLog.Entry firing3 = Alerts.sent("firing", 3, Fixtures.T0);
    assertThat(Dedup.alreadySent(Alerts.offRole(Alert.Status.FIRING, 3, null), firing3)).isTrue();
    assertThat(Dedup.alreadySent(Alerts.offRole(Alert.Status.FIRING, 2, null), firing3)).as("read again after a restart").isTrue();
    assertThat(Dedup.alreadySent(Alerts.offRole(Alert.Status.FIRING, 4, null), firing3)).as("a higher count").isFalse();
    assertThat(Dedup.alreadySent(Alerts.offRole(Alert.Status.RESOLVED, 3, null), firing3)).isFalse();
    assertThat(Dedup.alreadySent(Alerts.offRole(Alert.Status.RESOLVED, 9, null), Alerts.sent("resolved", 3, Fixtures.T0)))
        .isTrue();
  }

  @Test
  void aResolutionOfAnAlertNeverSentFiringIsNotSent() {
    assertThat(Dedup.alreadySent(Alerts.offRole(Alert.Status.RESOLVED, 1, null), null)).isTrue();
    assertThat(Dedup.alreadySent(Alerts.offRole(Alert.Status.FIRING, 1, null), null)).isFalse();
  }
}
