package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.events.Json;
import dev.knockwatch.probes.claudecode.HookSettings;
import dev.knockwatch.probes.sandbox.Checkout;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code knockwatch claude-code settings}: what makes Claude Code's Bash calls reach knockwatch. */
@Command(name = "claude-code", mixinStandardHelpOptions = true,
    description = "Claude Code's sandbox, watched: the hooks that record its Bash calls for ingest.",
    subcommands = {ClaudeCodeCommand.Settings.class})
final class ClaudeCodeCommand implements Callable<Integer> {

  /** The hook script, in the checkout: {@code probes/claude-code/hook.sh}. */
  static final String DIR = "probes/claude-code";
  static final String HOOK = "hook.sh";

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return Knockwatch.USAGE;
  }

  @Command(name = "settings", mixinStandardHelpOptions = true,
      description = {"Print the JSON hooks block that records every Bash call of Claude Code for knockwatch:",
          "merge it into ~/.claude/settings.json (one user) or managed-settings.json (every user of the machine).",
          "The hook runs no JVM: it appends Claude Code's record of the call to LOGS/AGENT/<session>.claude-code.jsonl."})
  static final class Settings implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--logs", paramLabel = "DIR", defaultValue = "${env:KNOCKWATCH_LOGS:-var/logs}",
        description = "Where the hook writes, where up and ingest read (default: ${DEFAULT-VALUE}, made absolute; env KNOCKWATCH_LOGS). "
            + "Refused when Claude Code's sandbox can write it.")
    Path logs;

    @Option(names = "--agent", paramLabel = "ID", defaultValue = "claude-code",
        description = "The agent id the records are filed under, as roles.yaml matches it (default: ${DEFAULT-VALUE}).")
    String agent;

    @Option(names = "--otel", description = "Instead of the hooks, the env block that makes Claude Code export its"
        + " OpenTelemetry log events to up's OTLP endpoint as agent ID (a token kept under VAR/otlp/tokens/ID.token):"
        + " the doors of each Bash command and its requests to leave the sandbox, no refusal's target.")
    boolean otel;

    @Option(names = "--var", paramLabel = "DIR", defaultValue = "${env:KNOCKWATCH_VAR:-var}",
        description = "With --otel: up's --var, where the token is kept and up says its endpoint (default: ${DEFAULT-VALUE}).")
    Path var;

    @Override
    public Integer call() throws Exception {
      if (HookSettings.agentProblem(agent).isPresent()) {
        throw new UsageException("--agent " + agent + ": " + HookSettings.agentProblem(agent).get());
      }
      if (otel) {
        Path tokens = OtlpOptions.tokensDir(var.toAbsolutePath().normalize());
        Path home = HookSettings.userHome();
        Path cwd = Path.of("").toAbsolutePath();
        HookSettings.reachable(tokens, home, cwd, HookSettings.settingsFiles(home, cwd)).ifPresent(why -> {
          throw new UsageException(why);
        });
        Path endpointFile = OtlpOptions.endpointFile(var);
        String endpoint = java.nio.file.Files.isRegularFile(endpointFile)
            ? java.nio.file.Files.readString(endpointFile).strip()
            : "http://127.0.0.1:" + dev.knockwatch.ingest.OtlpIngest.DEFAULT_PORT + dev.knockwatch.ingest.OtlpIngest.PATH;
        String token = OtlpOptions.token(tokens, agent);
        spec.commandLine().getOut().println(Json.MAPPER.writerWithDefaultPrettyPrinter()
            .writeValueAsString(HookSettings.otel(endpoint, token)));
        spec.commandLine().getOut().flush();
        return Knockwatch.OK;
      }
      Path hookDir = Checkout.locate(null, DIR, HOOK).orElseThrow(() -> new UsageException(
          "cannot find " + DIR + "/" + HOOK + ": run from a knockwatch checkout"));
      Path home = HookSettings.userHome();
      Path cwd = Path.of("").toAbsolutePath();
      Path absolute = logs.toAbsolutePath().normalize();
      HookSettings.reachable(absolute, home, cwd, HookSettings.settingsFiles(home, cwd)).ifPresent(why -> {
        throw new UsageException(why);
      });
      spec.commandLine().getOut().println(Json.MAPPER.writerWithDefaultPrettyPrinter()
          .writeValueAsString(HookSettings.settings(hookDir.resolve(HOOK), absolute, agent)));
      return Knockwatch.OK;
    }
  }
}
