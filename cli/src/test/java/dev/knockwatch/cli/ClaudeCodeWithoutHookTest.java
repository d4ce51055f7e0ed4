package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.probes.claudecode.ClaudeCode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Claude Code without knockwatch's hook, the two ways the README gives: the real Claude Code
 * 2.1.332 (the pinned build, no model: the Messages API stand-in) runs the hostile session of
 * {@link ClaudeCodeSessionTest} with the env block of {@code claude-code settings --otel} (its
 * OpenTelemetry to up's OTLP endpoint, as agent claude-code-otel) and no hooks, while {@code up
 * --claude-projects claude-code-transcripts=<HOME>/.claude/projects} reads its transcript. The
 * transcript pages as the hook does (once each for the task, the sandbox's own denials among
 * them); the telemetry, which names no refusal's target, pages on the escape request.
 */
@Tag("integration")
class ClaudeCodeWithoutHookTest {

  static final Duration START = Duration.ofMinutes(4);

  @TempDir Path dir;

  @Test
  void theTranscriptPagesAsTheHookDoesAndTheTelemetryPagesOnTheEscapeRequest() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    ClaudeCode claude = new ClaudeCode(Launched.REPO.resolve(ClaudeCode.RELATIVE_DIR).resolve(ClaudeCode.BINARY));
    assertThat(claude.binary()).as("the pinned Claude Code (./knockwatch test installs it: " + ClaudeCode.HOW_TO_GET + ")")
        .isExecutable();
    Path home = dir.resolve("home-1");
    Files.createDirectories(home.resolve(".claude/projects")); // a user's Claude Code has made it long before
    int otlpPort = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of(), "up", "--no-probes",
        "--claude-projects", "claude-code-transcripts=" + home.resolve(".claude/projects"),
        "--kafka-port", String.valueOf(Launched.freePort()), "--metrics-port", String.valueOf(Launched.freePort()),
        "--api-port", String.valueOf(Launched.freePort()), "--otlp-port", String.valueOf(otlpPort))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("and Claude Code's transcripts: ");
      JsonNode env;
      try (Launched settings = Launched.start(checkout, dir.resolve("settings"), Map.of(), "claude-code", "settings",
          "--otel", "--agent", "claude-code-otel")) {
        assertThat(settings.awaitExit(Duration.ofMinutes(2))).as(settings.err()).isZero();
        env = Json.MAPPER.readTree(settings.out()).path("env");
      }
      assertThat(env.path("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT").asText()).isEqualTo("http://127.0.0.1:" + otlpPort + "/v1/logs");
      ObjectNode userSettings = (ObjectNode) Json.MAPPER.readTree("{\"sandbox\":{\"enabled\":true,"
          + "\"autoAllowBashIfSandboxed\":true,\"allowUnsandboxedCommands\":false,\"network\":{\"allowedDomains\":[]}},"
          + "\"permissions\":{\"allow\":[\"Bash\"]}}");
      userSettings.set("env", env);
      Files.createDirectories(dir.resolve("project-1/.git/hooks"));
      ClaudeCode.Result hostile = claude.run(home, dir.resolve("project-1"), userSettings, ClaudeCodeSessionTest.HOSTILE,
          Duration.ofMinutes(4), List.of(otlpPort));
      assertThat(hostile.exitCode()).as(hostile.stderr()).isZero();

      // the transcript: every page the hook's records give, once each for the task
      for (String page : List.of("ALERT [PAGE] off-role-host firing", "ALERT [WARNING] persistent-retry firing",
          "ALERT [PAGE] bypass firing", "ALERT [PAGE] fs-guard firing", "ALERT [CRITICAL] sandbox-escape firing")) {
        CodexJourneyTest.alert(up, page, "agent=claude-code-transcripts");
      }
      // the metadata call's text names the address in both: its tool_use id is one command, which the first
      // of the two agents to name it holds (the other's events of it are an identity's conflict, not a page)
      String metadata = CodexJourneyTest.alert(up, "ALERT [CRITICAL] sensitive-address firing", "host=169.254.169.254:80");
      boolean transcriptFirst = metadata.contains("agent=claude-code-transcripts");
      // the telemetry: the escape request (and the doors the commands name), never a refusal's target
      String escape = CodexJourneyTest.alert(up, "sandbox-escape firing", "agent=claude-code-otel");
      assertThat(escape).contains("dangerouslyDisableSandbox");
      Thread.sleep(5_000);
      List<String> otel = up.out().lines().filter(l -> l.startsWith("ALERT [") && l.contains("agent=claude-code-otel"))
          .toList();
      // no refusal's target: the five plain retries of example.com are nothing to it (its one off-role host is the
      // --noproxy call's door, which the command's text names)
      assertThat(otel).noneMatch(l -> l.contains("persistent-retry"));
      List<String> transcript = up.out().lines()
          .filter(l -> l.startsWith("ALERT [") && l.contains("agent=claude-code-transcripts")).toList();
      Map<String, Long> perRule = new java.util.TreeMap<>();
      transcript.stream().map(CodexJourneyTest::fingerprint).distinct().forEach(f -> {
        String line = transcript.stream().filter(l -> l.contains(f)).findFirst().orElseThrow();
        Matcher m = ClaudeCodeSessionTest.ALERT.matcher(line);
        assertThat(m.find()).isTrue();
        perRule.merge(m.group(1) + " " + m.group(2), 1L, Long::sum);
      });
      Map<String, Long> expected = new java.util.TreeMap<>(Map.of("PAGE off-role-host", 1L, "WARNING persistent-retry", 1L,
          "PAGE bypass", 1L, "PAGE fs-guard", 1L, "CRITICAL sandbox-escape", 1L));
      if (transcriptFirst) {
        expected.put("CRITICAL sensitive-address", 1L);
      }
      assertThat(perRule).as("one alert of each rule for the task, as the hook gives").containsExactlyInAnyOrderEntriesOf(
          expected);
      assertThat(up.out().lines().filter(l -> l.startsWith("ALERT [CRITICAL] sensitive-address firing"))
          .map(CodexJourneyTest::fingerprint).distinct()).as("the metadata call pages once").hasSize(1);
      up.stop(Duration.ofSeconds(90));
    }
  }
}
