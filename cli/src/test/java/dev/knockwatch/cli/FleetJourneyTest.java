package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fleet's walls through one {@code up}, in a copy of the repository: each wall's sources block
 * of the README verbatim (smokescreen, Cilium Hubble, OpenShell, Docker Sandboxes, Envoy), then
 * the README's {@code up} with every one of those files, then each wall's records appended where
 * its section says the wall writes them — samples written from each wall's own source and docs
 * (none of these walls is packaged here), stamped with the time they are written — beside srt's
 * macOS records, written where the README's bridge command writes them. Every wall's refusals
 * page under the agent its sources map them to; an agent two walls refused (smokescreen and Envoy
 * both stand before {@code build-farm} and {@code sandbox-runner-1}) has both walls' refusals in
 * one timeline; each wall's unmapped client pages {@code ingest-rejects} under its own identity;
 * what a wall let through in its audit or report mode is {@code policy-drift} at {@code info}, once
 * per agent; what a wall allowed says nothing.
 */
@Tag("integration")
class FleetJourneyTest {

  static final Duration START = Duration.ofMinutes(3);
  static final Duration ALERT = Duration.ofMinutes(2);
  static final String TOKEN = "fleet-journey-token-00000001";
  /** The OpenShell sandbox {@code work-session}'s key: its refusals count and are found under it. */
  static final String SANDBOX = "session:openshell-work-session/work-session";
  static final Path FORMATS = Launched.REPO.resolve("ingest/src/test/resources/dev/knockwatch/ingest/formats");
  /** The Docker Sandboxes daemon's run; Docker does not document how the name's UTC time is written, so this is the example's. */
  static final String AUDIT = "audit-20261206T100000Z-8a3bc076-79d0-4502-baf3-cc6ad35fb578-";
  static final Pattern BRIDGE = Pattern.compile(
      "node probes/srt-bridge/bridge\\.mjs --settings \\S+ --logs (\\S+) --agent (\\S+) \\\\\\n\\s*-c \"(.*)\"\\n");

  @TempDir Path dir;

  @Test
  void everyWallsRefusalsPageForTheAgentItsSourcesNameAndTwoWallsOfOneAgentMeetInItsTimeline() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    Path state = dir.resolve("state");
    ReadmeBlocks walls = ReadmeBlocks.read("docs/WALLS.md");
    ReadmeBlocks readme = ReadmeBlocks.read();
    for (String block : List.of("mkdir -p var/smokescreen", "mkdir -p var/hubble", "mkdir -p var/openshell",
        "mkdir -p var && cat > var/dockersandbox.yaml", "mkdir -p var/envoy")) {
      ReadmeBlocks.Ran ran = ReadmeBlocks.run(readme.starting("sh", block), checkout,
          Map.of("XDG_STATE_HOME", state.toString()));
      assertThat(ran.exit()).as(block + ": " + ran.output()).isZero();
    }
    // where each section says its wall writes, the files the sources read
    assertThat(walls.starting("sh", "smokescreen ").text()).contains("2>> var/smokescreen/smokescreen.log");
    assertThat(walls.starting("sh", "hubble observe -o json").text()).contains(">> var/hubble/flows.jsonl");
    assertThat(walls.starting("sh", "openshell settings set").text()).contains("--key ocsf_json_enabled --value true");
    assertThat(walls.starting("sh", "openshell sandbox exec --name work-session").text())
        .contains("/var/log/openshell-ocsf.", ">> var/openshell/openshell-ocsf.log");
    Path auditkit = state.resolve("sandboxes/sandboxes/auditkit");
    assertThat(Files.readString(checkout.resolve("var/dockersandbox.yaml"))).contains("path: " + auditkit + "/audit-*.jsonl");
    Files.createDirectories(auditkit); // the daemon's, before it writes a record
    String accessLog = readme.starting("yaml", "access_log:").text();
    assertThat(accessLog).contains("path: var/envoy/access.log");
    Path envoySample = FORMATS.resolve("envoy/samples/envoy-1.37.0-json-format.log");
    for (String field : new String[] {"start_time", "method", "path", "authority", "requested_server_name",
        "response_code", "response_flags", "response_code_details", "connection_termination_details",
        "downstream_remote_address", "downstream_peer_uri_san", "downstream_peer_subject", "upstream_host",
        "user_agent"}) {
      assertThat(accessLog).contains("          " + field + ": \"%");
      assertThat(Files.readString(envoySample)).contains("\"" + field + "\":");
    }
    Matcher bridge = BRIDGE.matcher(readme.starting("sh", "node probes/srt-bridge/bridge.mjs --settings srt-settings.json").text());
    assertThat(bridge.matches()).isTrue();
    JsonNode macFirst = Json.MAPPER.readTree(Files.readAllLines(
        FORMATS.resolve("srt/samples/srt-0.0.83-macos-network-by-ip.violations.jsonl")).get(0));
    assertThat(macFirst.path("command").asText()).isEqualTo(bridge.group(3));
    assertThat(macFirst.path("agentId").asText()).isEqualTo(bridge.group(2));

    // the README's up, with every wall's file
    List<String> upArgs = readmeUp();
    assertThat(upArgs).containsExactly("up", "--sources", "var/smokescreen.yaml", "--sources", "var/hubble.yaml",
        "--sources", "var/openshell.yaml", "--sources", "var/dockersandbox.yaml", "--sources", "var/envoy.yaml");
    List<String> args = new ArrayList<>(upArgs);
    int api = Launched.freePort();
    args.addAll(List.of("--no-probes", "--kafka-port", String.valueOf(Launched.freePort()), "--metrics-port",
        String.valueOf(Launched.freePort()), "--api-port", String.valueOf(api), "--otlp-port",
        String.valueOf(Launched.freePort())));
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN),
        args.toArray(String[]::new))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("and the sources of var/smokescreen.yaml, var/hubble.yaml, var/openshell.yaml,"
          + " var/dockersandbox.yaml, var/envoy.yaml", "watching var/logs/");

      Instant now = Instant.now();
      String seconds = now.truncatedTo(ChronoUnit.SECONDS).toString();
      append(checkout.resolve("var/smokescreen/smokescreen.log"), Files.readString(
          FORMATS.resolve("smokescreen/samples/smokescreen-0.0.4-mtls-connect-http.log"))
          .replaceAll("\"time\":\"[^\"]*\"", "\"time\":\"" + seconds + "\""));
      append(checkout.resolve("var/hubble/flows.jsonl"), (Files.readString(
          FORMATS.resolve("hubble/samples/hubble-1.19.4-observe-egress.jsonl"))
          + Files.readString(FORMATS.resolve("hubble/samples/hubble-1.19.4-observe-audit.jsonl")))
          .replaceAll("\"time\":\"[^\"]*\"", "\"time\":\"" + seconds + "\""));
      append(checkout.resolve("var/openshell/openshell-ocsf.log"),
          (Files.readString(FORMATS.resolve("ocsf/samples/openshell-0.0.111-connect-forward-bypass.jsonl"))
              + Files.readString(FORMATS.resolve("ocsf/samples/openshell-0.0.111-ssrf-unmapped-sandbox.jsonl")))
              .replaceAll("\"time\":[0-9]+,", "\"time\":" + now.truncatedTo(ChronoUnit.SECONDS).toEpochMilli() + ","));
      append(checkout.resolve("var/envoy/access.log"), Files.readString(envoySample)
          .replaceAll("\"start_time\":\"[^\"]*\"", "\"start_time\":\"" + now.truncatedTo(ChronoUnit.MILLIS) + "\""));
      String records = Files.readString(FORMATS.resolve("dockersandbox/samples/dockersandbox-0.31.0-network-deny.jsonl"))
          .replaceAll("\"timestamp\":\"[^\"]*\"", "\"timestamp\":\"" + now.truncatedTo(ChronoUnit.MICROS) + "\"");
      // a file the daemon is still writing: a denial of its own host, never to be read
      String inProgress = records.lines().filter(l -> l.contains("\"resource_id\":\"example.com:443\""))
          .findFirst().orElseThrow().replace("example.com", "in-progress.example") + "\n";
      Files.writeString(auditkit.resolve(AUDIT + "2.jsonl.tmp"), inProgress, StandardCharsets.UTF_8);
      Path tmp = Files.writeString(auditkit.resolve(AUDIT + "1.jsonl.tmp"), records, StandardCharsets.UTF_8);
      Files.move(tmp, auditkit.resolve(AUDIT + "1.jsonl"), StandardCopyOption.ATOMIC_MOVE);
      Path macLogs = Files.createDirectories(checkout.resolve(bridge.group(1)).resolve(bridge.group(2)));
      String byIp = srtMacos("srt-0.0.83-macos-network-by-ip.violations.jsonl", macLogs);
      String fileWrite = srtMacos("srt-0.0.83-macos-file-write.violations.jsonl", macLogs);

      // smokescreen and Envoy: one agent's refusals at either wall are its own
      assertThat(up.awaitLine("ALERT [PAGE] off-role-host firing command=agent:sandbox-runner-1 ", ALERT))
          .contains("agent=sandbox-runner-1", "role=default", "github.com:443");
      assertThat(up.awaitLine("ALERT [CRITICAL] sensitive-address firing command=agent:build-farm ", ALERT))
          .contains("agent=build-farm", "169.254.169.254");
      // Hubble
      assertThat(up.awaitLine("ALERT [PAGE] off-role-host firing command=agent:agent-runner ", ALERT))
          .contains("agent=agent-runner", "role=default");
      assertThat(up.awaitLine("ALERT [CRITICAL] sensitive-address firing command=agent:agent-runner ", ALERT))
          .contains("169.254.169.254");
      // OpenShell
      assertThat(up.awaitLine("ALERT [PAGE] off-role-host firing command=" + SANDBOX + " ", ALERT))
          .contains("agent=openshell-work-session", "role=default");
      assertThat(up.awaitLine("ALERT [PAGE] bypass firing command=" + SANDBOX + " ", ALERT))
          .contains("93.184.216.34");
      // Docker Sandboxes
      assertThat(up.awaitLine("ALERT [PAGE] off-role-host firing command=agent:claude-jordandoe ", ALERT))
          .contains("agent=claude-jordandoe", "role=default", "host=example.com:443");
      assertThat(up.awaitLine("ALERT [CRITICAL] sensitive-address firing command=agent:claude-jordandoe ", ALERT))
          .contains("169.254.169.254");
      // srt on macOS: the proxy's refusal and Seatbelt's of the direct dial are one command's
      assertThat(up.awaitLine("ALERT [PAGE] bypass firing command=" + byIp + " ", ALERT))
          .contains("agent=" + bridge.group(2), "host=93.184.215.14:443", "the IP literal 93.184.215.14:443");
      assertThat(up.awaitLine("ALERT [PAGE] fs-guard firing command=" + fileWrite + " ", ALERT))
          .contains("agent=" + bridge.group(2));
      // what a wall in audit or report mode let through: drift, said once per agent, paging no one
      assertThat(up.awaitLine("ALERT [INFO] policy-drift firing command=agent:webhooks-sender ", ALERT))
          .contains("smokescreen let partner.example.net:443 through in audit mode");
      assertThat(up.awaitLine("ALERT [INFO] policy-drift firing command=agent:agent-runner ", ALERT))
          .contains("hubble let github.com:443 through in audit mode");
      assertThat(up.out().lines().filter(l -> l.contains("webhooks-sender")
          || (l.contains("command=agent:agent-runner ") && l.contains("github.com"))))
          .isNotEmpty().allSatisfy(l -> assertThat(l).contains("ALERT [INFO] policy-drift"));
      // each wall's unmapped client, under its own identity
      for (String wall : List.of("smokescreen ", "hubble ", "ocsf ", "envoy ")) {
        up.awaitLine(l -> l.contains("ALERT [PAGE] ingest-rejects firing ") && l.contains(wall),
            "of the ingest-rejects page of " + wall.strip(), ALERT);
      }

      // the two walls before build-farm and sandbox-runner-1: each agent's one timeline holds both
      JsonNode buildFarm = timeline(api, "agent:build-farm", Set.of("smokescreen", "envoy"));
      assertThat(buildFarm.path("timeline")).allSatisfy(e -> {
        assertThat(e.path("commandUnknown").asBoolean()).isTrue();
        assertThat(e.has("commandId")).isFalse();
        assertThat(e.path("subject").path("identity").asText())
            .isEqualTo(e.path("source").asText().equals("smokescreen") ? "src=10.0.4.9" : "subject=CN=build-farm-7,OU=ci");
      });
      assertThat(buildFarm.path("timeline").findValuesAsText("reason")).contains("deny-metadata");
      timeline(api, "agent:sandbox-runner-1", Set.of("smokescreen", "envoy"));
      JsonNode hubble = timeline(api, "agent:agent-runner", Set.of("hubble"));
      assertThat(hubble.path("timeline")).allSatisfy(e ->
          assertThat(e.path("subject").path("identity").asText()).isEqualTo("pod=agents/agent-runner-6c9f7d5b8-x2lqp"));
      assertThat(hubble.path("timeline").toString()).contains("pastebin.com", "8.8.8.8",
          "egress POLICY_DENY by CiliumNetworkPolicy agents/agents-deny-paste");
      JsonNode openShell = timeline(api, SANDBOX, Set.of("ocsf"));
      assertThat(openShell.path("timeline")).allSatisfy(e ->
          assertThat(e.path("subject").path("identity").asText()).isEqualTo("container=work-session"));
      // its bypass alert comes a commit or two after the refusal's event (detection's, the timeline's)
      awaitAlert(api, SANDBOX, "bypass");
      // the section's query block, verbatim: the agent's sandbox listed, then its timeline by its key
      ReadmeBlocks.Ran asked = ReadmeBlocks.run(walls.starting("sh", "./knockwatch query --agent openshell-work-session"),
          checkout, Map.of("KNOCKWATCH_API_TOKEN", TOKEN));
      assertThat(asked.exit()).as(asked.output()).isZero();
      List<String> said = asked.output().lines().toList();
      assertThat(said.get(0)).startsWith("  COMMAND OR SANDBOX");
      assertThat(said.get(1)).startsWith("  " + SANDBOX + " ").contains(" openshell-work-session ");
      assertThat(said).filteredOn(l -> l.startsWith("command  ")).containsExactly("command  " + SANDBOX);
      assertThat(said).anyMatch(l -> l.contains("bypass") && l.contains("firing"));
      JsonNode docker = timeline(api, "agent:claude-jordandoe", Set.of("dockersandbox"));
      assertThat(docker.path("timeline")).hasSize(2).allSatisfy(e -> {
        assertThat(e.path("subject").path("identity").asText()).isEqualTo("username=jordandoe agent=claude");
        assertThat(e.path("host").asText()).isIn("example.com", "169.254.169.254");
      });
      // what a wall allowed, or another sent, or a daemon had not finished writing, pages nothing
      assertThat(up.out()).doesNotContain("pypi.org", "api.github.com",
          "command=agent:xwing", "api.anthropic.com", "in-progress.example");
      up.stop(Duration.ofSeconds(90));
    }
  }

  /** The README's {@code ./knockwatch up --sources ...} of a fleet, as arguments. */
  private static List<String> readmeUp() throws Exception {
    String text = ReadmeBlocks.read().starting("sh", "./knockwatch up --sources var/smokescreen.yaml").text();
    List<String> words = new ArrayList<>(Arrays.asList(text.replace("\\\n", " ").strip().split("\\s+")));
    assertThat(words.remove(0)).isEqualTo("./knockwatch");
    return words;
  }

  private static void append(Path file, String lines) throws Exception {
    Files.writeString(file, lines, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }

  /** A sample of srt's macOS records, each stamped now (in order), appended where the bridge writes its command's: its id. */
  private static String srtMacos(String sample, Path logs) throws Exception {
    Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    StringBuilder out = new StringBuilder();
    String commandId = null;
    int i = 0;
    for (String line : Files.readAllLines(FORMATS.resolve("srt/samples").resolve(sample), StandardCharsets.UTF_8)) {
      ObjectNode record = (ObjectNode) Json.MAPPER.readTree(line);
      record.put("timestamp", now.plusMillis(100L * i++).toString());
      commandId = record.path("commandId").asText();
      out.append(Json.MAPPER.writeValueAsString(record)).append('\n');
    }
    append(logs.resolve(commandId + ".violations.jsonl"), out.toString());
    return commandId;
  }

  /** The agent's timeline once it holds refusals of every wall in {@code sources} (or 60 s), checked to hold them and only them. */
  private static JsonNode timeline(int api, String agentKey, Set<String> sources) throws Exception {
    Instant deadline = Instant.now().plusSeconds(60);
    JsonNode answer = null;
    while (Instant.now().isBefore(deadline)) {
      try {
        answer = Launched.command(api, TOKEN, agentKey);
      } catch (AssertionError notYet) {
        answer = null;
      }
      if (answer != null && sourcesOf(answer).equals(sources)) {
        break;
      }
      Thread.sleep(200);
    }
    assertThat(answer).as(agentKey + "'s timeline").isNotNull();
    assertThat(answer.path("commandId").asText()).isEqualTo(agentKey);
    assertThat(sourcesOf(answer)).as("the walls in %s's timeline: %s", agentKey, answer).isEqualTo(sources);
    return answer;
  }

  /** Waits until {@code key}'s timeline holds a firing alert of a rule whose id has {@code rule} in it. */
  private static void awaitAlert(int api, String key, String rule) throws Exception {
    Instant deadline = Instant.now().plusSeconds(60);
    JsonNode alerts = null;
    while (Instant.now().isBefore(deadline)) {
      try {
        alerts = Launched.command(api, TOKEN, key).path("alerts");
        for (JsonNode a : alerts) {
          if (a.path("rule").asText().contains(rule) && a.path("status").asText().equals("firing")) {
            return;
          }
        }
      } catch (AssertionError notYet) {
        alerts = null;
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no firing " + rule + " alert in " + key + "'s timeline within 60 s: " + alerts);
  }

  private static Set<String> sourcesOf(JsonNode answer) {
    Set<String> out = new HashSet<>();
    StreamSupport.stream(answer.path("timeline").spliterator(), false).forEach(e -> out.add(e.path("source").asText()));
    return out;
  }
}
