package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.EventKey;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.export.Ecs;
import dev.knockwatch.events.export.Ocsf;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code knockwatch query COMMAND_ID}: a command's timeline from the query API, as a terminal
 * table; {@code knockwatch query --agent NAME}: what the timeline holds of an agent (its commands,
 * and the keys of the walls that name none: the agent's own, each sandbox's).
 */
@Command(name = "query", mixinStandardHelpOptions = true,
    description = {"Print a command's timeline (summary, alerts, events) from the query API of `knockwatch up`;"
        + " with --agent, an agent's commands and sandboxes, newest first.",
        "The token comes from --token-file, else KNOCKWATCH_API_TOKEN."})
final class QueryCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Parameters(paramLabel = "COMMAND_ID", arity = "0..1", description = "The command whose timeline to print (22 to 128"
      + " characters), or a wall's key: agent:NAME, session:AGENT/SANDBOX.")
  String commandId;

  @Option(names = "--agent", paramLabel = "NAME", description = "List the agent's commands and sandboxes instead"
      + " (a glob: ci-*), each with its events, alerts and last refusal; up to --limit.")
  String agent;

  @Option(names = "--limit", paramLabel = "N", defaultValue = "50", description = "With --agent: how many, newest first (default 50).")
  int limit;

  @Option(names = "--api", paramLabel = "URL",
      description = "The query API (default: the one up wrote in var/api-url, else http://127.0.0.1:8080).")
  String api;

  @Option(names = "--token-file", paramLabel = "FILE",
      description = "A file holding the API's bearer token (else KNOCKWATCH_API_TOKEN, else the one up generated, var/api-token).")
  Path tokenFile;

  @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "table",
      description = {"table (default); json: the API's JSON as it is; ocsf or ecs: one record a line, each event of the "
          + "timeline (OCSF Network or File System Activity; ECS), then each alert (OCSF Detection Finding; ECS)."})
  String format;

  @Option(names = "--json", description = "The same as --format json.") boolean json;

  @Override
  public Integer call() throws Exception {
    if (json) {
      format = "json";
    }
    if (!List.of("table", "json", "ocsf", "ecs").contains(format)) {
      throw new UsageException("--format " + format + " is not one of table, json, ocsf, ecs");
    }
    if ((agent == null) == (commandId == null)) {
      throw new UsageException(agent == null
          ? "give the COMMAND_ID to show, or --agent NAME to list an agent's commands and sandboxes"
          : "give a COMMAND_ID or --agent, not both");
    }
    if (agent != null) {
      return agent();
    }
    EventKey.problem(commandId).ifPresent(p -> {
      throw new UsageException("not a command id, nor an agent's or session's key: " + p);
    });
    HttpResponse<String> r = ApiClient.get(api, tokenFile, "/api/v1/commands/"
        + URLEncoder.encode(commandId, StandardCharsets.UTF_8));
    PrintWriter out = spec.commandLine().getOut();
    switch (r.statusCode()) {
      case 200 -> out.print(switch (format) {
        case "json" -> r.body() + "\n";
        case "table" -> table(Json.MAPPER.readTree(r.body()));
        default -> {
          try {
            yield records(Json.MAPPER.readTree(r.body()), format.equals("ocsf"));
          } catch (IOException | RuntimeException e) {
            throw new UsageException("the query API's answer is not a timeline knockwatch can map ("
                + e.getClass().getSimpleName() + ")");
          }
        }
      });
      case 404 -> throw new UsageException(commandId.contains(":")
          ? "the timeline holds nothing under " + commandId + " (no refusal of it seen, or idle longer than its retention)"
          : "the timeline holds no command with id " + commandId
              + " (no refusal of it seen, or idle longer than its retention)");
      default -> throw new UsageException("the query API answered " + r.statusCode());
    }
    out.flush();
    return Knockwatch.OK;
  }

  /** {@code --agent}: the agent's rows of the commands list, a table or the API's JSON. */
  private Integer agent() throws IOException, InterruptedException {
    if (!List.of("table", "json").contains(format)) {
      throw new UsageException("--agent lists as table or json, not " + format);
    }
    if (limit < 1 || limit > 1000) {
      throw new UsageException("--limit " + limit + " is not from 1 to 1000");
    }
    HttpResponse<String> r = ApiClient.get(api, tokenFile, "/api/v1/commands?agent="
        + URLEncoder.encode(agent, StandardCharsets.UTF_8) + "&limit=" + limit);
    if (r.statusCode() != 200) {
      throw new UsageException(r.statusCode() == 400 ? "the query API refused --agent " + clean(agent)
          : "the query API answered " + r.statusCode());
    }
    PrintWriter out = spec.commandLine().getOut();
    out.print(format.equals("json") ? r.body() + "\n" : rows(Json.MAPPER.readTree(r.body()), agent));
    out.flush();
    return Knockwatch.OK;
  }

  /** An agent's rows as text: one a line, the key first (what {@code query KEY} shows), every value cleaned. */
  static String rows(JsonNode list, String agent) {
    StringBuilder b = new StringBuilder(String.format("  %-50s %-24s %-12s %6s %6s  %s%n", "COMMAND OR SANDBOX", "AGENT",
        "ROLE", "EVENTS", "ALERTS", "LAST REFUSAL"));
    for (JsonNode c : list.path("commands")) {
      b.append(String.format("  %-50s %-24s %-12s %6d %6d  %s%n", text(c, "commandId"), text(c, "agentId"),
          text(c, "role"), c.path("events").asLong(), c.path("alerts").asLong(), millis(c, "lastSeen")));
    }
    if (list.path("commands").isEmpty()) {
      b.append("  none: the timeline holds no refusal of an agent ").append(clean(agent)).append('\n');
    }
    return b.toString();
  }

  /** The timeline as text; every value from an event is cleaned of control and bidi characters. */
  static String table(JsonNode t) {
    StringBuilder b = new StringBuilder();
    b.append("command  ").append(text(t, "commandId")).append('\n')
        .append("agent    ").append(text(t, "agentId")).append(" (role ").append(text(t, "role")).append(")\n")
        .append("seen     ").append(text(t, "firstSeen")).append(" .. ").append(text(t, "lastSeen")).append('\n')
        .append("events   ").append(t.path("events").asLong()).append(t.path("omitted").asLong() > 0
            ? " (" + t.path("omitted").asLong() + " in the middle not kept)" : "").append('\n');
    b.append("refused  ");
    counts(b, t.path("targets"));
    b.append("reasons  ");
    counts(b, t.path("reasons"));
    b.append("\nALERTS\n");
    for (Iterator<Map.Entry<String, JsonNode>> it = t.path("alerts").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> a = it.next();
      b.append(String.format("  %-9s %-8s %-18s %5d  %s  %s%n", text(a.getValue(), "status"),
          text(a.getValue(), "severity"), text(a.getValue(), "rule"), a.getValue().path("count").asLong(),
          clean(a.getKey()), text(a.getValue(), "summary")));
    }
    b.append("\nEVENTS\n");
    for (JsonNode e : t.path("timeline")) {
      String target = e.has("host") ? text(e, "host") + (e.has("port") ? ":" + e.get("port").asText() : "") : text(e, "path");
      b.append(String.format("  %-24s %-13s %-10s %-18s %-40s %s%n", millis(e, "observedAt"), text(e, "source"),
          text(e, "kind"), text(e, "action"), target, text(e, "reason")));
    }
    return b.toString();
  }

  /**
   * The timeline as OCSF or ECS records, one a line: each event, then each alert as the API
   * summarises it (rule, severity, status, count, times, summary, runbook, tags) with the
   * command's agent and role.
   */
  static String records(JsonNode t, boolean ocsf) throws IOException {
    StringBuilder b = new StringBuilder();
    for (JsonNode e : t.path("timeline")) {
      ViolationEvent v = Json.MAPPER.treeToValue(e, ViolationEvent.class);
      b.append(Json.MAPPER.writeValueAsString(ocsf ? Ocsf.event(v) : Ecs.event(v))).append('\n');
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = t.path("alerts").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode a = e.getValue();
      List<String> tags = new ArrayList<>();
      a.path("tags").forEach(tag -> tags.add(tag.asText()));
      Alert alert = new Alert(e.getKey(), string(a, "rule"), enumOf(Alert.Severity.class, a, "severity"),
          enumOf(Alert.Status.class, a, "status"), string(t, "commandId"), string(t, "agentId"), string(t, "role"), null,
          null, a.path("count").asLong(), null, null, instant(a, "firstSeen"), instant(a, "lastSeen"), string(a, "summary"),
          List.of(), List.of(), null, null, null, null, null, new Alert.Meta(tags, string(a, "runbook"), null, null));
      b.append(Json.MAPPER.writeValueAsString(ocsf ? Ocsf.finding(alert) : Ecs.alert(alert))).append('\n');
    }
    return b.toString();
  }

  private static String string(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  private static Instant instant(JsonNode n, String field) {
    String v = string(n, field);
    return v == null ? null : Instant.parse(v);
  }

  private static <E extends Enum<E>> E enumOf(Class<E> type, JsonNode n, String field) {
    String v = string(n, field);
    return v == null ? null : Enum.valueOf(type, v.toUpperCase(java.util.Locale.ROOT));
  }

  private static void counts(StringBuilder b, JsonNode m) {
    StringBuilder line = new StringBuilder();
    m.fields().forEachRemaining(e -> line.append(line.length() == 0 ? "" : ", ").append(clean(e.getKey()))
        .append(" ×").append(e.getValue().asLong()));
    b.append(line.length() == 0 ? "-" : line).append('\n');
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v == null || v.isNull() ? "-" : clean(v.asText());
  }

  /** An instant as the table's fixed-width column: always with milliseconds; text that is no instant, cleaned. */
  static String millis(JsonNode n, String field) {
    try {
      return MILLIS.format(Instant.parse(n.path(field).asText()));
    } catch (java.time.format.DateTimeParseException e) {
      return text(n, field);
    }
  }

  private static final java.time.format.DateTimeFormatter MILLIS =
      java.time.format.DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(java.time.ZoneOffset.UTC);

  private static String clean(String s) {
    return Sanitize.text(s, 200);
  }
}
