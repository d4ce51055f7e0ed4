package dev.knockwatch.notify.config;

import dev.knockwatch.notify.spi.Secret;
import java.net.URI;
import java.time.Duration;

/** One receiver of receivers.yaml: where notifications go. Secrets print as {@value Secret#MASK}. */
public sealed interface Receiver {

  String name();

  /**
   * Slack: an incoming webhook, or a bot token and a channel (chat.postMessage, then chat.update
   * and a thread reply). {@code apiUrl} is the Web API's URL prefix (a local server in tests);
   * {@code minInterval} spaces messages (Slack allows about one a second per channel).
   */
  record Slack(String name, Secret webhookUrl, Secret botToken, String channel, String apiUrl, Duration minInterval)
      implements Receiver {}

  /** PagerDuty Events API v2. */
  record PagerDuty(String name, Secret routingKey, URI url) implements Receiver {}

  /**
   * A JSON POST of the notification, signed with HMAC-SHA256 over its timestamp and body when a
   * secret is set; {@code alertmanager} sends it in Alertmanager's webhook shape (version 4).
   */
  record Webhook(String name, URI url, Secret secret, boolean alertmanager) implements Receiver {
    public Webhook(String name, URI url, Secret secret) {
      this(name, url, secret, false);
    }
  }

  /** An Alertmanager: the alerts posted to {@code url}'s {@code /api/v2/alerts}, to route, group and inhibit there. */
  record Alertmanager(String name, URI url) implements Receiver {
    /** {@code url}'s {@code api/v2/alerts}, below any path prefix the Alertmanager is served under. */
    public URI alerts() {
      String base = url.toString();
      return URI.create((base.endsWith("/") ? base : base + "/") + "api/v2/alerts");
    }
  }

  /** One line per notification on standard output. */
  record Console(String name) implements Receiver {}
}
