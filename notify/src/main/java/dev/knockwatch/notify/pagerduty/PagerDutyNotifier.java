package dev.knockwatch.notify.pagerduty;

import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;

/** PagerDuty Events API v2 over the JDK's HTTP client. The routing key is in the body only. */
public final class PagerDutyNotifier implements Notifier {

  private final PagerDutyReceiver config;
  private final String publicUrl;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  public PagerDutyNotifier(PagerDutyReceiver config, String publicUrl) {
    this.config = config;
    this.publicUrl = publicUrl;
  }

  @Override
  public String name() {
    return config.name();
  }

  @Override
  public Result notify(Notification n) {
    String body = PagerDutyEvent.body(n, config.routingKey().reveal(), publicUrl).toString();
    HttpRequest req = HttpRequest.newBuilder(config.url()).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
    return Result.post(http, req);
  }
}
