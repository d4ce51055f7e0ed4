package dev.knockwatch.notify.pagerduty;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.ReceiverType;
import dev.knockwatch.notify.spi.ReceiverValues;
import dev.knockwatch.notify.spi.Secret;
import java.net.URI;
import java.util.List;

/** {@code type: pagerduty}: {@link PagerDutyReceiver}, sent by {@link PagerDutyNotifier}. */
public final class PagerDutyReceiverType implements ReceiverType<PagerDutyReceiver> {

  /** PagerDuty's Events API v2. */
  public static final URI EVENTS = URI.create("https://events.pagerduty.com/v2/enqueue");

  static final Key<String> ROUTING_KEY = ReceiverValues.secretKey("routingKey", "the integration's routing key");
  static final Key<String> ROUTING_KEY_FILE = ReceiverValues.fileOf(ROUTING_KEY);
  static final Key<String> URL = ReceiverValues.text("url", "http(s) URL", EVENTS.toString(), "the Events API's URL");

  @Override
  public String name() {
    return "pagerduty";
  }

  @Override
  public String doc() {
    return "PagerDuty's Events API v2: trigger with dedup_key = the alert's fingerprint, resolve with the same key";
  }

  @Override
  public Class<PagerDutyReceiver> receiverClass() {
    return PagerDutyReceiver.class;
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(ROUTING_KEY, ROUTING_KEY_FILE, URL);
  }

  @Override
  public PagerDutyReceiver receiver(String name, ReceiverValues v) {
    Secret key = v.secret(ROUTING_KEY, ROUTING_KEY_FILE);
    if (key == null && !v.hasProblems()) {
      v.problem("routingKey (or routingKeyFile) is required");
    }
    return new PagerDutyReceiver(name, key, v.url(URL));
  }

  @Override
  public String describe(PagerDutyReceiver p) {
    return "pagerduty " + p.url() + ", routing key " + p.routingKey();
  }

  @Override
  public Notifier notifier(PagerDutyReceiver receiver, Context context) {
    return new PagerDutyNotifier(receiver, context.publicUrl());
  }
}
