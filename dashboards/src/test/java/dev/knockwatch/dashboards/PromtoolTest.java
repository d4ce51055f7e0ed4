package dev.knockwatch.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Debian's promtool (package prometheus) on the shipped config and rules: check config, check rules, test rules. */
@Tag("integration")
class PromtoolTest {

  static final Path PROMETHEUS = Dashboards.ROOT.resolve("prometheus");

  static String promtool(Path dir, String... args) throws Exception {
    List<String> cmd = new java.util.ArrayList<>(List.of("promtool"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(String.join(" ", cmd) + "\n" + out).isZero();
    return out;
  }

  @Test
  void theScrapeConfigIsValid() throws Exception {
    assertThat(promtool(PROMETHEUS, "check", "config", "prometheus.yml"))
        .contains("SUCCESS: prometheus.yml is valid prometheus config file syntax");
  }

  @Test
  void theRulesAreValid() throws Exception {
    assertThat(promtool(PROMETHEUS, "check", "rules", "rules/knockwatch-pipeline.rules.yml"))
        .contains("SUCCESS: 8 rules found");
  }

  @Test
  void theRulesPassTheirUnitTests() throws Exception {
    assertThat(promtool(PROMETHEUS.resolve("rules"), "test", "rules", "knockwatch-pipeline.rules.test.yml"))
        .contains("SUCCESS");
  }
}
