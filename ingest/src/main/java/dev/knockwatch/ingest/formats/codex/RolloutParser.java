package dev.knockwatch.ingest.formats.codex;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.formats.toolcall.ToolCall;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Codex session's rollout, {@code $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl}
 * as Codex 0.171.0 writes it (codex-rs's {@code protocol/src/protocol.rs}, {@code RolloutItem}):
 * one JSON object a line, {@code type} and {@code payload}. Read: {@code session_meta} (the thread
 * and its directory), {@code turn_context} and {@code event_msg task_started} (a turn begins),
 * {@code response_item function_call} (a call's command and its request to leave the sandbox),
 * {@code event_msg item_completed} of a {@code CommandExecution} (the command ran: its whole output)
 * and {@code response_item function_call_output} (the output the model was given, with Codex's own
 * words for a blocked request). The rollout names no proxy decision and no approver: those are in
 * Codex's OpenTelemetry, whose events of the same call and target are these (the same ids).
 */
final class RolloutParser implements LineParser {

  /** The thread id at the end of a rollout's name: {@code rollout-2026-12-06T05-31-48-<uuid>}. */
  private static final Pattern NAMED_THREAD = Pattern.compile("([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$");

  private final CodexThreads threads = new CodexThreads();
  private final String namedThread;
  private CodexThreads.Thread thread;

  /** @param stem the file's name without its suffix, which ends with the thread's id */
  RolloutParser(String stem) {
    Matcher m = NAMED_THREAD.matcher(stem == null ? "" : stem);
    this.namedThread = m.find() ? m.group(1) : null;
  }

  @Override
  public Parsed parse(SourceLine src) {
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(src.text());
    } catch (java.io.IOException e) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object: " + Sanitize.text(e.getMessage(), 200));
    }
    if (root == null || !root.isObject() || !root.path("type").isTextual() || !root.path("payload").isObject()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a rollout line: a JSON object with type and payload");
    }
    JsonNode p = root.path("payload");
    String type = root.path("type").asText();
    String kind = p.path("type").asText("");
    if (type.equals("session_meta")) {
      String id = Attribution.grainId(text(p, "id"));
      if (id == null) {
        return Parsed.rejected(Rejection.UNPARSEABLE, "a session_meta with no id (or one that is no id)");
      }
      thread = threads.thread(id);
      thread.cwd = text(p, "cwd");
      return Parsed.skipped("session");
    }
    CodexThreads.Thread t = thread();
    if (t == null) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "a rollout line before its session_meta, in a file whose name"
          + " names no thread");
    }
    java.time.Instant at = time(root.path("timestamp").asText(null));
    switch (type + " " + kind) {
      case "turn_context " -> {
        t.cwd = text(p, "cwd") != null ? text(p, "cwd") : t.cwd;
        return Parsed.skipped("session");
      }
      case "event_msg task_started" -> {
        t.newTurn();
        return Parsed.skipped("turn");
      }
      case "response_item function_call", "response_item custom_tool_call" -> {
        return call(src, t, p, at);
      }
      case "event_msg item_completed" -> {
        JsonNode item = p.path("item");
        return "CommandExecution".equals(item.path("type").asText()) ? execution(src, t, item, at)
            : Parsed.skipped("other-record");
      }
      case "response_item function_call_output", "response_item custom_tool_call_output" -> {
        return output(src, t, text(p, "call_id"), p.path("output").isTextual() ? p.path("output").asText()
            : p.path("output").toString(), at);
      }
      default -> {
        return Parsed.skipped("other-record");
      }
    }
  }

  private CodexThreads.Thread thread() {
    if (thread == null && namedThread != null) {
      thread = threads.thread(namedThread);
    }
    return thread;
  }

  /** A call the model made: its command's doors, and its request to leave the sandbox. */
  private Parsed call(SourceLine src, CodexThreads.Thread t, JsonNode p, java.time.Instant at) {
    String callId = text(p, "call_id");
    if (callId == null) {
      return Parsed.rejected(Rejection.MISSING_COMMAND_ID, "a function_call with no call_id");
    }
    CodexThreads.Call c = t.call(callId);
    CodexCalls.Arguments a = CodexCalls.Arguments.of(p.path("arguments").isTextual() ? p.path("arguments").asText()
        : p.path("input").asText(null));
    c.command = a.command();
    c.escalated = a.escalated();
    c.justification = a.justification();
    return events(src, t, c, at, call -> CodexCalls.arguments(call, c), "no-door");
  }

  /** The command ran: its whole output, and, when it had asked to leave the sandbox, that it was let out. */
  private Parsed execution(SourceLine src, CodexThreads.Thread t, JsonNode item, java.time.Instant at) {
    String callId = text(item, "id");
    if (callId == null) {
      return Parsed.rejected(Rejection.MISSING_COMMAND_ID, "a CommandExecution with no id");
    }
    CodexThreads.Call c = t.call(callId);
    String output = item.path("aggregated_output").asText("");
    return events(src, t, c, at, call -> {
      CodexCalls.output(call, t, output);
      if (c.escalated) {
        CodexCalls.approved(call, ViolationEvent.EVIDENCE_OUTPUT,
            "its user or a rule (the rollout names no approver; Codex's OpenTelemetry codex.tool_decision does)");
      }
    }, "no-refusal");
  }

  /** What the model was told of the call: its output, or Codex's refusal of it. */
  private Parsed output(SourceLine src, CodexThreads.Thread t, String callId, String output, java.time.Instant at) {
    if (callId == null) {
      return Parsed.rejected(Rejection.MISSING_COMMAND_ID, "a function_call_output with no call_id");
    }
    CodexThreads.Call c = t.call(callId);
    return events(src, t, c, at, call -> CodexCalls.output(call, t, output), "no-refusal");
  }

  private static Parsed events(SourceLine src, CodexThreads.Thread t, CodexThreads.Call c, java.time.Instant at,
      java.util.function.Consumer<ToolCall> read, String none) {
    Attribution.Result who = Attribution.of(src.agentIdFromPath(), c.commandId, null, null);
    if (who instanceof Attribution.Refused no) {
      return no.parsed();
    }
    ToolCall call = CodexCalls.toolCall(src, (Attribution.Attributed) who, t, c, at);
    read.accept(call);
    return call.events().isEmpty() ? Parsed.skipped(none) : new Parsed.Events(call.events());
  }

  /** A line's {@code timestamp}; null when none, {@link SourceLine#UNREADABLE_TIME} when it is no time. */
  private static java.time.Instant time(String text) {
    if (text == null) {
      return null;
    }
    try {
      return java.time.Instant.parse(text);
    } catch (java.time.format.DateTimeParseException e) {
      return SourceLine.UNREADABLE_TIME;
    }
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v != null && v.isTextual() && !v.asText().isEmpty() ? v.asText() : null;
  }
}
