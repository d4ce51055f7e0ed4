package dev.knockwatch.notify.webhook;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.ReceiverType;
import dev.knockwatch.notify.spi.ReceiverValues;
import java.net.URI;
import java.util.List;

/** {@code type: webhook}: {@link WebhookReceiver}, sent by {@link WebhookNotifier}. */
public final class WebhookReceiverType implements ReceiverType<WebhookReceiver> {

  static final Key<String> URL = ReceiverValues.text("url", "http(s) URL", null, "where the JSON is posted")
      .requiredAs("is required");
  static final Key<String> SECRET = ReceiverValues.secretKey("secret",
      "signs each POST: X-Knockwatch-Signature, an HMAC-SHA256 of X-Knockwatch-Timestamp and the body");
  static final Key<String> SECRET_FILE = ReceiverValues.fileOf(SECRET);
  static final Key<String> FORMAT = ReceiverValues.text("format", "one of knockwatch, alertmanager", "knockwatch",
      "the body: knockwatch's notification, or Alertmanager's webhook (version 4)");

  @Override
  public String name() {
    return "webhook";
  }

  @Override
  public String doc() {
    return "a JSON POST of each notification, signed when it has a secret, in knockwatch's shape or Alertmanager's"
        + " webhook's";
  }

  @Override
  public Class<WebhookReceiver> receiverClass() {
    return WebhookReceiver.class;
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(URL, SECRET, SECRET_FILE, FORMAT);
  }

  @Override
  public WebhookReceiver receiver(String name, ReceiverValues v) {
    URI url = v.url(URL);
    String f = v.string(FORMAT);
    if (f != null && !f.equals("knockwatch") && !f.equals("alertmanager")) {
      v.problem(FORMAT, "format \"" + f + "\" (one of knockwatch, alertmanager)");
    }
    return new WebhookReceiver(name, url, v.secret(SECRET, SECRET_FILE), "alertmanager".equals(f));
  }

  @Override
  public String describe(WebhookReceiver w) {
    return "webhook " + w.url() + (w.alertmanager() ? " (Alertmanager's webhook format)" : "")
        + (w.secret() == null ? ", unsigned" : ", signed with " + w.secret());
  }

  @Override
  public Notifier notifier(WebhookReceiver receiver, Context context) {
    return new WebhookNotifier(receiver, context.publicUrl());
  }
}
