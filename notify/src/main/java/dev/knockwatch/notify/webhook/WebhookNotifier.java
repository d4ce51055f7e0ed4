package dev.knockwatch.notify.webhook;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ConsoleLink;
import dev.knockwatch.events.Json;
import dev.knockwatch.notify.Notification;
import dev.knockwatch.notify.Notifier;
import dev.knockwatch.notify.config.Receiver;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A JSON POST of the notification ({@code receiver}, {@code event}, {@code key}, {@code alerts};
 * each alert with its {@code timelineUrl} when the console's {@code publicUrl} is set), signed
 * when the receiver has a secret: {@value #SIGNATURE} = {@code sha256=} and the hex HMAC-SHA256 of
 * the exact body bytes, so the receiving end can check who sent it.
 */
public final class WebhookNotifier implements Notifier {

  public static final String SIGNATURE = "X-Knockwatch-Signature";
  /** The same for every try of one notification, across restarts: the receiver can drop a repeat. */
  public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  /** "true" when the notifier stopped between sending this notification and recording it. */
  public static final String POSSIBLE_REPEAT = "X-Knockwatch-Possible-Repeat";
  private final Receiver.Webhook config;
  private final String publicUrl;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  public WebhookNotifier(Receiver.Webhook config, String publicUrl) {
    this.config = config;
    this.publicUrl = publicUrl;
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

  public static String signature(byte[] body, String secret) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      return "sha256=" + HexFormat.of().formatHex(mac.doFinal(body));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
    }
  }

  @Override
  public Result notify(Notification n) {
    byte[] body = body(n, publicUrl);
    HttpRequest.Builder req = HttpRequest.newBuilder(config.url()).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").header(IDEMPOTENCY_KEY, n.idempotencyKey())
        .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (n.possibleRepeat()) {
      req.header(POSSIBLE_REPEAT, "true");
    }
    if (config.secret() != null) {
      req.header(SIGNATURE, signature(body, config.secret().reveal()));
    }
    return Result.post(http, req.build());
  }
}
