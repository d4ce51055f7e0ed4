package dev.knockwatch.notify.webhook;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ConsoleLink;
import dev.knockwatch.events.Json;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.AlertmanagerPayload;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A JSON POST of the notification ({@code receiver}, {@code event}, {@code key}, {@code alerts};
 * each alert with its {@code timelineUrl} when the console's {@code publicUrl} is set), signed
 * when the receiver has a secret: {@value #TIMESTAMP} is the send time in Unix seconds and
 * {@value #SIGNATURE} = {@code v1=} and the hex HMAC-SHA256 of {@code TIMESTAMP.BODY} (the header's
 * digits, a dot, the exact body bytes), as Slack and Stripe sign theirs. The receiving end checks
 * who sent it and refuses a timestamp older than it allows (a captured request replayed later
 * carries its old time, which the signature binds): docs/examples/webhook-receiver.mjs, five
 * minutes.
 */
public final class WebhookNotifier implements Notifier {

  public static final String SIGNATURE = "X-Knockwatch-Signature";
  public static final String TIMESTAMP = "X-Knockwatch-Timestamp";
  /** The same for every try of one notification, across restarts: the receiver can drop a repeat. */
  public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  /** "true" when the notifier stopped between sending this notification and recording it. */
  public static final String POSSIBLE_REPEAT = "X-Knockwatch-Possible-Repeat";
  private final WebhookReceiver config;
  private final String publicUrl;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Clock clock;

  public WebhookNotifier(WebhookReceiver config, String publicUrl) {
    this(config, publicUrl, Clock.systemUTC());
  }

  WebhookNotifier(WebhookReceiver config, String publicUrl, Clock clock) {
    this.config = config;
    this.publicUrl = publicUrl;
    this.clock = clock;
  }

  @Override
  public String name() {
    return config.name();
  }

  public static byte[] body(Notification n, String publicUrl) {
    ObjectNode body = Json.MAPPER.createObjectNode();
    body.put("receiver", n.receiver());
    body.put("event", n.event().name().toLowerCase(Locale.ROOT));
    body.put("key", n.key());
    body.put("idempotencyKey", n.idempotencyKey());
    if (n.possibleRepeat()) {
      body.put("possibleRepeat", true);
    }
    ArrayNode alerts = body.putArray("alerts");
    for (Alert a : n.alerts()) {
      ObjectNode alert = alerts.addObject().setAll((ObjectNode) Json.MAPPER.valueToTree(a));
      if (publicUrl != null && a.commandId() != null) {
        alert.put("timelineUrl", ConsoleLink.command(publicUrl, a.commandId()));
      }
    }
    return body.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** {@code v1=} and the hex HMAC-SHA256, keyed by {@code secret}, of {@code TIMESTAMP.BODY}. */
  public static String signature(long timestamp, byte[] body, String secret) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      mac.update((timestamp + ".").getBytes(StandardCharsets.US_ASCII));
      return "v1=" + HexFormat.of().formatHex(mac.doFinal(body));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
    }
  }

  @Override
  public Result notify(Notification n) {
    byte[] body = config.alertmanager()
        ? AlertmanagerPayload.webhook(n, publicUrl, clock.instant()).toString().getBytes(StandardCharsets.UTF_8)
        : body(n, publicUrl);
    HttpRequest.Builder req = HttpRequest.newBuilder(config.url()).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").header(IDEMPOTENCY_KEY, n.idempotencyKey())
        .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (n.possibleRepeat()) {
      req.header(POSSIBLE_REPEAT, "true");
    }
    if (config.secret() != null) {
      long timestamp = clock.instant().getEpochSecond();
      req.header(TIMESTAMP, String.valueOf(timestamp)).header(SIGNATURE, signature(timestamp, body, config.secret().reveal()));
    }
    return Result.post(http, req.build());
  }
}
