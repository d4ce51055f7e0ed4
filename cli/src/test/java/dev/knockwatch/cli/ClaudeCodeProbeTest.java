package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./knockwatch probe claude-code} as the README runs it, through the real Claude Code
 * (the pinned build) in its real sandbox: a walled configuration passes every check (exit 0); the
 * sandbox off, or {@code allowUnsandboxedCommands: true} with {@code Bash(curl *)} allowed, fails
 * the checks it opens (exit 3), and each result is written where ingest reads it as probe traffic.
 */
@Tag("integration")
class ClaudeCodeProbeTest {

  @TempDir static Path dir;
  static Path checkout;

  @BeforeAll
  static void copy() throws Exception {
    checkout = Launched.copyOfRepository(dir.resolve("checkout"));
  }

  record Ran(int exitCode, String out, String err) {}

  private static Ran probe(String name, String settingsJson) throws Exception {
    Path settings = dir.resolve(name + ".settings.json");
    Files.writeString(settings, settingsJson);
    try (Launched l = Launched.start(checkout, dir.resolve(name), Map.of(), "probe", "claude-code", "--settings",
        settings.toString(), "--json")) {
      int rc = l.awaitExit(Duration.ofMinutes(5));
      return new Ran(rc, l.out(), l.err());
    }
  }

  /** Each check's name and whether it was refused. */
  private static Map<String, Boolean> results(Ran r) throws Exception {
    Map<String, Boolean> m = new java.util.LinkedHashMap<>();
    for (String line : r.out().lines().toList()) {
      JsonNode n = Json.MAPPER.readTree(line);
      m.put(n.path("probe").asText(), n.path("refused").asBoolean());
    }
    return m;
  }

  @Test
  void aWalledConfigurationPassesEveryCheck() throws Exception {
    Ran r = probe("walled", "{\"sandbox\":{\"enabled\":true,\"allowUnsandboxedCommands\":false,"
        + "\"network\":{\"allowedDomains\":[]},\"filesystem\":{\"denyRead\":[\"~/.ssh\"]}}}");
    assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
    assertThat(results(r)).containsExactly(Map.entry("allowlist", true), Map.entry("noproxy", true),
        Map.entry("home-write", true), Map.entry("ssh-read", true), Map.entry("git-hook", true),
        Map.entry("shortener", true), Map.entry("escape", true));
    // the results lie where ingest reads them, as the guard probes' agent: probe traffic
    try (Stream<Path> files = Files.list(checkout.resolve("var/logs/knockwatch-guard"))) {
      List<Path> all = files.toList();
      assertThat(all).anyMatch(f -> f.toString().endsWith(".claude-code.jsonl"));
      assertThat(all.stream().filter(f -> f.toString().endsWith(".probe.jsonl"))).hasSizeGreaterThanOrEqualTo(7);
    }
  }

  @Test
  void theSandboxOffFailsTheChecksItOpens() throws Exception {
    Ran r = probe("off", "{\"sandbox\":{\"enabled\":false}}");
    assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(ProbeCommand.WALL_BREACHED);
    assertThat(results(r)).containsEntry("allowlist", false).containsEntry("home-write", false)
        .containsEntry("shortener", false).containsEntry("escape", false);
  }

  @Test
  void unsandboxedCommandsAllowedWithCurlLetTheEscapeRetryOut() throws Exception {
    Ran r = probe("escape", "{\"sandbox\":{\"enabled\":true,\"allowUnsandboxedCommands\":true,"
        + "\"network\":{\"allowedDomains\":[]}},\"permissions\":{\"allow\":[\"Bash(curl *)\"]}}");
    assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(ProbeCommand.WALL_BREACHED);
    Map<String, Boolean> results = results(r);
    assertThat(results).as(r.out() + r.err()).containsEntry("escape", false).containsEntry("allowlist", true).containsEntry("home-write", true)
        .doesNotContainKey("ssh-read");
  }

  @Test
  void withoutABinaryItSaysHowToGetOne() throws Exception {
    try (Launched l = Launched.start(checkout, dir.resolve("nobinary"), Map.of(), "probe", "claude-code", "--claude",
        "/nonexistent/claude")) {
      assertThat(l.awaitExit(Duration.ofMinutes(2))).isEqualTo(1);
      assertThat(l.err().strip()).isEqualTo("knockwatch: probe claude-code cannot run: no Claude Code binary at"
          + " /nonexistent/claude (npm ci in probes/claude-code (the pinned @anthropic-ai/claude-code-linux-x64), or --claude"
          + " PATH to a Claude Code binary)");
    }
  }
}
