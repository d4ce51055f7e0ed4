package dev.knockwatch.notify.pipeline;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.Fixtures;

/** The off-role fixture in another state, for the stages' tests. */
final class Alerts {

  private Alerts() {}

  static Alert offRole(Alert.Status status, long count, Boolean shadow) {
    Alert a = Fixtures.offRole();
    return a.toBuilder().status(status).count(count).shadow(shadow).meta(null).build();
  }

  static NotificationLog.Entry sent(String status, long count, java.time.Instant at) {
    return new NotificationLog.Entry("slack", Fixtures.offRole().fingerprint(), NotificationLog.SENT, "firing", status,
        count, at, null, null);
  }
}
