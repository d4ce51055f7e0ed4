package dev.knockwatch.ingest.formats.claudetranscript;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.formats.toolcall.ToolCall;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A Claude Code session transcript, {@code ~/.claude/projects/<project>/<session>.jsonl} as Claude
 * Code 2.1.332 writes it (outside the sandbox, which denies writing {@code ~/.claude/projects}): one
 * JSON object a line. Read: an {@code assistant} line's Bash {@code tool_use} (its id the command,
 * its {@code input.command}'s doors, its {@code dangerouslyDisableSandbox} request), and a
 * {@code user} line's {@code tool_result} (the text the model was given: {@code Exit code N}, the
 * output, the {@code <sandbox_violations>} block) with what Claude Code recorded beside it: its
 * {@code sandboxViolations} (host and port of each denial: Claude Code's, not the output's),
 * whether the call ran {@code sandboxed}, and its {@code permissionDecision}. The session is
 * {@code sessionId}, the task the {@code promptId} of the prompt the call answers. Ids are the
 * hook's and the telemetry's for the same call and target.
 */
final class TranscriptParser implements LineParser {

  static final int REMEMBERED_CALLS = 256;

  /** Each call's counted targets and whether it asked to leave the sandbox, by tool_use id. */
  private final Map<String, Call> calls = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Call> eldest) {
      return size() > REMEMBERED_CALLS;
    }
  };
  private String prompt;

  private static final class Call {
    final Set<String> counted = new HashSet<>();
    String command;
    boolean escape;
    String prompt;
  }

  @Override
  public Parsed parse(SourceLine src) {
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(src.text());
    } catch (java.io.IOException e) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object: " + Sanitize.text(e.getMessage(), 200));
    }
    if (root == null || !root.isObject()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object");
    }
    String type = root.path("type").asText("");
    if (root.path("promptId").isTextual() && !root.has("toolUseResult")) {
      prompt = Attribution.grainId(root.path("promptId").asText()); // a prompt: the task of the calls that follow
    }
    JsonNode content = root.path("message").path("content");
    if (type.equals("assistant") && content.isArray()) {
      return uses(src, root, content);
    }
    if (type.equals("user") && root.has("toolUseResult") && content.isArray()) {
      return results(src, root, content);
    }
    return Parsed.skipped("other-record");
  }

  /** The model's Bash calls: the doors their commands name, and their requests to leave the sandbox. */
  private Parsed uses(SourceLine src, JsonNode root, JsonNode content) {
    List<ViolationEvent> events = new ArrayList<>();
    boolean any = false;
    for (JsonNode c : content) {
      if (!"tool_use".equals(c.path("type").asText()) || !"Bash".equals(c.path("name").asText())) {
        continue;
      }
      any = true;
      String id = c.path("id").asText(null);
      Call call = calls.computeIfAbsent(id == null ? "" : id, k -> new Call());
      JsonNode input = c.path("input");
      call.command = input.path("command").isTextual() ? input.path("command").asText() : null;
      call.escape = input.path("dangerouslyDisableSandbox").asBoolean(false);
      call.prompt = prompt;
      Parsed one = call(src, root, id, call, t -> {
        if (call.escape) {
          t.add(ViolationEvent.EVIDENCE_COMMAND, "escape:request", b -> b.kind(Kind.PROCESS)
              .action(ViolationEvent.SANDBOX_OFF_REQUEST)
              .reason("the call asks to run outside the sandbox (dangerouslyDisableSandbox)"));
        }
        t.commandText(call.command);
      });
      if (one instanceof Parsed.Rejected) {
        return one;
      }
      if (one instanceof Parsed.Events ev) {
        events.addAll(ev.events());
      }
    }
    return !events.isEmpty() ? new Parsed.Events(events) : Parsed.skipped(any ? "no-door" : "other-tool");
  }

  /** What the calls' results tell: Claude Code's record of the sandbox's denials, the output's refusal words. */
  private Parsed results(SourceLine src, JsonNode root, JsonNode content) {
    List<ViolationEvent> events = new ArrayList<>();
    boolean any = false;
    for (JsonNode c : content) {
      if (!"tool_result".equals(c.path("type").asText())) {
        continue;
      }
      String id = c.path("tool_use_id").asText(null);
      Call call = calls.get(id == null ? "" : id);
      if (call == null) {
        continue; // not a Bash call of this transcript's (or one long gone)
      }
      any = true;
      String text = text(c.path("content"));
      String cwd = root.path("cwd").asText(null);
      boolean refusedToRun = "reject".equals(root.path("permissionDecision").path("decision").asText());
      Parsed one = call(src, root, id, call, t -> {
        for (JsonNode v : root.path("sandboxViolations")) {
          String host = v.path("host").asText(null);
          if ("network".equals(v.path("kind").asText()) && host != null) {
            int port = v.path("port").asInt(0);
            String target = port <= 0 ? host : host.contains(":") ? "[" + host + "]:" + port : host + ":" + port;
            t.target(ViolationEvent.EVIDENCE_SANDBOX, target,
                "network-outbound", "the sandbox denied it (Claude Code's sandboxViolations)", null);
          }
        }
        if (!refusedToRun) {
          t.output(text, cwd);
        }
        if (call.escape && root.path("sandboxed").isBoolean() && !root.path("sandboxed").asBoolean()) {
          t.add(ViolationEvent.EVIDENCE_SANDBOX, "escape:approved", b -> b.kind(Kind.PROCESS)
              .action(ViolationEvent.SANDBOX_OFF_APPROVED)
              .reason("let out: the transcript says it ran with sandboxed: false"));
        }
      });
      if (one instanceof Parsed.Rejected) {
        return one;
      }
      if (one instanceof Parsed.Events ev) {
        events.addAll(ev.events());
      }
    }
    return !events.isEmpty() ? new Parsed.Events(events) : Parsed.skipped(any ? "no-refusal" : "other-tool");
  }

  private Parsed call(SourceLine src, JsonNode root, String toolUseId, Call call,
      java.util.function.Consumer<ToolCall> read) {
    Attribution.Result who = Attribution.of(src.agentIdFromPath(), toolUseId, null, null);
    if (who instanceof Attribution.Refused no) {
      return Parsed.rejected(no.code(), no.reason() + " (the tool_use id)");
    }
    Attribution.Attributed as = (Attribution.Attributed) who;
    String session = Attribution.grainId(root.path("sessionId").asText(null));
    String task = call.prompt;
    String commandText = call.command == null ? null : Redactor.safe(call.command, Sanitize.MAX_COMMAND_CHARS);
    java.time.Instant at = time(root.path("timestamp").asText(null));
    ToolCall t = new ToolCall(src, as.commandId(), b -> {
      as.applyTo(b).source(ClaudeTranscriptFormat.NAME).identityConflict(null).sessionId(session).taskId(task)
          .commandText(commandText);
      if (at != null) {
        b.observedAt(at);
      }
    }, call.counted,
        ToolCall.Ids.of("claude-code", as.agentId(), session, toolUseId));
    read.accept(t);
    return t.events().isEmpty() ? Parsed.skipped("none") : new Parsed.Events(t.events());
  }

  /** A line's {@code timestamp}; null when it has none, {@link SourceLine#UNREADABLE_TIME} when it is no time. */
  static java.time.Instant time(String text) {
    if (text == null) {
      return null;
    }
    try {
      return java.time.Instant.parse(text);
    } catch (java.time.format.DateTimeParseException e) {
      return SourceLine.UNREADABLE_TIME;
    }
  }

  /** A tool result's content: its text, or its text blocks' joined. */
  private static String text(JsonNode content) {
    if (content.isTextual()) {
      return content.asText();
    }
    StringBuilder b = new StringBuilder();
    for (JsonNode part : content) {
      b.append(part.path("text").asText("")).append('\n');
    }
    return b.toString();
  }
}
