package dev.knockwatch.ingest.formats.claudecode;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.formats.toolcall.ToolCall;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.spi.TelemetryReader;
import dev.knockwatch.ingest.spi.TelemetryRecord;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Claude Code's OpenTelemetry log events ({@code CLAUDE_CODE_ENABLE_TELEMETRY=1},
 * {@code OTEL_LOGS_EXPORTER=otlp}; as 2.1.332 sends them): each Bash call's
 * {@code claude_code.tool_decision} and {@code claude_code.tool_result}, with {@code session.id},
 * {@code prompt.id} (the task) and {@code tool_use_id} (the command), and only with
 * {@code OTEL_LOG_TOOL_DETAILS=1} its {@code tool_parameters} ({@code full_command},
 * {@code dangerouslyDisableSandbox}). No event carries the sandbox's violations, the exit code or
 * the output ({@code success: "false"} is any failure): so they yield the doors the command names
 * and a request to run outside the sandbox, never a refusal's target (docs/FORMATS.md). Their ids
 * are the hook's and the transcript's for the same call and target.
 */
final class ClaudeCodeTelemetry implements TelemetryReader {

  static final String SERVICE = "claude-code";
  private static final int REMEMBERED_CALLS = 256;

  private final Map<String, Set<String>> counted = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Set<String>> eldest) {
      return size() > REMEMBERED_CALLS;
    }
  };

  static boolean reads(TelemetryRecord r) {
    return SERVICE.equals(r.service()) && ("tool_result".equals(r.eventName()) || "tool_decision".equals(r.eventName())
        || "claude_code.tool_result".equals(r.eventName()) || "claude_code.tool_decision".equals(r.eventName()));
  }

  @Override
  public Parsed read(TelemetryRecord r, SourceLine where) {
    if (!"Bash".equals(r.attribute("tool_name"))) {
      return Parsed.skipped("other-tool");
    }
    String toolUseId = r.attribute("tool_use_id");
    Attribution.Result who = Attribution.of(where.agentIdFromPath(), toolUseId, null, null);
    if (who instanceof Attribution.Refused no) {
      return Parsed.rejected(no.code(), no.reason() + " (the record's tool_use_id)");
    }
    Attribution.Attributed as = (Attribution.Attributed) who;
    String session = Attribution.grainId(r.attribute("session.id"));
    String task = Attribution.grainId(r.attribute("prompt.id"));
    JsonNode params = parameters(r.attribute("tool_parameters"));
    if (params == null) {
      return Parsed.skipped("no-details");
    }
    String command = params.path("full_command").isTextual() ? params.path("full_command").asText() : null;
    String commandText = command == null ? null : Redactor.safe(command, Sanitize.MAX_COMMAND_CHARS);
    ToolCall call = new ToolCall(where, as.commandId(), b -> {
      as.applyTo(b).source(ClaudeCodeFormat.NAME).identityConflict(null).sessionId(session).taskId(task)
          .commandText(commandText);
      if (r.time() != null) {
        b.observedAt(r.time());
      }
    },
        counted.computeIfAbsent(toolUseId, k -> new HashSet<>()),
        ToolCall.Ids.of(ClaudeCodeFormat.NAME, as.agentId(), session, toolUseId));
    if (params.path("dangerouslyDisableSandbox").asBoolean(false)) {
      call.add(ViolationEvent.EVIDENCE_COMMAND, "escape:request", b -> b.kind(Kind.PROCESS)
          .action(ViolationEvent.SANDBOX_OFF_REQUEST)
          .reason("the call asks to run outside the sandbox (dangerouslyDisableSandbox)"));
    }
    call.commandText(command);
    return call.events().isEmpty() ? Parsed.skipped("no-door") : new Parsed.Events(call.events());
  }

  /** {@code tool_parameters}, a JSON object in a string; null when absent (no OTEL_LOG_TOOL_DETAILS) or not one. */
  private static JsonNode parameters(String text) {
    if (text == null || text.isBlank()) {
      return null;
    }
    try {
      JsonNode n = Json.MAPPER.readTree(text);
      return n != null && n.isObject() ? n : null;
    } catch (java.io.IOException e) {
      return null;
    }
  }
}
