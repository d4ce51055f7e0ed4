package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

  /**
   * A description is wrapped by picocli to the terminal's width: each of its strings is a paragraph
   * of its own, ending as a sentence does (a string cut mid-sentence prints as a broken line, and
   * the command list shows a command's first string alone).
   */
  @Test
  void everyDescriptionIsWholeAndWrappedByPicocliNotByHand() {
    List<String> cut = new ArrayList<>();
    Pattern whole = Pattern.compile("(?s).*[.:!?)]");
    for (CommandLine c : commands()) {
      String name = c.getCommandSpec().qualifiedName();
      if (c.getCommand() instanceof CommandLine.HelpCommand) {
        continue; // picocli's own
      }
      List<String[]> descriptions = new ArrayList<>();
      List<String> whose = new ArrayList<>();
      descriptions.add(c.getCommandSpec().usageMessage().description());
      whose.add(name);
      List<ArgSpec> args = new ArrayList<>(c.getCommandSpec().options());
      args.addAll(c.getCommandSpec().positionalParameters());
      for (ArgSpec a : args) {
        descriptions.add(a.description());
        whose.add(name + " " + (a instanceof OptionSpec o ? o.longestName() : a.paramLabel()));
      }
      for (int i = 0; i < descriptions.size(); i++) {
        for (String paragraph : descriptions.get(i)) {
          if (!whole.matcher(paragraph.strip()).matches()) {
            cut.add(whose.get(i) + ": \"" + paragraph + "\"");
          }
        }
      }
    }
    assertThat(cut).as("description strings that end mid-sentence").isEmpty();
    String root = new CommandLine(new Knockwatch()).getUsageMessage(CommandLine.Help.Ansi.OFF).replaceAll("\\s+", " ");
    for (CommandLine c : new CommandLine(new Knockwatch()).getSubcommands().values()) {
      if (c.getCommand() instanceof CommandLine.HelpCommand) {
        continue;
      }
      String first = c.getCommandSpec().usageMessage().description()[0];
      // the list wraps it; joined again, the first paragraph is there whole
      assertThat(root).as("knockwatch --help on " + c.getCommandName())
          .contains(c.getCommandName() + " " + first.replaceAll("\\s+", " "));
    }
  }

  /** Every {@code ./knockwatch X} the README names is in {@code knockwatch --help}'s list. */
  @Test
  void theHelpListsEveryCommandTheReadmeNames() throws Exception {
    String readme = Files.readString(Path.of("..", "README.md"));
    Set<String> named = new TreeSet<>();
    Matcher m = Pattern.compile("\\./knockwatch ([a-z][a-z-]*)").matcher(readme);
    while (m.find()) {
      named.add(m.group(1));
    }
    assertThat(named).contains("up", "test", "query");
    Set<String> listed = new CommandLine(new Knockwatch()).getSubcommands().keySet();
    assertThat(listed).containsAll(named);
  }
}
