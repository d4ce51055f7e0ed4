package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.cli.run.Rules;
import dev.knockwatch.events.config.ConfigException;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.cli.rulestest.RuleTestFile;
import dev.knockwatch.cli.rulestest.RuleTestReport;
import dev.knockwatch.cli.rulestest.RuleTestRunner;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code knockwatch rules check DIR} (validate an alert-rules directory) and {@code rules test FILE...}. */
@Command(name = "rules", mixinStandardHelpOptions = true, description = "Work with alert-rules directories.",
    subcommands = {RulesCommand.Check.class, RulesCommand.Test.class, RulesCommand.Reference.class})
final class RulesCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return Knockwatch.USAGE;
  }

  @Command(name = "check", mixinStandardHelpOptions = true,
      description = {"Validate rules.yaml, roles.yaml and receivers.yaml when present (every problem as FILE:LINE: "
          + "PROBLEM); exit 1 on any problem. Prints the rules, roles, receivers and routes, secrets masked."})
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

  @Command(name = "reference", mixinStandardHelpOptions = true,
      description = "Print every detector and the keys its rules take (docs/CONFIGURATION.md's rules reference), from the detectors' own declarations.")
  static final class Reference implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      out.print(dev.knockwatch.streams.rules.RulesReference.markdown());
      out.flush();
      return Knockwatch.OK;
    }
  }

  @Command(name = "test", mixinStandardHelpOptions = true,
      description = {"Run rules test files: each test's log lines through ingest's parsers and the detection topology (no "
          + "broker), then the alerts it must and must not raise are checked. Prints each test and, for a "
          + "failure, what differs; exit 1 when a test fails or a file has problems."})
  static final class Test implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Parameters(paramLabel = "FILE", arity = "1..*", description = "Test files (YAML; see alert-rules/tests/).")
    List<Path> files;

    @Override
    public Integer call() throws IOException {
      PrintWriter out = spec.commandLine().getOut();
      int tests = 0;
      int failed = 0;
      int broken = 0;
      for (Path f : files) {
        if (!Files.isRegularFile(f)) {
          throw new UsageException("test file " + f + " does not exist");
        }
      }
      Path work = Files.createTempDirectory("knockwatch-rules-test");
      try {
        for (Path f : files) {
          out.println(f);
          RuleTestFile file;
          Policy policy;
          try {
            file = RuleTestFile.read(f);
            policy = Rules.load(file.rules());
          } catch (ConfigException e) {
            e.problems().forEach(p -> out.println("  " + p));
            broken++;
            continue;
          } catch (UsageException e) {
            out.println("  " + f + ": " + e.getMessage());
            broken++;
            continue;
          }
          for (RuleTestFile.Case c : file.cases()) {
            tests++;
            RuleTestRunner.Outcome o = RuleTestRunner.run(policy, c, work.resolve("test-" + tests));
            if (o.passed()) {
              out.println("  ok    " + c.name() + " (" + o.alerts().size() + " alert records)");
            } else {
              failed++;
              out.println("  FAIL  " + c.name() + " (line " + c.line() + ")");
              out.print(RuleTestReport.diff(o).indent(8));
            }
          }
        }
      } finally {
        deleteTree(work);
      }
      out.println(tests + (tests == 1 ? " test, " : " tests, ") + failed + " failed"
          + (broken == 0 ? "" : ", " + broken + (broken == 1 ? " file" : " files") + " with problems"));
      out.flush();
      return failed == 0 && broken == 0 ? Knockwatch.OK : Knockwatch.FAILURE;
    }

    private static void deleteTree(Path dir) throws IOException {
      try (var paths = Files.walk(dir)) {
        for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }
}
