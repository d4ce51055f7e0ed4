package dev.knockwatch.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.testkit.TestPorts;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Real Prometheus (Debian's package) on 127.0.0.1, scraping a running {@code knockwatch up} — guard
 * probes and the demo limit probe on the real srt included — with the shipped pipeline rules
 * loaded. Every PromQL expression of every dashboard must parse, and every panel of the SOC
 * overview must return data.
 */
@Tag("integration")
class PrometheusDashboardsTest {

  static final Path JAR = Dashboards.REPO.resolve("cli/target/knockwatch.jar");
  static final HttpClient HTTP = HttpClient.newHttpClient();

  static Path tmp;
  static Process up;
  static Process prometheus;
  static int promPort;

  static void await(String what, Duration timeout, java.util.function.BooleanSupplier done) throws Exception {
    Instant deadline = Instant.now().plus(timeout);
    while (!done.getAsBoolean()) {
      if (Instant.now().isAfter(deadline)) {
        throw new AssertionError("timed out waiting for " + what + "\nup's output:\n"
            + Files.readString(tmp.resolve("up.out")) + "\nup's log (tail):\n" + tail(tmp.resolve("up.err")));
      }
      Thread.sleep(250);
    }
  }

  static String tail(Path f) throws IOException {
    List<String> lines = Files.readAllLines(f);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }

  @BeforeAll
  static void start() throws Exception {
    assertThat(JAR).as("cli/target/knockwatch.jar (built by the cli module)").isRegularFile();
    tmp = Files.createTempDirectory("knockwatch-prometheus-test-");
    int metricsPort = TestPorts.free();
    up = new ProcessBuilder("java", "-Xmx768m", "-jar", JAR.toString(), "up",
        "--rules", Dashboards.REPO.resolve("alert-rules").toString(), "--var", tmp.resolve("var").toString(),
        "--logs", tmp.resolve("logs").toString(), "--metrics-port", Integer.toString(metricsPort),
        "--api-port", Integer.toString(TestPorts.free()), "--kafka-port", Integer.toString(TestPorts.free()))
        .directory(Dashboards.REPO.toFile())
        .redirectOutput(tmp.resolve("up.out").toFile()).redirectError(tmp.resolve("up.err").toFile()).start();
    // the guard probes ran and the demo command knocked: refusals, probe results and alerts exist
    await("up's probes", Duration.ofMinutes(4), () -> {
      try {
        String out = Files.readString(tmp.resolve("up.out"));
        return out.contains("knockwatch: guard probes:") && out.contains("knockwatch: limit probe:");
      } catch (IOException e) {
        return false;
      }
    });
    assertThat(Files.readString(tmp.resolve("up.out"))).contains("guard probes: 10 of 10 refused");

    promPort = TestPorts.free();
    Path config = tmp.resolve("prometheus.yml");
    Files.writeString(config, String.join("\n",
        "global:",
        "  scrape_interval: 1s",
        "  evaluation_interval: 1s",
        "rule_files:",
        "  - " + Dashboards.ROOT.resolve("prometheus/rules/knockwatch-pipeline.rules.yml"),
        "scrape_configs:",
        "  - job_name: knockwatch-up",
        "    static_configs:",
        "      - targets: [\"127.0.0.1:" + metricsPort + "\"]",
        ""));
    prometheus = new ProcessBuilder("prometheus", "--config.file=" + config, "--storage.tsdb.path=" + tmp.resolve("tsdb"),
        "--web.listen-address=127.0.0.1:" + promPort, "--log.level=warn")
        .redirectErrorStream(true).redirectOutput(tmp.resolve("prometheus.log").toFile()).start();
    // a few scrapes in: rate() needs two samples
    await("Prometheus scraping knockwatch", Duration.ofSeconds(60), () -> {
      JsonNode r = query("count_over_time(up{job=\"knockwatch-up\"}[1m])");
      return r != null && r.path("data").path("result").size() == 1
          && r.path("data").path("result").get(0).path("value").get(1).asDouble() >= 5;
    });
  }

  @AfterAll
  static void stop() throws Exception {
    for (Process p : new Process[] {prometheus, up}) {
      if (p != null) {
        p.destroy(); // SIGTERM: up stops cleanly
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      }
    }
  }

  /** The query API's answer, or null while Prometheus is not up yet. */
  static JsonNode query(String promql) {
    try {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + promPort
          + "/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8))).build(),
          HttpResponse.BodyHandlers.ofString());
      return Dashboards.JSON.readTree(r.body());
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  @Test
  void everyExpressionOfEveryDashboardParses() {
    List<String> failed = new ArrayList<>();
    int n = 0;
    for (Path f : Dashboards.files()) {
      for (Dashboards.Query q : Dashboards.queries(f)) {
        n++;
        JsonNode r = query(Dashboards.resolved(q.expr()));
        if (r == null || !"success".equals(r.path("status").asText())) {
          failed.add(q.dashboard() + " / " + q.panel() + ": " + q.expr() + " -> " + r);
        }
      }
    }
    assertThat(n).isGreaterThan(25);
    assertThat(failed).isEmpty();
  }

  @Test
  void everyPanelOfTheSocOverviewReturnsData() {
    List<String> empty = new ArrayList<>();
    for (Dashboards.Query q : Dashboards.queries(Dashboards.DIR.resolve("soc-overview.json"))) {
      JsonNode r = query(Dashboards.resolved(q.expr()));
      if (r == null || r.path("data").path("result").isEmpty()) {
        empty.add(q.panel() + ": " + q.expr());
      }
    }
    assertThat(empty).isEmpty();
    // and the wall held: no breach among the guard probes' results
    assertThat(query("sum(knockwatch_streams_probe_results_total{refused=\"false\"}) or vector(0)")
        .path("data").path("result").get(0).path("value").get(1).asDouble()).isZero();
  }

  @Test
  void theShippedPipelineRulesAreLoadedAndHealthy() throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + promPort
        + "/api/v1/rules")).build(), HttpResponse.BodyHandlers.ofString());
    JsonNode rules = Dashboards.JSON.readTree(r.body()).path("data").path("groups").get(0).path("rules");
    assertThat(rules).hasSize(8).allSatisfy(rule -> assertThat(rule.path("health").asText()).isEqualTo("ok"));
    // knockwatch itself is healthy: none of them fires
    assertThat(rules).allSatisfy(rule -> assertThat(rule.path("state").asText()).isEqualTo("inactive"));
  }
}
