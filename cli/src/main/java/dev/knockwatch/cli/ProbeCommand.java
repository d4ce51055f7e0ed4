package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.probes.guard.GuardProbe;
import dev.knockwatch.probes.guard.GuardProbes;
import dev.knockwatch.probes.guard.GuardRunner;
import dev.knockwatch.probes.guard.ProbeOutcome;
import dev.knockwatch.probes.limit.LimitEmitter;
import dev.knockwatch.probes.limit.LimitPlan;
import dev.knockwatch.probes.limit.SrtLimitProbe;
import dev.knockwatch.probes.sandbox.RealSandbox;
import dev.knockwatch.probes.sandbox.SrtBridge;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code knockwatch probe guard|limit}: knockwatch's own test traffic, on the real sandbox. */
@Command(name = "probe", mixinStandardHelpOptions = true,
    description = "Test the wall (guard) or make controlled retry storms (limit); every probe runs in a fresh"
        + " network namespace holding only lo.",
    subcommands = {ProbeCommand.Guard.class, ProbeCommand.Limit.class, ProbeCommand.ClaudeCodeChecks.class,
        ProbeCommand.CodexChecks.class})
final class ProbeCommand implements Callable<Integer> {

  /** Exit status of {@code probe guard} when a probe that must be refused was not. */
  static final int WALL_BREACHED = 3;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return Knockwatch.USAGE;
  }

  /** 3 when any probe that ran was not refused (a breach), else 1 when one could not run, else 0. */
  static int exitCode(List<ProbeOutcome> outcomes) {
    if (outcomes.stream().anyMatch(o -> o.ran() && !o.refused())) {
      return WALL_BREACHED;
    }
    return outcomes.stream().allMatch(ProbeOutcome::ran) ? Knockwatch.OK : Knockwatch.FAILURE;
  }

  /** Where the probes write for ingest, and their own working directories. */
  static final class Dirs {
    @Option(names = "--logs", paramLabel = "DIR", defaultValue = "${env:KNOCKWATCH_LOGS:-var/logs}",
        description = "Where the refusals (and guard results) are written for ingest (default: ${DEFAULT-VALUE}; env KNOCKWATCH_LOGS, as up and ingest read it).")
    Path logs;

    @Option(names = "--work", paramLabel = "DIR", defaultValue = "var/probes",
        description = "The probes' own HOME and working directories (default: ${DEFAULT-VALUE}).")
    Path work;
  }

  @Command(name = "guard", mixinStandardHelpOptions = true,
      description = {"Run the guard probes on the real srt: each command must be refused.",
          "Exit 0 when every probe was refused, 3 when any was not (its result raises wall-breach), 1 when a "
          + "probe could not run."})
  static final class Guard implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Mixin Dirs dirs;

    @Option(names = "--settings", paramLabel = "FILE",
        description = "srt settings to test instead of the built-in ones (nothing allowed out, ~/.ssh hidden, "
            + "only . writable, .env denied).")
    Path settings;

    @Option(names = "--only", paramLabel = "NAME", split = ",", description = "Run only these probes.")
    List<String> only;

    @Option(names = "--json", description = "One JSON object a probe (probe, commandId, expected, observed, refused).")
    boolean json;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      List<GuardProbe> probes = new ArrayList<>();
      if (only == null || only.isEmpty()) {
        probes.addAll(GuardProbes.all());
      } else {
        for (String name : only) {
          probes.add(GuardProbes.named(name).orElseThrow(() -> new UsageException("no guard probe \""
              + Sanitize.text(name, 60) + "\"; there are " + GuardProbes.all().stream().map(GuardProbe::name).toList())));
        }
      }
      if (settings != null && !Files.isRegularFile(settings)) {
        dev.knockwatch.cli.run.FileOption.check("--settings", settings);
      }
      SrtBridge bridge = RealSandbox.prepare(System.err);
      List<ProbeOutcome> outcomes = new GuardRunner(bridge, dirs.logs, dirs.work, Clock.systemUTC())
          .run(probes, p -> settings);
      for (ProbeOutcome o : outcomes) {
        if (json) {
          out.println(o.toJson());
        } else {
          out.printf(Locale.ROOT, "%-18s %-8s %s%n", o.probe(), !o.ran() ? "ERROR" : o.refused() ? "refused" : "BREACH",
              !o.ran() ? o.error() : o.observed());
        }
      }
      if (!json) {
        out.println("results and refusals written under " + dirs.logs.resolve(GuardRunner.AGENT_ID));
      }
      out.flush();
      return exitCode(outcomes);
    }
  }

  @Command(name = "claude-code", mixinStandardHelpOptions = true,
      description = {"The wall checklist through the real Claude Code, with your own settings, in a private HOME (no real "
          + "session, key or history is touched; a local stand-in plays the model): each check one Bash call.",
          "Exit 0 when every check was walled, 3 when any was not (its result raises wall-breach), 1 when it "
          + "could not run."})
  static final class ClaudeCodeChecks implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Mixin Dirs dirs;

    @Option(names = "--settings", paramLabel = "FILE",
        description = "Claude Code settings to test, merged in order (default: ~/.claude/settings.json and "
            + "/etc/claude-code/managed-settings.json, where they exist).")
    List<Path> settings;

    @Option(names = "--claude", paramLabel = "PATH", description = "The Claude Code binary (default: the pinned build of "
        + "probes/claude-code, installed with npm ci when missing).")
    Path claude;

    @Option(names = "--json", description = "One JSON object a check (probe, commandId, expected, observed, refused).")
    boolean json;

    @Override
    public Integer call() throws Exception {
      PrintWriter out = spec.commandLine().getOut();
      PrintWriter err = spec.commandLine().getErr();
      List<Path> files = new ArrayList<>();
      if (settings == null || settings.isEmpty()) {
        files.addAll(dev.knockwatch.probes.claudecode.ClaudeCodeProbe.userSettingsFiles());
      } else {
        for (Path p : settings) {
          if (!Files.isRegularFile(p)) {
            dev.knockwatch.cli.run.FileOption.check("--settings", p);
          }
          files.add(p);
        }
      }
      java.util.Optional<dev.knockwatch.probes.claudecode.ClaudeCode> binary =
          dev.knockwatch.probes.claudecode.ClaudeCode.locate(claude, claude == null, System.err);
      if (binary.isEmpty()) {
        err.println("knockwatch: probe claude-code cannot run: no Claude Code binary" + (claude == null ? "" : " at " + claude)
            + " (" + dev.knockwatch.probes.claudecode.ClaudeCode.HOW_TO_GET + ")");
        return Knockwatch.FAILURE;
      }
      java.util.Optional<String> guard = dev.knockwatch.probes.sandbox.NetworkGuard.check();
      if (guard.isPresent()) {
        err.println("knockwatch: probe claude-code cannot run: " + guard.get());
        return Knockwatch.FAILURE;
      }
      List<ProbeOutcome> outcomes = new dev.knockwatch.probes.claudecode.ClaudeCodeProbe(binary.get(), dirs.logs, dirs.work,
          Clock.systemUTC()).run(files);
      for (ProbeOutcome o : outcomes) {
        if (json) {
          out.println(o.toJson());
        } else {
          out.printf(Locale.ROOT, "%-11s %-8s expected %s; observed: %s%n", o.probe(),
              !o.ran() ? "ERROR" : o.refused() ? "refused" : "BREACH", o.expected(), !o.ran() ? o.error() : o.observed());
        }
      }
      if (!json) {
        out.println("settings: " + (files.isEmpty() ? "none found (Claude Code's defaults)" : files)
            + "; records and results written under " + dirs.logs.resolve(GuardRunner.AGENT_ID));
      }
      out.flush();
      return exitCode(outcomes);
    }
  }

  @Command(name = "codex", mixinStandardHelpOptions = true,
      description = {"The wall checklist through the real Codex CLI, with your own config.toml, in a private CODEX_HOME "
          + "and HOME (no real session, key or history is touched; a local stand-in plays the model): each check "
          + "one exec_command call, every approval asked for declined.",
          "Exit 0 when every check was walled, 3 when any was not (its result raises wall-breach), 1 when it "
          + "could not run."})
  static final class CodexChecks implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Mixin Dirs dirs;

    @Option(names = "--config", paramLabel = "FILE",
        description = "The Codex config.toml to test (default: $CODEX_HOME/config.toml, else ~/.codex/config.toml, where it"
            + " exists).")
    Path config;

    @Option(names = "--codex", paramLabel = "PATH", description = "The Codex CLI binary (default: the pinned build of "
        + "probes/codex, installed with npm ci when missing).")
    Path codex;

    @Option(names = "--json", description = "One JSON object a check (probe, commandId, expected, observed, refused).")
    boolean json;

    @Override
    public Integer call() throws Exception {
      PrintWriter out = spec.commandLine().getOut();
      PrintWriter err = spec.commandLine().getErr();
      Path file = config != null ? config : dev.knockwatch.probes.codex.CodexProbe.userConfig().orElse(null);
      if (config != null && !Files.isRegularFile(config)) {
        dev.knockwatch.cli.run.FileOption.check("--config", config);
      }
      java.util.Optional<dev.knockwatch.probes.codex.Codex> binary =
          dev.knockwatch.probes.codex.Codex.locate(codex, codex == null, System.err);
      if (binary.isEmpty()) {
        err.println("knockwatch: probe codex cannot run: no Codex CLI binary" + (codex == null ? "" : " at " + codex)
            + " (" + dev.knockwatch.probes.codex.Codex.HOW_TO_GET + ")");
        return Knockwatch.FAILURE;
      }
      java.util.Optional<String> guard = dev.knockwatch.probes.sandbox.NetworkGuard.check();
      if (guard.isPresent()) {
        err.println("knockwatch: probe codex cannot run: " + guard.get());
        return Knockwatch.FAILURE;
      }
      List<ProbeOutcome> outcomes;
      try {
        outcomes = new dev.knockwatch.probes.codex.CodexProbe(binary.get(), dirs.logs, dirs.work, Clock.systemUTC())
            .run(file);
      } catch (java.io.IOException e) {
        err.println("knockwatch: probe codex could not run: " + Sanitize.text(e.getMessage(), 600));
        return Knockwatch.FAILURE;
      }
      for (ProbeOutcome o : outcomes) {
        if (json) {
          out.println(o.toJson());
        } else {
          out.printf(Locale.ROOT, "%-11s %-8s expected %s; observed: %s%n", o.probe(),
              !o.ran() ? "ERROR" : o.refused() ? "refused" : "BREACH", o.expected(), !o.ran() ? o.error() : o.observed());
        }
      }
      if (!json) {
        out.println("config: " + (file == null ? "none found (Codex's defaults)" : file)
            + "; the session's rollout and the results written under " + dirs.logs.resolve(GuardRunner.AGENT_ID));
      }
      out.flush();
      return exitCode(outcomes);
    }
  }

  @Command(name = "limit", mixinStandardHelpOptions = true,
      description = {"A controlled retry storm: --commands commands knock on --hosts at --rate attempts/s in all.",
          "engine emitter writes srt's records straight to the logs (load tests); srt runs each command in the "
          + "real sandbox (realistic, a few commands a second)."})
  static final class Limit implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Mixin Dirs dirs;

    @Option(names = "--engine", defaultValue = "emitter", description = "emitter or srt (default: ${DEFAULT-VALUE}).")
    String engine;

    @Option(names = "--pattern", defaultValue = "steady",
        description = "steady, burst or slow (stays under --under attempts per command and --window) (default: ${DEFAULT-VALUE}).")
    String pattern;

    @Option(names = "--rate", defaultValue = "10", description = "Attempts per second in all; 0: as fast as possible (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(names = "--duration", defaultValue = "10s", converter = DurationConverter.class, description = "How long: 30s, 5m (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--max", defaultValue = "0", description = "Stop after this many attempts; 0: no limit (default: ${DEFAULT-VALUE}).")
    long max;

    @Option(names = "--commands", defaultValue = "1", description = "Commands retrying at once (default: ${DEFAULT-VALUE}).")
    int commands;

    @Option(names = "--hosts", split = ",", defaultValue = "example.com:443",
        description = "host:port targets, spread over the commands (default: ${DEFAULT-VALUE}).")
    List<String> hosts;

    @Option(names = "--agents", split = ",", defaultValue = LimitPlan.DEFAULT_AGENT,
        description = "Agent ids, spread over the commands: mix them to mix roles (default: ${DEFAULT-VALUE}).")
    List<String> agents;

    @Option(names = "--window", defaultValue = "5m", converter = DurationConverter.class, description = "slow: the window to stay under (default: ${DEFAULT-VALUE}).")
    Duration window;

    @Option(names = "--under", defaultValue = "4", description = "slow: attempts per command and window (default: ${DEFAULT-VALUE}).")
    int under;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      LimitPlan plan;
      try {
        plan = new LimitPlan(LimitPlan.Pattern.of(pattern), rate, duration, max,
            commands, hosts, agents, window, under);
      } catch (IllegalArgumentException e) {
        throw new UsageException(e.getMessage());
      }
      switch (engine) {
        case "emitter" -> {
          LimitEmitter.Result r = new LimitEmitter(dirs.logs, Clock.systemUTC()).run(plan);
          out.printf(Locale.ROOT, "emitter: %,d refusals for %d commands in %.2f s (%,.0f/s) under %s%n",
              r.attempts(), r.commandIds().size(), r.seconds(), r.perSecond(), dirs.logs);
          r.commandIds().stream().limit(10).forEach(id -> out.println("  " + id));
        }
        case "srt" -> {
          try {
            SrtLimitProbe.attemptsPerCommand(plan);
          } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage() + " (--rate, --max)");
          }
          SrtBridge bridge = RealSandbox.prepare(System.err);
          List<String> ids = new SrtLimitProbe(bridge, dirs.logs, dirs.work).run(plan);
          out.printf(Locale.ROOT, "srt: %d commands ran in the real sandbox, refusals under %s%n", ids.size(), dirs.logs);
          ids.stream().limit(10).forEach(id -> out.println("  " + id));
        }
        default -> throw new UsageException("--engine " + Sanitize.text(engine, 40) + " is not emitter or srt");
      }
      out.flush();
      return Knockwatch.OK;
    }
  }
}
