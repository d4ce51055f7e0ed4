package dev.knockwatch.notify.alertmanager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.notify.Fixtures;
import dev.knockwatch.notify.Notifiers;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.spi.AlertmanagerPayload;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The alertmanager receiver against Debian's real Alertmanager ({@code prometheus-alertmanager},
 * on 127.0.0.1, no cluster, a route to a receiver that sends nothing): alerts go through the
 * notifier receivers.yaml makes, and {@code amtool alert query} reads them back. A firing alert is
 * active with knockwatch's labels and annotations, and is no longer once resolved; what the agent
 * wrote (the contract's hostile and huge alerts) is read back exactly as knockwatch sent it:
 * stripped of control and bidi characters, and bounded.
 */
@Tag("integration")
class RealAlertmanagerTest {

  /** How long Alertmanager may take to start, or an alert to leave the active ones: a bound, never a measure. */
  static final Duration PATIENCE = Duration.ofSeconds(60);

  @TempDir static Path dir;
  static Process alertmanager;
  static String url;
  static Notifier notifier;

  @BeforeAll
  static void startAlertmanager() throws Exception {
    Files.writeString(dir.resolve("alertmanager.yml"), """
        route:
          receiver: "null"
        receivers:
          - name: "null"
        """);
    int port = dev.knockwatch.testkit.TestPorts.free();
    url = "http://127.0.0.1:" + port;
    alertmanager = new ProcessBuilder("prometheus-alertmanager", "--config.file=" + dir.resolve("alertmanager.yml"),
        "--storage.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port, "--cluster.listen-address=")
        .redirectErrorStream(true).redirectOutput(dir.resolve("alertmanager.log").toFile()).start();
    HttpClient http = HttpClient.newHttpClient();
    Instant deadline = Instant.now().plus(PATIENCE);
    while (!ready(http)) {
      assertThat(alertmanager.isAlive()).as("Alertmanager (pid %d) runs:\n%s", alertmanager.pid(), log()).isTrue();
      assertThat(Instant.now()).as("Alertmanager is ready\n%s", log()).isBefore(deadline);
      Thread.sleep(100);
    }
    Files.writeString(dir.resolve(ReceiversConfig.FILE), """
        publicUrl: %s
        receivers:
          - {name: soc-am, type: alertmanager, url: "${AM}"}
        routes:
          - receivers: [soc-am]
        """.formatted(Fixtures.PUBLIC_URL));
    notifier = Notifiers.create(ReceiversConfig.load(dir, Map.of("AM", url)),
        new PrintStream(PrintStream.nullOutputStream(), true, StandardCharsets.UTF_8)).get(0);
    assertThat(notifier).isInstanceOf(AlertmanagerNotifier.class);
  }

  @AfterAll
  static void stopAlertmanager() throws InterruptedException {
    if (alertmanager != null) {
      alertmanager.destroy(); // SIGTERM to its pid
      if (!alertmanager.waitFor(20, TimeUnit.SECONDS)) {
        alertmanager.destroyForcibly().waitFor();
      }
    }
  }

  private static boolean ready(HttpClient http) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create(url + "/-/ready")).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static String log() {
    try {
      return Files.readString(dir.resolve("alertmanager.log"));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** The active alerts {@code amtool alert query} reads for these matchers. */
  private static List<JsonNode> query(String... matchers) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("amtool", "alert", "query", "--alertmanager.url=" + url, "--output=json"));
    cmd.addAll(List.of(matchers));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(String.join(" ", cmd) + "\n" + out).isZero();
    List<JsonNode> alerts = new ArrayList<>();
    Json.MAPPER.readTree(out).forEach(alerts::add);
    return alerts;
  }

  private static void send(Notification.Event event, Alert a) {
    Notifier.Result r = notifier.notify(Notification.of("soc-am", event, a, null));
    assertThat(r.delivered()).as("%s", r).isTrue();
  }

  @Test
  void aFiringAlertIsActiveWithKnockwatchsLabelsAndAResolvedOneIsNot() throws Exception {
    Alert firing = Fixtures.offRole();
    Instant sent = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    send(Notification.Event.FIRING, firing);
    List<JsonNode> active = query("command=" + firing.commandId());
    assertThat(active).hasSize(1);
    JsonNode a = active.get(0);
    assertThat(a.at("/status/state").asText()).isEqualTo("active");
    assertThat(Json.MAPPER.convertValue(a.get("labels"), Map.class)).isEqualTo(Map.of(
        "alertname", "off-role-host", "severity", "page", "agent", "ci-runner-2", "role", "ci",
        "command", "DoorsDoorsDoorsDoors01", "source", "knockwatch"));
    assertThat(Json.MAPPER.convertValue(a.get("annotations"), Map.class)).isEqualTo(Map.of(
        "summary", firing.summary(), "target", "evil.example:443", "count", "1",
        "timeline", Fixtures.PUBLIC_URL + "/#command=DoorsDoorsDoorsDoors01"));
    assertThat(a.get("generatorURL").asText()).isEqualTo(Fixtures.PUBLIC_URL + "/#command=DoorsDoorsDoorsDoors01");
    assertThat(Instant.parse(a.get("startsAt").asText())).isEqualTo(Fixtures.T0);
    assertThat(Instant.parse(a.get("endsAt").asText())).as("a firing alert ends an hour after it was sent")
        .isAfterOrEqualTo(sent.plus(AlertmanagerPayload.FIRING_ENDS_AFTER));
    assertThat(a.at("/receivers/0/name").asText()).isEqualTo("null");

    send(Notification.Event.RESOLVED, firing.resolved());
    Instant deadline = Instant.now().plus(PATIENCE);
    while (!query("command=" + firing.commandId()).isEmpty()) {
      assertThat(Instant.now()).as("the resolved alert leaves the active ones").isBefore(deadline);
      Thread.sleep(100);
    }
  }

  @Test
  void whatTheAgentWroteIsReadBackAsKnockwatchSentItStrippedAndBounded() throws Exception {
    Alert hostile = Fixtures.hostile().toBuilder().meta(new Alert.Meta(List.of(), null,
        Map.of("team", "soc\"} {x=\"y\n<!here>"), Map.of())).build();
    Alert huge = Fixtures.offRole().toBuilder().commandId("HugeHugeHugeHugeHuge01").agentId("a".repeat(10_000))
        .summary("s".repeat(10_000)).build();
    for (Alert sent : List.of(hostile, huge)) {
      send(Notification.Event.FIRING, sent);
      List<JsonNode> read = query("command=" + sent.commandId());
      assertThat(read).hasSize(1);
      JsonNode expected = AlertmanagerPayload.alert(sent, Fixtures.PUBLIC_URL, Instant.now());
      assertThat(read.get(0).get("labels")).isEqualTo(expected.get("labels"));
      assertThat(read.get(0).get("annotations")).isEqualTo(expected.get("annotations"));
    }
    JsonNode h = query("command=" + hostile.commandId()).get(0);
    assertThat(h.at("/labels/agent").asText()).isEqualTo("<!channel> `agent`");
    assertThat(h.at("/labels/team").asText()).isEqualTo("soc\"} {x=\"y <!here>");
    assertThat(h.at("/annotations/target").asText()).isEqualTo("<http://evil.test|click>:80");
    assertThat(h.at("/annotations/summary").asText()).startsWith("command refused 7 times; last: ")
        .doesNotContain("\u202E", "\u0007");
    JsonNode g = query("command=" + huge.commandId()).get(0);
    assertThat(g.at("/labels/agent").asText()).hasSize(AlertmanagerPayload.MAX_LABEL_CHARS + 1).endsWith("…");
    assertThat(g.at("/annotations/summary").asText()).hasSize(AlertmanagerPayload.MAX_ANNOTATION_CHARS + 1)
        .endsWith("…");
  }
}
