package dev.knockwatch.cli;

import dev.knockwatch.streams.rules.CountRule;
import dev.knockwatch.streams.rules.RulesLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Loads the count rules for {@code up} and {@code replay}. */
final class Rules {

  private Rules() {}

  static List<CountRule> load(Path dir) {
    if (!Files.isDirectory(dir)) {
      throw new UsageException("rules directory " + dir + " does not exist");
    }
    List<CountRule> rules = RulesLoader.countRules(dir);
    return rules.isEmpty() ? List.of(CountRule.defaultRule()) : rules;
  }

  static String describe(List<CountRule> rules) {
    StringBuilder b = new StringBuilder();
    for (CountRule r : rules) {
      if (b.length() > 0) {
        b.append("; ");
      }
      b.append(r.id()).append(": ").append(r.threshold()).append(" refusals in ")
          .append(r.window().toMinutes() > 0 && r.window().toSeconds() % 60 == 0
              ? r.window().toMinutes() + "m" : r.window().toSeconds() + "s")
          .append(" -> ").append(r.severity().name().toLowerCase());
    }
    return b.toString();
  }
}
