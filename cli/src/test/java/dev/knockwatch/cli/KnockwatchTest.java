package dev.knockwatch.cli;

import com.fasterxml.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command-line contract: exit codes 0 / 1 / 2 and one-line errors without stack traces. */
class KnockwatchTest {

  record Run(int code, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Knockwatch.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void helpListsTheSubcommandsAndExitsZero() {
    Run r = run("--help");
    assertThat(r.code()).isZero();
    assertThat(r.out()).contains("up ", "replay ", "parse ");
  }

  @Test
  void everySubcommandHasHelp() {
    assertThat(run("up", "--help").out()).contains("--logs=DIR", "--rules=DIR", "--metrics-port=N", "--api-port=N",
        "--no-probes", "--fresh", "--bootstrap-servers=HOSTS");
    assertThat(run("replay", "--help").out()).contains("--rules=DIR", "--input=PATH");
  }

  @Test
  void anUnknownOptionIsAUsageErrorOnOneLine() {
    Run r = run("up", "--bogus");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("knockwatch: Unknown option: '--bogus' (see --help)" + System.lineSeparator());
  }

  @Test
  void anUnknownCommandSaysSoAndSuggestsTheNearest() {
    Run typo = run("qeury", "DemoCommandId000000001");
    assertThat(typo.code()).isEqualTo(2);
    assertThat(typo.err()).isEqualTo("knockwatch: qeury is not a command of knockwatch; did you mean query?"
        + " (knockwatch --help lists them)" + System.lineSeparator());
    assertThat(run("allowlist", "sugest").err()).startsWith("knockwatch allowlist: sugest is not a command of"
        + " knockwatch allowlist; did you mean suggest?");
    assertThat(run("bogus").err()).isEqualTo("knockwatch: bogus is not a command of knockwatch"
        + " (knockwatch --help lists them)" + System.lineSeparator());
    // what is typed is printed cleaned of what a terminal would act on, and bounded
    Run hostile = run("\u001b]0;owned\u0007" + "x".repeat(10_000));
    assertThat(hostile.code()).isEqualTo(2);
    assertThat(hostile.err()).doesNotContain("\u001b", "\u0007").hasSizeLessThan(400);
    assertThat(run("test").err()).contains("./knockwatch test");
  }

  @Test
  void aFileFlagNamesItselfTheFileAndTheCause(@TempDir Path dir) throws IOException {
    Run missing = run("query", "DemoCommandId000000001", "--token-file", "/nonexistent/token");
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err()).isEqualTo("knockwatch: --token-file /nonexistent/token: no such file" + System.lineSeparator());
    Run directory = run("allowlist", "suggest", "--token-file", dir.toString());
    assertThat(directory.code()).isEqualTo(2);
    assertThat(directory.err()).isEqualTo("knockwatch: --token-file " + dir + ": is a directory, not a file"
        + System.lineSeparator());
    Path binary = Files.write(dir.resolve("binary"), new byte[] {(byte) 0xff, (byte) 0xfe, 0x41});
    assertThat(run("query", "DemoCommandId000000001", "--token-file", binary.toString()).err())
        .isEqualTo("knockwatch: --token-file " + binary + ": not UTF-8 text" + System.lineSeparator());
    for (String[] flag : List.of(new String[] {"up", "--rules", "../alert-rules", "--sources"},
        new String[] {"ingest", "--config"}, new String[] {"probe", "guard", "--settings"},
        new String[] {"probe", "codex", "--config"})) {
      List<String> args = new java.util.ArrayList<>(List.of(flag));
      args.add("/nonexistent/file.yaml");
      Run r = run(args.toArray(String[]::new));
      assertThat(r.code()).as(args.toString()).isEqualTo(2);
      assertThat(r.err()).isEqualTo("knockwatch: " + flag[flag.length - 1] + " /nonexistent/file.yaml: no such file"
          + System.lineSeparator());
      args.set(args.size() - 1, dir.toString());
      assertThat(run(args.toArray(String[]::new)).err()).isEqualTo("knockwatch: " + flag[flag.length - 1] + " " + dir
          + ": is a directory, not a file" + System.lineSeparator());
    }
    Run api = run("up", "--api-token-file", "/nonexistent/api-token", "--rules", "../alert-rules");
    assertThat(api.code()).isEqualTo(2);
    assertThat(api.err()).isEqualTo("knockwatch: --api-token-file /nonexistent/api-token: no such file"
        + System.lineSeparator());
  }

  @Test
  void noSubcommandShowsUsageAndIsAUsageError() {
    Run r = run();
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("Usage: knockwatch");
  }

  @Test
  void replayNeedsInput() {
    Run r = run("replay");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).startsWith("knockwatch: Missing required option: '--input=PATH'");
  }

  @Test
  void aMissingRulesDirectoryIsAUsageError() {
    Run r = run("replay", "--rules", "no/such/dir", "--input", ".");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("knockwatch: rules directory no/such/dir does not exist" + System.lineSeparator());
  }

  @Test
  void aMissingInputIsAUsageError() {
    Run r = run("replay", "--rules", "../alert-rules", "--input", "no/such/input");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("knockwatch: input no/such/input does not exist" + System.lineSeparator());
  }

  @Test
  void parsePrintsEventsOnStdoutAndRejectedLinesWithTheirReasonOnStderr(@TempDir Path dir) throws IOException {
    Path file = Files.createDirectories(dir.resolve("ci-7")).resolve("xhfHytmXL-L6RsYw2CrSjA.violations.jsonl");
    Files.writeString(file, "{\"line\":\"deny network-outbound example.com:443 (host is not on the allow list)\"}\n"
        + "not json\n"
        + "{\"line\":\"deny openat /etc/x\",\"commandId\":\"0123456789\"}\n");
    Run r = run("parse", file.toString());
    assertThat(r.code()).isZero();
    // the last record claims another command id: the file name's is kept, the claim travels beside it
    assertThat(r.out().lines().toList()).hasSize(2)
        .allSatisfy(l -> assertThat(l).contains("\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\",\"agentId\":\"ci-7\",\"source\":\"srt-violation\""))
        .last().asString().endsWith(",\"identityConflict\":{\"commandId\":\"0123456789\"}}");
    assertThat(r.err().lines().toList()).singleElement().asString()
        .startsWith("ci-7/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl:81: unparseable: ");

    // where the file name is no id, the record's is the only one, and a short one is refused
    Path session = dir.resolve("ci-7").resolve("session.violations.jsonl");
    Files.writeString(session, "{\"line\":\"deny openat /etc/x\",\"commandId\":\"0123456789\"}\n");
    Run s = run("parse", session.toString());
    assertThat(s.out()).isEmpty();
    assertThat(s.err().lines().toList()).containsExactly("ci-7/session.violations.jsonl:0: short-command-id: "
        + "commandId is too short: 10 characters, at least 22 required");
  }

  /**
   * Issue 43: srt's raw answers as a client that records them writes them (nc, curl --include of
   * the CONNECT), its bytes exactly: each is a refusal whose target is unknown. The empty line
   * that ends the headers was dropped before the parser saw it, and the refusal with it.
   */
  @Test
  void parseReadsAProxysRawAnswerWithNoRequestLine(@TempDir Path dir) throws IOException {
    Path agent = Files.createDirectories(dir.resolve("ci-7"));
    Path fixtures = Path.of("../ingest/src/test/resources/dev/knockwatch/ingest/formats/proxy/samples");
    Path http = Files.copy(fixtures.resolve("srt-0.0.83-curl-7.88.1-a3-http-raw-403.bin"),
        agent.resolve("RawHttpAnswer000000001.curl.log"));
    Path connect = Files.copy(fixtures.resolve("srt-0.0.83-curl-7.88.1-b3-connect-raw-403.bin"),
        agent.resolve("RawConnectAnswer000001.stderr.log"));
    for (Path f : List.of(http, connect)) {
      Run r = run("parse", f.toString());
      assertThat(r.code()).isZero();
      assertThat(r.err()).isEmpty();
      assertThat(r.out().lines().toList()).as(f.toString()).singleElement().asString()
          .contains("\"source\":\"proxy-403\"", "\"targetUnknown\":true", "\"proxyError\":\"blocked-by-allowlist\"")
          .doesNotContain("\"host\"");
    }
  }

  @Test
  void parseReadsAnyFileAsTheTypeItIsGiven(@TempDir Path dir) throws IOException {
    Path file = Files.createDirectories(dir.resolve("ci-7")).resolve("xhfHytmXL-L6RsYw2CrSjA.strace");
    Files.writeString(file, "13139 connect(3, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr(\"93.184.215.14\")}, 16)"
        + " = -1 ENETUNREACH (Network is unreachable)\n13139 +++ exited with 1 +++\n");
    Path renamed = Files.move(file, file.resolveSibling("xhfHytmXL-L6RsYw2CrSjA.strace.txt"));
    assertThat(run("parse", renamed.toString()).code()).isEqualTo(2);
    Run r = run("parse", "--type", "strace", renamed.toString());
    assertThat(r.code()).isZero();
    assertThat(r.out()).contains("\"source\":\"strace\"", "\"host\":\"93.184.215.14\"", "\"errno\":\"ENETUNREACH\"");
  }

  @Test
  void parsePrintsOcsfAndEcs(@TempDir Path dir) throws IOException {
    Path file = Files.createDirectories(dir.resolve("ci-7")).resolve("xhfHytmXL-L6RsYw2CrSjA.strace");
    Files.writeString(file, "13139 connect(3, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr(\"93.184.215.14\")}, 16)"
        + " = -1 ENETUNREACH (Network is unreachable)\n");
    JsonNode ocsf = dev.knockwatch.events.Json.MAPPER.readTree(run("parse", "--format", "ocsf", file.toString()).out());
    assertThat(ocsf.get("class_uid").asInt()).isEqualTo(4001);
    assertThat(ocsf.get("disposition").asText()).isEqualTo("Blocked");
    assertThat(ocsf.at("/dst_endpoint/ip").asText()).isEqualTo("93.184.215.14");
    JsonNode ecs = dev.knockwatch.events.Json.MAPPER.readTree(run("parse", "--format", "ecs", file.toString()).out());
    assertThat(ecs.at("/event/type/0").asText()).isEqualTo("denied");
    assertThat(ecs.at("/labels/command_id").asText()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
    Run bad = run("parse", "--format", "cef", file.toString());
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.err()).isEqualTo("knockwatch: --format cef is not one of json, ocsf, ecs" + System.lineSeparator());
  }

  @Test
  void parseRefusesAnUnknownType(@TempDir Path dir) throws IOException {
    Path file = Files.writeString(dir.resolve("a.log"), "x\n");
    Run r = run("parse", "--type", "nope", file.toString());
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("knockwatch: unknown --type nope (known: " + dev.knockwatch.ingest.Formats.names() + ")" + System.lineSeparator());
  }

  /** A kernel LOG line and a ulogd2 record: the refusal, with the agent the --with mapping names, and no command. */
  @Test
  void parseReadsTheKernelsAndUlogdsRefusalsWithTheMappedAgent(@TempDir Path dir) throws IOException {
    Path samples = Path.of("../ingest/src/test/resources/dev/knockwatch/ingest/formats/netfilter/samples");
    for (String sample : List.of("linux-6.18.44-nft-1.0.6-log-devkmsg-raw.txt",
        "ulogd2-2.0.8-json-group1-egress-boolean_label.log")) {
      Path file = Files.copy(samples.resolve(sample), dir.resolve(sample));
      Run r = run("parse", "--type", "netfilter", "--with", "prefixes=[\"agent-egress-deny: \"]",
          "--with", "agents=[{uid: \"65534\", agent: sandbox-runner-1}]", file.toString());
      assertThat(r.code()).isZero();
      assertThat(r.out().lines().toList()).as(sample).isNotEmpty().allSatisfy(l -> assertThat(l)
          .contains("\"agentId\":\"sandbox-runner-1\"", "\"source\":\"netfilter\"", "\"commandUnknown\":true")
          .doesNotContain("\"commandId\""));
    }
    // without a mapping, the format says what it needs
    assertThat(run("parse", "--type", "netfilter", dir.resolve("linux-6.18.44-nft-1.0.6-log-devkmsg-raw.txt").toString())
        .err()).contains("prefixes is missing", "agents is missing");
  }

  /** tinyproxy's log as the README's parse line reads it: the mapped client's refusals, the others' rejected with their address. */
  @Test
  void parseReadsTinyproxysRefusalsOfTheMappedClient(@TempDir Path dir) throws IOException {
    Path file = Files.copy(Path.of("../ingest/src/test/resources/dev/knockwatch/ingest/formats/tinyproxy/samples"
        + "/tinyproxy-1.11.1-info-refusals.log"), dir.resolve("tinyproxy.log"));
    Run r = run("parse", "--type", "tinyproxy", "--with", "agents=[{source: 10.88.0.2, agent: sandbox-runner-1}]",
        file.toString());
    assertThat(r.code()).isZero();
    assertThat(r.out().lines().toList()).hasSize(3).allSatisfy(l -> assertThat(l)
        .contains("\"agentId\":\"sandbox-runner-1\"", "\"source\":\"tinyproxy\"", "\"commandUnknown\":true")
        .doesNotContain("\"commandId\""));
    assertThat(r.err()).contains("unmapped-identity: the source maps tinyproxy src=10.88.0.3 to no agent",
        "tinyproxy src=10.88.0.4", "tinyproxy src=10.88.0.5");
    assertThat(run("parse", "--type", "tinyproxy", file.toString()).err()).contains("agents is missing");
  }

  /**
   * privoxy's log as the README's parse line reads it: the mapped client's refusals, the others' rejected with their
   * address, its DNS failure neither.
   */
  @Test
  void parseReadsPrivoxysRefusalsOfTheMappedClient(@TempDir Path dir) throws IOException {
    Path file = Files.copy(Path.of("../ingest/src/test/resources/dev/knockwatch/ingest/formats/privoxy/samples"
        + "/privoxy-3.0.34-debug-2-1024.log"), dir.resolve("logfile"));
    Run r = run("parse", "--type", "privoxy", "--with", "agents=[{source: 10.78.0.2, agent: sandbox-runner-1}]",
        file.toString());
    assertThat(r.code()).isZero();
    assertThat(r.out().lines().toList()).hasSize(3).allSatisfy(l -> assertThat(l)
        .contains("\"agentId\":\"sandbox-runner-1\"", "\"source\":\"privoxy\"", "\"commandUnknown\":true")
        .doesNotContain("\"commandId\"", "SECRET"));
    assertThat(r.err()).contains("unmapped-identity: the source maps privoxy src=10.78.0.3 to no agent",
        "privoxy src=10.78.0.9", "privoxy src=::1").doesNotContain("allowed.invalid");
    assertThat(run("parse", "--type", "privoxy", file.toString()).err()).contains("agents is missing");
  }

  /**
   * Hubble's flows as the README's parse line reads them: the mapped namespace's policy drops, the unmapped pod
   * rejected with who Cilium says it is, the forwarded flow and the conntrack drop neither.
   */
  @Test
  void parseReadsHubblesPolicyDropsOfTheMappedNamespace(@TempDir Path dir) throws IOException {
    Path file = Files.copy(Path.of("../ingest/src/test/resources/dev/knockwatch/ingest/formats/hubble/samples"
        + "/hubble-1.19.4-observe-egress.jsonl"), dir.resolve("flows.jsonl"));
    Run r = run("parse", "--type", "hubble", "--with", "agents=[{namespace: agents, agent: agent-runner}]",
        file.toString());
    assertThat(r.code()).isZero();
    assertThat(r.out().lines().toList()).hasSize(4).allSatisfy(l -> assertThat(l)
        .contains("\"agentId\":\"agent-runner\"", "\"source\":\"hubble\"", "\"commandUnknown\":true")
        .doesNotContain("\"commandId\"", "pypi.org", "10.244.0.12"));
    assertThat(r.err()).contains("unmapped-identity: the source maps hubble pod=ci/build-5f7c9-qz8wd to no agent");
    assertThat(run("parse", "--type", "hubble", file.toString()).err()).contains("agents is missing");
  }

  @Test
  void parseReadsJsonThroughAMapping(@TempDir Path dir) throws IOException {
    Path file = Files.writeString(dir.resolve("envoy.json"),
        "{\"code\":403,\"cmd\":\"xhfHytmXL-L6RsYw2CrSjA\",\"authority\":\"evil.test:443\"}\n{\"code\":200}\n");
    assertThat(run("parse", "--type", "json", file.toString()).err())
        .isEqualTo("knockwatch: --type json: mapping is missing: a json source needs a \"mapping\" of event fields to JSON paths"
            + System.lineSeparator());
    assertThat(run("parse", "--type", "json", "--with", "mapping={hostname: h}", file.toString()).err())
        .startsWith("knockwatch: --type json: mapping: unknown mapping field \"hostname\" (known: agentId, authority, commandId,");
    Run r = run("parse", "--type", "json", "--with", "mapping={commandId: cmd, authority: authority, status: code}",
        file.toString());
    assertThat(r.code()).isZero();
    assertThat(r.out().lines().toList()).singleElement().asString()
        .contains("\"source\":\"json\"", "\"host\":\"evil.test\"", "\"port\":443");
  }

  @Test
  void aBadIngestConfigIsAUsageErrorNamingTheProblem(@TempDir Path dir) throws IOException {
    Path config = Files.writeString(dir.resolve("ingest.yaml"), "sources:\n  - path: x\n    type: syslog\n");
    Run r = run("ingest", "--config", config.toString(), "--var", dir.resolve("var").toString());
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("knockwatch: " + config
        + ":3: source 1: type \"syslog\" is not one of " + dev.knockwatch.ingest.Formats.names() + System.lineSeparator());
  }

  @Test
  void aBadPortIsAUsageError() {
    Run r = run("up", "--rules", "../alert-rules", "--metrics-port", "70000");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("knockwatch: --metrics-port 70000 is not a port (0-65535)" + System.lineSeparator());
  }

  @Test
  void rulesCheckListsEveryProblemAndExitsOne() {
    Path broken = Path.of("../streams-app/src/test/resources/rules/broken");
    Run r = run("rules", "check", broken.toString());
    assertThat(r.code()).as("problems found: 1, as promtool check rules; 2 is for a command used wrong").isEqualTo(1);
    assertThat(r.err().lines().toList()).hasSize(14)
        .contains(broken.resolve("rules.yaml") + ":9: rule knock: detector \"knock\" is not one of count, value-count, off-role, "
            + "address-class, bypass, fs-guard, wall-breach, identity-conflict, ingest-rejects, sandbox-escape, write-attempt, sandbox-unavailable, drift")
        .endsWith("13 problems in " + broken);
  }

  @Test
  void rulesCheckPassesTheShippedRules() {
    Run r = run("rules", "check", "../alert-rules");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("13 rules, 4 roles, policy ")
        .contains("  persistent-retry: count 5 in any 5m per task -> warning; except role guard-probe\n")
        .contains("roles:\n", "  guard-probe: no host\n", "  ci-runner-* -> ci\n", "  anyone else -> default\n")
        .contains("route (a child takes an alert it matches, the first one unless it continues):\n"
            + "  root: any alert -> console; updates every 5m at most\n")
        .as("no Java record dumps").doesNotContain("Route[", "Console[", "Rule[");
  }

  @Test
  void upAndStreamsRefuseAnAllowedHostThatIsNotAHostBeforeStartingAnything() {
    for (String command : new String[] {"up", "streams"}) {
      Run r = run(command, "--rules", "../alert-rules", "--api-allowed-hosts", "knockwatch.soc.example,https://evil.example/");
      assertThat(r.code()).as(command + ": " + r.err()).isEqualTo(Knockwatch.USAGE);
      assertThat(r.err()).isEqualTo("knockwatch: --api-allowed-hosts: not a host name or address, with or without :port: "
          + "\"https://evil.example/\"" + System.lineSeparator());
    }
    assertThat(run("up", "--help").out()).contains("--api-allowed-hosts=HOST[,HOST...]");
  }

  @Test
  void upRefusesABadRetentionBeforeStartingAnything() {
    Run r = run("up", "--rules", "../alert-rules", "--timeline-retention", "nope");
    assertThat(r.code()).isEqualTo(Knockwatch.USAGE);
    assertThat(r.err()).contains("--timeline-retention nope is not a duration");
  }
}
