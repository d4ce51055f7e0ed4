package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./knockwatch claude-code settings} as the README runs it, and the hook it prints run as
 * Claude Code runs a hook ({@code /bin/sh -c}, the record on stdin, the session in the
 * environment): records of parallel tool calls, up to hundreds of kilobytes each, arrive whole
 * and one a line; a log directory the sandbox could write is refused.
 */
@Tag("integration")
class ClaudeCodeHookTest {

  @TempDir static Path dir;
  static Path checkout;

  @BeforeAll
  static void copy() throws Exception {
    checkout = Launched.copyOfRepository(dir.resolve("checkout"));
  }

  record Ran(int exitCode, String out, String err) {}

  private static Ran launch(String name, Map<String, String> env, String... args) throws Exception {
    try (Launched l = Launched.start(checkout, dir.resolve(name), env, args)) {
      int rc = l.awaitExit(Duration.ofMinutes(2));
      return new Ran(rc, l.out(), l.err());
    }
  }

  /** The hook's command line, from the settings the launcher printed. */
  private static String hookCommand(Ran r, String event) throws Exception {
    JsonNode hooks = Json.MAPPER.readTree(r.out()).path("hooks");
    assertThat(hooks.fieldNames()).toIterable().containsExactly("PreToolUse", "PostToolUse", "PostToolUseFailure");
    JsonNode entry = hooks.path(event).get(0);
    assertThat(entry.path("matcher").asText()).isEqualTo("Bash");
    return entry.path("hooks").get(0).path("command").asText();
  }

  private static int runHook(String command, Path cwd, String session, byte[] record) throws Exception {
    ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", command).directory(cwd.toFile())
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectErrorStream(false);
    pb.environment().put("CLAUDE_CODE_SESSION_ID", session);
    pb.environment().remove("CLAUDE_PROJECT_DIR");
    Process p = pb.start();
    try (var in = p.getOutputStream()) {
      in.write(record);
    }
    p.getErrorStream().transferTo(System.err);
    return p.waitFor();
  }

  @Test
  void parallelToolCallsRecordsArriveWholeOneALine() throws Exception {
    Ran r = launch("settings", Map.of(), "claude-code", "settings");
    assertThat(r.exitCode()).as(r.err()).isZero();
    String command = hookCommand(r, "PostToolUse");
    assertThat(command).contains(checkout.resolve("probes/claude-code/hook.sh").toString())
        .contains(checkout.resolve("var/logs").toString()).endsWith("'claude-code'");
    Path project = Files.createDirectories(dir.resolve("project"));
    String session = "5f1c2a9e-0d4b-4e7a-9c1f-6a2b3c4d5e6f";
    int calls = 40;
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<Integer>> done = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      // some records longer than a pipe's buffer (64 KiB): written in many pieces, they must not interleave
      String output = String.valueOf((char) ('a' + i % 26)).repeat(i % 4 == 0 ? 300_000 : 1_000 + i);
      byte[] record = Json.MAPPER.writeValueAsString(Map.of("session_id", session, "hook_event_name", "PostToolUse",
          "tool_name", "Bash", "tool_use_id", String.format("toolu_01%022d", i),
          "tool_response", Map.of("stdout", output, "stderr", ""))).getBytes(StandardCharsets.UTF_8);
      done.add(pool.submit(() -> runHook(command, project, session, record)));
    }
    for (Future<Integer> f : done) {
      assertThat(f.get()).isZero();
    }
    pool.shutdown();
    List<String> lines = Files.readAllLines(checkout.resolve("var/logs/claude-code/" + session + ".claude-code.jsonl"));
    assertThat(lines).hasSize(calls);
    Set<String> ids = new HashSet<>();
    for (String line : lines) {
      JsonNode n = Json.MAPPER.readTree(line);
      ids.add(n.path("tool_use_id").asText());
      String out = n.path("tool_response").path("stdout").asText();
      assertThat(out.chars().distinct().count()).as("one record's output, not pieces of two").isEqualTo(1);
    }
    assertThat(ids).hasSize(calls);

    // a writer holding the file's lock (another call's record in flight) is waited for, whatever
    // the size of the record: the lock, not the luck of one write(2), keeps records apart
    Path file = checkout.resolve("var/logs/claude-code/" + session + ".claude-code.jsonl");
    Process holder = new ProcessBuilder("flock", file.toString(), "sh", "-c", "sleep 1; echo '{\"held\":true}' >> \"$0\"",
        file.toString()).start();
    Thread.sleep(300);
    assertThat(runHook(command, project, session, "{\"after\":true}".getBytes(StandardCharsets.UTF_8))).isZero();
    assertThat(holder.waitFor()).isZero();
    List<String> last = Files.readAllLines(file);
    assertThat(last.subList(last.size() - 2, last.size())).containsExactly("{\"held\":true}", "{\"after\":true}");
  }

  @Test
  void aLogDirectoryTheSandboxCanWriteIsRefused() throws Exception {
    Ran r = launch("refused", Map.of(), "claude-code", "settings", "--logs", "/tmp/claude-0/knockwatch");
    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err().strip().lines()).singleElement().asString()
        .startsWith("knockwatch: /tmp/claude-0/knockwatch is inside /tmp/claude-0 (Claude Code's temporary directory)");
    // the project's own directory: the hook refuses it on every call (Claude Code's cwd is the sandbox's to write)
    Ran ok = launch("settings-project", Map.of(), "claude-code", "settings", "--logs", dir.resolve("project2/logs").toString());
    assertThat(ok.exitCode()).as(ok.err()).isZero();
    Path project = Files.createDirectories(dir.resolve("project2"));
    int rc = runHook(hookCommand(ok, "PreToolUse"), project, "s1", "{}".getBytes(StandardCharsets.UTF_8));
    assertThat(rc).isEqualTo(1);
    assertThat(project.resolve("logs")).doesNotExist();
  }
}
