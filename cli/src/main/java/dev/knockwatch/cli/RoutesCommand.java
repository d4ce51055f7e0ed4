package dev.knockwatch.cli;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.pipeline.Routing;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
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
      description = {"Print the receivers an alert with these labels would reach (comma-separated, first line),",
          "then each route that sent it there. With --expect, exit 1 unless they are exactly those."})
  static final class Test implements Callable<Integer> {

    static final Set<String> LABELS = Set.of("rule", "severity", "role", "agent", "command");

    @Spec CommandSpec spec;

    @Mixin RulesOption rulesOption;

    @Option(names = "--labels", paramLabel = "KEY=VALUE", split = ",", required = true,
        description = "The alert's labels: rule, severity, role, agent, command (e.g. rule=off-role-host,severity=page).")
    Map<String, String> labels = new LinkedHashMap<>();

    @Option(names = "--expect", paramLabel = "RECEIVER", split = ",",
        description = "The receivers it must reach, in any order; exit 1 otherwise.")
    List<String> expect;

    @Override
    public Integer call() {
      if (!Files.isDirectory(rulesOption.dir)) {
        throw new UsageException("rules directory " + rulesOption.dir + " does not exist");
      }
      for (String key : labels.keySet()) {
        if (!LABELS.contains(key)) {
          throw new UsageException("--labels " + key + " is not a label (known: agent, command, role, rule, severity)");
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
      Alert alert = new Alert(null, labels.get("rule"), severity, Alert.Status.FIRING, labels.get("command"),
          labels.get("agent"), labels.get("role"), null, null, 1, null, null, null, null, null, List.of(), List.of(),
          null, null, null, null, null);
      List<Routing.Target> targets = new Routing(config.routes()).targets(alert);
      Set<String> receivers = new LinkedHashSet<>();
      targets.forEach(t -> receivers.add(t.receiver()));
      PrintWriter out = spec.commandLine().getOut();
      out.println(receivers.isEmpty() ? "(no receiver)" : String.join(",", receivers));
      List<String> seen = new ArrayList<>();
      for (Routing.Target t : targets) {
        int index = config.routes().indexOf(t.route()) + 1;
        String line = "  route " + index + ": " + t.route().describe();
        if (!seen.contains(line)) {
          seen.add(line);
          out.println(line);
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
