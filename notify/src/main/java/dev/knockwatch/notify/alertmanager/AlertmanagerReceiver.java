package dev.knockwatch.notify.alertmanager;

import dev.knockwatch.notify.spi.Receiver;
import java.net.URI;

/** An Alertmanager: the alerts posted to {@code url}'s {@code /api/v2/alerts}, to route, group and inhibit there. */
public record AlertmanagerReceiver(String name, URI url) implements Receiver {
  /** {@code url}'s {@code api/v2/alerts}, below any path prefix the Alertmanager is served under. */
  public URI alerts() {
    String base = url.toString();
    return URI.create((base.endsWith("/") ? base : base + "/") + "api/v2/alerts");
  }
}
