package dev.knockwatch.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * Debian's amtool (package prometheus-alertmanager) on the shipped Alertmanager config: it is
 * valid, and every pipeline-health alert of the Prometheus rules routes to the on-call receiver.
 */
@Tag("integration")
class AmtoolTest {

  static final Path ALERTMANAGER = Dashboards.ROOT.resolve("alertmanager");

  static String amtool(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("amtool"));
    cmd.addAll(List.of(args));
    return Dashboards.run(ALERTMANAGER, cmd.toArray(new String[0]));
  }

  @Test
  void theConfigIsValid() throws Exception {
    assertThat(amtool("check-config", "alertmanager.yml")).contains("SUCCESS").contains("1 receivers");
  }

  @Test
  @SuppressWarnings("unchecked")
  void everyPipelineAlertReachesTheOnCallReceiver() throws Exception {
    Map<String, Object> rules = new Yaml().load(Files.readString(
        Dashboards.ROOT.resolve("prometheus/rules/knockwatch-pipeline.rules.yml")));
    List<String> alerts = new ArrayList<>();
    for (Map<String, Object> group : (List<Map<String, Object>>) rules.get("groups")) {
      for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
        Map<String, Object> labels = (Map<String, Object>) rule.get("labels");
        String name = (String) rule.get("alert");
        alerts.add(name);
        assertThat(amtool("config", "routes", "test", "--config.file=alertmanager.yml",
            "--verify.receivers=pipeline-oncall", "alertname=" + name, "severity=" + labels.get("severity"),
            "job=knockwatch-ingest")).as(name).contains("pipeline-oncall");
      }
    }
    assertThat(alerts).hasSize(8);
  }
}
