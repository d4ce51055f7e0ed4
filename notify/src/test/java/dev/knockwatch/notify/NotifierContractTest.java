package dev.knockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.notify.config.Receiver;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.Secret;
import dev.knockwatch.notify.pagerduty.PagerDutyNotifier;
import dev.knockwatch.notify.pipeline.Backoff;
import dev.knockwatch.notify.pipeline.ReceiverQueue;
import dev.knockwatch.notify.slack.SlackNotifier;
import dev.knockwatch.notify.webhook.WebhookNotifier;
import dev.knockwatch.testkit.HttpRecorder;
import dev.knockwatch.testkit.HttpRecorder.Answer;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * What every HTTP notifier must do, against a local server playing the receiver: deliver on
 * 2xx, ask for a retry on 429 and 5xx (with the Retry-After the receiver gave), not on other
 * 4xx, and never put its secret in a result or a log line. Then the retry stage in front of
 * them: it honours Retry-After and gives up at once on a refusal.
 */
class NotifierContractTest {

  static final String SECRET_PATH = "/services/T0/B0/s3cr3tW3bh00kT0k3n";
  static final String TOKEN = "xoxb-s3cr3t-b0t-t0k3n";
  static final String ROUTING_KEY = "R0UT1NGs3cr3tK3y";
  static final String HMAC_SECRET = "hm4c-s3cr3t";

  /** A notifier under test, the path it posts to, and its secret. */
  record Channel(String name, String path, String secret, Function<HttpRecorder, Notifier> make) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Channel> channels() {
    return Stream.of(
        new Channel("slack webhook", SECRET_PATH, SECRET_PATH, h -> new SlackNotifier(new Receiver.Slack("soc-slack",
            new Secret(h.url(SECRET_PATH)), null, null, h.url("/api/"), Duration.ZERO), Fixtures.PUBLIC_URL)),
        new Channel("slack bot", "/api/chat.postMessage", TOKEN, h -> new SlackNotifier(new Receiver.Slack("soc-bot",
            null, new Secret(TOKEN), "C0KNOCK", h.url("/api/"), Duration.ZERO), Fixtures.PUBLIC_URL)),
        new Channel("pagerduty", "/v2/enqueue", ROUTING_KEY, h -> new PagerDutyNotifier(new Receiver.PagerDuty("oncall",
            new Secret(ROUTING_KEY), URI.create(h.url("/v2/enqueue"))), Fixtures.PUBLIC_URL)),
        new Channel("webhook", "/hook", HMAC_SECRET, h -> new WebhookNotifier(new Receiver.Webhook("hook",
            URI.create(h.url("/hook")), new Secret(HMAC_SECRET)), Fixtures.PUBLIC_URL)));
  }

  HttpRecorder server;
  /** What the tests' log binding (slf4j-simple, on standard error) printed meanwhile. */
  final ByteArrayOutputStream logs = new ByteArrayOutputStream();
  PrintStream stderr;

  @BeforeEach
  void start() throws Exception {
    server = new HttpRecorder();
    stderr = System.err;
    System.setErr(new PrintStream(new java.io.OutputStream() {
      @Override
      public void write(int b) {
        logs.write(b);
        stderr.write(b);
      }
    }, true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void stop() {
    System.setErr(stderr);
    server.close();
  }

  private static Notification firing() {
    return Notification.of("r", Notification.Event.FIRING, Fixtures.offRole(), null);
  }

  @ParameterizedTest
  @MethodSource("channels")
  void deliversOn2xx(Channel c) {
    Notifier n = c.make().apply(server);
    assertThat(n.notify(firing()).delivered()).isTrue();
    assertThat(server.requests(c.path())).hasSize(1);
  }

  @ParameterizedTest
  @MethodSource("channels")
  void asksForARetryOn429WithRetryAfterAndOn5xx(Channel c) {
    Notifier n = c.make().apply(server);
    server.script(c.path(), new Answer(429, Map.of("Retry-After", "7"), ""), Answer.of(503));
    Notifier.Result limited = n.notify(firing());
    assertThat(limited.delivered()).isFalse();
    assertThat(limited.retryable()).isTrue();
    assertThat(limited.retryAfter()).isEqualTo(Duration.ofSeconds(7));
    Notifier.Result down = n.notify(firing());
    assertThat(down.retryable()).isTrue();
    assertThat(down.detail()).isEqualTo("HTTP 503");
  }

  @ParameterizedTest
  @MethodSource("channels")
  void doesNotRetryOtherClientErrors(Channel c) {
    Notifier n = c.make().apply(server);
    server.script(c.path(), Answer.of(400));
    Notifier.Result r = n.notify(firing());
    assertThat(r.delivered()).isFalse();
    assertThat(r.retryable()).isFalse();
  }

  @ParameterizedTest
  @MethodSource("channels")
  void neverPutsItsSecretInAResultOrALogLine(Channel c) {
    Notifier n = c.make().apply(server);
    server.script(c.path(), Answer.of(500), Answer.of(401));
    List<Notifier.Result> results = List.of(n.notify(firing()), n.notify(firing()));
    server.close(); // now the connection fails: I/O errors quote addresses
    Notifier.Result unreachable = n.notify(firing());
    assertThat(unreachable.retryable()).isTrue();
    for (Notifier.Result r : Stream.concat(results.stream(), Stream.of(unreachable)).toList()) {
      assertThat(String.valueOf(r)).doesNotContain(c.secret());
    }
    assertThat(logs.toString(StandardCharsets.UTF_8)).doesNotContain(c.secret());
    assertThat(n.toString()).doesNotContain(c.secret());
  }

  @Test
  void theWebhookIsSignedOverItsTimestampAndTheExactBody() throws Exception {
    Notifier n = channels().filter(c -> c.name().equals("webhook")).findFirst().orElseThrow().make().apply(server);
    n.notify(firing());
    HttpRecorder.Request r = server.requests("/hook").get(0);
    long timestamp = Long.parseLong(r.header(WebhookNotifier.TIMESTAMP));
    assertThat(timestamp).isCloseTo(java.time.Instant.now().getEpochSecond(), org.assertj.core.data.Offset.offset(60L));
    assertThat(r.header(WebhookNotifier.SIGNATURE)).isEqualTo(WebhookNotifier.signature(timestamp,
        r.body().getBytes(java.nio.charset.StandardCharsets.UTF_8), HMAC_SECRET)).startsWith("v1=");
    JsonNode alert = Json.MAPPER.readTree(r.body()).get("alerts").get(0);
    assertThat(alert.get("fingerprint").asText()).isEqualTo("032fd9e08f8acfe5");
    assertThat(alert.get("timelineUrl").asText()).isEqualTo(Fixtures.PUBLIC_URL + "/#command=" + alert.get("commandId").asText());
  }

  @Test
  void theSlackBotPostsOnceThenUpdatesAndRepliesInTheThreadWhenResolved() throws Exception {
    Notifier n = channels().filter(c -> c.name().equals("slack bot")).findFirst().orElseThrow().make().apply(server);
    Notifier.Result first = n.notify(firing());
    assertThat(first.ref()).matches("1764460800\\.\\d{6}");
    n.notify(Notification.of("r", Notification.Event.RESOLVED, Fixtures.offRole().resolved(), first.ref()));
    assertThat(server.requests()).extracting(HttpRecorder.Request::path)
        .containsExactly("/api/chat.postMessage", "/api/chat.update", "/api/chat.postMessage");
    assertThat(server.requests().get(2).body()).contains("thread_ts=" + first.ref());
    assertThat(server.requests().get(0).header("Authorization")).isEqualTo("Bearer " + TOKEN);
  }

  @Test
  void theRetryStageHonoursRetryAfterAndGivesUpAtOnceOnARefusal() throws Exception {
    Notifier n = channels().filter(c -> c.name().equals("pagerduty")).findFirst().orElseThrow().make().apply(server);
    server.script("/v2/enqueue", new Answer(429, Map.of("Retry-After", "1"), ""), Answer.of(502));
    try (ReceiverQueue q = new ReceiverQueue(n, Duration.ZERO, new Backoff(Duration.ofMillis(10), Duration.ofMillis(50),
        Duration.ofSeconds(30)))) {
      CompletableFuture<Notifier.Result> done = new CompletableFuture<>();
      q.submit(new ReceiverQueue.Task(firing(), done::complete));
      assertThat(done.get(20, TimeUnit.SECONDS).delivered()).isTrue();
      List<HttpRecorder.Request> tries = server.requests("/v2/enqueue");
      assertThat(tries).hasSize(3);
      assertThat(Duration.between(tries.get(0).at(), tries.get(1).at())).isGreaterThanOrEqualTo(Duration.ofMillis(950));

      server.script("/v2/enqueue", Answer.of(400));
      CompletableFuture<Notifier.Result> refused = new CompletableFuture<>();
      q.submit(new ReceiverQueue.Task(firing(), refused::complete));
      assertThat(refused.get(20, TimeUnit.SECONDS).retryable()).isFalse();
      assertThat(server.requests("/v2/enqueue")).hasSize(4);
    }
  }
}
