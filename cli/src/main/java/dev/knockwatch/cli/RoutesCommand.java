package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.pipeline.Routing;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code knockwatch routes test}: which receivers an alert would reach, as amtool's {@code config routes test}. */
@Command(name = "routes", mixinStandardHelpOptions = true, description = "Work with the routes of receivers.yaml.",
    subcommands = RoutesCommand.Test.class)
final class RoutesCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return Knockwatch.USAGE;
  }

  @Command(name = "test", mixinStandardHelpOptions = true,
      description = {"Print the receivers an alert with these labels would reach (comma-separated, first line), then the "
          + "route of the tree that sent it to each, by its path (root, 1, 2.1, ...).",
          "With --expect, exit 1 unless they are exactly those."})
  static final class Test implements Callable<Integer> {

    static final Set<String> FIELDS = Set.of("rule", "alertname", "severity", "role", "agent", "command");
    private static final Pattern LABEL = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    @Spec CommandSpec spec;

    @Mixin RulesOption rulesOption;

    @Option(names = "--labels", paramLabel = "KEY=VALUE", split = ",", required = true,
        description = {"The alert's labels: rule (or alertname), severity, role, agent, command, and any label a rule sets "
            + "(e.g. rule=off-role-host,severity=page,team=platform)."})
    Map<String, String> labels = new LinkedHashMap<>();

    @Option(names = "--expect", paramLabel = "RECEIVER", split = ",",
        description = "The receivers it must reach, in any order; exit 1 otherwise.")
    List<String> expect;

    @Override
    public Integer call() {
      if (!Files.isDirectory(rulesOption.dir)) {
        throw new UsageException("rules directory " + rulesOption.dir + " does not exist");
      }
      Map<String, String> ruleLabels = new LinkedHashMap<>();
      for (Map.Entry<String, String> e : labels.entrySet()) {
        if (!LABEL.matcher(e.getKey()).matches()) {
          throw new UsageException("--labels " + e.getKey() + " is not a label name (letters, digits and _)");
        }
        if (!FIELDS.contains(e.getKey())) {
          ruleLabels.put(e.getKey(), e.getValue());
        }
      }
      Alert.Severity severity = null;
      if (labels.containsKey("severity")) {
        try {
          severity = Alert.Severity.valueOf(labels.get("severity").toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
          throw new UsageException("--labels severity=" + labels.get("severity")
              + " is not a severity (info, warning, page, critical)");
        }
      }
      ReceiversConfig config = ReceiversConfig.load(rulesOption.dir);
      Alert alert = new Alert(null, labels.getOrDefault("rule", labels.get("alertname")), severity, Alert.Status.FIRING,
          labels.get("command"), labels.get("agent"), labels.get("role"), null, null, 1, null, null, null, null, null,
          List.of(), List.of(), null, null, null, null, null, new Alert.Meta(List.of(), null, ruleLabels, Map.of()));
      List<Routing.Target> targets = new Routing(config.route()).targets(alert);
      Set<String> receivers = new LinkedHashSet<>();
      targets.forEach(t -> receivers.add(t.receiver()));
      PrintWriter out = spec.commandLine().getOut();
      out.println(receivers.isEmpty() ? "(no receiver)" : String.join(",", receivers));
      Set<String> seen = new LinkedHashSet<>();
      for (Routing.Target t : targets) {
        if (seen.add(t.path())) {
          out.println("  " + (t.path().equals("root") ? "root" : "route " + t.path()) + ": " + t.route().describe());
        }
      }
      out.flush();
      if (expect != null && !Set.copyOf(expect).equals(receivers)) {
        spec.commandLine().getErr().println("knockwatch: expected " + String.join(",", expect) + ", got "
            + (receivers.isEmpty() ? "no receiver" : String.join(",", receivers)));
        return Knockwatch.FAILURE;
      }
      return Knockwatch.OK;
    }
  }
}
