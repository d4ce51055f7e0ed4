package dev.knockwatch.probes.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Sanitize;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs one command in the real srt through {@code probes/srt-bridge/bridge.mjs}, always behind
 * the {@link NetworkGuard}. The bridge writes the violation records and the annotated stderr under
 * {@code <logs>/<agentId>/<commandId>.*}, where ingest reads them, and tells us what the command
 * saw.
 */
public final class SrtBridge {

  /** Where the bridge lives inside a checkout. */
  public static final String RELATIVE_DIR = "probes/srt-bridge";
  static final String SCRIPT = "bridge.mjs";
  static final String LIBRARY = "node_modules/@anthropic-ai/sandbox-runtime/package.json";

  /** What the sandboxed command did, as the bridge reports it ({@code --json}). */
  public record Run(String commandId, String agentId, Integer exitCode, String stdout, String stderr, int violations) {

    /** stdout and stderr together, for matching the evidence of a refusal. */
    public String output() {
      return stdout + "\n" + stderr;
    }
  }

  private final Path dir;

  public SrtBridge(Path dir) {
    this.dir = dir.toAbsolutePath();
  }

  /**
   * The bridge of this installation: {@code KNOCKWATCH_SRT_BRIDGE} when set, else
   * {@code probes/srt-bridge} in the checkout the running classes come from (or the working
   * directory's).
   */
  public static Optional<SrtBridge> locate() {
    return Checkout.locate("KNOCKWATCH_SRT_BRIDGE", RELATIVE_DIR, SCRIPT).map(SrtBridge::new);
  }

  public Path dir() {
    return dir;
  }

  /** Installs the pinned srt library ({@code npm ci}) when it is not there yet. */
  public void install(PrintStream say) {
    if (Files.isRegularFile(dir.resolve(LIBRARY))) {
      return;
    }
    say.println("knockwatch: installing @anthropic-ai/sandbox-runtime for the srt bridge (npm ci in " + dir + ")");
    try {
      Process p = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
          .directory(dir.toFile()).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0 || !Files.isRegularFile(dir.resolve(LIBRARY))) {
        throw new IllegalStateException("npm ci in " + dir + " failed: " + out.strip());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run npm ci in " + dir, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted during npm ci", e);
    }
  }

  /**
   * Runs {@code command} in the sandbox that {@code settings} describe, in {@code cwd}, with the
   * extra environment {@code env} (HOME, say), behind a fresh network guard. The bridge runs in
   * {@code cwd}, so every path it is handed is made absolute first.
   *
   * @param canaryPort when above 0, the bridge serves a canary page on 127.0.0.1 at that port
   *     inside the guard: the target a network probe must not reach
   * @throws IOException when the bridge (not the command) fails: its message says why
   */
  public Run run(Path settings, Path logs, String agentId, String commandId, Path cwd, Map<String, String> env,
      int canaryPort, boolean strace, String command, Duration timeout) throws IOException {
    cwd = cwd.toAbsolutePath();
    List<String> argv = new ArrayList<>(List.of("node", dir.resolve(SCRIPT).toString(),
        "--settings", settings.toAbsolutePath().toString(), "--logs", logs.toAbsolutePath().toString(),
        "--agent", agentId, "--command-id", commandId, "--cwd", cwd.toString(), "--json"));
    if (canaryPort > 0) {
      argv.addAll(List.of("--canary", Integer.toString(canaryPort)));
    }
    if (strace) {
      argv.add("--strace");
    }
    argv.addAll(List.of("-c", command));
    ProcessBuilder pb = new ProcessBuilder(NetworkGuard.wrap(argv)).directory(cwd.toFile());
    pb.environment().putAll(env);
    Process p = pb.start();
    p.getOutputStream().close();
    CompletableFuture<String> err = drain(p.getErrorStream());
    CompletableFuture<String> out = drain(p.getInputStream());
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        throw new IOException("the srt bridge did not finish within " + timeout.toSeconds() + " s: " + command);
      }
      String stdout = out.join();
      String stderr = err.join().strip();
      if (p.exitValue() != 0) {
        throw new IOException("the srt bridge failed (exit " + p.exitValue() + "): " + why(stderr));
      }
      JsonNode r = Json.MAPPER.readTree(stdout);
      if (r == null || !r.isObject()) {
        throw new IOException("the srt bridge printed no result: " + stdout.strip());
      }
      JsonNode code = r.get("exitCode");
      return new Run(r.path("commandId").asText(), r.path("agentId").asText(),
          code == null || code.isNull() ? null : code.asInt(), r.path("stdout").asText(""),
          r.path("stderr").asText(""), r.path("violations").asInt());
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while the srt bridge ran", e);
    }
  }

  /**
   * The one line of a failed bridge's stderr that says why: its own message
   * ({@code knockwatch-srt-bridge: ...}), else Node's error line, else the last line.
   */
  static String why(String stderr) {
    List<String> lines = stderr.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
    String line = lines.stream().filter(l -> l.startsWith("knockwatch-srt-bridge:")).findFirst()
        .or(() -> lines.stream().filter(l -> l.matches("^\\w*Error\\b.*")).findFirst())
        .orElse(lines.isEmpty() ? "no message" : lines.get(lines.size() - 1));
    return Sanitize.text(line, 300);
  }

  /** Reads a stream to its end on a thread of its own (the common pool may have one thread). */
  private static CompletableFuture<String> drain(InputStream in) {
    CompletableFuture<String> f = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try (in) {
        f.complete(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      } catch (IOException e) {
        f.complete("");
      }
    }, "srt-bridge-drain");
    t.setDaemon(true);
    t.start();
    return f;
  }
}
