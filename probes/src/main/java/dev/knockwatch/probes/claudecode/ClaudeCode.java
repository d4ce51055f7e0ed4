package dev.knockwatch.probes.claudecode;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.probes.sandbox.Checkout;
import dev.knockwatch.probes.sandbox.LoopbackRelay;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The real Claude Code binary, run without a model: a private {@code HOME} (no real session, key
 * or history is touched), the given settings, and {@link MessagesStandIn} playing the model, so
 * that it runs a script of Bash calls in its own sandbox, with its hooks. It runs behind the
 * network guard (a network namespace holding only {@code lo}); the stand-in, in this process's
 * namespace, is reached through a {@link LoopbackRelay}.
 */
public final class ClaudeCode {

  /** Where the pinned build is installed ({@code npm ci}): {@code probes/claude-code/package-lock.json}. */
  public static final String RELATIVE_DIR = "probes/claude-code";
  public static final String BINARY = "node_modules/@anthropic-ai/claude-code-linux-x64/claude";
  public static final String HOW_TO_GET = "npm ci in probes/claude-code (the pinned @anthropic-ai/claude-code-linux-x64), "
      + "or --claude PATH to a Claude Code binary";

  private final Path binary;

  public ClaudeCode(Path binary) {
    this.binary = binary.toAbsolutePath();
  }

  public Path binary() {
    return binary;
  }

  /** The binary {@code explicit} names, else the pinned one of this checkout, installed when missing and {@code install}. */
  public static Optional<ClaudeCode> locate(Path explicit, boolean install, PrintStream say) {
    return Checkout.pinnedBinary(explicit, "KNOCKWATCH_CLAUDE_CODE", RELATIVE_DIR, BINARY, "the pinned Claude Code build", install, say)
        .map(ClaudeCode::new);
  }

  /** What a run printed: its exit status, and its {@code --output-format json} result (null when none). */
  public record Result(int exitCode, JsonNode result, String stderr) {}

  /**
   * Runs {@code script} in a session in {@code project}, {@code home} as HOME, with {@code settings}
   * as the user's own ({@code home/.claude/settings.json}, where the README has a user merge the hooks).
   */
  public Result run(Path home, Path project, JsonNode settings, List<MessagesStandIn.BashCall> script, Duration timeout)
      throws IOException, InterruptedException {
    return run(home, project, settings, script, timeout, List.of());
  }

  /** As {@link #run(Path, Path, JsonNode, List, Duration)}, reaching {@code ports} of this host too (the OTLP endpoint). */
  public Result run(Path home, Path project, JsonNode settings, List<MessagesStandIn.BashCall> script, Duration timeout,
      List<Integer> ports) throws IOException, InterruptedException {
    Files.createDirectories(home);
    Files.createDirectories(project);
    Path settingsFile = Files.createDirectories(home.resolve(".claude")).resolve("settings.json");
    Files.writeString(settingsFile, Json.MAPPER.writeValueAsString(settings));
    try (MessagesStandIn model = new MessagesStandIn(script);
         LoopbackRelay relay = new LoopbackRelay(home, with(ports, model.port()))) {
      List<String> claude = new ArrayList<>(List.of(binary.toString(), "-p", "Run the knockwatch probe's script.",
          "--output-format", "json"));
      ProcessBuilder pb = new ProcessBuilder(relay.wrap(claude)).directory(project.toFile());
      pb.environment().keySet().removeIf(k -> k.startsWith("ANTHROPIC_") || k.startsWith("CLAUDE"));
      pb.environment().put("HOME", home.toString());
      pb.environment().put("ANTHROPIC_BASE_URL", model.baseUrl());
      pb.environment().put("ANTHROPIC_API_KEY", "sk-ant-knockwatch-stand-in-not-a-key");
      pb.environment().put("DISABLE_AUTOUPDATER", "1");
      pb.environment().put("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
      Path err = home.resolve("claude-stderr.txt");
      Path outFile = home.resolve("claude-stdout.json");
      Process p = pb.redirectError(err.toFile()).redirectOutput(outFile.toFile()).start();
      p.getOutputStream().close();
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IOException("Claude Code did not finish within " + timeout.toSeconds() + " s");
      }
      JsonNode result = null;
      try {
        result = Json.MAPPER.readTree(Files.readString(outFile));
      } catch (IOException e) {
        // no result object: the exit status and stderr say why
      }
      return new Result(p.exitValue(), result, Files.readString(err));
    }
  }

  private static List<Integer> with(List<Integer> ports, int model) {
    List<Integer> all = new ArrayList<>(ports);
    all.add(model);
    return all;
  }
}
