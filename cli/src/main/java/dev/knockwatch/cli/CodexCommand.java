package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.events.AgentId;
import dev.knockwatch.probes.codex.CodexSettings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code knockwatch codex settings}: what makes the Codex CLI report to knockwatch. */
@Command(name = "codex", mixinStandardHelpOptions = true,
    description = "OpenAI's Codex CLI, watched: its OpenTelemetry to knockwatch's OTLP endpoint, its rollouts read.",
    subcommands = {CodexCommand.Settings.class, CodexCommand.Demo.class})
final class CodexCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return Knockwatch.USAGE;
  }

  @Command(name = "settings", mixinStandardHelpOptions = true,
      description = {"Print the config.toml block that makes this Codex report to knockwatch as agent ID: its "
          + "OpenTelemetry exporter to up's OTLP endpoint with a token up accepts (kept under "
          + "VAR/otlp/tokens/ID.token, made once). Merge it into ~/.codex/config.toml (one user) or "
          + "/etc/codex/config.toml (every user), and run up with --codex-home ID=<the Codex home> to read its "
          + "rollouts too."})
  static final class Settings implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--agent", paramLabel = "ID", defaultValue = "codex",
        description = "The agent the records are filed under, as roles.yaml matches it (default: ${DEFAULT-VALUE}).")
    String agent;

    @Option(names = "--var", paramLabel = "DIR", defaultValue = "${env:KNOCKWATCH_VAR:-var}",
        description = "up's --var: where the token is kept and up says its endpoint (default: ${DEFAULT-VALUE}; env"
            + " KNOCKWATCH_VAR). Refused when Codex's sandbox can write it.")
    Path var;

    @Option(names = "--codex-home", paramLabel = "DIR",
        description = "The Codex home the block is for (default: $CODEX_HOME, else ~/.codex): its rollouts, checked to be"
            + " out of the sandbox's reach.")
    Path codexHome;

    @Override
    public Integer call() throws Exception {
      AgentId.problem(agent).ifPresent(p -> {
        throw new UsageException("--agent " + agent + ": " + p);
      });
      Path home = codexHome != null ? codexHome : System.getenv("CODEX_HOME") != null
          ? Path.of(System.getenv("CODEX_HOME")) : Path.of(System.getenv("HOME") != null ? System.getenv("HOME")
              : System.getProperty("user.home"), ".codex");
      List<String> roots = CodexSettings.writableRoots(home.resolve("config.toml"));
      String tmpdir = System.getenv("TMPDIR");
      Path tokens = OtlpOptions.tokensDir(var.toAbsolutePath().normalize());
      for (var check : List.of(CodexSettings.reachable(tokens, "knockwatch's tokens", tmpdir, roots),
          CodexSettings.reachable(home.resolve("sessions"), "Codex's rollouts", tmpdir, roots))) {
        if (check.isPresent()) {
          throw new UsageException(check.get());
        }
      }
      Path endpointFile = OtlpOptions.endpointFile(var);
      String endpoint = Files.isRegularFile(endpointFile)
          ? Files.readString(endpointFile, StandardCharsets.UTF_8).strip()
          : "http://127.0.0.1:" + dev.knockwatch.ingest.OtlpIngest.DEFAULT_PORT + dev.knockwatch.ingest.OtlpIngest.PATH;
      String token = OtlpOptions.token(tokens, agent);
      spec.commandLine().getOut().print(CodexSettings.otel(endpoint, token, agent));
      spec.commandLine().getOut().flush();
      spec.commandLine().getErr().println("knockwatch: the token is kept in " + tokens.resolve(agent + ".token")
          + "; run `./knockwatch up --codex-home " + agent + "=" + home + "` to read this Codex's rollouts too");
      return Knockwatch.OK;
    }
  }

  @Command(name = "demo", mixinStandardHelpOptions = true,
      description = {"See a hostile Codex session page: the real Codex CLI with this Codex home's config (and its [otel] "
          + "block), a local stand-in playing a model that retries a blocked host five times, reaches for the "
          + "metadata address, --noproxy, a git hook and an escalation (codex exec), then asks to leave the "
          + "sandbox twice, declined and accepted (codex app-server). HOME and the project are private; the "
          + "sessions go to the Codex home."})
  static final class Demo implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--codex-home", paramLabel = "DIR", required = true,
        description = "The Codex home to run with: its config.toml, and where its sessions go (up --codex-home reads them).")
    Path codexHome;

    @Option(names = "--codex", paramLabel = "PATH", description = "The Codex CLI binary (default: the pinned build of "
        + "probes/codex, installed with npm ci when missing).")
    Path codex;

    @Option(names = "--work", paramLabel = "DIR", defaultValue = "var/probes",
        description = "Where the private HOME and project are made (default: ${DEFAULT-VALUE}; not under /tmp).")
    Path work;

    @Override
    public Integer call() throws Exception {
      java.io.PrintWriter out = spec.commandLine().getOut();
      java.util.Optional<dev.knockwatch.probes.codex.Codex> binary =
          dev.knockwatch.probes.codex.Codex.locate(codex, codex == null, System.err);
      if (binary.isEmpty()) {
        spec.commandLine().getErr().println("knockwatch: codex demo cannot run: no Codex CLI binary"
            + (codex == null ? "" : " at " + codex) + " (" + dev.knockwatch.probes.codex.Codex.HOW_TO_GET + ")");
        return Knockwatch.FAILURE;
      }
      java.util.Optional<String> guard = dev.knockwatch.probes.sandbox.NetworkGuard.check();
      if (guard.isPresent()) {
        spec.commandLine().getErr().println("knockwatch: codex demo cannot run: " + guard.get());
        return Knockwatch.FAILURE;
      }
      Path w = work.toAbsolutePath().normalize();
      if (w.startsWith("/tmp")) {
        throw new UsageException("--work " + work + " is under /tmp, which Codex's sandbox lets commands write");
      }
      List<dev.knockwatch.probes.codex.Codex.Result> results =
          new dev.knockwatch.probes.codex.CodexDemo(binary.get()).run(codexHome, w);
      out.println("codex exec: exit " + results.get(0).exitCode() + "; codex app-server: exit "
          + results.get(1).exitCode() + "; sessions in " + codexHome.resolve("sessions"));
      out.flush();
      return Knockwatch.OK;
    }
  }
}
