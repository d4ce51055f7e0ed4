package dev.knockwatch.notify.spi;

import dev.knockwatch.events.Alert;
import java.util.List;

/**
 * What one receiver is asked to send: one alert, or a digest of the alerts a route groups
 * together. {@code event} says what happened to them.
 *
 * @param key the alert's fingerprint, or the group's key for a digest: the notification log's key
 * @param ref what the receiver returned for an earlier notification under this key (the Slack
 *     message's ts, to update it and reply in its thread), or null
 * @param possibleRepeat the log holds an intent to send this very notification and no outcome:
 *     the notifier stopped between a send and its record, so the receiver may have it already
 */
public record Notification(String receiver, Event event, String key, List<Alert> alerts, String ref,
                           boolean possibleRepeat) {

  public Notification(String receiver, Event event, String key, List<Alert> alerts, String ref) {
    this(receiver, event, key, alerts, ref, false);
  }

  /**
   * The same for every try of this notification, in this process or after a restart: receiver,
   * key, event, and each alert's status and count (webhooks get it as {@code Idempotency-Key}).
   */
  public String idempotencyKey() {
    StringBuilder b = new StringBuilder(receiver).append('\u0000').append(key).append('\u0000').append(event);
    for (Alert a : alerts) {
      b.append('\u0000').append(a.fingerprint()).append('/').append(a.status()).append('/').append(a.count());
    }
    return dev.knockwatch.events.Hashes.sha256Hex(b.toString(), 16);
  }

  public Notification withRef(String newRef) {
    return new Notification(receiver, event, key, alerts, newRef, possibleRepeat);
  }

  public Notification asPossibleRepeat() {
    return new Notification(receiver, event, key, alerts, ref, true);
  }

  public enum Event { FIRING, UPDATED, RESOLVED }

  public static Notification of(String receiver, Event event, Alert alert, String ref) {
    return new Notification(receiver, event, alert.fingerprint(), List.of(alert), ref);
  }

  public boolean isDigest() {
    return alerts.size() > 1;
  }

  public Alert first() {
    return alerts.get(0);
  }

  /** The event an alert's new state makes: resolved, firing the first time, else an update. */
  public static Event eventOf(Alert alert, boolean seenBefore) {
    if (alert.status() == Alert.Status.RESOLVED) {
      return Event.RESOLVED;
    }
    return seenBefore ? Event.UPDATED : Event.FIRING;
  }
}
