package dev.knockwatch.notify.config;

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

  /** A JSON POST of the alert, signed with HMAC-SHA256 over the body when a secret is set. */
  record Webhook(String name, URI url, Secret secret) implements Receiver {}

  /** One line per notification on standard output. */
  record Console(String name) implements Receiver {}
}
