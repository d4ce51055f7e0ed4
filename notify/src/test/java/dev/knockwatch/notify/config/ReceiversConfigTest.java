package dev.knockwatch.notify.config;

import dev.knockwatch.events.config.ConfigException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.alertmanager.AlertmanagerReceiver;
import dev.knockwatch.notify.console.ConsoleReceiver;
import dev.knockwatch.notify.pagerduty.PagerDutyReceiver;
import dev.knockwatch.notify.slack.SlackReceiver;
import dev.knockwatch.notify.spi.Receiver;
import dev.knockwatch.notify.spi.Secret;
import dev.knockwatch.notify.webhook.WebhookReceiver;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReceiversConfigTest {

  static final String EXAMPLE = """
      publicUrl: https://knockwatch.internal:8080
      receivers:
        - name: soc-slack
          type: slack
          webhookUrl: ${KNOCKWATCH_SLACK_WEBHOOK}
        - name: oncall
          type: pagerduty
          routingKey: ${KNOCKWATCH_PD_ROUTING_KEY}
          url: ${KNOCKWATCH_PD_URL:-https://events.pagerduty.com/v2/enqueue}
      routes:
        - match: {severity: [page, critical]}
          receivers: [oncall, soc-slack]
        - match: {severity: [warning]}
          receivers: [soc-slack]
          groupBy: [rule]
          groupWait: 30s
          repeatInterval: 4h
      """;
  static final Map<String, String> ENV = Map.of("KNOCKWATCH_SLACK_WEBHOOK", "https://hooks.slack.test/T1/B2/s3cr3tW3bh00k",
      "KNOCKWATCH_PD_ROUTING_KEY", "R0UT1NGK3Y0123456789abcdef");

  @TempDir Path dir;

  private Path write(String yaml) throws IOException {
    Files.writeString(dir.resolve("receivers.yaml"), yaml);
    return dir;
  }

  @Test
  void theIssuesExampleLoadsWithItsEnvironment() throws IOException {
    ReceiversConfig c = ReceiversConfig.load(write(EXAMPLE), ENV);
    assertThat(c.receivers()).extracting(Receiver::name).containsExactly("soc-slack", "oncall");
    SlackReceiver slack = (SlackReceiver) c.receiver("soc-slack");
    assertThat(slack.webhookUrl().reveal()).isEqualTo("https://hooks.slack.test/T1/B2/s3cr3tW3bh00k");
    assertThat(slack.minInterval()).isEqualTo(Duration.ofSeconds(1));
    PagerDutyReceiver pd = (PagerDutyReceiver) c.receiver("oncall");
    assertThat(pd.url()).isEqualTo(URI.create("https://events.pagerduty.com/v2/enqueue"));
    // the flat list, migrated: the children of a root with no receiver
    assertThat(c.route().receivers()).isEmpty();
    assertThat(c.route().routes().get(0).matchers()).hasToString("[severity=~\"page|critical\"]");
    assertThat(c.route().routes().get(1).groupBy()).containsExactly("rule");
    assertThat(c.route().routes().get(1).repeatInterval()).isEqualTo(Duration.ofHours(4));
    assertThat(c.route().routes().get(1).groupInterval()).as("a flat route's groupInterval is its groupWait")
        .isEqualTo(Duration.ofSeconds(30));
    assertThat(c.publicUrl()).isEqualTo("https://knockwatch.internal:8080");
  }

  @Test
  void aDumpAndEveryToStringMaskTheSecrets() throws IOException {
    ReceiversConfig c = ReceiversConfig.load(write(EXAMPLE), ENV);
    String dump = c.dump() + c + c.receivers();
    assertThat(dump).contains("soc-slack", "oncall", Secret.MASK)
        .doesNotContain("s3cr3tW3bh00k").doesNotContain("R0UT1NGK3Y");
  }

  @Test
  void secretsComeFromFilesToo() throws IOException {
    Path key = dir.resolve("pd.key");
    Files.writeString(key, "FR0MF1LE\n");
    ReceiversConfig c = ReceiversConfig.load(write("""
        receivers:
          - {name: oncall, type: pagerduty, routingKeyFile: %s, url: "http://127.0.0.1:9/v2/enqueue"}
        routes:
          - receivers: [oncall]
        """.formatted(key)), Map.of());
    assertThat(((PagerDutyReceiver) c.receiver("oncall")).routingKey().reveal()).isEqualTo("FR0MF1LE");
  }

  @Test
  void everyProblemIsNamedAndNoneQuotesASecret() throws IOException {
    Path d = write("""
        receivers:
          - {name: soc-slack, type: slack, webhookUrl: "${KNOCKWATCH_SLACK_WEBHOOK}"}
          - {name: oncall, type: pagerduty, routingKey: s3cr3t, colour: red}
          - {name: hook, type: webhook, url: "ftp://x", secretFile: /nonexistent/secret}
          - {name: teams, type: msteams}
          - {name: oncall, type: console}
        routes:
          - match: {severity: [urgent], host: x}
            receivers: [oncall, nobody]
            groupBy: [host]
            groupWait: soon
        """);
    assertThatThrownBy(() -> ReceiversConfig.load(d, Map.of()))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).containsExactly(
            d.resolve("receivers.yaml") + ":2: receiver soc-slack: webhookUrl: ${KNOCKWATCH_SLACK_WEBHOOK} is not set",
            d.resolve("receivers.yaml") + ":3: receiver oncall: unknown key \"colour\" (known: maxPerMinute, name, routingKey, routingKeyFile, type, url)",
            d.resolve("receivers.yaml") + ":4: receiver hook: url: not an http(s) URL",
            d.resolve("receivers.yaml") + ":4: receiver hook: secretFile /nonexistent/secret cannot be read (NoSuchFileException)",
            d.resolve("receivers.yaml") + ":5: receiver teams: type \"msteams\" (one of slack, pagerduty, webhook, alertmanager, console)",
            d.resolve("receivers.yaml") + ":6: receiver oncall: the name is used twice",
            d.resolve("receivers.yaml") + ":8: route 1: match: severity \"urgent\" (one of info, warning, page, critical)",
            d.resolve("receivers.yaml") + ":8: route 1: match: unknown key \"host\" (known: agent, role, rule, severity)",
            d.resolve("receivers.yaml") + ":9: route 1: receiver \"nobody\" is not defined",
            d.resolve("receivers.yaml") + ":10: route 1: groupBy: \"host\" (one of agent, command, role, rule, severity)",
            d.resolve("receivers.yaml") + ":11: route 1: groupWait \"soon\" is not a duration (like 30s, 5m, 1h)"))
        .message().doesNotContain("s3cr3t");
  }

  /** Each type's keys, as it declares them: a misspelt one does not hide what the others lack. */
  @Test
  void everyKeyIsReadAsItsTypeDeclaresIt() throws IOException {
    Path d = write("""
        receivers:
          - {name: bot, type: slack, botToken: "${T}", botTokenFile: /run/t, channel: c, minInterval: soon}
          - {name: pd, type: pagerduty, routingkey: k}
        routes:
          - receivers: [bot, pd]
        """);
    assertThatThrownBy(() -> ReceiversConfig.load(d, Map.of("T", "xoxb-s3cr3t")))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).containsExactly(
            d.resolve("receivers.yaml") + ":2: receiver bot: minInterval \"soon\" is not a duration (like 30s, 5m, 1h)",
            d.resolve("receivers.yaml") + ":2: receiver bot: give botToken or botTokenFile, not both",
            d.resolve("receivers.yaml") + ":3: receiver pd: unknown key \"routingkey\" (known: maxPerMinute, name, routingKey, routingKeyFile, type, url)",
            d.resolve("receivers.yaml") + ":3: receiver pd: routingKey (or routingKeyFile) is required"))
        .message().doesNotContain("s3cr3t");
  }

  @Test
  void withoutTheFileEveryAlertGoesToTheConsole() {
    ReceiversConfig c = ReceiversConfig.load(dir, Map.of());
    assertThat(c.receivers()).containsExactly(new ConsoleReceiver("console"));
    assertThat(c.route().receivers()).containsExactly("console");
    assertThat(c.route().routes()).isEmpty();
  }

  @Test
  void theShippedExampleLoads() throws IOException {
    Files.copy(Path.of("../alert-rules/receivers.example.yaml"), dir.resolve("receivers.yaml"));
    ReceiversConfig c = ReceiversConfig.load(dir, ENV);
    assertThat(c.receivers()).extracting(Receiver::name).containsExactly("soc-slack", "oncall", "console");
    assertThat(c.route().receivers()).containsExactly("console");
    assertThat(c.route().routes()).hasSize(3);
    assertThat(c.route().routes().get(0).continueMatching()).isTrue();
    Route ci = c.route().routes().get(1).routes().get(0);
    assertThat(ci.receivers()).as("inherited").containsExactly("soc-slack");
    assertThat(ci.groupBy()).as("inherited").containsExactly("rule");
    assertThat(ci.groupInterval()).as("inherited from the root").isEqualTo(Duration.ofMinutes(5));
    assertThat(ci.repeatInterval()).isEqualTo(Duration.ofHours(12));
    assertThat(c.maxPerMinute("soc-slack")).isEqualTo(20);
    assertThat(c.maxPerMinute("oncall")).isEqualTo(ReceiversConfig.DEFAULT_MAX_PER_MINUTE);
    assertThat(c.maxPerMinute("console")).as("a terminal has no rate limit").isZero();
    assertThat(c.publicUrl()).isEqualTo("http://127.0.0.1:8080");
  }

  @Test
  void anAlertmanagerAndAWebhookInAlertmanagersShape() throws IOException {
    ReceiversConfig c = ReceiversConfig.load(write("""
        receivers:
          - {name: am, type: alertmanager, url: "http://alertmanager:9093/prefix"}
          - {name: hook, type: webhook, url: "https://siem.test/k", format: alertmanager}
          - {name: plain, type: webhook, url: "https://siem.test/p"}
        routes:
          - receivers: [am, hook, plain]
        """), Map.of());
    assertThat(((AlertmanagerReceiver) c.receiver("am")).alerts())
        .isEqualTo(java.net.URI.create("http://alertmanager:9093/prefix/api/v2/alerts"));
    assertThat(((WebhookReceiver) c.receiver("hook")).alertmanager()).isTrue();
    assertThat(((WebhookReceiver) c.receiver("plain")).alertmanager()).isFalse();
    Path bad = write("""
        receivers:
          - {name: am, type: alertmanager}
          - {name: hook, type: webhook, url: "https://siem.test/k", format: cef}
        routes:
          - receivers: [am, hook]
        """);
    assertThatThrownBy(() -> ReceiversConfig.load(bad, Map.of()))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).containsExactly(
            bad.resolve("receivers.yaml") + ":2: receiver am: url is required (the Alertmanager, e.g. http://alertmanager:9093)",
            bad.resolve("receivers.yaml") + ":3: receiver hook: format \"cef\" (one of knockwatch, alertmanager)"));
  }

  @Test
  void theShippedInhibitionLoadsAndABrokenOneIsNamed() throws IOException {
    ReceiversConfig c = ReceiversConfig.load(write(Files.readString(Path.of("../alert-rules/receivers.example.yaml"))), ENV);
    assertThat(c.inhibitRules()).singleElement().satisfies(r -> {
      assertThat(r.equal()).containsExactly("command");
      assertThat(r.describe()).isEqualTo("rule=\"off-role-host\" mutes rule=\"persistent-retry\" of the same command");
    });
    assertThat(c.dump()).contains("inhibitRules (while a source fires, its targets are not notified):\n"
        + "  - rule=\"off-role-host\" mutes rule=\"persistent-retry\" of the same command\n");
    Path bad = write("""
        receivers:
          - {name: console, type: console}
        routes:
          - receivers: [console]
        inhibitRules:
          - source: {rule: off-role-host}
            equal: [host]
          - {source: {severity: urgent}, target: {rule: x}, colour: red}
        """);
    assertThatThrownBy(() -> ReceiversConfig.load(bad, Map.of()))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).containsExactly(
            bad.resolve("receivers.yaml") + ":6: inhibit rule 1: needs a source and a target (each matchers, or a match of severity, rule, role, agent)",
            bad.resolve("receivers.yaml") + ":7: inhibit rule 1: equal: \"host\" (one of agent, command, role, rule, severity)",
            bad.resolve("receivers.yaml") + ":8: inhibit rule 2: unknown key \"colour\" (known: equal, source, target)",
            bad.resolve("receivers.yaml") + ":8: inhibit rule 2: source: severity \"urgent\" (one of info, warning, page, critical)"));
  }

  @Test
  void aTreeInheritsItsParentsSettingsAndNamesEveryProblemAtItsLine() throws IOException {
    ReceiversConfig c = ReceiversConfig.load(write("""
        receivers:
          - {name: console, type: console}
          - {name: pager, type: webhook, url: "https://pager.test/x", maxPerMinute: 5}
        route:
          receiver: console
          groupBy: [rule]
          groupWait: 10s
          routes:
            - matchers: ['severity="page"', 'agent!~"test-.*"']
              receiver: pager
              groupInterval: 1m
              routes:
                - matchers: [role=ci]
                  groupBy: [command]
        """), Map.of());
    Route page = c.route().routes().get(0);
    Route ci = page.routes().get(0);
    assertThat(ci.receivers()).containsExactly("pager");
    assertThat(ci.groupBy()).containsExactly("command");
    assertThat(ci.groupWait()).isEqualTo(Duration.ofSeconds(10));
    assertThat(ci.groupInterval()).isEqualTo(Duration.ofMinutes(1));
    assertThat(ci.repeatInterval()).isEqualTo(Route.DEFAULT_REPEAT_INTERVAL);
    assertThat(c.route().groupInterval()).isEqualTo(Route.DEFAULT_GROUP_INTERVAL);
    assertThat(c.maxPerMinute("pager")).isEqualTo(5);
    assertThat(c.dump()).contains("""
        route (a child takes an alert it matches, the first one unless it continues):
          root: any alert -> console; grouped by rule, waiting 10s, then every 5m; updates every 5m at most
            1: severity="page", agent!~"test-.*" -> pager; grouped by rule, waiting 10s, then every 1m; updates every 5m at most
              1.1: role="ci" -> pager; grouped by command, waiting 10s, then every 1m; updates every 5m at most
        """);

    Path bad = write("""
        receivers:
          - {name: console, type: console, maxPerMinute: 5}
          - {name: hook, type: webhook, url: "https://h.test/", maxPerMinute: lots}
        route:
          matchers: ['severity="page"']
          routes:
            - matchers: ['agent=~"(unclosed"', 'severity ~ page', rule=x]
              receiver: nobody
              groupInterval: later
              routes:
                - {receiver: console, receivers: [hook], colour: red}
        routes:
          - receivers: [console]
        """);
    assertThatThrownBy(() -> ReceiversConfig.load(bad, Map.of()))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).containsExactly(
            bad.resolve("receivers.yaml") + ":2: receiver console: unknown key \"maxPerMinute\" (known: name, type)",
            bad.resolve("receivers.yaml") + ":3: receiver hook: maxPerMinute: expected a whole number from 1 to 99999",
            bad.resolve("receivers.yaml") + ":12: give route (the tree) or routes (the flat list), not both"));
    Path badTree = write(Files.readString(bad.resolve("receivers.yaml")).replace("routes:\n  - receivers: [console]\n", "")
        .replace(", maxPerMinute: 5", "").replace("maxPerMinute: lots", "maxPerMinute: 7"));
    assertThatThrownBy(() -> ReceiversConfig.load(badTree, Map.of()))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).containsExactly(
            badTree.resolve("receivers.yaml") + ":5: route: the root route takes every alert: it has no matchers, match or continue",
            badTree.resolve("receivers.yaml") + ":5: route: receivers: none given (the root's receiver gets every alert no child route takes)",
            badTree.resolve("receivers.yaml") + ":7: route 1: matchers: agent=~: \"(unclosed\" is not a regular expression (Unclosed group)",
            badTree.resolve("receivers.yaml") + ":7: route 1: matchers: \"severity ~ page\" is not a matcher (like severity=\"page\", rule!=\"x\", agent=~\"ci-.*\")",
            badTree.resolve("receivers.yaml") + ":8: route 1: receiver \"nobody\" is not defined",
            badTree.resolve("receivers.yaml") + ":9: route 1: groupInterval \"later\" is not a duration (like 30s, 5m, 1h)",
            badTree.resolve("receivers.yaml") + ":11: route 1.1: unknown key \"colour\" (known: continue, groupBy, groupInterval, groupWait, match, matchers, receiver, receivers, repeatInterval, routes)",
            badTree.resolve("receivers.yaml") + ":11: route 1.1: give receiver or receivers, not both"));
  }
}
