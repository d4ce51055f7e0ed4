package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/** {@code --help} of every command, as a user reads it. */
class HelpTest {

  /** Every command of the tree under {@code knockwatch}, the root included. */
  static List<CommandLine> commands() {
    List<CommandLine> all = new ArrayList<>();
    List<CommandLine> todo = new ArrayList<>(List.of(new CommandLine(new Knockwatch())));
    while (!todo.isEmpty()) {
      CommandLine c = todo.remove(todo.size() - 1);
      all.add(c);
      todo.addAll(c.getSubcommands().values());
    }
    return all;
  }

  @Test
  void everyOptionAndParameterOfEveryCommandSaysWhatItIs() {
    List<String> undescribed = new ArrayList<>();
    int seen = 0;
    for (CommandLine c : commands()) {
      List<ArgSpec> args = new ArrayList<>(c.getCommandSpec().options());
      args.addAll(c.getCommandSpec().positionalParameters());
      for (ArgSpec a : args) {
        seen++;
        if (String.join(" ", a.description()).isBlank()) {
          undescribed.add(c.getCommandSpec().qualifiedName() + " "
              + (a instanceof OptionSpec o ? o.longestName() : a.paramLabel()));
        }
      }
    }
    assertThat(seen).isGreaterThan(100);
    assertThat(undescribed).isEmpty();
  }

  @Test
  void helpLinesBreakBetweenWordsNeverInsideAPathOrACommand() {
    List<String> broken = new ArrayList<>();
    for (CommandLine c : commands()) {
      List<String> lines = c.getUsageMessage(CommandLine.Help.Ansi.OFF).lines().toList();
      for (int i = 0; i + 1 < lines.size(); i++) {
        String line = lines.get(i).stripTrailing();
        String next = lines.get(i + 1).strip();
        // "./knockwatch up" once read ". /knockwatch up" across two lines, "{agentId}/{commandId}" "{agentId}/ {commandId}"
        if (line.endsWith("/") || line.endsWith(".") && next.startsWith("/")) {
          broken.add(c.getCommandSpec().qualifiedName() + ": \"" + line.strip() + "\" / \"" + next + "\"");
        }
      }
    }
    assertThat(broken).isEmpty();
  }
}
