package dev.knockwatch.notify.pipeline;

import dev.knockwatch.notify.spi.Notification;
import java.time.Duration;
import java.time.Instant;

/**
 * throttle: a count update within its route's {@code repeatInterval} of the last notification of
 * the alert is held back (recorded as throttled, not sent); firing and resolved always go.
 */
public final class Throttle {

  private Throttle() {}

  /** {@code last}: what the receiver was last sent for the alert (null: nothing, so nothing holds). */
  public static boolean holds(Notification.Event event, NotificationLog.Entry last, Duration repeatInterval, Instant now) {
    return event == Notification.Event.UPDATED && last != null
        && Duration.between(last.at(), now).compareTo(repeatInterval) < 0;
  }
}
