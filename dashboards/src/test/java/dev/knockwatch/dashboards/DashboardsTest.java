package dev.knockwatch.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.ConsoleLink;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/** The dashboards are well formed, provisioned, and query only metrics that knockwatch exports. */
class DashboardsTest {

  static final Pattern METRIC = Pattern.compile("\\b(knockwatch_[a-z0-9_]+)");

  @Test
  void theThreeDashboardsAreThereWithUniqueIdsAndTheProvisionedDatasource() throws IOException {
    assertThat(Dashboards.files()).extracting(p -> p.getFileName().toString())
        .containsExactly("command-drill-down.json", "pipeline-health.json", "soc-overview.json");
    Object ds = new Yaml().load(Files.readString(Dashboards.ROOT.resolve("grafana/provisioning/datasources/prometheus.yaml")));
    String uid = (String) ((java.util.Map<?, ?>) ((List<?>) ((java.util.Map<?, ?>) ds).get("datasources")).get(0)).get("uid");
    Set<String> uids = new HashSet<>();
    for (Path f : Dashboards.files()) {
      JsonNode d = Dashboards.read(f);
      assertThat(uids.add(d.path("uid").asText())).as(f + " uid").isTrue();
      for (JsonNode p : d.path("panels")) {
        if (p.path("type").asText().equals("text")) {
          continue;
        }
        assertThat(p.path("datasource").path("uid").asText()).as(f + ": " + p.path("title")).isEqualTo(uid);
        assertThat(p.path("targets")).as(f + ": " + p.path("title")).isNotEmpty();
      }
    }
  }

  @Test
  void everyMetricADashboardQueriesIsOneKnockwatchExports() throws IOException {
    String sources;
    try (Stream<Path> s = Files.walk(Dashboards.REPO)) {
      sources = s.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/"))
          .map(p -> {
            try {
              return Files.readString(p);
            } catch (IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          }).collect(Collectors.joining("\n"));
    }
    Set<String> used = new HashSet<>();
    for (Path f : Dashboards.files()) {
      for (Dashboards.Query q : Dashboards.queries(f)) {
        Matcher m = METRIC.matcher(q.expr());
        while (m.find()) {
          used.add(m.group(1).replaceAll("_(bucket|sum|count)$", ""));
        }
      }
    }
    assertThat(used).hasSizeGreaterThan(15)
        .allSatisfy(name -> assertThat(sources).as("a metric named " + name).contains("\"" + name + "\""));
  }

  @Test
  void theDrillDownLinksToTheConsoleAndNeverLabelsByCommandOrHost() throws IOException {
    JsonNode d = Dashboards.read(Dashboards.DIR.resolve("command-drill-down.json"));
    assertThat(d.path("templating").path("list")).extracting(v -> v.path("name").asText())
        .contains("role", "agent", "command", "console");
    // the form every page links with (ConsoleLink), written out by hand in Grafana's link
    assertThat(d.path("links").toString()).contains("${console}/" + ConsoleLink.COMMAND + "${command}",
        "${console}/#agent=${agent}&role=${role}");
    for (Path f : Dashboards.files()) {
      for (Dashboards.Query q : Dashboards.queries(f)) {
        assertThat(q.expr()).as(q.panel()).doesNotContain("commandId", "command_id", "host=", "agent_id");
      }
    }
  }
}
