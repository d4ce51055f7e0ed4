package dev.knockwatch.probes.claudecode;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.AgentId;
import dev.knockwatch.events.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The {@code hooks} block of Claude Code settings that records every Bash call for knockwatch
 * ({@code probes/claude-code/hook.sh}), and the check that the log directory it names is out of
 * the sandbox's reach: a log the agent can write is a log the agent can forge (docs/TRUST.md).
 */
public final class HookSettings {

  /** The hook events recorded: the call before it runs (its text), and its end (its output). */
  public static final List<String> EVENTS = List.of("PreToolUse", "PostToolUse", "PostToolUseFailure");

  private HookSettings() {}

  /** The user's home as Claude Code sees it: {@code $HOME} (Java's {@code user.home} is the password file's). */
  public static Path userHome() {
    String home = System.getenv("HOME");
    return Path.of(home != null && home.startsWith("/") ? home : System.getProperty("user.home"));
  }

  /** The hook's command line: the script, the log root and the agent, each quoted for {@code sh -c}. */
  public static String command(Path hook, Path logs, String agent) {
    return quote(hook.toString()) + " " + quote(logs.toString()) + " " + quote(agent);
  }

  /** {@code {"hooks": {...}}}: what a user merges into settings.json (or an administrator into managed-settings.json). */
  public static ObjectNode settings(Path hook, Path logs, String agent) {
    ObjectNode root = Json.MAPPER.createObjectNode();
    ObjectNode hooks = root.putObject("hooks");
    for (String event : EVENTS) {
      ArrayNode entries = hooks.putArray(event);
      ObjectNode entry = entries.addObject();
      entry.put("matcher", "Bash");
      entry.putArray("hooks").addObject().put("type", "command").put("command", command(hook, logs, agent));
    }
    return root;
  }

  /**
   * {@code {"env": {...}}}: what makes Claude Code export its OpenTelemetry log events to
   * {@code endpoint} (OTLP/HTTP protobuf, with the agent's bearer token), each Bash call's
   * {@code tool_parameters} included ({@code OTEL_LOG_TOOL_DETAILS}), every second; no metrics.
   */
  public static ObjectNode otel(String endpoint, String token) {
    ObjectNode root = Json.MAPPER.createObjectNode();
    root.putObject("env").put("CLAUDE_CODE_ENABLE_TELEMETRY", "1").put("OTEL_LOGS_EXPORTER", "otlp")
        .put("OTEL_METRICS_EXPORTER", "none").put("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http/protobuf")
        .put("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", endpoint)
        .put("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "Authorization=Bearer " + token)
        .put("OTEL_LOG_TOOL_DETAILS", "1").put("OTEL_LOGS_EXPORT_INTERVAL", "1000");
    return root;
  }

  /** What is wrong with {@code agent} as the directory's name under the log root, if anything. */
  public static Optional<String> agentProblem(String agent) {
    return AgentId.problem(agent);
  }

  /**
   * Why {@code logs} is within the sandbox's reach, if it is: inside Claude Code's own temporary
   * directory ({@code /tmp/claude-<uid>}, the sandbox's {@code TMPDIR}), {@code ~/.claude}, or a
   * path that a {@code sandbox.filesystem.allowWrite} of the settings Claude Code reads names
   * (managed, the user's, the project's in {@code cwd}). The working directory Claude Code runs
   * in is checked by the hook itself, on every call ({@code CLAUDE_PROJECT_DIR}, its cwd).
   */
  public static Optional<String> reachable(Path logs, Path home, Path cwd, List<Path> settingsFiles) {
    Path l = logs.toAbsolutePath().normalize();
    List<Path[]> writable = new ArrayList<>(); // {path, where it comes from}
    writable.add(new Path[] {Path.of("/tmp/claude"), Path.of("Claude Code's temporary directory")});
    writable.add(new Path[] {Path.of("/tmp/claude-" + uid()), Path.of("Claude Code's temporary directory")});
    String tmp = System.getenv("CLAUDE_CODE_TMPDIR");
    if (tmp != null && tmp.startsWith("/")) {
      writable.add(new Path[] {Path.of(tmp), Path.of("CLAUDE_CODE_TMPDIR")});
    }
    writable.add(new Path[] {home.resolve(".claude"), Path.of("~/.claude, Claude Code's own state")});
    for (Path f : settingsFiles) {
      for (String entry : allowWrite(f)) {
        Path p = entry.startsWith("~/") ? home.resolve(entry.substring(2))
            : entry.startsWith("//") ? Path.of(entry.substring(1))
            : entry.startsWith("/") ? Path.of(entry)
            : cwd.resolve(entry);
        writable.add(new Path[] {p.toAbsolutePath().normalize(), Path.of("sandbox.filesystem.allowWrite in " + f)});
      }
    }
    Path real = realOfNearest(l);
    for (Path[] w : writable) {
      Path p = w[0];
      if (l.startsWith(p) || real.startsWith(realOfNearest(p))) {
        return Optional.of(logs + " is inside " + p + " (" + w[1] + "), which Claude Code's sandbox can write:"
            + " choose a directory the sandbox cannot, such as knockwatch's own var/logs (--logs DIR)");
      }
    }
    return Optional.empty();
  }

  /** The settings files Claude Code reads for a session in {@code cwd}, as far as they exist. */
  public static List<Path> settingsFiles(Path home, Path cwd) {
    List<Path> files = new ArrayList<>();
    for (Path p : List.of(Path.of("/etc/claude-code/managed-settings.json"), home.resolve(".claude/settings.json"),
        cwd.resolve(".claude/settings.json"), cwd.resolve(".claude/settings.local.json"))) {
      if (Files.isRegularFile(p)) {
        files.add(p);
      }
    }
    return files;
  }

  private static List<String> allowWrite(Path settings) {
    try {
      JsonNode n = Json.MAPPER.readTree(Files.readString(settings)).path("sandbox").path("filesystem").path("allowWrite");
      List<String> out = new ArrayList<>();
      n.forEach(e -> {
        if (e.isTextual() && !e.asText().isBlank()) {
          out.add(e.asText());
        }
      });
      return out;
    } catch (IOException | RuntimeException e) {
      return List.of(); // Claude Code refuses such a file itself
    }
  }

  /** The path with its longest existing prefix resolved (symbolic links followed). */
  private static Path realOfNearest(Path p) {
    Path existing = p;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return p;
    }
    try {
      return existing.toRealPath().resolve(existing.relativize(p)).normalize();
    } catch (IOException e) {
      return p;
    }
  }

  private static String uid() {
    try {
      return String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return "0";
    }
  }

  private static String quote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }
}
