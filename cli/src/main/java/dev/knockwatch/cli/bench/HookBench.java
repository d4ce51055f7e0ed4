package dev.knockwatch.cli.bench;

import picocli.CommandLine;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.probes.claudecode.HookSettings;
import dev.knockwatch.probes.sandbox.Checkout;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What knockwatch's Claude Code hook adds to a tool call: the hook's command line as
 * {@code claude-code settings} prints it, run as Claude Code runs a hook ({@code /bin/sh -c},
 * the record on stdin, the session in the environment), beside {@code true} as the hook, the
 * calls of the two interleaved. Each call is timed from the start of its process to its exit.
 */
@Command(name = "claude-hook", mixinStandardHelpOptions = true,
    description = {"Per tool call: the time knockwatch's Claude Code hook takes, beside `true` as the hook (median, p99)."})
final class HookBench implements Callable<Integer> {

  @Mixin Report report;

  @Option(names = "--calls", defaultValue = "1000", description = "Calls of each hook (default: ${DEFAULT-VALUE}).")
  int calls;

  @Option(names = "--record-bytes", defaultValue = "2048",
      description = "Size of the record on stdin (default: ${DEFAULT-VALUE}, a PostToolUse with a short output).")
  int recordBytes;

  @Override
  public Integer call() throws Exception {
    if (calls < 10 || recordBytes < 200) {
      throw new UsageException("--calls must be at least 10 and --record-bytes at least 200");
    }
    Path hook = Checkout.locate(null, "probes/claude-code", "hook.sh").orElseThrow(() -> new UsageException(
        "cannot find probes/claude-code/hook.sh: run from a knockwatch checkout")).resolve("hook.sh");
    Path tmp = Files.createTempDirectory(Path.of(System.getProperty("user.home")), ".knockwatch-bench-hook-");
    try {
      String padding = "x".repeat(recordBytes - 200);
      byte[] record = ("{\"session_id\":\"3910808c-131a-4082-8590-281847ea4a47\",\"hook_event_name\":\"PostToolUse\","
          + "\"tool_name\":\"Bash\",\"tool_use_id\":\"toolu_01AAAAAAAAAAAAAAAAAAAAAA\",\"tool_response\":{\"stdout\":\""
          + padding + "\",\"stderr\":\"\"}}\n").getBytes(StandardCharsets.UTF_8);
      String ours = HookSettings.command(hook, tmp.resolve("logs"), "bench");
      Files.createDirectories(tmp.resolve("project")); // Claude Code's working directory: not the logs' parent
      List<Long> hookNanos = new ArrayList<>();
      List<Long> trueNanos = new ArrayList<>();
      for (int i = 0; i < 20; i++) { // warm the page cache and the fork path
        run(ours, record, tmp);
        run("true", record, tmp);
      }
      for (int i = 0; i < calls; i++) {
        hookNanos.add(run(ours, record, tmp));
        trueNanos.add(run("true", record, tmp));
      }
      long written = Files.readAllLines(tmp.resolve("logs/bench/3910808c-131a-4082-8590-281847ea4a47.claude-code.jsonl")).size();
      if (written != calls + 20) {
        throw new IllegalStateException("the hook wrote " + written + " records of " + (calls + 20));
      }
      List<Long> h = hookNanos.stream().sorted().toList();
      List<Long> t = trueNanos.stream().sorted().toList();
      Map<String, Object> result = new LinkedHashMap<>();
      result.put("calls", calls);
      result.put("recordBytes", record.length);
      result.put("hookMedianMs", ms(Stats.percentile(h, 50)));
      result.put("hookP99Ms", ms(Stats.percentile(h, 99)));
      result.put("trueMedianMs", ms(Stats.percentile(t, 50)));
      result.put("trueP99Ms", ms(Stats.percentile(t, 99)));
      result.put("addedMedianMs", ms(Stats.percentile(h, 50) - Stats.percentile(t, 50)));
      result.put("addedP99Ms", ms(Stats.percentile(h, 99) - Stats.percentile(t, 99)));
      report.print(result);
      return CommandLine.ExitCode.OK;
    } finally {
      EmbeddedKafkaBroker.wipe(tmp);
    }
  }

  private static long run(String command, byte[] record, Path dir) throws Exception {
    ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", command).directory(dir.resolve("project").toFile())
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.INHERIT);
    pb.environment().put("CLAUDE_CODE_SESSION_ID", "3910808c-131a-4082-8590-281847ea4a47");
    long t0 = System.nanoTime();
    Process p = pb.start();
    try (OutputStream in = p.getOutputStream()) {
      in.write(record);
    } catch (java.io.IOException e) {
      // `true` exits without reading its stdin: a broken pipe is its answer
    }
    int rc = p.waitFor();
    long took = System.nanoTime() - t0;
    if (rc != 0) {
      throw new IllegalStateException(command + " exited " + rc);
    }
    return took;
  }

  private static double ms(long nanos) {
    return Stats.round(nanos / 1e6, 2);
  }
}
