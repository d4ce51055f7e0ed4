package dev.knockwatch.notify.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.notify.Fixtures;
import dev.knockwatch.notify.spi.Notification;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ThrottleTest {

  private static final Duration REPEAT = Duration.ofMinutes(5);
  private static final NotificationLog.Entry LAST = Alerts.sent("firing", 3, Fixtures.T0);

  @Test
  void anUpdateWithinTheRepeatIntervalIsHeldBack() {
    assertThat(Throttle.holds(Notification.Event.UPDATED, LAST, REPEAT, Fixtures.T0.plusSeconds(299))).isTrue();
    assertThat(Throttle.holds(Notification.Event.UPDATED, LAST, REPEAT, Fixtures.T0.plusSeconds(300))).isFalse();
  }

  @Test
  void firingAndResolvedAlwaysGo() {
    assertThat(Throttle.holds(Notification.Event.FIRING, LAST, REPEAT, Fixtures.T0.plusSeconds(1))).isFalse();
    assertThat(Throttle.holds(Notification.Event.RESOLVED, LAST, REPEAT, Fixtures.T0.plusSeconds(1))).isFalse();
    assertThat(Throttle.holds(Notification.Event.UPDATED, null, REPEAT, Fixtures.T0)).isFalse();
  }
}
