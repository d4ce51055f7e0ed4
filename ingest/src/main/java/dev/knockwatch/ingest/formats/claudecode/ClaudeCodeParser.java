package dev.knockwatch.ingest.formats.claudecode;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.EventIds;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.formats.toolcall.ToolCall;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Claude Code's hook records ({@code ./knockwatch claude-code settings} installs the hook that
 * writes them): one JSON object a line, {@code <agentId>/<sessionId>.claude-code.jsonl}, one
 * line per Bash call's {@code PreToolUse} and one per its {@code PostToolUse} or
 * {@code PostToolUseFailure} (the types: {@code sdk.d.ts} of {@code @anthropic-ai/claude-agent-sdk}).
 *
 * <p>Who wrote what (docs/TRUST.md): the record is Claude Code's, encoded by it, outside the
 * sandbox; {@code session_id}, {@code prompt_id} (the task: one user prompt), {@code tool_use_id}
 * (the command: one tool call), {@code cwd} and the hook event are the harness's. The command text
 * is the model's, the output the command's: read as evidence, never as identity.
 *
 * <p>Three kinds of evidence, each marked on its event ({@link ViolationEvent#evidence()}) and each
 * target counted once per tool call, whichever kind saw it first:
 * <ul>
 *   <li>{@code command-text} (PreToolUse): the doors the command names ({@code toolcall/CommandText});
 *   <li>{@code sandbox-record}: the {@code <sandbox_violations>} block Claude Code appends to a
 *       refused command's output, every deny shape srt writes;
 *   <li>{@code output}: the refusal words of the output: curl's transcript and errors (as the
 *       proxy-403 format reads them), the shell's file errors, wget's, Python's and Node's
 *       refused tunnels ({@code toolcall/OutputWords}).
 * </ul>
 */
public final class ClaudeCodeParser implements LineParser {
  /** The action of a call's request to run outside the sandbox ({@code dangerouslyDisableSandbox}), from its PreToolUse. */
  public static final String SANDBOX_OFF_REQUEST = ViolationEvent.SANDBOX_OFF_REQUEST;
  /** The action of such a call whose output shows no mark of the sandbox: it may have run outside. */
  public static final String SANDBOX_OFF_UNANSWERED = ViolationEvent.SANDBOX_OFF_UNANSWERED;

  /** How many tool calls' counted targets a file's parser remembers (a call's two records are near). */
  static final int REMEMBERED_CALLS = 256;

  private final Map<String, Set<String>> counted = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Set<String>> eldest) {
      return size() > REMEMBERED_CALLS;
    }
  };

  @Override
  public Parsed parse(SourceLine src) {
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(src.text());
    } catch (JsonProcessingException e) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object: " + Sanitize.text(e.getOriginalMessage(), 200));
    }
    if (root == null || !root.isObject()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object");
    }
    String hook = text(root, "hook_event_name");
    boolean pre = "PreToolUse".equals(hook);
    if (!pre && !"PostToolUse".equals(hook) && !"PostToolUseFailure".equals(hook)) {
      return hook == null ? Parsed.rejected(Rejection.UNPARSEABLE, "no hook_event_name: not a Claude Code hook record")
          : Parsed.skipped("other-hook");
    }
    if (!"Bash".equals(text(root, "tool_name"))) {
      return Parsed.skipped("other-tool");
    }
    String toolUseId = text(root, "tool_use_id");
    Attribution.Result who = Attribution.of(src.agentIdFromPath(), toolUseId, null, null);
    if (who instanceof Attribution.Refused r) {
      return Parsed.rejected(r.code(), r.reason() + " (the record's tool_use_id)");
    }
    String session = Attribution.grainId(text(root, "session_id"));
    String task = Attribution.grainId(text(root, "prompt_id"));
    JsonNode input = root.path("tool_input");
    String command = input.path("command").isTextual() ? input.path("command").asText() : null;
    String cwd = text(root, "cwd");
    Attribution.Attributed as = (Attribution.Attributed) who;
    String commandText = command == null ? null : Redactor.safe(command, Sanitize.MAX_COMMAND_CHARS);
    ToolCall call = new ToolCall(src, as.commandId(), b -> as.applyTo(b).source(ClaudeCodeFormat.NAME).identityConflict(null)
        .sessionId(session).taskId(task).commandText(commandText),
        counted.computeIfAbsent(toolUseId, k -> new HashSet<>()),
        ToolCall.Ids.of(ClaudeCodeFormat.NAME, as.agentId(), session, toolUseId));
    boolean offRequested = input.path("dangerouslyDisableSandbox").asBoolean(false);
    if (pre && offRequested) {
      call.add(ViolationEvent.EVIDENCE_COMMAND, "escape:request", b -> b.kind(Kind.PROCESS).action(SANDBOX_OFF_REQUEST)
          .reason("the call asks to run outside the sandbox (dangerouslyDisableSandbox)"));
    }
    if (pre) {
      call.commandText(command);
    } else {
      String output = outputOf(root);
      call.output(output, cwd);
      if (offRequested && !ToolCall.SANDBOX_MARK.matcher(output).find()) {
        // Claude Code ran it outside the sandbox (allowUnsandboxedCommands), or the sandbox had nothing to refuse
        call.add(ViolationEvent.EVIDENCE_OUTPUT, "escape:unanswered", b -> b.kind(Kind.PROCESS).action(SANDBOX_OFF_UNANSWERED)
            .reason("the call asked to run outside the sandbox, and nothing in its output shows the sandbox's hand:"
                + " it may have run outside"));
      }
    }
    return call.events().isEmpty() ? Parsed.skipped(pre ? "no-door" : "no-refusal") : new Parsed.Events(call.events());
  }

  /** What the command printed: the response's stdout and stderr, or the failure's error text. */
  private static String outputOf(JsonNode root) {
    JsonNode r = root.path("tool_response");
    if (r.isObject()) {
      return r.path("stdout").asText("") + "\n" + r.path("stderr").asText("");
    }
    if (r.isTextual()) {
      return r.asText();
    }
    return root.path("error").asText("");
  }

  private static String text(JsonNode root, String field) {
    JsonNode n = root.get(field);
    return n != null && n.isTextual() ? n.asText() : null;
  }


}
