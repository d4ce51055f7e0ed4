package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.cli.bench.BenchCommand;
import dev.knockwatch.events.config.ConfigException;
import dev.knockwatch.events.Sanitize;
import java.io.PrintWriter;
import java.util.List;
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
    subcommands = {UpCommand.class, IngestCommand.class, StreamsCommand.class, NotifyCommand.class, TopicsCommand.class, ReplayCommand.class, ParseCommand.class, FormatsCommand.class, RulesCommand.class, RoutesCommand.class, ExportCommand.class, SilenceCommand.class, QueryCommand.class, AllowlistCommand.class, ProbeCommand.class, ClaudeCodeCommand.class, CodexCommand.class, BenchCommand.class, TestCommand.class,
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
      if (e instanceof CommandLine.UnmatchedArgumentException u && unknownCommand(u) != null) {
        err.println(unknownCommand(u));
        return USAGE;
      }
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

  /**
   * What a word where a command belongs says: that no such command exists, and the nearest ones
   * (a typo of one or two letters, or a prefix); null when the unmatched word is no command's place.
   */
  static String unknownCommand(CommandLine.UnmatchedArgumentException u) {
    CommandLine where = u.getCommandLine();
    if (where.getSubcommands().isEmpty() || u.getUnmatched().isEmpty() || where.getParseResult() == null
        || where.getParseResult().subcommand() != null) {
      return null;
    }
    String word = u.getUnmatched().get(0);
    if (word.startsWith("-")) {
      return null;
    }
    String name = where.getCommandSpec().qualifiedName();
    List<String> near = where.getSubcommands().keySet().stream()
        .filter(c -> !c.equals("help") && word.length() <= 64 && (distance(c, word) <= Math.max(1, Math.min(2, word.length() / 3))
            || word.length() >= 2 && c.startsWith(word)))
        .sorted().toList();
    return name + ": " + Sanitize.text(word, 60) + " is not a command of " + name
        + (near.isEmpty() ? "" : "; did you mean " + String.join(" or ", near) + "?")
        + " (" + name + " --help lists them)";
  }

  /** Edit distance, letters inserted, deleted, changed or swapped side by side. */
  static int distance(String a, String b) {
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      for (int j = 0; j <= b.length(); j++) {
        if (i == 0 || j == 0) {
          d[i][j] = i + j;
          continue;
        }
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length()][b.length()];
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Knockwatch.class.getPackage().getImplementationVersion();
      return new String[] {"knockwatch " + (v == null ? "(development build)" : v)};
    }
  }
}
