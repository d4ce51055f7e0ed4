package dev.knockwatch.notify.pipeline;

import dev.knockwatch.events.Alert;
import java.util.Locale;

/**
 * dedup: whether a receiver was already sent this alert in this state, by the notification log
 * (across restarts too, and across notifiers sharing a group): the same status with at least this
 * count (an alert read again after a restart), or a resolution of an alert it was never sent as
 * firing.
 */
public final class Dedup {

  private Dedup() {}

  /** {@code last}: what the receiver was last sent for the alert, or null. */
  public static boolean alreadySent(Alert alert, NotificationLog.Entry last) {
    if (last == null) {
      return alert.status() == Alert.Status.RESOLVED;
    }
    String status = alert.status().name().toLowerCase(Locale.ROOT);
    return last.status().equals(status) && (alert.status() == Alert.Status.RESOLVED || last.count() >= alert.count());
  }
}
