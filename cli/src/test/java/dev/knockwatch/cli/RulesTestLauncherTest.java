package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./knockwatch rules test}, {@code rules check} and {@code routes test} as the README runs
 * them, from a checkout: the shipped rules pass their shipped tests, and the same tests fail,
 * saying what differs, once the rules are changed under them.
 */
@Tag("integration")
class RulesTestLauncherTest {

  static final String SHIPPED_TESTS = "alert-rules/tests/shipped.test.yaml";

  @TempDir static Path dir;
  static Path checkout;

  @BeforeAll
  static void copy() throws Exception {
    checkout = Launched.copyOfRepository(dir.resolve("checkout"));
  }

  /** What a finished launch said. */
  record Ran(int exitCode, String out, String err) {}

  private static Ran run(String name, String... args) throws Exception {
    return runWith(name, Map.of(), args);
  }

  @Test
  void theShippedRulesPassTheirShippedTests() throws Exception {
    Ran r = run("pass", "rules", "test", SHIPPED_TESTS);
    assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
    assertThat(r.out()).contains("  ok    a host outside the agent's role pages at the first refusal")
        .doesNotContain("FAIL").endsWith("15 tests, 0 failed\n");
  }

  @Test
  void aChangedRuleFailsItsTestsWithWhatDiffers() throws Exception {
    Path rules = checkout.resolve("alert-rules/rules.yaml");
    String shipped = Files.readString(rules);
    Files.writeString(rules, shipped.replace("threshold: 5 ", "threshold: 6 ").replace("within: 2m", "within: 4m"));
    try {
      Ran r = run("fail", "rules", "test", SHIPPED_TESTS);
      assertThat(r.exitCode()).isEqualTo(1);
      assertThat(r.out())
          .contains("  FAIL  five refusals of one command within five minutes are a retry storm (line 20)\n"
              + "        expected, not raised: rule persistent-retry, command RetryStorm000000000000001, agent ci-runner-1,"
              + " severity warning, status firing (line 30)\n")
          .contains("        raised, must not be:  rule bypass, command Patient000000000000000001 (line 90)\n"
              + "          by: bypass command Patient000000000000000001 agent ci-runner-1 page firing count 1\n")
          .contains("  ok    the cloud metadata address is critical")
          .endsWith("15 tests, 3 failed\n");
    } finally {
      Files.writeString(rules, shipped);
    }
  }

  @Test
  void aBrokenTestFileIsListedWithItsLinesAndFails() throws Exception {
    Files.writeString(checkout.resolve("alert-rules/tests/broken.test.yaml"), """
        tests:
          - name: no layout
            input:
              - {file: loose.violations.jsonl, lines: [x]}
            expect:
              - {rule: off-role-host, severity: urgent}
        """);
    Ran r = run("broken", "rules", "test", "alert-rules/tests/broken.test.yaml", SHIPPED_TESTS);
    assertThat(r.exitCode()).isEqualTo(1);
    assertThat(r.out()).contains("alert-rules/tests/broken.test.yaml:4: test \"no layout\": file loose.violations.jsonl"
            + " is not AGENT/FILE, the layout ingest reads\n")
        .contains("alert-rules/tests/broken.test.yaml:6: test \"no layout\": expect: severity \"urgent\" is not one of"
            + " info, warning, page, critical\n")
        .endsWith("15 tests, 0 failed, 1 file with problems\n");
  }

  @Test
  void rulesCheckSummarisesTheShippedRulesAndFailsOnAProblem() throws Exception {
    Ran ok = run("check", "rules", "check", "alert-rules");
    assertThat(ok.exitCode()).as(ok.err()).isZero();
    assertThat(ok.out()).startsWith("alert-rules: 13 rules, 4 roles, policy ")
        .contains("  off-role-host: off-role per task -> page; except role guard-probe\n",
            "  write-attempt: write-attempt per task -> page; except role guard-probe\n", "  anyone else -> default\n");
    Ran reference = run("reference", "rules", "reference");
    assertThat(reference.exitCode()).as(reference.err()).isZero();
    assertThat(reference.out()).as("README's rules reference, as the detectors declare it")
        .isEqualTo(dev.knockwatch.streams.rules.RulesReference.markdown()).contains("\n- `write-attempt`: ");
    Path roles = checkout.resolve("alert-rules/roles.yaml");
    String shipped = Files.readString(roles);
    Files.writeString(roles, "roles: [ci]\n");
    try {
      Ran broken = run("check-broken", "rules", "check", "alert-rules");
      assertThat(broken.exitCode()).isEqualTo(1);
      assertThat(broken.err()).contains("alert-rules/roles.yaml:1: roles must be a mapping of role name to its hosts");
    } finally {
      Files.writeString(roles, shipped);
    }
  }

  @Test
  void routesTestSaysWhichReceiversAnAlertReaches() throws Exception {
    Path rules = checkout.resolve("alert-rules");
    Files.copy(rules.resolve("receivers.example.yaml"), rules.resolve("receivers.yaml"));
    Map<String, String> env = Map.of("KNOCKWATCH_SLACK_WEBHOOK", "https://hooks.slack.test/T0/B0/x",
        "KNOCKWATCH_PD_ROUTING_KEY", "R0UT1NGK3Y");
    try {
      Ran page = runWith("routes-page", env, "routes", "test", "--labels", "rule=off-role-host,severity=page");
      assertThat(page.exitCode()).as(page.err()).isZero();
      assertThat(page.out()).isEqualTo("oncall,soc-slack,console\n"
          + "  route 1: severity=~\"page|critical\" -> oncall, soc-slack, and on to the next routes; updates every 5m at most\n"
          + "  route 3: any alert -> console; updates every 4h at most\n");
      assertThat(page.out() + page.err()).doesNotContain("R0UT1NGK3Y", "hooks.slack.test");
      Ran warning = runWith("routes-warning", env, "routes", "test", "--labels", "severity=warning",
          "--expect", "soc-slack");
      assertThat(warning.exitCode()).as(warning.err()).isZero();
      Ran ci = runWith("routes-ci", env, "routes", "test", "--labels", "severity=warning,role=ci,agent=ci-nightly");
      assertThat(ci.exitCode()).as(ci.err()).isZero();
      assertThat(ci.out()).as("a nested route, its receiver and grouping inherited").isEqualTo("soc-slack\n"
          + "  route 2.1: role=\"ci\", agent!~\"ci-runner-.*\" -> soc-slack; grouped by rule, waiting 30s, then every 5m;"
          + " updates every 12h at most\n");
      Ran wrong = runWith("routes-wrong", env, "routes", "test", "--labels", "severity=warning", "--expect", "oncall");
      assertThat(wrong.exitCode()).isEqualTo(1);
      assertThat(wrong.err()).contains("knockwatch: expected oncall, got soc-slack");
      Ran check = runWith("check-tree", env, "rules", "check", "alert-rules");
      assertThat(check.exitCode()).as(check.err()).isZero();
      assertThat(check.out()).contains("route (a child takes an alert it matches, the first one unless it continues):\n"
          + "  root: any alert -> console; updates every 4h at most\n"
          + "    1: severity=~\"page|critical\" -> oncall, soc-slack, and on to the next routes; updates every 5m at most\n");
    } finally {
      Files.delete(rules.resolve("receivers.yaml"));
    }
  }

  private static Ran runWith(String name, Map<String, String> env, String... args) throws Exception {
    try (Launched l = Launched.start(checkout, dir.resolve(name), env, args)) {
      int code = l.awaitExit(Duration.ofMinutes(3));
      return new Ran(code, l.out(), l.err());
    }
  }
}
