package dev.knockwatch.notify.webhook;

import dev.knockwatch.notify.spi.Receiver;
import dev.knockwatch.notify.spi.Secret;
import java.net.URI;

/**
 * A JSON POST of the notification, signed with HMAC-SHA256 over its timestamp and body when a
 * secret is set; {@code alertmanager} sends it in Alertmanager's webhook shape (version 4).
 */
public record WebhookReceiver(String name, URI url, Secret secret, boolean alertmanager) implements Receiver {
  public WebhookReceiver(String name, URI url, Secret secret) {
    this(name, url, secret, false);
  }
}
