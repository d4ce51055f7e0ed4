package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's examples run as written. Every fenced block says what it is ({@code sh}, a command
 * to run; {@code text}, output; a file's format); every {@code sh} block is run verbatim, here or
 * in the test named below, or says why it cannot be run on this machine. A new {@code sh} block
 * fails this test until it is one or the other.
 */
@Tag("integration")
class ReadmeTest {

  /** The {@code sh} blocks run elsewhere or not at all, by their first line, and where or why. */
  static final Map<String, String> ELSEWHERE = Map.ofEntries(
      Map.entry("./knockwatch up ", "FirstRunTest runs up as this block does; ./knockwatch test is this suite"),
      Map.entry("./knockwatch query DemoCommandId000000001", "FirstRunTest runs it verbatim after \"Try it\" and"
          + " compares its answer with the README's, line by line"),
      Map.entry("mkdir -p var/logs/ci-runner-1", "FirstRunTest runs it verbatim beside the up it started, and awaits both alerts"),
      Map.entry("./knockwatch topics --bootstrap-servers kafka-1.corp:9093", "your company's Kafka: SecuredKafkaTest runs the four" + " commands on a SASL_SSL broker with the documented ACLs"),
      Map.entry("cp alert-rules/receivers.example.yaml", "posts to hooks.slack.com and PagerDuty: NotifyCrashTest and the notify" + " module's tests run the receivers against local stand-ins"),
      Map.entry("(cd probes/srt-bridge && npm ci)", "./knockwatch test runs it before any test (need_test_packages)"),
      Map.entry("mkdir -p var/logs var/rsyslog", "ShipperFirstRunTest runs it verbatim (the real rsyslog as rsyslogd) beside" + " up --raw-topic, then the \"Try it\" block, and awaits both alerts"),
      Map.entry("mkdir -p var/logs/ci-runner-2", "DiscoverJourneyTest runs it verbatim beside up, after \"Try it\""),
      Map.entry("./knockwatch allowlist suggest", "DiscoverJourneyTest runs it verbatim and checks the narrow list it prints"),
      Map.entry("mkdir -p var/codex-home", "CodexJourneyTest runs it verbatim beside up --codex-home, then the demo block"),
      Map.entry("./knockwatch codex demo", "CodexJourneyTest runs it verbatim (the pinned Codex CLI) and awaits each alert"
          + " the README names"),
      Map.entry("./knockwatch up --sources var/smokescreen.yaml", "FleetJourneyTest runs up with these arguments after"
          + " each wall's sources block above, and awaits every wall's pages"),
      Map.entry("mkdir -p var/kernel", "NetfilterJourneyTest runs it verbatim, then up --sources var/netfilter.yaml"),
      Map.entry("mkdir -p var/smokescreen", "FleetJourneyTest runs it verbatim, then up with every wall's sources files,"
          + " and awaits each page the section names"),
      Map.entry("mkdir -p var/envoy", "FleetJourneyTest runs it verbatim, then up with every wall's sources files, and awaits"
          + " each page the section names"),
      Map.entry("mkdir -p var/tinyproxy", "TinyproxyJourneyTest runs it verbatim, then up --sources var/tinyproxy.yaml"),
      Map.entry("node probes/srt-bridge/bridge.mjs --settings srt-settings.json --logs var/logs", "runs srt on macOS"
          + " (Seatbelt), which cannot run here: FleetJourneyTest writes the records srt's macOS source makes of"
          + " this command where this line writes them, beside up, and awaits the pages the section names"),
      Map.entry("mkdir -p var/privoxy", "PrivoxyJourneyTest runs it verbatim, then up --sources var/privoxy.yaml"),
      Map.entry("mkdir -p var/hubble", "FleetJourneyTest runs it verbatim, then up with every wall's sources files,"
          + " and awaits each page the section names"),
      Map.entry("mkdir -p var/openshell", "FleetJourneyTest runs it verbatim, then up with every wall's sources files"),
      Map.entry("mkdir -p var && cat > var/dockersandbox.yaml", "FleetJourneyTest runs it verbatim (its own"
          + " XDG_STATE_HOME), then up with every wall's sources files, and awaits each page the section names"));

  /** The same for docs/WALLS.md's {@code sh} blocks. */
  static final Map<String, String> WALLS_ELSEWHERE = Map.ofEntries(
      Map.entry("./knockwatch up --sources var/", "a wall's own up: the netfilter, tinyproxy and privoxy journey tests"
          + " run theirs; FleetJourneyTest runs the other walls' files in one up, as the README's fleet line does"),
      Map.entry("sysctl -n net.netfilter.nf_log_all_netns", "NetfilterJourneyTest runs it verbatim as root (nftables,"
          + " ulogd2) beside up --sources, and awaits both agents' alerts"),
      Map.entry("kill \"$(cat var/kernel/dmesg.pid)\"", "NetfilterJourneyTest runs it verbatim after the alerts,"
          + " and checks the namespace and the switch are back"),
      Map.entry("./knockwatch query --agent openshell-work-session", "FleetJourneyTest runs it verbatim once the"
          + " sandbox's alerts are in, and checks each line it prints"),
      Map.entry("smokescreen --egress-acl-file", "starts smokescreen, a Go program not installed here:"
          + " FleetJourneyTest appends the samples written from its source where this line sends its stderr"),
      Map.entry("envoy -c envoy-egress.yaml", "starts Envoy, which Debian does not package: FleetJourneyTest appends the"
          + " json_format sample written from its source and docs to the path the section's access_log names"),
      Map.entry("cat > var/tinyproxy/tinyproxy.conf", "TinyproxyJourneyTest runs it verbatim after the README's"
          + " tinyproxy block, before the demo starts tinyproxy with it"),
      Map.entry("ip netns add agent-tp", "TinyproxyJourneyTest runs it verbatim as root (tinyproxy, curl) beside up"
          + " --sources, and awaits the agent's alerts and the unmapped client's one reject page"),
      Map.entry("kill \"$(cat var/tinyproxy/tinyproxy.pid)\"", "TinyproxyJourneyTest runs it verbatim after the alerts,"
          + " and checks tinyproxy and the namespace are gone"),
      Map.entry("ip netns add agent-px", "PrivoxyJourneyTest runs it verbatim as root (Debian's privoxy) beside up"
          + " --sources, and awaits the agent's alerts and the unmapped client's ingest-rejects"),
      Map.entry("kill \"$(cat var/privoxy/privoxy.pid)\"", "PrivoxyJourneyTest runs it verbatim after the alerts,"
          + " and checks the namespace is gone"),
      Map.entry("hubble observe -o json", "reads a Kubernetes cluster's Hubble Relay, not here: FleetJourneyTest"
          + " appends the samples written from Cilium's source where this line sends its output"),
      Map.entry("openshell settings set", "OpenShell's CLI and a sandbox to set it on are not installed here:"
          + " FleetJourneyTest reads the lines the setting turns on, the samples written from OpenShell's source"),
      Map.entry("openshell sandbox exec --name work-session", "follows a sandbox's file through OpenShell's CLI, not"
          + " installed here: FleetJourneyTest appends the samples written from OpenShell's source where this line"
          + " sends them"));

  static final Set<String> KINDS = Set.of("sh", "text", "yaml", "json", "properties");

  @TempDir Path dir;

  @Test
  void everyBlockSaysWhatItIsAndEveryShellBlockIsRunOrSaysWhyNot() throws Exception {
    for (var doc : Map.of("README.md", ELSEWHERE, "docs/WALLS.md", WALLS_ELSEWHERE).entrySet()) {
      List<ReadmeBlocks.Block> blocks = ReadmeBlocks.read(doc.getKey()).blocks();
      assertThat(blocks).hasSizeGreaterThan(10).allSatisfy(b ->
          assertThat(b.kind()).as("the fence at %s:%d", doc.getKey(), b.line()).isIn(KINDS));
      List<String> shell = blocks.stream().filter(b -> b.kind().equals("sh")).map(ReadmeBlocks.Block::firstLine).toList();
      for (String first : shell) {
        boolean elsewhere = doc.getValue().keySet().stream().anyMatch(first::startsWith);
        boolean here = doc.getKey().equals("README.md")
            && (first.startsWith("./knockwatch claude-code settings") || first.startsWith("jq -s "));
        assertThat(elsewhere || here).as("%s's sh block \"%s\" is run by a test, or says why not", doc.getKey(), first)
            .isTrue();
      }
      assertThat(doc.getValue().keySet()).allSatisfy(k -> assertThat(shell).anyMatch(l -> l.startsWith(k)));
    }
  }

  /** A table's rows are one run of lines: a blank line between two rows ends the table there, and the rest reads as text. */
  @Test
  void noTableIsBrokenByABlankLine() throws Exception {
    List<String> broken = new java.util.ArrayList<>();
    for (Path doc : java.util.stream.Stream.concat(java.util.stream.Stream.of(Path.of("..", "README.md")),
        Files.list(Path.of("..", "docs")).filter(d -> d.toString().endsWith(".md")).sorted()).toList()) {
      List<String> lines = Files.readAllLines(doc);
      for (int i = 1; i + 1 < lines.size(); i++) {
        boolean newTable = i + 2 < lines.size() && lines.get(i + 2).startsWith("|---");
        if (lines.get(i).isBlank() && lines.get(i - 1).startsWith("|") && lines.get(i + 1).startsWith("|") && !newTable) {
          broken.add(doc.getFileName() + ":" + (i + 1));
        }
      }
    }
    assertThat(broken).as("blank lines inside a table").isEmpty();
  }

  /**
   * Claude Code's steps 1 and 2, verbatim, in a copy of the checkout, with a HOME of the test's
   * holding sandbox settings: the hooks block is printed, and merged beside the settings.
   */
  @Test
  void theClaudeCodeStepsRunAsWritten() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    Path home = Files.createDirectories(dir.resolve("home/.claude")).getParent();
    Files.writeString(home.resolve(".claude/settings.json"), "{\"sandbox\": {\"enabled\": true}}\n");
    ReadmeBlocks readme = ReadmeBlocks.read();
    Map<String, String> env = Map.of("HOME", home.toString());

    ReadmeBlocks.Ran printed = ReadmeBlocks.run(readme.starting("sh", "./knockwatch claude-code settings"), checkout, env);
    assertThat(printed.exit()).as(printed.output()).isZero();
    JsonNode hooks = Json.MAPPER.readTree(checkout.resolve("knockwatch-hooks.json").toFile()).path("hooks");
    assertThat(hooks.fieldNames()).toIterable().contains("PreToolUse", "PostToolUse", "PostToolUseFailure");
    // writes to this checkout's var/logs, as agent claude-code (the README's words)
    assertThat(hooks.path("PreToolUse").toString()).contains(checkout.resolve("var/logs").toString(), "claude-code");

    ReadmeBlocks.Ran merged = ReadmeBlocks.run(readme.starting("sh", "jq -s "), checkout, env);
    assertThat(merged.exit()).as(merged.output()).isZero();
    JsonNode settings = Json.MAPPER.readTree(home.resolve(".claude/settings.json").toFile());
    assertThat(settings.path("sandbox").path("enabled").asBoolean()).isTrue();
    assertThat(settings.path("hooks")).isEqualTo(hooks);
  }
}
