package dev.knockwatch.notify.alertmanager;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.ReceiverType;
import dev.knockwatch.notify.spi.ReceiverValues;
import java.util.List;

/** {@code type: alertmanager}: {@link AlertmanagerReceiver}, sent by {@link AlertmanagerNotifier}. */
public final class AlertmanagerReceiverType implements ReceiverType<AlertmanagerReceiver> {

  static final Key<String> URL = ReceiverValues.text("url", "http(s) URL", null,
      "the Alertmanager, with any path prefix it is served under")
      .requiredAs("is required (the Alertmanager, e.g. http://alertmanager:9093)");

  @Override
  public String name() {
    return "alertmanager";
  }

  @Override
  public String doc() {
    return "the SOC's Alertmanager: each alert posted to its /api/v2/alerts, to route, group, inhibit and silence there";
  }

  @Override
  public Class<AlertmanagerReceiver> receiverClass() {
    return AlertmanagerReceiver.class;
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(URL);
  }

  @Override
  public AlertmanagerReceiver receiver(String name, ReceiverValues v) {
    return new AlertmanagerReceiver(name, v.url(URL));
  }

  @Override
  public String describe(AlertmanagerReceiver a) {
    return "alertmanager " + a.alerts();
  }

  @Override
  public Notifier notifier(AlertmanagerReceiver receiver, Context context) {
    return new AlertmanagerNotifier(receiver, context.publicUrl());
  }
}
