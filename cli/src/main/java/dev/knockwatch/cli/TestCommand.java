package dev.knockwatch.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code knockwatch test}: the launcher's, listed so that {@code --help} names every command the
 * README does. The launcher runs it before any jar exists (it installs what the tests need, then
 * runs Maven); the jar only says so.
 */
@Command(name = "test", mixinStandardHelpOptions = true,
    description = {"Install what the tests need, then run every test: run by the launcher in a checkout "
        + "(./knockwatch test [MAVEN ARGS]), not by the jar."})
final class TestCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().getErr().println("knockwatch: test is run by the launcher in a checkout: ./knockwatch test"
        + " (it installs what the tests need, then runs every module's tests with Maven)");
    return Knockwatch.USAGE;
  }
}
