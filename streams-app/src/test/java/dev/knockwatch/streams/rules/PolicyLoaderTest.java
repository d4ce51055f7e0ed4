package dev.knockwatch.streams.rules;

import dev.knockwatch.events.config.ConfigException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Alert.Severity;
import dev.knockwatch.streams.detect.AddressClassDetector;
import dev.knockwatch.streams.detect.BypassDetector;
import dev.knockwatch.streams.detect.CountDetector;
import dev.knockwatch.streams.detect.FsGuardDetector;
import dev.knockwatch.streams.detect.IdentityConflictDetector;
import dev.knockwatch.streams.detect.IngestRejectsDetector;
import dev.knockwatch.streams.detect.SandboxUnavailableDetector;
import dev.knockwatch.streams.detect.WallBreachDetector;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyLoaderTest {

  static final Path FIXTURES = Path.of("src/test/resources/rules");

  @TempDir Path dir;

  private Path write(String rules) throws IOException {
    Files.writeString(dir.resolve("rules.yaml"), rules);
    return dir;
  }

  @Test
  void theShippedRulesAndRolesLoad() {
    Policy p = PolicyLoader.load(Path.of("../alert-rules"));
    assertThat(p.rules()).extracting(Rule::id)
        .containsExactly("persistent-retry", "off-role-host", "sensitive-address", "bypass", "fs-guard",
            "sandbox-escape", "identity-conflict", "ingest-rejects", "wall-breach", "policy-drift", "scanning", "write-attempt",
            "sandbox-unavailable");
    assertThat(p.rules().get(0)).usingRecursiveComparison().ignoringFields("match").isEqualTo(
        CountDetector.rule("persistent-retry", Duration.ofMinutes(5), 5, Severity.WARNING, Duration.ofMinutes(1)).per(Grain.TASK));
    // every refusal rule groups per task: a harness's retries are new tool calls; a broken sandbox is the session's
    assertThat(p.rules()).filteredOn(r -> !r.is(WallBreachDetector.Settings.class) && !r.is(IdentityConflictDetector.Settings.class)
        && !r.is(IngestRejectsDetector.Settings.class) && !r.is(SandboxUnavailableDetector.Settings.class))
        .extracting(Rule::per).containsOnly(Grain.TASK);
    assertThat(p.rules()).filteredOn(r -> r.is(SandboxUnavailableDetector.Settings.class)).extracting(Rule::per)
        .containsExactly(Grain.SESSION);
    assertThat(p.roleOf("claude-code")).isEqualTo("coding-assistant");
    // the guard probes' expected refusals page no one; only wall-breach reads the guard's results, and
    // a line claiming another identity pages whoever it came from (docs/TRUST.md)
    assertThat(p.rules()).filteredOn(r -> !r.is(WallBreachDetector.Settings.class) && !r.is(IdentityConflictDetector.Settings.class)
            && !r.is(IngestRejectsDetector.Settings.class) && !r.is(SandboxUnavailableDetector.Settings.class))
        .allSatisfy(r -> assertThat(r.match().except().roles()).containsExactly("guard-probe"));
    assertThat(p.rules().get(6).match().except()).isNull();
    assertThat(p.rules().get(6).severity()).isEqualTo(Severity.PAGE);
    assertThat(p.rules().get(7).match().except()).isNull();
    assertThat(p.rules().get(8).match().except()).isNull();
    assertThat(p.roleOf("knockwatch-guard")).isEqualTo("guard-probe");
    assertThat(((AddressClassDetector.Settings) p.rules().get(2).settings()).classes())
        .containsExactlyInAnyOrder(AddressClass.LOOPBACK, AddressClass.LINK_LOCAL, AddressClass.CLOUD_METADATA,
            AddressClass.THIS_HOST);
    assertThat(((FsGuardDetector.Settings) p.rules().get(4).settings()).paths()).isEqualTo(FsGuardDetector.DEFAULT_PATHS);
    assertThat(p.roleOf("ci-runner-1")).isEqualTo("ci");
    assertThat(p.roleOf("someone-else")).isEqualTo("default");
    assertThat(p.role("ci").allows("repo1.maven.org", 443)).isTrue();
    assertThat(p.role("ci").allows("maven.org", 443)).as("*.suffix is below the suffix only").isFalse();
    assertThat(p.role("ci").allows("api.github.com", 80)).as("a port in the pattern binds").isFalse();
    assertThat(p.version()).hasSize(12);
  }

  @Test
  void everyProblemIsListedWithItsFileAndLine() {
    Path d = FIXTURES.resolve("broken");
    String rules = d.resolve("rules.yaml").toString();
    String roles = d.resolve("roles.yaml").toString();
    assertThat(PolicyLoader.check(d)).containsExactly(
        roles + ":3: role ci: host \"*bad*\" is not a host pattern (a host, *.suffix, either with an optional :port)",
        roles + ":8: agents entry 2: role \"research\" is not defined under roles",
        rules + ":4: rule retry: window \"5x\" is not a duration (like 30s, 5m, 1h)",
        rules + ":5: rule retry: threshold must be a whole number of at least 1, not \"0\"",
        rules + ":6: rule retry: duplicate id (first at line 2)",
        rules + ":9: rule knock: detector \"knock\" is not one of count, value-count, off-role, address-class, bypass, fs-guard, wall-breach, identity-conflict, ingest-rejects, sandbox-escape, write-attempt, sandbox-unavailable, drift",
        rules + ":13: rule sensitive: \"threshold\" is a key of count and value-count rules, not of address-class rules",
        rules + ":12: rule sensitive: \"intranet\" is not an address class (public, private, loopback, link-local, "
            + "cloud-metadata, unspecified, multicast, broadcast, cgnat, reserved, this-host, deny-listed, listed, "
            + "non-loopback, unknown)",
        rules + ":16: rule shadowy: mode \"quiet\" is not enforce or shadow",
        rules + ":19: rule shadowy: match: unknown key \"colour\" (known: agent, host, kind, role, source)",
        rules + ":18: rule shadowy: match.role \"research\" is not defined in roles.yaml",
        rules + ":25: rule hopper: resolveAfter \"soon\" is not a duration (like 30s, 5m, 1h)",
        rules + ":24: rule hopper: hop 10m must not be longer than the window");
  }

  /**
   * An id ending in "-by-grain" is refused where it is written: beside a rule of its stem counted per
   * task in aligned windows it named the same processor and store, which loaded and then stopped
   * detection from starting ("Invalid topology: Processor detect-retry-by-grain is already added").
   */
  @Test
  void anIdThatDetectionKeepsForARulesGrainIsAProblemWithItsLine() throws IOException {
    write("""
        rules:
          - {id: retry, detector: count, window: 5m, hop: 5m, threshold: 3, per: task}
          - {id: retry-by-grain, detector: count, window: 5m, hop: 5m, threshold: 3}
          - {id: by-grain, detector: count, window: 5m, hop: 5m, threshold: 3}
          - {id: by-grainy, detector: count, threshold: 3}
        """);
    String rules = dir.resolve("rules.yaml").toString();
    assertThat(PolicyLoader.check(dir)).containsExactly(
        rules + ":3: rule 2: id \"retry-by-grain\" is kept: detection names a rule's counts at its grain"
            + " \"<id>-by-grain\" (\"by-grain\" too)",
        rules + ":4: rule 3: id \"by-grain\" is kept: detection names a rule's counts at its grain"
            + " \"<id>-by-grain\" (\"by-grain\" too)");
  }

  /** A duration too large for a number is a problem with its line, as any other bad duration (it was a NumberFormatException). */
  @Test
  void aDurationTooLargeForANumberIsAProblemWithItsLine() throws IOException {
    write("""
        rules:
          - id: retry
            detector: count
            severity: warning
            threshold: 5
            window: 99999999999999999999s
        """);
    assertThat(PolicyLoader.check(dir)).containsExactly(dir.resolve("rules.yaml") + ":6: rule retry: window "
        + "\"99999999999999999999s\" is not a duration (like 30s, 5m, 1h)");
  }

  @Test
  void exceptTakesMatchingRefusalsBackOutAndIsCheckedLikeMatch() throws IOException {
    Files.writeString(dir.resolve("roles.yaml"), "roles:\n  guard-probe:\n    hosts: []\n  ci:\n    hosts: []\n");
    Policy p = PolicyLoader.load(write("""
        rules:
          - id: off
            detector: off-role
            severity: page
            match: {kind: network}
            except: {role: guard-probe, host: "*.internal"}
        """));
    RuleMatch m = p.rules().get(0).match();
    dev.knockwatch.events.ViolationEvent.Builder e = dev.knockwatch.events.ViolationEvent.builder()
        .commandId("PolicyLoaderTestCommand1").kind(dev.knockwatch.events.Kind.NETWORK).host("example.com");
    assertThat(m.matches(e.build(), "ci")).isTrue();
    assertThat(m.matches(e.build(), "guard-probe")).as("role and host both given: both must match").isTrue();
    assertThat(m.matches(e.host("db.internal").build(), "guard-probe")).isFalse();
    assertThat(m.matches(e.host("db.internal").build(), "ci")).isTrue();

    write("""
        rules:
          - id: off
            detector: off-role
            severity: page
            except: {role: nobody, colour: red}
        """);
    String rules = dir.resolve("rules.yaml").toString();
    assertThat(PolicyLoader.check(dir)).containsExactly(
        rules + ":5: rule off: except: unknown key \"colour\" (known: agent, host, kind, role, source)",
        rules + ":5: rule off: except.role \"nobody\" is not defined in roles.yaml");
  }

  @Test
  void loadRefusesWithAllTheProblems() {
    assertThatThrownBy(() -> PolicyLoader.load(FIXTURES.resolve("broken")))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((ConfigException) e).problems()).hasSize(13));
  }

  @Test
  void brokenYamlIsReportedWithItsLine() {
    assertThat(PolicyLoader.check(FIXTURES.resolve("bad-yaml"))).containsExactly(
        FIXTURES.resolve("bad-yaml/rules.yaml") + ":4: not valid YAML: while parsing a flow sequence: "
            + "expected ',' or ']', but got <stream end>");
  }

  @Test
  void offRoleRulesNeedRoles() {
    Path d = FIXTURES.resolve("no-roles");
    assertThat(PolicyLoader.check(d)).containsExactly(d.resolve("rules.yaml") + ":3: rule off-role-host: "
        + "off-role rules need roles.yaml (not found: " + d.resolve("roles.yaml") + ")");
  }

  @Test
  void aMissingRulesFileIsNamed() {
    assertThat(PolicyLoader.check(dir))
        .containsExactly(dir.resolve("rules.yaml") + ": not found (the rules directory must hold rules.yaml)");
  }

  @Test
  void defaultsFillWhatARuleLeavesOut() throws IOException {
    Policy p = PolicyLoader.load(write("rules:\n  - id: r1\n    detector: count\n    threshold: 3\n"
        + "  - id: b\n    detector: bypass\n  - id: f\n    detector: fs-guard\n    paths: [\".npmrc\"]\n    mode: shadow\n"));
    assertThat(p.rules().get(0)).isEqualTo(CountDetector.rule("r1", Duration.ofMinutes(5), 3, Severity.WARNING,
        Duration.ofMinutes(1)));
    assertThat(((BypassDetector.Settings) p.rules().get(1).settings()).within()).isEqualTo(Duration.ofMinutes(2));
    assertThat(p.rules().get(1).resolveAfter()).isEqualTo(Duration.ofMinutes(10));
    assertThat(((FsGuardDetector.Settings) p.rules().get(2).settings()).paths()).containsExactly(".npmrc");
    assertThat(p.rules().get(2).shadow()).isTrue();
    assertThat(p.rules(CountDetector.Settings.class)).hasSize(1);
    assertThat(p.roleOf("anyone")).isEqualTo(Policy.DEFAULT_ROLE);
  }

  @Test
  void matchSelectsSourcesKindsAndGlobs() throws IOException {
    Policy p = PolicyLoader.load(write("rules:\n  - id: r1\n    detector: count\n    threshold: 3\n"
        + "    match:\n      source: [squid, strace]\n      kind: network\n      agent: \"ci-*\"\n      host: \"*.internal\"\n"));
    RuleMatch m = p.rules().get(0).match();
    assertThat(m.sources()).hasSize(2);
    assertThat(m.kinds()).hasSize(1);
    assertThat(m.agent().matches("ci-runner-9")).isTrue();
    assertThat(m.host().matches("db.internal")).isTrue();
    assertThat(m.host().matches("db.internal.example.com")).isFalse();
  }

  @Test
  void theVersionChangesWithTheFiles() throws IOException {
    String v1 = PolicyLoader.load(write("rules:\n  - id: r1\n    detector: count\n    threshold: 3\n")).version();
    String v2 = PolicyLoader.load(write("rules:\n  - id: r1\n    detector: count\n    threshold: 4\n")).version();
    assertThat(v1).isNotEqualTo(v2);
  }

  @Test
  void wallBreachTakesOnlyTheCommonKeys() throws IOException {
    write("rules:\n  - id: wall\n    detector: wall-breach\n    severity: critical\n    match: {agent: \"probe-*\"}\n");
    assertThat(PolicyLoader.check(dir)).isEmpty();
    write("rules:\n  - id: wall\n    detector: wall-breach\n    threshold: 3\n");
    assertThat(PolicyLoader.check(dir)).hasSize(1).first().asString().startsWith(dir.resolve("rules.yaml") + ":4: rule wall: ");
  }

  @Test
  void aRuleSaysWhatItIsAndADisabledRuleIsCheckedThenLeftOut() throws IOException {
    Policy p = PolicyLoader.load(write("""
        rules:
          - id: scan
            detector: value-count
            threshold: 10
            severity: page
            tags: [discovery, attack.t1046, T1046.001]
            runbook: https://runbooks.example/knockwatch/scan
            labels: {team: soc, service_tier: gold}
            annotations: {owner: "SOC on-call"}
          - id: noisy
            detector: count
            threshold: 3
            enabled: false
        """));
    assertThat(p.rules()).extracting(Rule::id).containsExactly("scan");
    assertThat(p.rules().get(0).meta()).isEqualTo(new dev.knockwatch.events.Alert.Meta(
        java.util.List.of("discovery", "attack.t1046", "T1046.001"), "https://runbooks.example/knockwatch/scan",
        java.util.Map.of("team", "soc", "service_tier", "gold"), java.util.Map.of("owner", "SOC on-call")));

    write("""
        rules:
          - id: scan
            detector: value-count
            threshold: 10
            tags: [attack.t10, T12345, ""]
            runbook: javascript:alert(1)
            labels: {"bad-name": x}
            enabled: maybe
          - id: off
            detector: count
            threshold: 0
            enabled: false
        """);
    String rules = dir.resolve("rules.yaml").toString();
    assertThat(PolicyLoader.check(dir)).containsExactly(
        rules + ":5: rule scan: tag \"attack.t10\" is not an ATT&CK technique id (attack.t1046, T1046 or T1046.001)",
        rules + ":5: rule scan: tag \"T12345\" is not an ATT&CK technique id (attack.t1046, T1046 or T1046.001)",
        rules + ":5: rule scan: a tag is 1 to 64 characters",
        rules + ":6: rule scan: runbook \"javascript:alert(1)\" is not an http(s) URL",
        rules + ":7: rule scan: labels: \"bad-name\" is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)",
        rules + ":8: rule scan: enabled must be true or false",
        rules + ":11: rule off: threshold must be a whole number of at least 1, not \"0\"");
  }

  @Test
  void rulesSplitAcrossFilesLoadTogetherWithOneIdSpace() throws IOException {
    write("""
        rules:
          - {id: retry, detector: count, threshold: 5}
        """);
    Files.writeString(dir.resolve("network.rules.yaml"), """
        rules:
          - {id: scan, detector: value-count, threshold: 10}
        """);
    Files.writeString(dir.resolve("notes.yaml"), "not: rules\n"); // only *.rules.yaml are rules
    Policy p = PolicyLoader.load(dir);
    assertThat(p.rules()).extracting(Rule::id).containsExactly("retry", "scan");
    PolicyFiles published = PolicyLoader.files(dir);
    assertThat(published.moreRules()).containsOnlyKeys("network.rules.yaml");
    assertThat(PolicyLoader.load(published, "elsewhere").rules()).extracting(Rule::id).containsExactly("retry", "scan");
    assertThat(PolicyLoader.load(published, "elsewhere").version()).isEqualTo(p.version());

    Files.writeString(dir.resolve("network.rules.yaml"), """
        rules:
          - {id: scan, detector: value-count, threshold: 12}
        """);
    assertThat(PolicyLoader.load(dir).version()).as("a change in any rules file is a new version").isNotEqualTo(p.version());

    Files.writeString(dir.resolve("zz.rules.yaml"), """
        rules:
          - {id: retry, detector: count, threshold: 3}
        """);
    assertThat(PolicyLoader.check(dir)).containsExactly(dir.resolve("zz.rules.yaml") + ":2: rule retry: duplicate id (first at "
        + dir.resolve("rules.yaml") + ":2)");
  }
}
