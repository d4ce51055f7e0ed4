package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.Silence;
import dev.knockwatch.notify.silence.Silences;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code knockwatch silence add|list|expire}: silences on {@code knockwatch.silences}. */
@Command(name = "silence", mixinStandardHelpOptions = true,
    description = "Mute notifications of matching alerts for a while (alerts are still written and counted).",
    subcommands = {SilenceCommand.Add.class, SilenceCommand.ListCmd.class, SilenceCommand.Expire.class})
final class SilenceCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return Knockwatch.USAGE;
  }

  @Command(name = "add", mixinStandardHelpOptions = true,
      description = "Add a silence; prints its id. Give at least one matcher; values may be globs (* and ?).")
  static final class Add implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin ClusterOptions cluster;
    @Option(names = "--rule", paramLabel = "GLOB", description = "The rule's id (persistent-retry, off-role-*).") String rule;
    @Option(names = "--command", paramLabel = "GLOB", description = "The commandId.") String commandId;
    @Option(names = "--agent", paramLabel = "GLOB", description = "The agentId.") String agentId;
    @Option(names = "--role", paramLabel = "GLOB", description = "The agent's role.") String role;
    @Option(names = "--host", paramLabel = "GLOB", description = "The refused host.") String host;
    @Option(names = "--for", paramLabel = "DURATION", defaultValue = "2h", converter = DurationConverter.class,
        description = "How long: 30m, 2h, 1d or ISO-8601 (PT2H) (default: ${DEFAULT-VALUE}).")
    Duration duration;
    @Option(names = "--comment", required = true, description = "Why: shown beside the silence.") String comment;
    @Option(names = "--by", description = "Who (default: $USER).") String by;

    @Override
    public Integer call() throws Exception {
      Map<String, String> matchers = new LinkedHashMap<>();
      put(matchers, "rule", rule);
      put(matchers, "commandId", commandId);
      put(matchers, "agentId", agentId);
      put(matchers, "role", role);
      put(matchers, "host", host);
      if (matchers.isEmpty()) {
        throw new UsageException("give at least one of --rule, --command, --agent, --role, --host");
      }
      Instant now = Instant.now();
      Silence s = new Silence(UUID.randomUUID().toString(), matchers, now, now.plus(duration),
          Sanitize.text(by != null ? by : System.getProperty("user.name", "unknown"), 100), Sanitize.text(comment, 500));
      cluster.awaitReady();
      Silences.write(cluster.bootstrapServers, cluster.clientProps(), s);
      spec.commandLine().getOut().println(s.id());
      return Knockwatch.OK;
    }

    private static void put(Map<String, String> m, String field, String value) {
      if (value != null && !value.isBlank()) {
        m.put(field, value);
      }
    }

  }

  @Command(name = "list", mixinStandardHelpOptions = true, description = "List silences: active, pending and expired.")
  static final class ListCmd implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin ClusterOptions cluster;
    @Option(names = "--json", description = "One JSON object per silence.") boolean json;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      Instant now = Instant.now();
      cluster.awaitReady();
      try (Silences silences = Silences.onDemand(cluster.bootstrapServers, cluster.clientProps())) {
        for (Silence s : silences.all()) {
          if (json) {
            out.println(Json.write(s));
          } else {
            String state = s.activeAt(now) ? "active" : now.isBefore(s.startsAt()) ? "pending" : "expired";
            out.println(s.id() + "  " + state + "  until " + s.endsAt() + "  " + s.matchers().entrySet().stream()
                .map(e -> e.getKey() + "=" + Sanitize.text(e.getValue(), 200)).collect(Collectors.joining(" "))
                + "  by " + s.createdBy() + ": " + s.comment());
          }
        }
      }
      out.flush();
      return Knockwatch.OK;
    }
  }

  @Command(name = "expire", mixinStandardHelpOptions = true, description = "End a silence now.")
  static final class Expire implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin ClusterOptions cluster;
    @Parameters(paramLabel = "ID", description = "The silence's id, as `silence add` and `silence list` print it.") String id;

    @Override
    public Integer call() throws Exception {
      Silence s;
      cluster.awaitReady();
      try (Silences silences = Silences.onDemand(cluster.bootstrapServers, cluster.clientProps())) {
        s = silences.get(id).orElseThrow(() -> new UsageException("no silence " + id));
      }
      Silences.write(cluster.bootstrapServers, cluster.clientProps(), s.expiredAt(Instant.now()));
      spec.commandLine().getOut().println("expired " + id);
      return Knockwatch.OK;
    }
  }
}
