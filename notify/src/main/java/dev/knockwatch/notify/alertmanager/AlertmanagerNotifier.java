package dev.knockwatch.notify.alertmanager;

import dev.knockwatch.notify.spi.AlertmanagerPayload;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;

/**
 * Hands the alerts to an Alertmanager ({@code POST /api/v2/alerts}), which then routes, groups,
 * inhibits and silences them with the SOC's own configuration. knockwatch's routes decide only
 * that this receiver gets them.
 */
public final class AlertmanagerNotifier implements Notifier {

  private final AlertmanagerReceiver config;
  private final String publicUrl;
  private final Clock clock;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  public AlertmanagerNotifier(AlertmanagerReceiver config, String publicUrl) {
    this(config, publicUrl, Clock.systemUTC());
  }

  AlertmanagerNotifier(AlertmanagerReceiver config, String publicUrl, Clock clock) {
    this.config = config;
    this.publicUrl = publicUrl;
    this.clock = clock;
  }

  @Override
  public String name() {
    return config.name();
  }

  @Override
  public Result notify(Notification n) {
    byte[] body = AlertmanagerPayload.postableAlerts(n, publicUrl, clock.instant()).toString()
        .getBytes(StandardCharsets.UTF_8);
    return Result.post(http, HttpRequest.newBuilder(config.alerts()).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build());
  }
}
