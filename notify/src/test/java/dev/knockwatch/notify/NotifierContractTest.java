package dev.knockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.notify.config.ReceiverTypes;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.pipeline.Backoff;
import dev.knockwatch.notify.pipeline.ReceiverQueue;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.ReceiverType;
import dev.knockwatch.notify.webhook.WebhookNotifier;
import dev.knockwatch.testkit.HttpRecorder;
import dev.knockwatch.testkit.HttpRecorder.Answer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What every receiver type the registry lists must do ({@link ReceiverTypes#all}; a type with no
 * setup here fails {@link #everyReceiverTypeHasASetup}), each receiver made as receivers.yaml makes
 * it: through its type's keys, then its notifier. Against a local server playing the receiver, an
 * HTTP notifier delivers on 2xx, asks for a retry on 429 and 5xx (with the Retry-After the receiver
 * gave), not on other 4xx, and never puts its secret in a result or a log line. Every notifier,
 * HTTP or not, sends what the agent wrote escaped, so that it cannot break the payload, and,
 * where a person reads it, stripped of control and bidi characters and bounded. Then the retry
 * stage in front of them: it honours Retry-After and gives up at once on a refusal.
 */
class NotifierContractTest {

  static final String SECRET_PATH = "/services/T0/B0/s3cr3tW3bh00kT0k3n";
  static final String TOKEN = "xoxb-s3cr3t-b0t-t0k3n";
  static final String ROUTING_KEY = "R0UT1NGs3cr3tK3y";
  static final String HMAC_SECRET = "hm4c-s3cr3t";
  /** The length of the summary and of the agent in a huge alert: far past every channel's bound. */
  static final int HUGE = 100_000;
  /** The most a notification of a huge alert may send where a person reads it: less than the alert. */
  static final int MAX_SENT_CHARS = 16_000;

  /** Who reads what a receiver is sent: a person (stripped and bounded), or a program (the alert as it is, escaped). */
  enum Reader { PERSON, PROGRAM }

  /**
   * A receiver under test: its type, its keys in receivers.yaml's flow mapping ({@code ${RECORDER}}
   * is the local server, {@code ${SECRET}} its secret, {@code ${SECRET_FILE}} a file holding it), the path it posts to (null for one that is not HTTP),
   * and who reads what it sends.
   */
  record Setup(String type, String label, String keys, String path, String secret, Reader reader) {
    boolean http() {
      return path != null;
    }

    @Override
    public String toString() {
      return label;
    }
  }

  /** Every receiver type's setups: the test of a type the registry lists and this leaves out fails. */
  static final List<Setup> SETUPS = List.of(
      new Setup("slack", "slack webhook", "webhookUrl: \"${RECORDER}" + SECRET_PATH + "\"", SECRET_PATH, SECRET_PATH,
          Reader.PERSON),
      new Setup("slack", "slack bot", "botToken: \"${SECRET}\", channel: C0KNOCK, apiUrl: \"${RECORDER}/api/\"",
          "/api/chat.postMessage", TOKEN, Reader.PERSON),
      new Setup("pagerduty", "pagerduty", "routingKey: \"${SECRET}\", url: \"${RECORDER}/v2/enqueue\"",
          "/v2/enqueue", ROUTING_KEY, Reader.PERSON),
      new Setup("webhook", "webhook", "url: \"${RECORDER}/hook\", secretFile: \"${SECRET_FILE}\"", "/hook",
          HMAC_SECRET, Reader.PROGRAM),
      new Setup("webhook", "webhook, Alertmanager's format", "url: \"${RECORDER}/am-hook\", format: alertmanager",
          "/am-hook", null, Reader.PERSON),
      new Setup("alertmanager", "alertmanager", "url: \"${RECORDER}/am\"", "/am/api/v2/alerts", null,
          Reader.PERSON),
      new Setup("console", "console (not HTTP)", "", null, null, Reader.PERSON));

  static Stream<Setup> setups() {
    return ReceiverTypes.all().stream().flatMap(t -> SETUPS.stream().filter(s -> s.type().equals(t.name())));
  }

  static Stream<Setup> httpSetups() {
    return setups().filter(Setup::http);
  }

  static Stream<Setup> setupsWithASecret() {
    return setups().filter(s -> s.secret() != null);
  }

  @TempDir Path dir;
  HttpRecorder server;
  final ByteArrayOutputStream console = new ByteArrayOutputStream();
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

  /** The receiver of {@code s} as receivers.yaml declares it, and its notifier. */
  Notifier make(Setup s) throws IOException {
    Path secretFile = dir.resolve("secret");
    Files.writeString(secretFile, s.secret() == null ? "" : s.secret() + "\n");
    Files.writeString(dir.resolve(ReceiversConfig.FILE), """
        publicUrl: %s
        receivers:
          - {name: r, type: %s%s}
        routes:
          - receivers: [r]
        """.formatted(Fixtures.PUBLIC_URL, s.type(), s.keys().isEmpty() ? "" : ", " + s.keys()));
    ReceiversConfig config = ReceiversConfig.load(dir, Map.of("RECORDER", server.url(""),
        "SECRET", s.secret() == null ? "" : s.secret(), "SECRET_FILE", secretFile.toString()));
    return Notifiers.create(config, new PrintStream(console, true, StandardCharsets.UTF_8)).get(0);
  }

  private static Notification firing() {
    return Notification.of("r", Notification.Event.FIRING, Fixtures.offRole(), null);
  }

  /** What {@code s} sent last: the body posted, or the line printed. */
  private String sent(Setup s) {
    if (!s.http()) {
      return console.toString(StandardCharsets.UTF_8);
    }
    List<HttpRecorder.Request> got = server.requests(s.path());
    assertThat(got).as("what %s sent", s).isNotEmpty();
    return got.get(got.size() - 1).body();
  }

  /**
   * Every string a receiver reads in what it was sent: the text values of a JSON body (of each
   * form field's JSON too, as the Slack bot's {@code blocks}), or the printed line. A body that does
   * not parse fails: nothing the agent wrote may break it.
   */
  private static List<String> texts(Setup s, String sent) throws JsonProcessingException {
    List<String> out = new ArrayList<>();
    if (!s.http()) {
      out.add(sent);
    } else if (sent.startsWith("{") || sent.startsWith("[")) {
      collect(Json.MAPPER.readTree(sent), out);
    } else {
      for (String pair : sent.split("&")) {
        String value = URLDecoder.decode(pair.substring(pair.indexOf('=') + 1), StandardCharsets.UTF_8);
        if (value.startsWith("{") || value.startsWith("[")) {
          collect(Json.MAPPER.readTree(value), out);
        } else {
          out.add(value);
        }
      }
    }
    return out;
  }

  private static void collect(JsonNode node, List<String> out) {
    if (node.isTextual()) {
      out.add(node.asText());
    }
    node.fieldNames().forEachRemaining(out::add);
    node.forEach(child -> collect(child, out));
  }

  @Test
  void everyReceiverTypeHasASetup() {
    assertThat(new TreeSet<>(SETUPS.stream().map(Setup::type).toList()))
        .as("the receiver types the registry lists, each with a setup here")
        .isEqualTo(new TreeSet<>(ReceiverTypes.all().stream().map(ReceiverType::name).toList()));
  }

  @ParameterizedTest
  @MethodSource("setups")
  void deliversTheAlert(Setup s) throws Exception {
    Notifier n = make(s);
    assertThat(n.name()).isEqualTo("r");
    assertThat(n.notify(firing()).delivered()).isTrue();
    assertThat(sent(s)).contains(Fixtures.offRole().commandId());
    if (s.http()) {
      assertThat(server.requests(s.path())).hasSize(1);
    }
  }

  @ParameterizedTest
  @MethodSource("httpSetups")
  void asksForARetryOn429WithRetryAfterAndOn5xx(Setup s) throws Exception {
    Notifier n = make(s);
    server.script(s.path(), new Answer(429, Map.of("Retry-After", "7"), ""), Answer.of(503));
    Notifier.Result limited = n.notify(firing());
    assertThat(limited.delivered()).isFalse();
    assertThat(limited.retryable()).isTrue();
    assertThat(limited.retryAfter()).isEqualTo(Duration.ofSeconds(7));
    Notifier.Result down = n.notify(firing());
    assertThat(down.retryable()).isTrue();
    assertThat(down.detail()).isEqualTo("HTTP 503");
  }

  @ParameterizedTest
  @MethodSource("httpSetups")
  void doesNotRetryOtherClientErrors(Setup s) throws Exception {
    Notifier n = make(s);
    server.script(s.path(), Answer.of(400));
    Notifier.Result r = n.notify(firing());
    assertThat(r.delivered()).isFalse();
    assertThat(r.retryable()).isFalse();
  }

  @ParameterizedTest
  @MethodSource("setupsWithASecret")
  void neverPutsItsSecretInAResultOrALogLine(Setup s) throws Exception {
    Notifier n = make(s);
    server.script(s.path(), Answer.of(500), Answer.of(401));
    List<Notifier.Result> results = List.of(n.notify(firing()), n.notify(firing()));
    server.close(); // now the connection fails: I/O errors quote addresses
    Notifier.Result unreachable = n.notify(firing());
    assertThat(unreachable.retryable()).isTrue();
    for (Notifier.Result r : Stream.concat(results.stream(), Stream.of(unreachable)).toList()) {
      assertThat(String.valueOf(r)).doesNotContain(s.secret());
    }
    assertThat(logs.toString(StandardCharsets.UTF_8)).doesNotContain(s.secret());
    assertThat(n.toString()).doesNotContain(s.secret());
  }

  /**
   * The agent's mentions, link syntax, bidi override and bell: the payload still parses, and a
   * person's receiver gets no control or bidi character; a program's gets the alert exactly.
   */
  @ParameterizedTest
  @MethodSource("setups")
  void whatTheAgentWroteCannotBreakThePayload(Setup s) throws Exception {
    Alert hostile = Fixtures.hostile();
    assertThat(make(s).notify(Notification.of("r", Notification.Event.FIRING, hostile, null)).delivered()).isTrue();
    String sent = sent(s);
    List<String> texts = texts(s, sent);
    if (s.reader() == Reader.PROGRAM) {
      JsonNode alert = Json.MAPPER.readTree(sent).get("alerts").get(0);
      assertThat(alert.get("summary").asText()).isEqualTo(hostile.summary());
      assertThat(alert.get("agentId").asText()).isEqualTo(hostile.agentId());
    } else {
      assertThat(texts).as("what %s sent", s).isNotEmpty()
          .allSatisfy(t -> assertThat(t).doesNotContain("\u202E", "\u0007"));
    }
    if (!s.http()) {
      assertThat(sent).as("one line").hasLineCount(1);
    }
  }

  /** A huge summary and agent: cut where a person reads them, whole where a program does. */
  @ParameterizedTest
  @MethodSource("setups")
  void aHugeAlertIsBoundedWhereAPersonReadsIt(Setup s) throws Exception {
    Alert huge = Fixtures.offRole().toBuilder().agentId("a".repeat(HUGE)).summary("s".repeat(HUGE)).build();
    assertThat(make(s).notify(Notification.of("r", Notification.Event.FIRING, huge, null)).delivered()).isTrue();
    String sent = sent(s);
    if (s.reader() == Reader.PROGRAM) {
      assertThat(Json.MAPPER.readTree(sent).at("/alerts/0/summary").asText()).isEqualTo(huge.summary());
    } else {
      assertThat(sent.length()).as("what %s sent", s).isLessThanOrEqualTo(MAX_SENT_CHARS);
    }
  }

  @Test
  void theWebhookIsSignedOverItsTimestampAndTheExactBody() throws Exception {
    Notifier n = make(setup("webhook"));
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
    Notifier n = make(setup("slack bot"));
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
    Notifier n = make(setup("pagerduty"));
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

  private static Setup setup(String label) {
    return SETUPS.stream().filter(s -> s.label().equals(label)).findFirst().orElseThrow();
  }
}
