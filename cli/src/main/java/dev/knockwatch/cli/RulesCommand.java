package dev.knockwatch.cli;

import dev.knockwatch.events.config.ConfigException;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code knockwatch rules check DIR}: validate an alert-rules directory. */
@Command(name = "rules", mixinStandardHelpOptions = true, description = "Work with alert-rules directories.",
    subcommands = RulesCommand.Check.class)
final class RulesCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return Knockwatch.USAGE;
  }

  @Command(name = "check", mixinStandardHelpOptions = true,
      description = {"Validate rules.yaml, roles.yaml and receivers.yaml when present (every problem as FILE:LINE: PROBLEM);",
          "exit 1 on any problem. Prints the rules, roles, receivers and routes, secrets masked."})
  static final class Check implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Parameters(paramLabel = "DIR", description = "The alert-rules directory.")
    Path dir;

    @Override
    public Integer call() {
      if (!Files.isDirectory(dir)) {
        throw new UsageException("rules directory " + dir + " does not exist");
      }
      List<String> problems = new java.util.ArrayList<>(PolicyLoader.check(dir));
      ReceiversConfig receivers = null;
      try {
        receivers = ReceiversConfig.load(dir);
      } catch (ConfigException e) {
        problems.addAll(e.problems());
      }
      if (!problems.isEmpty()) {
        PrintWriter err = spec.commandLine().getErr();
        problems.forEach(p -> err.println(p));
        err.println(problems.size() + (problems.size() == 1 ? " problem" : " problems") + " in " + dir);
        err.flush();
        return Knockwatch.FAILURE;
      }
      Policy policy = PolicyLoader.load(dir);
      PrintWriter out = spec.commandLine().getOut();
      out.println(dir + ": " + policy.rules().size() + " rules, " + policy.roles().size() + " roles, policy "
          + policy.version() + " — OK");
      out.print(Rules.summary(policy));
      out.print(receivers.dump());
      out.flush();
      return Knockwatch.OK;
    }
  }
}
