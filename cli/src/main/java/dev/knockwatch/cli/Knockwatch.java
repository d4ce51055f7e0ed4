package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.cli.bench.BenchCommand;
import dev.knockwatch.events.config.ConfigException;
import java.io.PrintWriter;
import picocli.CommandLine;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The {@code knockwatch} command. {@code main} only wires: the work is in {@link #run}, which tests call. */
@Command(name = "knockwatch",
    mixinStandardHelpOptions = true,
    versionProvider = Knockwatch.Version.class,
    description = "Refused-connection telemetry and alerting for AI-agent sandboxes.",
    subcommands = {UpCommand.class, IngestCommand.class, StreamsCommand.class, NotifyCommand.class, TopicsCommand.class, ReplayCommand.class, ParseCommand.class, FormatsCommand.class, RulesCommand.class, RoutesCommand.class, ExportCommand.class, SilenceCommand.class, QueryCommand.class, AllowlistCommand.class, ProbeCommand.class, ClaudeCodeCommand.class, CodexCommand.class, BenchCommand.class,
        CommandLine.HelpCommand.class})
public final class Knockwatch implements Callable<Integer> {

  @Spec CommandSpec spec;

  /** {@code knockwatch} alone: say what to run. */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return USAGE;
  }

  public static final int OK = 0;
  public static final int FAILURE = 1;
  public static final int USAGE = 2;

  public static void main(String[] args) {
    dev.knockwatch.streams.api.QueryApi.serverDefaults(); // before any HTTP server of this JVM starts
    System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
  }

  public static int run(PrintWriter out, PrintWriter err, String... args) {
    CommandLine cl = new CommandLine(new Knockwatch());
    cl.setOut(out);
    cl.setErr(err);
    cl.setParameterExceptionHandler((e, a) -> {
      // a value a converter refused: the option, the value, and why (DurationConverter)
      String why = e.getCause() instanceof CommandLine.TypeConversionException t
          && e.getArgSpec() instanceof CommandLine.Model.OptionSpec o
          ? o.longestName() + " " + e.getValue() + " " + t.getMessage() : e.getMessage();
      err.println("knockwatch: " + why + " (see --help)");
      return USAGE;
    });
    cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
      if (e instanceof UsageException || e instanceof ConfigException) {
        err.println("knockwatch: " + e.getMessage());
        return USAGE;
      }
      err.println("knockwatch: failed: " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
      if (Boolean.getBoolean("knockwatch.debug")) {
        e.printStackTrace(err);
      }
      return FAILURE;
    });
    return cl.execute(args);
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Knockwatch.class.getPackage().getImplementationVersion();
      return new String[] {"knockwatch " + (v == null ? "(development build)" : v)};
    }
  }
}
