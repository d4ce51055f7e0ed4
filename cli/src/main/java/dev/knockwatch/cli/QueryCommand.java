package dev.knockwatch.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Sanitize;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code knockwatch query COMMAND_ID}: a command's timeline from the query API, as a terminal table. */
@Command(name = "query", mixinStandardHelpOptions = true,
    description = {"Print a command's timeline (summary, alerts, events) from the query API of `knockwatch up`.",
        "The token comes from --token-file, else KNOCKWATCH_API_TOKEN."})
final class QueryCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Parameters(paramLabel = "COMMAND_ID", description = "The command whose timeline to print (22 to 128 characters).")
  String commandId;

  @Option(names = "--api", paramLabel = "URL", defaultValue = "http://127.0.0.1:8080",
      description = "The query API (default: ${DEFAULT-VALUE}).")
  String api;

  @Option(names = "--token-file", paramLabel = "FILE",
      description = "A file holding the API's bearer token (else KNOCKWATCH_API_TOKEN).")
  Path tokenFile;

  @Option(names = "--json", description = "The API's JSON as it is.") boolean json;

  @Override
  public Integer call() throws Exception {
    CommandId.problem(commandId).ifPresent(p -> {
      throw new UsageException("not a command id: " + p);
    });
    String token = tokenFile != null ? Files.readString(tokenFile, StandardCharsets.UTF_8).strip()
        : System.getenv("KNOCKWATCH_API_TOKEN");
    if (token == null || token.isBlank()) {
      throw new UsageException("no token: give --token-file or set KNOCKWATCH_API_TOKEN (up prints a generated one)");
    }
    HttpRequest req = HttpRequest.newBuilder(URI.create(api.replaceAll("/+$", "") + "/api/v1/commands/"
            + URLEncoder.encode(commandId, StandardCharsets.UTF_8)))
        .timeout(Duration.ofSeconds(15)).header("Authorization", "Bearer " + token).GET().build();
    HttpResponse<String> r;
    try {
      r = HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UsageException("no query API at " + api + " (is ./knockwatch up running?)");
    }
    PrintWriter out = spec.commandLine().getOut();
    switch (r.statusCode()) {
      case 200 -> out.print(json ? r.body() + "\n" : table(Json.MAPPER.readTree(r.body())));
      case 401 -> throw new UsageException("the query API refused the token");
      case 404 -> throw new UsageException("unknown command " + commandId);
      case 503 -> throw new UsageException("the timeline is rebalancing; try again in a moment");
      default -> throw new UsageException("the query API answered " + r.statusCode());
    }
    out.flush();
    return Knockwatch.OK;
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
      b.append(String.format("  %-24s %-13s %-10s %-18s %-40s %s%n", text(e, "observedAt"), text(e, "source"),
          text(e, "kind"), text(e, "action"), target, text(e, "reason")));
    }
    return b.toString();
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

  private static String clean(String s) {
    return Sanitize.text(s, 200);
  }
}
