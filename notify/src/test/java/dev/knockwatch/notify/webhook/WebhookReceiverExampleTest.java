package dev.knockwatch.notify.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.notify.Fixtures;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.Secret;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The webhook's signature against the receiving end docs/examples/webhook-receiver.mjs shows, run
 * on Node as a user would: the notifier's signed POST is accepted once (a retry of it is handled as
 * a repeat); a captured request replayed six minutes later, a changed body, another secret, and a
 * notifier whose clock is six minutes behind are all refused.
 */
@Tag("integration")
class WebhookReceiverExampleTest {

  static final String SECRET = "wh-s3cr3t-for-the-example";
  static final Path EXAMPLE = Path.of("../docs/examples/webhook-receiver.mjs");
  static Process receiver;
  static URI url;
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    ProcessBuilder pb = new ProcessBuilder("node", EXAMPLE.toString(), "0").redirectErrorStream(true);
    pb.environment().put("KNOCKWATCH_WEBHOOK_SECRET", SECRET);
    receiver = pb.start();
    BufferedReader out = new BufferedReader(new InputStreamReader(receiver.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    Matcher m = Pattern.compile("listening on (127\\.0\\.0\\.1:\\d+)").matcher(String.valueOf(line));
    assertThat(m.find()).as("the example's first line: %s", line).isTrue();
    url = URI.create("http://" + m.group(1) + "/hook");
    Thread drain = new Thread(() -> out.lines().forEach(l -> System.out.println("webhook-receiver.mjs: " + l)));
    drain.setDaemon(true);
    drain.start();
  }

  @AfterAll
  static void stop() throws InterruptedException {
    receiver.destroy();
    receiver.waitFor(10, TimeUnit.SECONDS);
  }

  private static Notification firing() {
    return Notification.of("hook", Notification.Event.FIRING, Fixtures.offRole(), null);
  }

  private static WebhookNotifier notifier(String secret, Clock clock) {
    return new WebhookNotifier(new WebhookReceiver("hook", url, new Secret(secret)), Fixtures.PUBLIC_URL, clock);
  }

  private static HttpResponse<String> post(long timestamp, String signature, byte[] body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(url).header("Content-Type", "application/json")
        .header(WebhookNotifier.TIMESTAMP, String.valueOf(timestamp)).header(WebhookNotifier.SIGNATURE, signature)
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theNotifiersSignedPostIsAcceptedOnceAndItsRetryIsARepeat() {
    WebhookNotifier n = notifier(SECRET, Clock.systemUTC());
    Notification once = Notification.of("hook", Notification.Event.UPDATED, Fixtures.offRole(), null);
    Notifier.Result first = n.notify(once);
    assertThat(first.delivered()).as(first.detail()).isTrue();
    assertThat(n.notify(once).delivered()).as("the same notification again (a retry): handled as a repeat").isTrue();
  }

  @Test
  void aCapturedRequestReplayedSixMinutesLaterIsRefused() throws Exception {
    byte[] body = WebhookNotifier.body(firing(), Fixtures.PUBLIC_URL);
    long sent = Instant.now().minus(Duration.ofMinutes(6)).getEpochSecond();
    HttpResponse<String> replay = post(sent, WebhookNotifier.signature(sent, body, SECRET), body);
    assertThat(replay.statusCode()).isEqualTo(401);
    assertThat(replay.body()).contains("more than 300 s from now");
    long now = Instant.now().getEpochSecond();
    assertThat(post(now, WebhookNotifier.signature(now, body, SECRET), body).statusCode())
        .as("the same body signed now").isEqualTo(204);
    HttpResponse<String> again = post(now, WebhookNotifier.signature(now, body, SECRET), body);
    assertThat(again.statusCode()).as("replayed within the five minutes: its signed idempotencyKey was handled")
        .isEqualTo(200);
  }

  @Test
  void aChangedBodyAMovedTimestampAndAnotherSecretAreRefused() throws Exception {
    byte[] body = WebhookNotifier.body(firing(), Fixtures.PUBLIC_URL);
    long now = Instant.now().getEpochSecond();
    String signature = WebhookNotifier.signature(now, body, SECRET);
    byte[] changed = new String(body, StandardCharsets.UTF_8).replace("\"page\"", "\"info\"").getBytes(StandardCharsets.UTF_8);
    assertThat(changed).isNotEqualTo(body);
    HttpResponse<String> tampered = post(now, signature, changed);
    assertThat(tampered.statusCode()).isEqualTo(401);
    assertThat(tampered.body()).contains("signature does not match");
    assertThat(post(now + 1, signature, body).statusCode()).as("the timestamp is signed too").isEqualTo(401);

    Notifier.Result wrongKey = notifier("another-secret", Clock.systemUTC()).notify(firing());
    assertThat(wrongKey.delivered()).isFalse();
    assertThat(wrongKey.retryable()).as("401: a final refusal").isFalse();
    assertThat(wrongKey.detail()).isEqualTo("HTTP 401");
  }

  @Test
  void aNotifierWhoseClockIsSixMinutesBehindIsRefused() {
    Clock behind = Clock.fixed(Instant.now().minus(Duration.ofMinutes(6)), ZoneOffset.UTC);
    assertThat(notifier(SECRET, behind).notify(firing()).detail()).isEqualTo("HTTP 401");
  }
}
