package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Sanitize;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code knockwatch allowlist suggest}: a narrower allowlist from what the agents were refused. */
@Command(name = "allowlist", mixinStandardHelpOptions = true, subcommands = AllowlistCommand.Suggest.class,
    description = "Allowlists discovered from refusals (knockwatch applies nothing: you review, then edit).")
final class AllowlistCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getOut());
    return Knockwatch.OK;
  }

  static final class Scope {
    @Option(names = "--role", paramLabel = "ROLE", description = "Only this role's refusals.") String role;
    @Option(names = "--agent", paramLabel = "GLOB", description = "Only destinations refused for agents this glob matches.")
    String agent;
  }

  @Command(name = "suggest", mixinStandardHelpOptions = true,
      description = {"Per role, the refused destinations (host:port exactly as refused, never a parent domain), ranked by "
          + "how many distinct commands, tasks and agents needed them, each with its risks; what must never be "
          + "allowed (sensitive addresses, shorteners, paste sites, a bypass's target, what is no host name) is "
          + "listed apart and never proposed. From the query API of `knockwatch up`; the token from "
          + "--token-file, else KNOCKWATCH_API_TOKEN."})
  static final class Suggest implements Callable<Integer> {

    @Spec CommandSpec spec;

    @ArgGroup(exclusive = true) Scope scope = new Scope();

    @Option(names = "--since", paramLabel = "DURATION", defaultValue = "7d",
        description = "How far back (default: ${DEFAULT-VALUE}; at most 8d, what the aggregate keeps).")
    String since;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "roles",
        description = {"roles (default): each role's entry for alert-rules/roles.yaml, its hosts and the proposed ones; "
            + "srt: an srt settings file's network.allowedDomains; claude-code: Claude Code's "
            + "sandbox.network.allowedDomains (settings.json); json: the API's answer as it is."})
    String format;

    @Option(names = "--api", paramLabel = "URL",
        description = "The query API (default: the one up wrote in var/api-url, else http://127.0.0.1:8080).")
    String api;

    @Option(names = "--token-file", paramLabel = "FILE",
        description = "A file holding the API's bearer token (else KNOCKWATCH_API_TOKEN, else the one up generated, var/api-token).")
    Path tokenFile;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "50",
        description = "At most N destinations per role (default: ${DEFAULT-VALUE}).")
    int limit;

    @Override
    public Integer call() throws Exception {
      if (!List.of("roles", "srt", "claude-code", "json").contains(format)) {
        throw new UsageException("--format " + format + " is not one of roles, srt, claude-code, json");
      }
      if (dev.knockwatch.events.Durations.parse(since).isEmpty()) {
        throw new UsageException("--since " + since + " is not a duration (7d, 24h, 90m)");
      }
      StringBuilder q = new StringBuilder("/api/v1/allowlist?since=").append(enc(since)).append("&limit=").append(limit);
      if (scope.role != null) {
        q.append("&role=").append(enc(scope.role));
      }
      if (scope.agent != null) {
        q.append("&agent=").append(enc(scope.agent));
      }
      HttpResponse<String> r = ApiClient.get(api, tokenFile, q.toString());
      if (r.statusCode() == 400) {
        throw new UsageException(Json.MAPPER.readTree(r.body()).path("error").asText("a bad request"));
      }
      if (r.statusCode() != 200) {
        throw new UsageException("the query API answered " + r.statusCode());
      }
      JsonNode answer = Json.MAPPER.readTree(r.body());
      PrintWriter out = spec.commandLine().getOut();
      out.print(switch (format) {
        case "json" -> r.body() + "\n";
        case "roles" -> roles(answer, "allowlist suggest --since " + since + (scope.role == null ? "" : " --role " + scope.role)
            + (scope.agent == null ? "" : " --agent " + scope.agent));
        default -> {
          if (answer.path("roles").size() > 1) {
            throw new UsageException("refusals of " + answer.path("roles").size() + " roles: a sandbox's allowlist is one"
                + " role's; give --role (or an --agent glob of one role)");
          }
          for (String never : neverProposed(answer)) {
            spec.commandLine().getErr().println("knockwatch: never proposed: " + never);
          }
          yield domains(answer, format.equals("claude-code"));
        }
      });
      out.flush();
      return Knockwatch.OK;
    }
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  /** Agent-written text for a comment or a table: control and bidi characters made visible, bounded. */
  static String clean(String s) {
    return Sanitize.text(s, 200);
  }

  /** A value for YAML: a double-quoted scalar, as JSON writes it (every character escaped that must be). */
  static String quoted(String s) {
    try {
      return Json.MAPPER.writeValueAsString(s);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Each role as its entry in roles.yaml: its hosts today, then those proposed (a comment each:
   * why), then, as comments only, what was refused and must not be allowed.
   */
  static String roles(JsonNode answer, String how) {
    StringBuilder b = new StringBuilder();
    b.append("# knockwatch ").append(how).append(": refusals from ").append(clean(answer.path("since").asText()))
        .append(" to ").append(clean(answer.path("until").asText())).append('\n')
        .append("# Each role's entry for alert-rules/roles.yaml: its hosts today, then those proposed. Review each one;\n")
        .append("# knockwatch changes nothing. Counts: distinct commands, tasks and agents that were refused it.\n");
    if (answer.path("roles").isEmpty()) {
      b.append("# no refused destination in this range\n");
      return b.toString();
    }
    b.append("roles:\n");
    for (JsonNode role : answer.path("roles")) {
      b.append("  ").append(quoted(role.path("role").asText())).append(":\n    hosts:\n");
      for (JsonNode h : role.path("allows")) {
        b.append("      - ").append(quoted(h.asText())).append('\n');
      }
      int proposed = 0;
      for (JsonNode h : role.path("hosts")) {
        if (h.path("proposed").asBoolean() && !h.path("inRole").asBoolean()) {
          proposed++;
          b.append("      - ").append(quoted(h.path("target").asText())).append("  # proposed: ").append(counts(h))
              .append(notes(h)).append('\n');
        }
      }
      if (proposed == 0) {
        b.append("      # nothing to propose\n");
      }
      footer(b, role, "    ");
    }
    return b.toString();
  }

  private static void footer(StringBuilder b, JsonNode role, String indent) {
    for (JsonNode h : role.path("hosts")) {
      if (!h.path("proposed").asBoolean()) {
        b.append(indent).append("# never proposed: ").append(clean(h.path("target").asText())).append(" (")
            .append(counts(h)).append(")").append(notes(h)).append('\n');
      } else if (h.path("inRole").asBoolean()) {
        b.append(indent).append("# already in the role, refused by the sandbox (config drift): ")
            .append(clean(h.path("target").asText())).append(" (").append(counts(h)).append(")\n");
      }
    }
    long dropped = role.path("dropped").asLong();
    if (dropped > 0) {
      b.append(indent).append("# ").append(dropped).append(" refusals of destinations that found no place in the aggregate's")
          .append(" hourly bound (a flood of one-off hosts): see the timeline\n");
    }
  }

  private static String counts(JsonNode h) {
    return n(h, "commands", "command") + ", " + n(h, "tasks", "task") + ", " + n(h, "agents", "agent") + ", "
        + n(h, "refusals", "refusal") + ", last " + clean(h.path("lastSeen").asText());
  }

  private static String n(JsonNode h, String field, String one) {
    long n = h.path(field).asLong();
    return n + " " + (n == 1 ? one : one + "s");
  }

  private static String notes(JsonNode h) {
    List<String> notes = new ArrayList<>();
    for (JsonNode r : h.path("risks")) {
      if (!r.path("code").asText().equals("in-role")) {
        notes.add(clean(r.path("note").asText()));
      }
    }
    return notes.isEmpty() ? "" : "; " + String.join("; ", notes);
  }

  /** What was refused and is never proposed, each with its counts and reasons, cleaned for a terminal. */
  static List<String> neverProposed(JsonNode answer) {
    List<String> out = new ArrayList<>();
    for (JsonNode role : answer.path("roles")) {
      for (JsonNode h : role.path("hosts")) {
        if (!h.path("proposed").asBoolean()) {
          out.add(clean(h.path("target").asText()) + " (" + counts(h) + ")" + notes(h));
        }
      }
    }
    return out;
  }

  /**
   * The proposed names of the role, as srt's settings ({@code network.allowedDomains}) or Claude
   * Code's ({@code sandbox.network.allowedDomains}): domains, without ports (neither takes one), so a
   * name refused on several ports appears once. Names in the role already count: the sandbox lags.
   * JSON has no comments: what is never proposed goes to standard error.
   */
  static String domains(JsonNode answer, boolean claudeCode) {
    Set<String> names = new LinkedHashSet<>();
    for (JsonNode role : answer.path("roles")) {
      for (JsonNode h : role.path("hosts")) {
        if (h.path("proposed").asBoolean()) {
          names.add(h.path("host").asText());
        }
      }
    }
    ObjectNode root = Json.MAPPER.createObjectNode();
    ObjectNode network = (claudeCode ? root.putObject("sandbox") : root).putObject("network");
    ArrayNode allowed = network.putArray("allowedDomains");
    names.forEach(allowed::add);
    try {
      return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
