package dev.knockwatch.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Debian's promtool (package prometheus) on the shipped config and rules: check config, check rules, test rules. */
@Tag("integration")
class PromtoolTest {

  static final Path PROMETHEUS = Dashboards.ROOT.resolve("prometheus");

  @Test
  void theScrapeConfigIsValid() throws Exception {
    assertThat(Dashboards.run(PROMETHEUS, "promtool", "check", "config", "prometheus.yml"))
        .contains("SUCCESS: prometheus.yml is valid prometheus config file syntax");
  }

  @Test
  void theRulesAreValid() throws Exception {
    assertThat(Dashboards.run(PROMETHEUS, "promtool", "check", "rules", "rules/knockwatch-pipeline.rules.yml"))
        .contains("SUCCESS: 8 rules found");
  }

  @Test
  void theRulesPassTheirUnitTests() throws Exception {
    assertThat(Dashboards.run(PROMETHEUS.resolve("rules"), "promtool", "test", "rules", "knockwatch-pipeline.rules.test.yml"))
        .contains("SUCCESS");
  }
}
